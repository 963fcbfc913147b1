-- Idempotency keys: a write sent with a key is stored once. A row is
-- written in the write's own transaction and holds the id of the entry the
-- write answered with (never its content), read again for the retries of
-- the same call (`storage::once`); the sweep
-- deletes rows older than a day.
CREATE TABLE idempotency (
    caller TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    entry TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (caller, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_age ON idempotency (created_at);
