//! The text index: FTS5 with the trigram tokenizer, kept off the write path.
//!
//! The index lives in `search.db`, a database of its own, so indexing takes
//! `search.db`'s write lock and never `pad.db`'s: writers never wait for it.
//! It follows `pad.db` by two watermarks stored in the same transaction as the
//! index rows: `seq` (every entry up to this id is indexed; ids are handed out
//! in commit order) and `change` (edits and deletions up to this row of the
//! `changes` log are applied). A crash
//! loses at most the batch in flight, which is redone; a missing or corrupt
//! `search.db` is rebuilt from `pad.db`, and so is one built for another store
//! (a restored backup), recognised by the store's id.
//!
//! Searches stay read-your-writes by calling `catch_up` before they query: it
//! indexes whatever was committed before it started — usually nothing, at
//! worst a batch.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::storage::query::Arg;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use super::derived::{connect_derived, disk_bytes, open_or_recreate, Watermarks};
use super::lock;
use super::sqlite::read_entry;
use super::Sqlite;
use crate::error::{Error, Result};
use crate::model::Entry;
use crate::storage::query::{ENTRY_COLUMNS, ENTRY_COLUMN_COUNT};
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::TextSearch;
use crate::terms;

/// The two indexes, with their columns and what fills them from an entry
/// `e`: words (ranked, word-prefix matches; `meta` holds a token for the
/// entry's pad, author, kind and each tag, so a filter by any of them
/// narrows the index's own work) and trigrams (any substring of three or
/// more characters).
const TABLES: [(&str, &str, &str); 2] = [
    (
        "entries_words",
        "content, meta",
        "content, 'p' || hex(pad) || ' a' || hex(author) || ' k' || hex(kind) \
         || coalesce((SELECT group_concat(' t' || hex(value), '') FROM json_each(tags)), '')",
    ),
    ("entries_fts", "content", "content"),
];

/// Changes indexed per transaction: bounds how long one batch holds `search.db`.
const BATCH: i64 = 2000;
/// Segments FTS5 merges at once (its default is 4).
const AUTOMERGE: i64 = 16;
/// 4: the trigram index keeps no positions (`detail = none`); 5: the word
/// index's `meta` column and its vocabulary; 6: kinds and tags in `meta`.
const SCHEMA_VERSION: i64 = 6;

pub struct TextIndex {
    conn: Mutex<Connection>,
    marks: Watermarks,
    path: PathBuf,
    /// The last catch-up could not write (a full disk): searches answer from
    /// what is indexed, and this is logged once per change.
    failing: std::sync::atomic::AtomicBool,
}

impl TextIndex {
    pub(super) fn open(dir: &Path, store_db: &Path) -> Result<Self> {
        let path = dir.join("search.db");
        let mut conn = open_or_recreate(&path, "text index", || connect(&path, store_db))?;
        let store_id: String = conn.query_row(
            "SELECT value FROM store.settings WHERE key = 'store_id'",
            [],
            |r| r.get(0),
        )?;
        let indexed_for: Option<String> = conn
            .query_row("SELECT value FROM state WHERE key = 'store_id'", [], |r| {
                r.get(0)
            })
            .optional()?;
        if indexed_for.as_deref() != Some(store_id.as_str()) {
            let tx = conn.transaction()?;
            tx.execute_batch(
                "DELETE FROM entries_fts; DELETE FROM entries_words;
                 UPDATE state SET value = 0 WHERE key IN ('seq', 'change');",
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO state (key, value) VALUES ('store_id', ?)",
                [&store_id],
            )?;
            tx.commit()?;
        }
        let (seq, change) = conn.query_row(
            "SELECT (SELECT value FROM state WHERE key = 'seq'), (SELECT value FROM state WHERE key = 'change')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let marks = Watermarks::default();
        marks.set(seq, change);
        Ok(TextIndex {
            conn: Mutex::new(conn),
            marks,
            path,
            failing: Default::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry with an id up to this is in the index.
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

    /// Indexes everything committed to the store before the call, in batches.
    /// When the index cannot be written (a full disk), searches still answer
    /// from what it holds: that is logged once, and so is the recovery.
    pub fn catch_up(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        let mut conn = lock(&self.conn);
        loop {
            match self.index_batch(&mut conn) {
                Ok(true) => continue,
                Ok(false) => {
                    if self.failing.swap(false, Ordering::AcqRel) {
                        tracing::info!("the text index takes writes again and is up to date");
                    }
                    return Ok(());
                }
                Err(e @ Error::Unavailable(_)) => {
                    if !self.failing.swap(true, Ordering::AcqRel) {
                        tracing::error!(
                            "the text index cannot be brought up to date ({e}); text searches answer from what it holds until it can"
                        );
                    }
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Indexes one batch; `false` once there was nothing left to do.
    fn index_batch(&self, conn: &mut Connection) -> Result<bool> {
        let (seq_from, change_from) = (self.watermark(), self.change_watermark());
        // One transaction: every read of the store sees one snapshot.
        let tx = conn.transaction()?;
        let (seq_upto, seq_more) = next_batch(&tx, "seq", "store.entries", seq_from)?;
        if seq_more > 0 {
            for (table, columns, values) in TABLES {
                tx.execute(
                    &format!(
                        "INSERT INTO {table} (rowid, {columns}) \
                         SELECT seq, {values} FROM store.entries WHERE seq > ?1 AND seq <= ?2"
                    ),
                    params![seq_from, seq_upto],
                )?;
            }
        }
        // Edits and deletions, once new entries are done (an edit of an entry
        // not yet indexed is picked up by the insert pass, with its new text).
        let mut change_upto = change_from;
        if seq_more < BATCH {
            let (upto, n) = next_batch(&tx, "n", "store.changes", change_from)?;
            if n > 0 {
                change_upto = upto;
                let changed = "SELECT seq FROM store.changes WHERE n > ?1 AND n <= ?2";
                for (table, columns, values) in TABLES {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE rowid IN ({changed})"),
                        params![change_from, change_upto],
                    )?;
                    tx.execute(
                        &format!(
                            "INSERT INTO {table} (rowid, {columns}) SELECT seq, {values} \
                             FROM store.entries WHERE seq IN ({changed}) AND seq <= ?3"
                        ),
                        params![change_from, change_upto, seq_upto],
                    )?;
                }
            }
        }
        if seq_upto == seq_from && change_upto == change_from {
            return Ok(false);
        }
        tx.execute(
            "UPDATE state SET value = CASE key WHEN 'seq' THEN ?1 ELSE ?2 END \
             WHERE key IN ('seq', 'change')",
            params![seq_upto, change_upto],
        )?;
        tx.commit()?;
        self.marks.set(seq_upto, change_upto);
        Ok(true)
    }

    pub(super) fn checkpoint(&self) {
        let conn = lock(&self.conn);
        let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    }
}

/// The end of the next batch of rows of `table` past `from` (by `key`), and
/// how many rows it holds; `(from, 0)` when there are none.
fn next_batch(conn: &Connection, key: &str, table: &str, from: i64) -> Result<(i64, i64)> {
    let (upto, n): (Option<i64>, i64) = conn.query_row(
        &format!(
            "SELECT max({key}), count(*) FROM \
             (SELECT {key} FROM {table} WHERE {key} > ?1 ORDER BY {key} LIMIT ?2)"
        ),
        params![from, BATCH],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok((upto.unwrap_or(from), n))
}

fn connect(path: &Path, store_db: &Path) -> Result<Connection> {
    let conn = connect_derived(path)?;
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value ANY NOT NULL) STRICT;
         -- No positions: a substring query asks for each of its trigrams
         -- and checks the candidates' text (pad_contains). Indexing costs
         -- ~40% less CPU per entry and the index is half the size.
         CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
             content, tokenize = 'trigram', detail = 'none', content = '',
             contentless_delete = 1);
         CREATE VIRTUAL TABLE IF NOT EXISTS entries_words USING fts5(
             content, meta, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3',
             content = '', contentless_delete = 1);
         -- The word counts' vocabulary table of earlier builds: counting
         -- through it walked a common word's every posting (`word_counts`).
         DROP TABLE IF EXISTS entries_words_terms;
         INSERT OR IGNORE INTO state (key, value)
             VALUES ('seq', 0), ('change', 0), ('schema', {SCHEMA_VERSION});
         -- Merge segments 16 at a time, not 4: indexing costs ~30% less CPU
         -- (measured on the benchmark's corpus, batches of 500) and queries
         -- stay as fast. Writes bring indexing, so this is write throughput.
         INSERT INTO entries_fts (entries_fts, rank) VALUES ('automerge', {AUTOMERGE});
         INSERT INTO entries_words (entries_words, rank) VALUES ('automerge', {AUTOMERGE});"
    ))?;
    let schema: i64 = conn.query_row("SELECT value FROM state WHERE key = 'schema'", [], |r| {
        r.get(0)
    })?;
    if schema != SCHEMA_VERSION {
        return Err(crate::error::Error::Internal(format!(
            "index schema {schema}, this build uses {SCHEMA_VERSION}"
        )));
    }
    // A quick probe: a corrupt file fails here rather than in the middle of a search.
    conn.query_row(
        "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'prb'",
        [],
        |r| r.get::<_, i64>(0),
    )?;
    conn.execute("ATTACH DATABASE ? AS store", [store_db.to_string_lossy()])?;
    Ok(conn)
}

fn word_hits(
    conn: &Connection,
    words: &[String],
    filter: &EntryFilter,
    limit: u32,
    prefix: bool,
    readable: Option<u64>,
) -> Result<Vec<(Entry, f64)>> {
    // A word with no letters or digits has no tokens; it can only match as a substring.
    if words.is_empty() || words.iter().any(|w| !w.chars().any(char::is_alphanumeric)) {
        return Ok(Vec::new());
    }
    // A prefix of one or two characters ("a*", "in*") would merge
    // thousands of terms for nothing: short words match whole.
    let phrases: Vec<String> = words
        .iter()
        .map(|w| phrase(w, prefix && w.chars().count() >= 3))
        .collect();
    let fts_query = phrases.join(" ");
    // FTS5's bm25() counts each word over the whole index: a scoped
    // caller's rank is told its own counts instead.
    let Some(readable) = readable else {
        return bm25_hits(conn, &fts_query, None, filter, limit, true);
    };
    let dfs = phrase_counts(conn, &phrases, filter, terms::POSTINGS_BUDGET as i64 + 1)?;
    let told = Told {
        dfs: &dfs,
        readable: Some(readable),
    };
    bm25_hits(conn, &fts_query, Some(told), filter, limit, true)
}

/// What `pad_bm25` is told: how many entries hold each phrase and, for a
/// scoped caller, how many it may read.
#[derive(Clone, Copy)]
struct Told<'a> {
    dfs: &'a [u64],
    readable: Option<u64>,
}

/// How many entries hold each of `words` (words in none left out), at
/// most the filtered pad's size, and counted only up to just past the
/// postings budget (`terms::POSTINGS_BUDGET`): a word more common than that
/// is not ranked by, and counting every entry holding a word found in most
/// of them cost 3–5 ms at 100k entries, a question's every such word.
fn word_counts(
    conn: &Connection,
    words: &[String],
    filter: &EntryFilter,
) -> Result<Vec<(String, u64)>> {
    // At most the pad's entries can match inside a pad.
    let cap: Option<i64> = match &filter.pad {
        Some(pad) => conn
            .prepare_cached("SELECT entries FROM pads WHERE name = ?")?
            .query_row([pad], |r| r.get(0))
            .optional()?,
        None => None,
    };
    let upto = cap.map_or(terms::POSTINGS_BUDGET as i64, |c| {
        c.min(terms::POSTINGS_BUDGET as i64)
    }) + 1;
    let phrases: Vec<String> = words.iter().map(|w| phrase(w, false)).collect();
    let counts = phrase_counts(conn, &phrases, filter, upto)?;
    Ok(words
        .iter()
        .zip(counts)
        .filter(|(_, df)| *df > 0)
        .map(|(w, df)| (w.clone(), df.min(cap.map_or(u64::MAX, |c| c as u64))))
        .collect())
}

/// `word` as an FTS5 phrase, quoted; with `prefix`, matching words it begins.
fn phrase(word: &str, prefix: bool) -> String {
    let star = if prefix { "*" } else { "" };
    format!("\"{}\"{star}", word.replace('"', "\"\""))
}

/// How many entries in the filter's scope hold each FTS5 phrase, counted
/// up to `upto`.
fn phrase_counts(
    conn: &Connection,
    phrases: &[String],
    filter: &EntryFilter,
    upto: i64,
) -> Result<Vec<u64>> {
    // A token's counts are over its pads alone: they weigh its ranking and
    // its explanation shows them (`EntryFilter::scope`); over every pad the
    // index alone answers.
    let mut sql = String::from("SELECT count(*) FROM (SELECT 1 FROM fts.entries_words");
    let mut scope = Vec::new();
    match filter.scope.as_deref() {
        Some(pads) => {
            sql.push_str(
                " CROSS JOIN entries e ON e.seq = entries_words.rowid WHERE entries_words MATCH ?",
            );
            super::sqlite::append(&mut sql, &mut scope, |q| q.scope(pads));
        }
        None => sql.push_str(" WHERE entries_words MATCH ?"),
    }
    sql.push_str(" LIMIT ?)");
    let mut count = conn.prepare_cached(&sql)?;
    let mut counted = Vec::with_capacity(phrases.len());
    for phrase in phrases {
        let args = std::iter::once(Arg::Text(format!("content : {phrase}")))
            .chain(scope.iter().cloned())
            .chain(std::iter::once(Arg::Int(upto)));
        let df: i64 = count.query_row(params_from_iter(args), |r| r.get(0))?;
        counted.push(df as u64);
    }
    Ok(counted)
}

/// The entries matching `words` (an FTS5 expression over `content`) that
/// pass `filter`, best first by BM25, then newest: with `dfs`, how many
/// entries hold each word, `pad_bm25` (`store::rank`) weighs them by those
/// counts; without, FTS5's `bm25()` counts them. `newest_only` ranks only
/// the newest matches (`terms::newest_candidates`): a common word's every
/// match would cost tens of milliseconds to rank. Ranking runs on (id,
/// score) alone; only the winners are read in full.
fn bm25_hits(
    conn: &Connection,
    words: &str,
    told: Option<Told>,
    filter: &EntryFilter,
    limit: u32,
    newest_only: bool,
) -> Result<Vec<(Entry, f64)>> {
    let matching = format!("content : ({words}){}", narrowing(filter));
    let mut args = Vec::new();
    let score = score_sql(told, &mut args);
    args.push(Arg::Text(matching));
    if !newest_only && narrowed_by_index(filter) {
        if let Some(hits) = ranked_in_index(conn, &score, args.clone(), filter, limit)? {
            return Ok(hits);
        }
    }
    let mut sql = format!(
        "SELECT e.seq, {score} FROM fts.entries_words \
         CROSS JOIN entries e ON e.seq = entries_words.rowid JOIN pads p ON p.name = e.pad \
         WHERE entries_words MATCH ?"
    );
    super::sqlite::append(&mut sql, &mut args, |q| q.filter_per_entry(filter));
    let candidates = if newest_only {
        sql.push_str(" ORDER BY entries_words.rowid DESC LIMIT ?");
        terms::newest_candidates(limit)
    } else {
        sql.push_str(" ORDER BY 2 DESC, e.seq DESC LIMIT ?");
        limit
    };
    args.push(Arg::Int(candidates as i64));
    let mut ranked: Vec<(i64, f64)> = conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    ranked.truncate(limit as usize);
    read_ranked(conn, ranked)
}

/// The entries `ranked` names, with their scores, in its order.
fn read_ranked(conn: &Connection, ranked: Vec<(i64, f64)>) -> Result<Vec<(Entry, f64)>> {
    let mut load = conn.prepare_cached(&format!(
        "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = ?"
    ))?;
    let mut hits = Vec::with_capacity(ranked.len());
    for (seq, score) in ranked {
        hits.push((load.query_row([seq], read_entry)?, score));
    }
    Ok(hits)
}

/// A ranked query's score column, its counts pushed to `args`.
fn score_sql(told: Option<Told>, args: &mut Vec<Arg>) -> String {
    match told {
        None => "-bm25(entries_words, 1.0, 0.0)".into(),
        Some(Told { dfs, readable }) => {
            // 0: the entries indexed.
            args.push(Arg::Int(readable.map_or(0, |r| r as i64)));
            args.extend(dfs.iter().map(|df| Arg::Int(*df as i64)));
            format!("pad_bm25(entries_words, ?{})", ", ?".repeat(dfs.len()))
        }
    }
}

/// `bm25_hits` ranking every match, in the index alone: FTS5 scores and
/// keeps the best few (`terms::index_candidates`), then each is read with
/// the filter checked, best first, until the page is full. Joining every
/// match to its entry and pad before ranking cost as much as ranking
/// itself (a question at 100k entries, ~4,500 matches: p50 ~20 ms joined,
/// ~10 ms here). Only for a filter the index applies (`narrowed_by_index`):
/// under a status, a date or a category, the join ranks only the few
/// matches that pass.
/// `None` when too few of the best pass while more matches remain (an
/// archived pad's): the caller then ranks only the matches that pass.
/// `args`: the score's and the match's.
fn ranked_in_index(
    conn: &Connection,
    score: &str,
    mut args: Vec<Arg>,
    filter: &EntryFilter,
    limit: u32,
) -> Result<Option<Vec<(Entry, f64)>>> {
    let candidates = terms::index_candidates(limit);
    args.push(Arg::Int(candidates as i64));
    let ranked: Vec<(i64, f64)> = conn
        .prepare_cached(&format!(
            "SELECT rowid, {score} FROM fts.entries_words \
             WHERE entries_words MATCH ? ORDER BY 2 DESC, rowid DESC LIMIT ?"
        ))?
        .query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad WHERE e.seq = ?"
    );
    let mut args = vec![Arg::Null];
    super::sqlite::append(&mut sql, &mut args, |q| q.filter_per_entry(filter));
    let mut read = conn.prepare_cached(&sql)?;
    let mut hits = Vec::with_capacity(limit as usize);
    for &(seq, score) in &ranked {
        if hits.len() == limit as usize {
            break;
        }
        args[0] = Arg::Int(seq);
        if let Some(row) = read
            .query_row(params_from_iter(&args), read_entry)
            .optional()?
        {
            hits.push((row, score));
        }
    }
    let every_match_seen = ranked.len() < candidates as usize;
    Ok((hits.len() == limit as usize || every_match_seen).then_some(hits))
}

/// Whether the index's own query applies every condition of `filter` that
/// leaves out many entries (pad, author, kind, tags, a token's pads:
/// `narrowing`); what is left to check (an archived pad, a superseded note)
/// leaves out few.
fn narrowed_by_index(filter: &EntryFilter) -> bool {
    filter.status.is_none()
        && filter.since.is_none()
        && filter.category.is_none()
        && filter.min_confidence.is_none()
}

/// The `meta` column's terms for a filter's pad, author, kind, tags and
/// token scope, as ` AND …` for a word index query: FTS5 then walks only
/// the matching entries' postings. `Query::filter_per_entry` still checks each exactly.
fn narrowing(filter: &EntryFilter) -> String {
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let mut q = String::new();
    if let Some(pad) = &filter.pad {
        q.push_str(&format!(" AND meta : p{}", hex(pad)));
    }
    if let Some(author) = &filter.author {
        q.push_str(&format!(" AND meta : a{}", hex(author)));
    }
    if let Some(kind) = filter.kind {
        q.push_str(&format!(" AND meta : k{}", hex(kind.as_str())));
    }
    for tag in &filter.tags {
        q.push_str(&format!(" AND meta : t{}", hex(tag)));
    }
    if let Some(scope) = &filter.scope {
        if scope.is_empty() {
            return q;
        }
        let any: Vec<String> = scope
            .iter()
            .map(|p| match p.strip_suffix('*') {
                // An empty prefix: any pad at all.
                Some("") => "p*".to_string(),
                Some(prefix) => format!("p{}*", hex(prefix)),
                None => format!("p{}", hex(p)),
            })
            .collect();
        q.push_str(&format!(" AND meta : ({})", any.join(" OR ")));
    }
    q
}

fn substring_hits(
    conn: &Connection,
    words: &[String],
    filter: &EntryFilter,
    limit: u32,
) -> Result<Vec<(Entry, f64)>> {
    // Every trigram of every word of three or more characters must be in the
    // entry (the index's part), then each word must occur as written, case
    // aside (pad_contains on the candidates).
    let mut trigrams: Vec<String> = Vec::new();
    for w in words {
        let chars: Vec<char> = w.chars().collect();
        for t in chars.windows(3) {
            let t: String = t.iter().collect();
            let t = format!("\"{}\"", t.replace('"', "\"\""));
            if !trigrams.contains(&t) {
                trigrams.push(t);
            }
        }
    }
    let mut args: Vec<Arg> = Vec::new();
    let mut sql = if trigrams.is_empty() {
        format!("SELECT {ENTRY_COLUMNS}, 0.0 FROM entries e JOIN pads p ON p.name = e.pad WHERE 1")
    } else {
        args.push(Arg::Text(trigrams.join(" ")));
        format!(
            "SELECT {ENTRY_COLUMNS}, 0.0 FROM fts.entries_fts \
             CROSS JOIN entries e ON e.seq = entries_fts.rowid JOIN pads p ON p.name = e.pad \
             WHERE entries_fts MATCH ?"
        )
    };
    super::sqlite::append(&mut sql, &mut args, |q| q.filter_per_entry(filter));
    for w in words {
        sql.push_str(" AND pad_contains(e.content, ?)");
        args.push(Arg::Text(w.clone()));
    }
    // Ordering by the FTS table's own rowid lets SQLite take FTS5's order and
    // stop at the limit instead of joining and sorting every match.
    sql.push_str(if trigrams.is_empty() {
        " ORDER BY e.seq DESC LIMIT ?"
    } else {
        " ORDER BY entries_fts.rowid DESC LIMIT ?"
    });
    args.push(Arg::Int(limit as i64));
    let hits = conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter(args), |r| {
            Ok((read_entry(r)?, r.get::<_, f64>(ENTRY_COLUMN_COUNT)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(hits)
}

impl TextSearch for Sqlite {
    /// Text search's tiers 1 and 2 (`engine::search`'s pipeline): entries
    /// holding every word whole ("login" finds "Login failed") or, with
    /// `prefix`, by its beginning ("dock" finds "Docker"; prefix queries
    /// cost more, as FTS5 merges every matching term). Case and accents aside.
    fn word_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
        prefix: bool,
        readable: Option<u64>,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        let (words, filter) = (words.to_vec(), filter.clone());
        self.blocking(move |s| {
            let conn = s.reader()?;
            word_hits(&conn, &words, &filter, limit, prefix, readable)
        })
    }

    /// Tier 3: entries holding every word anywhere ("ocker" finds
    /// "Docker"), through the trigram index, newest first; words under three
    /// characters use LIKE.
    fn substring_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        let (words, filter) = (words.to_vec(), filter.clone());
        self.blocking(move |s| {
            let conn = s.reader()?;
            substring_hits(&conn, &words, &filter, limit)
        })
    }

    /// For tier 4: how many entries hold each word (words in none left
    /// out), at most the filtered pad's size.
    fn word_counts<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(String, u64)>> {
        self.inline(move |s| {
            let conn = s.reader()?;
            word_counts(&conn, words, filter)
        })
    }

    /// Tier 4: entries holding any of `words`, ranked by BM25, best first;
    /// `newest_only` ranks only the newest matches (`terms::newest_candidates`).
    fn any_word_hits<'a>(
        &'a self,
        words: &'a [(String, u64)],
        readable: Option<u64>,
        filter: &'a EntryFilter,
        limit: u32,
        newest_only: bool,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        let (words, filter) = (words.to_vec(), filter.clone());
        self.blocking(move |s| {
            let any = words
                .iter()
                .map(|(w, _)| format!("\"{}\"", w.replace('"', "\"\"")))
                .collect::<Vec<_>>()
                .join(" OR ");
            let dfs: Vec<u64> = words.iter().map(|(_, df)| *df).collect();
            let conn = s.reader()?;
            let told = Told {
                dfs: &dfs,
                readable,
            };
            bm25_hits(&conn, &any, Some(told), &filter, limit, newest_only)
        })
    }

    fn postings_budget(&self) -> u64 {
        crate::terms::POSTINGS_BUDGET
    }

    fn index_text(&self) -> Fut<'_, ()> {
        self.blocking(|s| s.catch_up_text())
    }
}
