-- The text index's `meta` column carries an entry's kind and tags besides
-- its pad and author (store/text.rs: a question filtered by kind or tag is
-- narrowed inside the index), so a change of either is a change the index
-- must apply, as a change of the text is. Such a row says `filed_only`:
-- the text did not change, so the vectors have nothing to embed again
-- (store/vectors.rs passes it by).
ALTER TABLE changes ADD COLUMN filed_only INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER entries_after_update_filed AFTER UPDATE OF kind, tags ON entries
WHEN NEW.kind <> OLD.kind OR NEW.tags <> OLD.tags
BEGIN
    INSERT INTO changes (seq, filed_only) VALUES (NEW.seq, 1);
END;
