-- Threads and questions (DESIGN.md: `reply_to`, `choices`).
--
-- A reply names its parent by the parent's seq (its id as a number), so a
-- thread is an index range: `entries_replies` holds only replies, and a
-- plain note pays nothing for it. The parent keeps two derived fields,
-- written in the reply's own transaction: how many replies it has, and
-- which reply answered it (the first by someone other than its author) —
-- so the feed marks threads and a question shows as answered without a
-- second query per entry.

ALTER TABLE entries ADD COLUMN reply_to INTEGER;             -- the parent's seq
ALTER TABLE entries ADD COLUMN choices  TEXT;                -- questions: JSON array of answers offered
ALTER TABLE entries ADD COLUMN replies  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN answer   INTEGER;             -- seq of the first reply by someone else

CREATE INDEX entries_replies ON entries (reply_to, seq) WHERE reply_to IS NOT NULL;

-- Replies made before the field existed said `meta.reply_to` = the parent's
-- id. Those naming an existing entry move to the field; anything else stays
-- in meta, untouched.
UPDATE entries SET reply_to = pad_id_seq(json_extract(meta, '$.reply_to'))
 WHERE meta IS NOT NULL
   AND json_type(meta, '$.reply_to') = 'text'
   AND EXISTS (SELECT 1 FROM entries p
               WHERE p.seq = pad_id_seq(json_extract(entries.meta, '$.reply_to')));
UPDATE entries
   SET meta = CASE WHEN json_remove(meta, '$.reply_to') = '{}' THEN NULL
                   ELSE json_remove(meta, '$.reply_to') END
 WHERE reply_to IS NOT NULL;
UPDATE entries
   SET replies = (SELECT count(*) FROM entries r WHERE r.reply_to = entries.seq),
       answer  = (SELECT min(r.seq) FROM entries r
                  WHERE r.reply_to = entries.seq AND r.author <> entries.author)
 WHERE seq IN (SELECT reply_to FROM entries WHERE reply_to IS NOT NULL);
