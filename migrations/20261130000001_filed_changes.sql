-- The text index's `meta` column carries an entry's kind and tags besides
-- its pad and author (store/text.rs: a question filtered by kind or tag is
-- narrowed inside the index), so a change of either is a change the index
-- must apply, as a change of the text is. The vectors re-embed such an
-- entry too (the same log); kinds and tags change far less than text.
CREATE TRIGGER entries_after_update_filed AFTER UPDATE OF kind, tags ON entries
WHEN NEW.kind <> OLD.kind OR NEW.tags <> OLD.tags
BEGIN
    INSERT INTO changes (seq) VALUES (NEW.seq);
END;
