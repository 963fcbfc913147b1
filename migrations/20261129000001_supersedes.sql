-- A note that supersedes another (DESIGN.md: `supersedes`): the older
-- note's seq, NULL for most notes. Nothing is written on the older note:
-- whether it is superseded is read from this column (a live note naming
-- it), so deleting or restoring the newer note needs no bookkeeping.
-- History keeps the field like every other column.
ALTER TABLE entries ADD COLUMN supersedes INTEGER;
ALTER TABLE entry_history ADD COLUMN supersedes INTEGER;
CREATE INDEX entries_supersedes ON entries (supersedes) WHERE supersedes IS NOT NULL;
