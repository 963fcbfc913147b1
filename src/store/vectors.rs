//! Stored embeddings: `vectors.db`, the source of truth for semantic search.
//!
//! Like the text index, it is a database of its own beside `pad.db`, so the
//! embedding worker takes `vectors.db`'s write lock and never `pad.db`'s:
//! writers never wait for an embedding. It follows `pad.db` with the same two
//! watermarks (`seq`: every entry up to this id has been embedded; `change`:
//! every edit and deletion of the `changes` log up to this row is applied),
//! stored in the same transaction as the vectors, so a crash loses at most the
//! batch in flight and nothing is embedded twice.
//!
//! Each vector row carries `n`, a number that grows with every write, and a
//! deleted entry leaves a tombstone (`vec` NULL) until the in-memory index has
//! saved past it: the index follows this table by `n` exactly as this table
//! follows `pad.db` by `seq`.
//!
//! Vectors are stored as 384 little-endian f32s, L2-normalised by the model.
//! A `generation` (random, new whenever the table is emptied) tells a saved
//! index which contents it was built from; `model` names the model that made
//! the vectors, so switching models re-embeds everything.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use super::derived::{connect_derived, disk_bytes, open_or_recreate, Watermarks};
use super::lock;
use super::sparse::Terms;
use crate::error::{Error, Result};
use crate::semantic::vector::{add_blob, dot, from_blob, to_blob, VectorRow};
use crate::semantic::Encoded;

const SCHEMA_VERSION: i64 = 1;

/// A note's author and content, as the encoders read them.
pub type Text = (String, String);

/// What the worker does next: encode these notes (`Some`: author and
/// content) or drop these vectors and terms (`None`: the entry is gone),
/// then move the watermarks.
#[derive(Debug, Default)]
pub struct Work {
    pub items: Vec<(i64, Option<Text>)>,
    seq_upto: i64,
    change_upto: i64,
}

impl Work {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.seq_upto == 0 && self.change_upto == 0
    }
}

pub struct VectorStore {
    conn: Mutex<Connection>,
    marks: Watermarks,
    path: PathBuf,
}

impl VectorStore {
    pub(super) fn open(dir: &Path, store_db: &Path) -> Result<Self> {
        let path = dir.join("vectors.db");
        let conn = open_or_recreate(&path, "vector store", || connect(&path, store_db))?;
        let store_id: String = conn.query_row(
            "SELECT value FROM store.settings WHERE key = 'store_id'",
            [],
            |r| r.get(0),
        )?;
        let vs = VectorStore {
            conn: Mutex::new(conn),
            marks: Watermarks::default(),
            path,
        };
        if vs.state_text("store_id")?.as_deref() != Some(store_id.as_str()) {
            vs.reset(&[("store_id", &store_id)])?;
        }
        vs.load_marks()?;
        if vs.missed_changes()? {
            tracing::warn!("edits were pruned from the change log before they were embedded; embedding everything again");
            vs.reset(&[])?;
        }
        Ok(vs)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry with an id up to this has its vector (or never will).
    pub fn watermark(&self) -> i64 {
        self.marks.seq()
    }

    /// Every edit and deletion of the change log up to this row is applied.
    pub fn change_watermark(&self) -> i64 {
        self.marks.change()
    }

    pub fn disk_bytes(&self) -> u64 {
        disk_bytes(&self.path)
    }

    fn state_text(&self, key: &str) -> Result<Option<String>> {
        let conn = lock(&self.conn);
        Ok(conn
            .query_row("SELECT value FROM state WHERE key = ?", [key], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .optional()?
            .and_then(|v| match v {
                rusqlite::types::Value::Text(t) => Some(t),
                rusqlite::types::Value::Integer(i) => Some(i.to_string()),
                _ => None,
            }))
    }

    fn load_marks(&self) -> Result<()> {
        let conn = lock(&self.conn);
        let (seq, change) = conn.query_row(
            "SELECT (SELECT value FROM state WHERE key = 'seq'), \
                    (SELECT value FROM state WHERE key = 'change')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        self.marks.set(seq, change);
        Ok(())
    }

    /// Whether `pad.db` pruned change-log rows this store never applied
    /// (it ran without semantic search for a while).
    fn missed_changes(&self) -> Result<bool> {
        let conn = lock(&self.conn);
        let mark = self.change_watermark();
        Ok(conn.query_row(
            "SELECT coalesce((SELECT seq FROM store.sqlite_sequence WHERE name = 'changes'), 0) > ?1 \
             AND NOT EXISTS (SELECT 1 FROM store.changes WHERE n = ?1 + 1)",
            [mark],
            |r| r.get(0),
        )?)
    }

    /// Empties the table (everything will be embedded again) and starts a new
    /// generation, so a saved index built from the old contents is not used.
    fn reset(&self, set: &[(&str, &str)]) -> Result<()> {
        let mut conn = lock(&self.conn);
        let tx = conn.transaction()?;
        tx.execute_batch(
            "DELETE FROM vectors;
             DELETE FROM sparse_terms;
             DELETE FROM sparse_counts;
             UPDATE state SET value = 0 WHERE key IN ('seq', 'change');
             INSERT OR REPLACE INTO state (key, value) VALUES ('generation', lower(hex(randomblob(8))));",
        )?;
        for (k, v) in set {
            tx.execute(
                "INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)",
                [k, v],
            )?;
        }
        tx.commit()?;
        drop(conn);
        self.load_marks()
    }

    /// Makes sure the stored vectors come from `model`; if they do not (or
    /// there are none yet), empties the table so everything is embedded
    /// again. Returns whether it did.
    pub fn use_model(&self, model: &str) -> Result<bool> {
        if self.state_text("model")?.as_deref() == Some(model) {
            return Ok(false);
        }
        self.reset(&[("model", model)])?;
        Ok(true)
    }

    /// Forgets every vector, so the worker embeds everything again.
    pub fn clear(&self) -> Result<()> {
        self.reset(&[])
    }

    /// Names the current contents of the table; a new one after every reset.
    pub fn generation(&self) -> Result<String> {
        Ok(self.state_text("generation")?.unwrap_or_default())
    }

    /// The highest `n` ever written (0 when empty).
    pub fn last_n(&self) -> Result<i64> {
        let conn = lock(&self.conn);
        Ok(conn.query_row("SELECT value FROM state WHERE key = 'n'", [], |r| r.get(0))?)
    }

    /// The next entries to embed (up to `limit`), in id order, then edits
    /// and deletions from the change log; all read from one snapshot.
    pub fn next_work(&self, limit: i64) -> Result<Work> {
        let (seq_from, change_from) = (self.watermark(), self.change_watermark());
        let mut conn = lock(&self.conn);
        let tx = conn.transaction()?;
        let mut items: Vec<(i64, Option<Text>)> = tx
            .prepare_cached(
                "SELECT seq, author, content FROM store.entries WHERE seq > ? ORDER BY seq LIMIT ?",
            )?
            .query_map(params![seq_from, limit], |r| {
                Ok((r.get(0)?, Some((r.get(1)?, r.get(2)?))))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let seq_upto = items.last().map_or(seq_from, |(s, _)| *s);
        let mut change_upto = change_from;
        let room = limit - items.len() as i64;
        if room > 0 {
            // An entry past `seq_upto` is embedded by a later id pass, with
            // whatever text it has then; edits of it need nothing now. A
            // change of kind or tags alone (`filed_only`) leaves the text,
            // and the vector, as they were: it is passed by.
            let changed: Vec<(i64, i64, bool, Option<Text>)> = tx
                .prepare_cached(
                    "SELECT c.n, c.seq, c.filed_only, e.author, e.content FROM store.changes c \
                     LEFT JOIN store.entries e ON e.seq = c.seq \
                     WHERE c.n > ? ORDER BY c.n LIMIT ?",
                )?
                .query_map(params![change_from, room], |r| {
                    let (author, content): (Option<String>, Option<String>) =
                        (r.get(3)?, r.get(4)?);
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, author.zip(content)))
                })?
                .collect::<rusqlite::Result<_>>()?;
            for (n, seq, filed_only, content) in changed {
                change_upto = n;
                if !filed_only && seq <= seq_upto && !items.iter().any(|(s, _)| *s == seq) {
                    items.push((seq, content));
                }
            }
        }
        tx.commit()?;
        Ok(Work {
            items,
            seq_upto: if seq_upto > seq_from { seq_upto } else { 0 },
            change_upto: if change_upto > change_from {
                change_upto
            } else {
                0
            },
        })
    }

    /// Stores what was encoded for `work` (one per item, in order; `None`
    /// for a deleted entry): the vectors, the sparse terms in place of the
    /// entry's old ones with the terms' counts kept, and moves the
    /// watermarks past it, atomically.
    pub fn commit(&self, work: Work, encoded: Vec<Option<Encoded>>) -> Result<()> {
        if encoded.len() != work.items.len() {
            return Err(Error::Internal(format!(
                "{} vectors for {} entries",
                encoded.len(),
                work.items.len()
            )));
        }
        let mut conn = lock(&self.conn);
        let tx = conn.transaction()?;
        {
            let mut n: i64 =
                tx.query_row("SELECT value FROM state WHERE key = 'n'", [], |r| r.get(0))?;
            let mut upsert = tx.prepare_cached(
                "INSERT INTO vectors (seq, n, vec) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (seq) DO UPDATE SET n = excluded.n, vec = excluded.vec",
            )?;
            let mut bury =
                tx.prepare_cached("UPDATE vectors SET n = ?2, vec = NULL WHERE seq = ?1")?;
            let mut terms = Terms::new(&tx)?;
            for ((seq, _), encoded) in work.items.iter().zip(&encoded) {
                n += 1;
                terms.forget(*seq)?;
                match encoded {
                    Some(e) => {
                        upsert.execute(params![seq, n, to_blob(&e.vector)])?;
                        terms.add(*seq, &e.terms)?;
                    }
                    None => {
                        bury.execute(params![seq, n])?;
                    }
                };
            }
            tx.execute("UPDATE state SET value = ? WHERE key = 'n'", [n])?;
            if work.seq_upto > 0 {
                tx.execute(
                    "UPDATE state SET value = ? WHERE key = 'seq'",
                    [work.seq_upto],
                )?;
            }
            if work.change_upto > 0 {
                tx.execute(
                    "UPDATE state SET value = ? WHERE key = 'change'",
                    [work.change_upto],
                )?;
            }
        }
        tx.commit()?;
        self.marks.set(
            work.seq_upto.max(self.watermark()),
            work.change_upto.max(self.change_watermark()),
        );
        Ok(())
    }

    /// Rows written after `n` (vectors and tombstones), oldest first, up to `limit`.
    pub fn since(&self, n: i64, limit: i64) -> Result<Vec<VectorRow>> {
        let conn = lock(&self.conn);
        let rows = conn
            .prepare_cached("SELECT seq, n, vec FROM vectors WHERE n > ? ORDER BY n LIMIT ?")?
            .query_map(params![n, limit], |r| {
                Ok(VectorRow {
                    seq: r.get(0)?,
                    n: r.get(1)?,
                    vec: r.get::<_, Option<Vec<u8>>>(2)?.map(|b| from_blob(&b)),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Live vectors with ids past `after`, in id order, up to `limit`: for
    /// rebuilding the index page by page.
    pub fn live_after(&self, after: i64, limit: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        let conn = lock(&self.conn);
        let rows = conn
            .prepare_cached(
                "SELECT seq, vec FROM vectors WHERE seq > ? AND vec IS NOT NULL ORDER BY seq LIMIT ?",
            )?
            .query_map(params![after, limit], |r| {
                Ok((r.get(0)?, from_blob(&r.get::<_, Vec<u8>>(1)?)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Entries and edits past the marks, counted up to `cap` each, on this
    /// file's own connection: what waits to be encoded among the writes
    /// applied to pad.db (the journal's are not yet there). Never takes the
    /// writer, so the worker may ask while writes stream.
    pub fn waiting(&self, cap: i64) -> Result<i64> {
        let marks = (self.watermark(), self.change_watermark());
        let conn = lock(&self.conn);
        let mut count = conn.prepare_cached(
            "SELECT (SELECT count(*) FROM (SELECT 1 FROM store.entries WHERE seq > ?1 LIMIT ?3)) \
                  + (SELECT count(*) FROM (SELECT 1 FROM store.changes WHERE n > ?2 LIMIT ?3))",
        )?;
        let n = count.query_row(params![marks.0, marks.1, cap], |r| r.get(0))?;
        Ok(n)
    }

    /// Live vectors (entries that have one).
    pub fn count(&self) -> Result<i64> {
        let conn = lock(&self.conn);
        Ok(conn.query_row(
            "SELECT count(*) FROM vectors WHERE vec IS NOT NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// Drops tombstones a saved index has already applied.
    pub fn prune_tombstones(&self, upto_n: i64) -> Result<usize> {
        let conn = lock(&self.conn);
        Ok(conn.execute("DELETE FROM vectors WHERE vec IS NULL AND n <= ?", [upto_n])?)
    }

    pub(super) fn checkpoint(&self) {
        let conn = lock(&self.conn);
        let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    }
}

fn connect(path: &Path, store_db: &Path) -> Result<Connection> {
    let conn = connect_derived(path)?;
    conn.set_prepared_statement_cache_capacity(32);
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value ANY NOT NULL) STRICT;
         CREATE TABLE IF NOT EXISTS vectors (
             seq INTEGER PRIMARY KEY,  -- the entry's id
             n   INTEGER NOT NULL,     -- grows with every write; the index follows it
             vec BLOB                  -- NULL: the entry is gone (a tombstone)
         ) STRICT;
         CREATE INDEX IF NOT EXISTS vectors_n ON vectors (n);
         -- The sparse model's terms of each entry with a vector (`sparse.rs`),
         -- by term for the sparse list, by entry to replace them.
         CREATE TABLE IF NOT EXISTS sparse_terms (
             term   INTEGER NOT NULL,  -- a word piece of the sparse model
             seq    INTEGER NOT NULL,  -- the entry's id
             weight REAL NOT NULL,
             PRIMARY KEY (term, seq)
         ) WITHOUT ROWID, STRICT;
         CREATE INDEX IF NOT EXISTS sparse_terms_by_seq ON sparse_terms (seq);
         -- How many entries hold each term; term -1: entries with terms.
         CREATE TABLE IF NOT EXISTS sparse_counts (
             term INTEGER PRIMARY KEY,
             n    INTEGER NOT NULL
         ) STRICT;
         INSERT OR IGNORE INTO state (key, value) VALUES
             ('seq', 0), ('change', 0), ('n', 0), ('schema', {SCHEMA_VERSION}),
             ('generation', lower(hex(randomblob(8))));"
    ))?;
    let schema: i64 = conn.query_row("SELECT value FROM state WHERE key = 'schema'", [], |r| {
        r.get(0)
    })?;
    if schema != SCHEMA_VERSION {
        return Err(Error::Internal(format!(
            "vector store schema {schema}, this build uses {SCHEMA_VERSION}"
        )));
    }
    // A quick probe: a file that is not a database fails here.
    conn.query_row(
        "SELECT count(*) FROM (SELECT 1 FROM vectors LIMIT 1)",
        [],
        |r| r.get::<_, i64>(0),
    )?;
    conn.execute("ATTACH DATABASE ? AS store", [store_db.to_string_lossy()])?;
    Ok(conn)
}

use std::collections::HashSet;

use crate::storage::query::Arg;
use rusqlite::params_from_iter;

use super::sqlite::ready;
use super::Store;
use super::{Sqlite, SqliteVectors};
use crate::semantic::VectorSource;
use crate::storage::entries;
use crate::storage::ArchiveMark;
use crate::storage::CandidateCheck;
use crate::storage::EmbedGoal;
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::Meaning;
use std::sync::Arc;

/// The live entries that have a vector and pass `filter`, as SQL after
/// `SELECT …`; `e` is the entry, `v` its vector. The entries are found
/// first (by the pad's index, the tag's list, …) and only theirs of the
/// vectors read (`CROSS JOIN` keeps that order): left to its statistics,
/// SQLite sometimes read every vector of the store and checked the filter
/// after (a meaning search by tag over 1,000 of 10,000 notes: 2.3 ms or
/// 10.9 ms from one run to the next).
fn filtered(filter: &EntryFilter, args: &mut Vec<Arg>) -> String {
    let mut sql = String::from(
        " FROM entries e JOIN pads p ON p.name = e.pad CROSS JOIN vec.vectors v ON v.seq = e.seq \
         WHERE v.vec IS NOT NULL",
    );
    super::sqlite::append(&mut sql, args, |q| q.filter(filter));
    sql
}

/// "Which of the entries `?1` (a JSON array of ids) exist, live, and pass
/// `filter`": one query per chunk of the index's walk, each id a point
/// lookup in it. A tag is checked on each entry's own tags: listing every
/// entry with the tag (`Query::filter`) was done again on every run, ~10 ms a
/// check at 10k tagged notes.
fn passing_sql(filter: &EntryFilter, args: &mut Vec<Arg>) -> String {
    let mut sql = String::from(
        "SELECT e.seq FROM json_each(?) j CROSS JOIN entries e ON e.seq = j.value \
         JOIN pads p ON p.name = e.pad WHERE 1",
    );
    super::sqlite::append(&mut sql, args, |q| q.filter_per_entry(filter));
    sql
}

impl Store {
    /// Those of `seqs` that exist, live, and pass `filter`.
    pub fn passing(&self, filter: &EntryFilter, seqs: &[i64]) -> Result<HashSet<i64>> {
        let ids = serde_json::to_string(seqs).expect("ids serialize");
        let mut args = vec![Arg::Text(ids)];
        let sql = passing_sql(filter, &mut args);
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(&sql)?;
        let seqs = stmt
            .query_map(params_from_iter(args), |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(seqs)
    }
}

impl Meaning for Sqlite {
    fn vectors(&self) -> Result<Arc<dyn VectorSource>> {
        Ok(Arc::new(SqliteVectors(self.store.clone())))
    }

    /// Entries in live pads (from the pads' counters: no scan).
    fn live_entries(&self) -> Fut<'_, usize> {
        self.inline(move |s| {
            let conn = s.reader()?;
            let n: i64 = conn.query_row(
                "SELECT coalesce(sum(entries), 0) FROM pads WHERE archived_at IS NULL",
                [],
                |r| r.get(0),
            )?;
            Ok(n as usize)
        })
    }

    fn count_matching(&self, filter: EntryFilter, cap: usize) -> Fut<'_, usize> {
        self.blocking(move |s| ready(entries::count_matching(&mut *s.reader()?, &filter, cap)))
    }

    /// The archived pads' mark (`storage::ArchiveMark`).
    fn archived(&self) -> Fut<'_, ArchiveMark> {
        self.inline(move |s| {
            let conn = s.reader()?;
            let mark = conn
                .prepare_cached(
                    "SELECT count(*), coalesce(sum(archived_at), 0), coalesce(sum(entries), 0) \
                     FROM pads WHERE archived_at IS NOT NULL",
                )?
                .query_row([], |r| {
                    Ok(ArchiveMark {
                        pads: r.get(0)?,
                        archived_at: r.get(1)?,
                        entries: r.get(2)?,
                    })
                })?;
            Ok(mark)
        })
    }

    /// The entries of archived pads, sorted.
    fn archived_entries(&self) -> Fut<'_, Vec<i64>> {
        self.blocking(move |s| {
            let conn = s.reader()?;
            let seqs = conn
                .prepare_cached(
                    "SELECT e.seq FROM pads p JOIN entries e ON e.pad = p.name \
                     WHERE p.archived_at IS NOT NULL ORDER BY e.seq",
                )?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(seqs)
        })
    }

    /// The exact `k` nearest entries to `query` among those passing
    /// `filter`, by cosine similarity on the stored (full-precision) vectors.
    fn nearest_exact(
        &self,
        query: Arc<[f32]>,
        filter: EntryFilter,
        k: usize,
    ) -> Fut<'_, Vec<(i64, f32)>> {
        self.blocking(move |s| {
            let mut args = Vec::new();
            let sql = format!("SELECT v.seq, v.vec{}", filtered(&filter, &mut args));
            let conn = s.reader()?;
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(params_from_iter(args))?;
            let mut best: Vec<(i64, f32)> = Vec::with_capacity(k + 1);
            while let Some(row) = rows.next()? {
                let blob = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
                let score = dot(&query, blob);
                let seq: i64 = row.get(0)?;
                // Best first; among equal scores the newest, as everywhere.
                let before = |(id, s): &(i64, f32)| *s > score || (*s == score && *id > seq);
                if best.len() < k || !before(&best[best.len() - 1]) {
                    let at = best.partition_point(before);
                    best.insert(at, (seq, score));
                    best.truncate(k);
                }
            }
            Ok(best)
        })
    }

    /// Cosine similarity of `query` to the stored vectors of these entries
    /// (those without a vector are skipped).
    fn similarities(&self, query: Arc<[f32]>, ids: Vec<i64>) -> Fut<'_, Vec<(i64, f32)>> {
        self.blocking(move |s| {
            let conn = s.reader()?;
            let mut get = conn
                .prepare_cached("SELECT vec FROM vec.vectors WHERE seq = ? AND vec IS NOT NULL")?;
            let mut out = Vec::with_capacity(ids.len());
            for seq in ids {
                let mut rows = get.query([seq])?;
                if let Some(row) = rows.next()? {
                    let blob = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
                    out.push((seq, dot(&query, blob)));
                }
            }
            Ok(out)
        })
    }

    /// Summed as read, in the order SQLite walks the filter's entries.
    fn vector_sum(&self, filter: EntryFilter, cap: usize) -> Fut<'_, (Vec<f64>, usize)> {
        self.blocking(move |s| {
            let mut args = Vec::new();
            let mut sql = format!("SELECT v.vec{}", filtered(&filter, &mut args));
            sql.push_str(&format!(" ORDER BY e.seq DESC LIMIT {cap}"));
            let conn = s.reader()?;
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(params_from_iter(args))?;
            let mut sum = Vec::new();
            let mut n = 0;
            while let Some(row) = rows.next()? {
                let blob = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
                add_blob(&mut sum, blob);
                n += 1;
            }
            Ok((sum, n))
        })
    }

    /// The filter is checked a chunk of the walk at a time, best first (one
    /// query a chunk), so a broad filter checks few.
    fn candidate_check(&self, filter: EntryFilter) -> Box<CandidateCheck> {
        let store = self.store.clone();
        Box::new(move |keys: &[i64]| store.passing(&filter, keys))
    }

    /// The last entry and edit: this engine's own worker embeds them and its
    /// index's mark reaches them together.
    fn embed_goal(&self) -> Fut<'_, EmbedGoal> {
        self.blocking(|s| {
            Ok(EmbedGoal {
                upto: s.embed_target()?,
                backlog: s.embed_queue()?,
            })
        })
    }

    fn embedded_mark(&self, goal: EmbedGoal) -> Fut<'_, Option<(i64, i64)>> {
        Box::pin(async move { Ok(Some(goal.upto)) })
    }

    fn embed_left(&self, _goal: EmbedGoal, scope: Option<Vec<String>>) -> Fut<'_, u64> {
        self.blocking(move |s| Ok(s.embed_queue_in(scope.as_deref())?.max(0) as u64))
    }
}

#[cfg(test)]
mod tests;
