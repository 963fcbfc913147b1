-- Scratchpad store, version 1.
-- Times are Unix milliseconds (UTC); the protocol formats them as RFC 3339.
--
-- Every index below costs a page write on each insert, and on this kind of
-- machine each page written to the WAL costs microseconds, so the schema keeps
-- only what reads need:
-- * an entry's id is its rowid (see src/id.rs): no id column, no id index;
-- * pad bookkeeping (creation on first write, last write, entry count) and
--   the tag table are kept by triggers, so an `entry.add` is one INSERT;
-- * background indexers follow new entries by rowid and learn of edits and
--   deletions from `changes`, which only the update and delete paths write.

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

CREATE TABLE entries (
    seq         INTEGER PRIMARY KEY,   -- the id (src/id.rs); only grows
    pad         TEXT NOT NULL,         -- a pads row exists: entries_before_insert makes it
    author      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    content     TEXT NOT NULL,
    tags        TEXT NOT NULL DEFAULT '[]',  -- JSON array, mirrored in entry_tags
    status      TEXT,
    assignee    TEXT,
    resume      TEXT,
    lease_until INTEGER,
    category    TEXT,
    confidence  REAL,
    depends_on  TEXT NOT NULL DEFAULT '[]',  -- JSON array of entry ids
    remind_at   INTEGER,
    pinned      INTEGER NOT NULL DEFAULT 0,
    meta        TEXT,                        -- JSON object
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    version     INTEGER NOT NULL DEFAULT 1
) STRICT;

CREATE INDEX entries_pad ON entries (pad, seq);

CREATE TABLE entry_tags (
    seq INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (seq, tag)
) STRICT, WITHOUT ROWID;

CREATE INDEX entry_tags_tag ON entry_tags (tag, seq);

-- Entries whose content changed or that were deleted, in order; indexers
-- apply them past their watermark, and the store prunes what all have seen.
CREATE TABLE changes (
    n   INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after pruning
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

CREATE TRIGGER entries_after_update_content AFTER UPDATE OF content ON entries
WHEN NEW.content <> OLD.content
BEGIN
    INSERT INTO changes (seq) VALUES (NEW.seq);
END;

CREATE TRIGGER entries_after_update_touch AFTER UPDATE ON entries
BEGIN
    UPDATE pads SET last_write_at = max(last_write_at, NEW.updated_at) WHERE name = NEW.pad;
END;

CREATE TRIGGER entries_after_delete AFTER DELETE ON entries
BEGIN
    DELETE FROM entry_tags WHERE seq = OLD.seq;
    UPDATE pads SET entries = entries - 1 WHERE name = OLD.pad;
    INSERT INTO changes (seq) VALUES (OLD.seq);
END;
