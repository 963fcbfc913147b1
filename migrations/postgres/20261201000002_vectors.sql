-- Meaning search on PostgreSQL (src/pg/vectors.rs): the embeddings every
-- engine's in-memory index follows, and the queue of entries to embed.

-- One row per embedded entry; `vec` NULL is a tombstone (the entry is
-- gone). `version` is the entry's version the vector was made from, so an
-- older embedding never overwrites a newer one; tombstones carry the
-- largest bigint. `n` grows with every write, in commit order (writers take
-- an advisory lock before they draw it), and each engine's index applies
-- the rows after the last `n` it has.
CREATE SEQUENCE vectors_n;
CREATE TABLE vectors (
    seq       BIGINT PRIMARY KEY,      -- the entry's id
    version   BIGINT NOT NULL,
    n         BIGINT NOT NULL,
    vec       BYTEA,                   -- 384 little-endian f32s, unit length
    buried_at TIMESTAMPTZ              -- when it became a tombstone
);
CREATE INDEX vectors_by_n ON vectors (n);

-- Entries to embed (new, edited, deleted), in order. Engines take rows with
-- FOR UPDATE SKIP LOCKED, so each is embedded by one engine.
CREATE TABLE embed_queue (
    id  BIGSERIAL PRIMARY KEY,
    seq BIGINT NOT NULL
);

-- generation: names the contents (new after every reindex); model: the
-- model the vectors come from; floor: the highest `n` of a pruned
-- tombstone (an index saved before it is rebuilt).
CREATE TABLE vector_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO vector_state (key, value) VALUES
    ('generation', md5(random()::text || clock_timestamp()::text)),
    ('model', ''),
    ('floor', '0');

-- Whatever path writes an entry, its embedding follows.
CREATE FUNCTION entries_queue_embedding() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO embed_queue (seq) VALUES (OLD.seq);
    ELSE
        INSERT INTO embed_queue (seq) VALUES (NEW.seq);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER entries_embed_new AFTER INSERT OR DELETE ON entries
    FOR EACH ROW EXECUTE FUNCTION entries_queue_embedding();
CREATE TRIGGER entries_embed_edit AFTER UPDATE OF content ON entries
    FOR EACH ROW WHEN (NEW.content IS DISTINCT FROM OLD.content)
    EXECUTE FUNCTION entries_queue_embedding();

INSERT INTO embed_queue (seq) SELECT seq FROM entries ORDER BY seq;
