-- Tokens that may also remove, clear or hide notes others wrote in their
-- pads (as on SQLite).
ALTER TABLE tokens ADD COLUMN others BOOLEAN NOT NULL DEFAULT false;
