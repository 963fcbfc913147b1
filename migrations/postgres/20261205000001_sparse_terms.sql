-- The sparse list on PostgreSQL (src/pg/sparse.rs): each entry's learned
-- sparse terms, written by the engine that embeds it in the transaction
-- that stores its vector, and how many entries hold each term. Both are
-- emptied with the vectors.
CREATE TABLE sparse_terms (
    term   INTEGER NOT NULL,           -- a word piece of the sparse model
    seq    BIGINT NOT NULL,            -- the entry's id
    weight REAL NOT NULL,
    PRIMARY KEY (term, seq)
);
CREATE INDEX sparse_terms_by_seq ON sparse_terms (seq);

CREATE TABLE sparse_counts (
    term INTEGER PRIMARY KEY,
    n    BIGINT NOT NULL
);
