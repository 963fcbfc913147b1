-- A new entry's bookkeeping moves from triggers to the store's insert code
-- (src/store/entries.rs, `insert_rows`), which does it once per pad for a
-- whole batch of journaled entries instead of once per entry: the pads
-- upsert and the json_each over tags were 9 of every 14 µs an insert cost
-- in batches of 20. Updates and deletions keep their triggers.
DROP TRIGGER entries_before_insert;
DROP TRIGGER entries_after_insert;
