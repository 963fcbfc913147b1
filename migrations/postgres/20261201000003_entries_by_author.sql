-- Entries by author, in order (as migrations/20261125000001 on SQLite): an
-- author's inbox with no cursor yet starts just before its first entry.
CREATE INDEX entries_author ON entries (author, seq);
