-- Entries by author, in order. An author's inbox with no cursor yet starts
-- just before its first entry (`min(seq) WHERE author = ?`), so an answer
-- to its first question reaches it even if it never read its inbox; and the
-- audit of what one author did reads a range of this index.
CREATE INDEX entries_author ON entries (author, seq);
