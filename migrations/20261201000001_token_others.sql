-- Tokens that may also remove, clear or hide notes others wrote in their
-- pads (`token.create` `others`); without it a token changes the
-- visibility of its own notes only.
ALTER TABLE tokens ADD COLUMN others INTEGER NOT NULL DEFAULT 0;
