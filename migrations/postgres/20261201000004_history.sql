-- History and trash: the same table as the SQLite store's
-- (migrations/20261126000001_history.sql), which explains it. Batches are
-- numbered by a sequence every engine shares.
CREATE SEQUENCE history_batches;

CREATE TABLE entry_history (
    n           BIGSERIAL PRIMARY KEY,
    batch       BIGINT NOT NULL,
    action      TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          BIGINT NOT NULL,
    restored_at BIGINT,
    restored_by TEXT,
    seq         BIGINT NOT NULL,
    pad         TEXT NOT NULL,
    author      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    content     TEXT NOT NULL,
    tags        TEXT[] NOT NULL,
    status      TEXT,
    assignee    TEXT,
    resume      TEXT,
    lease_until BIGINT,
    category    TEXT,
    confidence  DOUBLE PRECISION,
    depends_on  TEXT[] NOT NULL,
    remind_at   BIGINT,
    pinned      BOOLEAN NOT NULL,
    meta        TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    version     BIGINT NOT NULL,
    reply_to    BIGINT,
    choices     TEXT[],
    replies     BIGINT NOT NULL,
    answer      BIGINT,
    attempts    BIGINT NOT NULL,
    error       TEXT,
    claimed_at  BIGINT,
    finished_at BIGINT,
    lease_ms    BIGINT,
    reminded_at BIGINT
);

CREATE INDEX entry_history_seq ON entry_history (seq, n);
CREATE INDEX entry_history_batch ON entry_history (batch);
CREATE INDEX entry_history_at ON entry_history (at);
CREATE INDEX entry_history_actor ON entry_history (actor, at);
CREATE INDEX entry_history_trash ON entry_history (pad, n)
    WHERE action <> 'edit' AND restored_at IS NULL;

