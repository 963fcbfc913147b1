-- Scratchpad store, version 1.
-- Times are Unix milliseconds (UTC); the protocol formats them as RFC 3339.
-- Pad bookkeeping (creation on first write, last write, entry count) and the
-- tag table are maintained by triggers so that an `entry.add` is one INSERT:
-- one statement, one transaction, one round trip to SQLite.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value ANY
) STRICT;

INSERT INTO settings (key, value) VALUES
    ('default_ttl_seconds', 7200),
    ('store_id', lower(hex(randomblob(8))));  -- lets derived indexes notice a replaced store

CREATE TABLE pads (
    name          TEXT PRIMARY KEY,
    ttl_seconds   INTEGER,           -- NULL: never expires
    max_entries   INTEGER,           -- NULL: unbounded
    created_at    INTEGER NOT NULL,
    last_write_at INTEGER NOT NULL,
    entries       INTEGER NOT NULL DEFAULT 0,
    archived_at   INTEGER            -- NULL: live
) STRICT;

CREATE INDEX pads_expiry ON pads (archived_at, last_write_at);

CREATE TABLE entries (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: indexes key on it
    id          TEXT NOT NULL UNIQUE,
    pad         TEXT NOT NULL REFERENCES pads (name),
    author      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    content     TEXT NOT NULL,
    tags        TEXT NOT NULL DEFAULT '[]',          -- JSON array, mirrored in entry_tags
    status      TEXT,
    assignee    TEXT,
    resume      TEXT,
    lease_until INTEGER,
    category    TEXT,
    confidence  REAL,
    depends_on  TEXT NOT NULL DEFAULT '[]',          -- JSON array of entry ids
    remind_at   INTEGER,
    pinned      INTEGER NOT NULL DEFAULT 0,
    meta        TEXT,                                -- JSON object
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    version     INTEGER NOT NULL DEFAULT 1,
    rev         INTEGER NOT NULL                     -- global change number; indexers follow it
) STRICT;

CREATE INDEX entries_pad ON entries (pad, seq);
CREATE INDEX entries_rev ON entries (rev);

CREATE TABLE entry_tags (
    seq INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (seq, tag)
) STRICT, WITHOUT ROWID;

CREATE INDEX entry_tags_tag ON entry_tags (tag, seq);

-- Deleted entries, so background indexers can drop them; pruned once indexed.
CREATE TABLE tombstones (
    n   INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
) STRICT;

CREATE TRIGGER entries_before_insert BEFORE INSERT ON entries
BEGIN
    INSERT INTO pads (name, ttl_seconds, created_at, last_write_at, entries)
    VALUES (
        NEW.pad,
        CASE WHEN NEW.pad = 'inbox' THEN NULL
             ELSE (SELECT value FROM settings WHERE key = 'default_ttl_seconds') END,
        NEW.created_at, NEW.created_at, 1)
    ON CONFLICT (name) DO UPDATE SET
        last_write_at = max(last_write_at, excluded.last_write_at),
        entries = entries + 1,
        archived_at = NULL;
END;

CREATE TRIGGER entries_after_insert AFTER INSERT ON entries
WHEN NEW.tags <> '[]'
BEGIN
    INSERT INTO entry_tags (seq, tag) SELECT NEW.seq, value FROM json_each(NEW.tags);
END;

CREATE TRIGGER entries_after_update_tags AFTER UPDATE OF tags ON entries
WHEN NEW.tags <> OLD.tags
BEGIN
    DELETE FROM entry_tags WHERE seq = OLD.seq;
    INSERT INTO entry_tags (seq, tag) SELECT NEW.seq, value FROM json_each(NEW.tags);
END;

CREATE TRIGGER entries_after_update_touch AFTER UPDATE ON entries
BEGIN
    UPDATE pads SET last_write_at = max(last_write_at, NEW.updated_at) WHERE name = NEW.pad;
END;

CREATE TRIGGER entries_after_delete AFTER DELETE ON entries
BEGIN
    DELETE FROM entry_tags WHERE seq = OLD.seq;
    UPDATE pads SET entries = entries - 1 WHERE name = OLD.pad;
    INSERT INTO tombstones (seq) VALUES (OLD.seq);
END;
