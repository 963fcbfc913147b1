-- History and trash (docs/protocol.md, "History, trash and undo").
--
-- Before an entry changes or goes, the store copies the row as it was into
-- `entry_history`, in the same transaction as the change: an edit keeps the
-- version it replaces (`action` 'edit'), a deletion keeps the entry whole
-- ('delete', 'clear', 'window' for a pad's rolling window, 'expire' for
-- retention). The trash is the deletions not restored. One operation (an
-- edit, a delete, a clear of 300 entries) shares one `batch`, so it can be
-- undone as one. Rows older than the history retention are purged by the
-- sweep. The copy is explicit in the store's code, not a trigger, because
-- it records who acted (`actor`), which only the engine knows.
CREATE TABLE entry_history (
    n           INTEGER PRIMARY KEY AUTOINCREMENT,
    batch       INTEGER NOT NULL,
    action      TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    restored_at INTEGER,            -- deletions: when brought back, and by whom
    restored_by TEXT,
    -- The entry as it was: every column of `entries`.
    seq         INTEGER NOT NULL,
    pad         TEXT NOT NULL,
    author      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    content     TEXT NOT NULL,
    tags        TEXT NOT NULL,
    status      TEXT,
    assignee    TEXT,
    resume      TEXT,
    lease_until INTEGER,
    category    TEXT,
    confidence  REAL,
    depends_on  TEXT NOT NULL,
    remind_at   INTEGER,
    pinned      INTEGER NOT NULL,
    meta        TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    version     INTEGER NOT NULL,
    reply_to    INTEGER,
    choices     TEXT,
    replies     INTEGER NOT NULL,
    answer      INTEGER,
    attempts    INTEGER NOT NULL,
    error       TEXT,
    claimed_at  INTEGER,
    finished_at INTEGER,
    lease_ms    INTEGER,
    reminded_at INTEGER
) STRICT;

CREATE INDEX entry_history_seq ON entry_history (seq, n);
CREATE INDEX entry_history_batch ON entry_history (batch);
CREATE INDEX entry_history_at ON entry_history (at);
CREATE INDEX entry_history_actor ON entry_history (actor, at);
CREATE INDEX entry_history_trash ON entry_history (pad, n)
    WHERE action <> 'edit' AND restored_at IS NULL;

