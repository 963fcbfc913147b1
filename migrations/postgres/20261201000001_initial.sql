-- The store on PostgreSQL (src/pg.rs): the same data model as the SQLite
-- store (migrations/*.sql), shared by every engine of a team. Times are
-- Unix milliseconds, as on SQLite; lists are arrays.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

INSERT INTO settings (key, value) VALUES ('default_ttl_seconds', '7200');

CREATE TABLE pads (
    name          TEXT PRIMARY KEY,
    ttl_seconds   BIGINT,            -- NULL: never expires
    max_entries   BIGINT,            -- NULL: unbounded
    created_at    BIGINT NOT NULL,
    last_write_at BIGINT NOT NULL,
    entries       BIGINT NOT NULL DEFAULT 0,
    archived_at   BIGINT             -- NULL: live
);

-- The low bits of ids: unique across engines (src/pg.rs, `NEXT_ID`).
CREATE SEQUENCE entry_ids;

CREATE TABLE entries (
    seq         BIGINT PRIMARY KEY,   -- the id (src/id.rs)
    pad         TEXT NOT NULL,
    author      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    content     TEXT NOT NULL,
    tags        TEXT[] NOT NULL DEFAULT '{}',
    status      TEXT,
    assignee    TEXT,
    resume      TEXT,
    lease_until BIGINT,
    lease_ms    BIGINT,
    claimed_at  BIGINT,
    finished_at BIGINT,
    attempts    BIGINT NOT NULL DEFAULT 0,
    error       TEXT,
    category    TEXT,
    confidence  DOUBLE PRECISION,
    depends_on  TEXT[] NOT NULL DEFAULT '{}',
    remind_at   BIGINT,
    reminded_at BIGINT,
    pinned      BOOLEAN NOT NULL DEFAULT false,
    meta        TEXT,                 -- JSON object
    reply_to    BIGINT,               -- the parent's seq
    choices     TEXT[],
    replies     BIGINT NOT NULL DEFAULT 0,
    answer      BIGINT,               -- seq of the first reply by someone else
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    version     BIGINT NOT NULL DEFAULT 1,
    -- Whole words, case and script aside (text search's first two tiers).
    words       TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED
);

CREATE INDEX entries_pad ON entries (pad, seq);
CREATE INDEX entries_tags ON entries USING gin (tags);
CREATE INDEX entries_words ON entries USING gin (words);
CREATE INDEX entries_tasks ON entries (pad, seq) WHERE kind = 'task';
CREATE INDEX entries_leases ON entries (lease_until) WHERE status = 'doing';
CREATE INDEX entries_due ON entries (remind_at)
    WHERE remind_at IS NOT NULL AND reminded_at IS NULL;
CREATE INDEX entries_reminded ON entries (reminded_at) WHERE reminded_at IS NOT NULL;
CREATE INDEX entries_replies ON entries (reply_to, seq) WHERE reply_to IS NOT NULL;

-- Substrings anywhere (the third tier): trigrams of the lowercased text.
-- pg_trgm ships with PostgreSQL and is a trusted extension: a database
-- owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX entries_trigrams ON entries USING gin (lower(content) gin_trgm_ops);

-- A pad's count and last write follow deletions and edits, whichever path
-- made them (as the SQLite store's triggers do).
CREATE FUNCTION entries_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE pads SET entries = entries - 1 WHERE name = OLD.pad;
    RETURN NULL;
END $$;
CREATE TRIGGER entries_after_delete AFTER DELETE ON entries
    FOR EACH ROW EXECUTE FUNCTION entries_deleted();

CREATE FUNCTION entries_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE pads SET last_write_at = greatest(last_write_at, NEW.updated_at)
     WHERE name = NEW.pad AND last_write_at < NEW.updated_at;
    RETURN NULL;
END $$;
CREATE TRIGGER entries_after_update AFTER UPDATE ON entries
    FOR EACH ROW WHEN (NEW.updated_at > OLD.updated_at) EXECUTE FUNCTION entries_updated();

CREATE TABLE inbox_cursors (
    author   TEXT PRIMARY KEY,
    seq      BIGINT NOT NULL,
    reminded BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE tokens (
    name       TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,   -- hex SHA-256 of the secret
    pads       TEXT NOT NULL,          -- JSON array of pad names and `prefix*` patterns
    read_only  BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL
);

-- Events too large for a NOTIFY payload (8,000 bytes): the notification
-- names the row; rows are dropped after a few minutes.
CREATE TABLE events (
    n    BIGSERIAL PRIMARY KEY,
    body TEXT NOT NULL,
    at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
