-- Tasks, reminders and access tokens.
--
-- The new indexes are partial: an entry that is not a task, has no reminder
-- and is not being worked on writes nothing to them, so the plain
-- `entry.add` hot path pays nothing for these features.

-- Tasks: how many times claimed (every claim after the first is a retry),
-- the last failure, and when the current attempt started and ended.
ALTER TABLE entries ADD COLUMN attempts    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN error       TEXT;
ALTER TABLE entries ADD COLUMN claimed_at  INTEGER;
ALTER TABLE entries ADD COLUMN finished_at INTEGER;
-- The lease length the holder asked for; heartbeats renew it by as much.
ALTER TABLE entries ADD COLUMN lease_ms    INTEGER;
-- Reminders: when the reminder was delivered (NULL: not yet).
ALTER TABLE entries ADD COLUMN reminded_at INTEGER;

-- `task.claim` walks a pad's tasks in order.
CREATE INDEX entries_tasks ON entries (pad, seq) WHERE kind = 'task';
-- The lease sweep finds claims that ran out.
CREATE INDEX entries_leases ON entries (lease_until) WHERE status = 'doing';
-- The reminder tick finds what is due.
CREATE INDEX entries_due ON entries (remind_at)
    WHERE remind_at IS NOT NULL AND reminded_at IS NULL;
-- Inboxes find the reminders delivered since they last looked.
CREATE INDEX entries_reminded ON entries (reminded_at) WHERE reminded_at IS NOT NULL;

-- Reminders delivered to an author's inbox up to this time.
ALTER TABLE inbox_cursors ADD COLUMN reminded INTEGER NOT NULL DEFAULT 0;

-- Access tokens: only a SHA-256 of the secret is kept.
CREATE TABLE tokens (
    name       TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,   -- hex SHA-256 of the secret
    pads       TEXT NOT NULL,          -- JSON array of pad names and `prefix*` patterns
    read_only  INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
