-- Notes addressed to agents (as migrations/20261127000001 on SQLite).
ALTER TABLE entries ADD COLUMN addressed_to TEXT[];
ALTER TABLE entry_history ADD COLUMN addressed_to TEXT[];
CREATE INDEX entries_addressed ON entries (seq) WHERE addressed_to IS NOT NULL;
