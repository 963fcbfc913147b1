-- Notes addressed to agents (DESIGN.md: `to`): a JSON array of author
-- names, NULL when the note is addressed to no one (most notes). An
-- addressed note reaches each named author's inbox; agents registered with
-- an A2A endpoint are also sent it (src/agents/). History keeps the field
-- like every other column.
ALTER TABLE entries ADD COLUMN addressed_to TEXT;
ALTER TABLE entry_history ADD COLUMN addressed_to TEXT;
-- An author's inbox reads the addressed notes past its cursor.
CREATE INDEX entries_addressed ON entries (seq) WHERE addressed_to IS NOT NULL;
