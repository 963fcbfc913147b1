-- Idempotency keys (as on SQLite): a write sent with a key is stored once.
-- A row is written in the write's own transaction and holds the id of the
-- entry the write answered with (never its content); a second transaction taking the same key waits on the
-- primary key until the first commits, then finds its row. The sweep
-- deletes rows older than a day.
CREATE TABLE idempotency (
    caller TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    entry TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (caller, key)
);
CREATE INDEX idempotency_age ON idempotency (created_at);
