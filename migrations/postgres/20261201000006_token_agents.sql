-- Tokens that may hand work to registered agents (as on SQLite).
ALTER TABLE tokens ADD COLUMN agents TEXT NOT NULL DEFAULT '[]';
