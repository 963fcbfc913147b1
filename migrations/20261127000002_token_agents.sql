-- Tokens that may hand work to registered agents (`token.create`
-- `agents`): a JSON array of agent names, `*` for any; empty for none.
ALTER TABLE tokens ADD COLUMN agents TEXT NOT NULL DEFAULT '[]';
