-- A note that supersedes another (as migrations/20261129000001 on SQLite).
ALTER TABLE entries ADD COLUMN supersedes BIGINT;
ALTER TABLE entry_history ADD COLUMN supersedes BIGINT;
CREATE INDEX entries_supersedes ON entries (supersedes) WHERE supersedes IS NOT NULL;
