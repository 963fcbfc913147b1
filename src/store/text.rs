//! The text index: FTS5 with the trigram tokenizer, kept off the write path.
//!
//! The index lives in `search.db`, a database of its own, so indexing takes
//! `search.db`'s write lock and never `pad.db`'s: writers never wait for it.
//! It follows `pad.db` by two watermarks stored in the same transaction as the
//! index rows: `rev` (entries inserted or updated up to this change number are
//! indexed) and `tomb` (deletions up to this tombstone are applied). A crash
//! loses at most the batch in flight, which is redone; a missing or corrupt
//! `search.db` is rebuilt from `pad.db`, and so is one built for another store
//! (a restored backup), recognised by the store's id.
//!
//! Searches stay read-your-writes by calling `catch_up` with the last
//! committed change before they query: usually a no-op, at worst one batch.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::types::Value as Sql;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use super::rows::{EntryRow, ENTRY_COLUMNS};
use super::{lock, EntryFilter, Store};
use crate::error::Result;
use crate::model::Entry;

/// Changes indexed per transaction: bounds how long one batch holds `search.db`.
const BATCH: i64 = 2000;
const SCHEMA_VERSION: i64 = 1;

pub struct TextIndex {
    conn: Mutex<Connection>,
    rev: AtomicI64,
    tomb: AtomicI64,
    path: PathBuf,
}

impl TextIndex {
    pub(super) fn open(dir: &Path, store_db: &Path) -> Result<Self> {
        let path = dir.join("search.db");
        let mut conn = match connect(&path, store_db) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(
                    "text index {} unusable ({e}); rebuilding it",
                    path.display()
                );
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                connect(&path, store_db)?
            }
        };
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
                "DELETE FROM entries_fts; UPDATE state SET value = 0 WHERE key IN ('rev', 'tomb');",
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO state (key, value) VALUES ('store_id', ?)",
                [&store_id],
            )?;
            tx.commit()?;
        }
        let (rev, tomb) = conn.query_row(
            "SELECT (SELECT value FROM state WHERE key = 'rev'), (SELECT value FROM state WHERE key = 'tomb')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(TextIndex {
            conn: Mutex::new(conn),
            rev: AtomicI64::new(rev),
            tomb: AtomicI64::new(tomb),
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every change up to this number is in the index.
    pub fn watermark(&self) -> i64 {
        self.rev.load(Ordering::SeqCst)
    }

    pub fn tombstone_watermark(&self) -> i64 {
        self.tomb.load(Ordering::SeqCst)
    }

    pub fn disk_bytes(&self) -> u64 {
        let size = |p: String| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        size(self.path.display().to_string()) + size(format!("{}-wal", self.path.display()))
    }

    /// Indexes every change up to `target` (a committed rev), in batches.
    /// Deleted entries may linger in the index until `apply_tombstones`;
    /// searches join back to `entries`, so they never surface.
    pub fn catch_up(&self, target: i64) -> Result<()> {
        if self.watermark() >= target {
            return Ok(());
        }
        let mut conn = lock(&self.conn);
        while self.watermark() < target {
            self.index_batch(&mut conn, target)?;
        }
        Ok(())
    }

    fn index_batch(&self, conn: &mut Connection, target: i64) -> Result<()> {
        let from = self.watermark();
        let tx = conn.transaction()?;
        let (max, count): (Option<i64>, i64) = tx.query_row(
            "SELECT max(rev), count(*) FROM (SELECT rev FROM store.entries \
             WHERE rev > ?1 AND rev <= ?2 ORDER BY rev LIMIT ?3)",
            params![from, target, BATCH],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        // A full batch stops at its last row; a short one covers up to the target.
        let upto = match max {
            Some(m) if count >= BATCH => m,
            _ => target,
        };
        if count > 0 {
            // Changed rows: drop what the index holds for them, then index them anew.
            tx.execute(
                "DELETE FROM entries_fts WHERE rowid IN \
                 (SELECT seq FROM store.entries WHERE rev > ?1 AND rev <= ?2)",
                params![from, upto],
            )?;
            tx.execute(
                "INSERT INTO entries_fts (rowid, content) \
                 SELECT seq, content FROM store.entries WHERE rev > ?1 AND rev <= ?2",
                params![from, upto],
            )?;
        }
        tx.execute("UPDATE state SET value = ? WHERE key = 'rev'", [upto])?;
        tx.commit()?;
        self.rev.store(upto, Ordering::SeqCst);
        Ok(())
    }

    /// Drops deleted entries from the index.
    pub fn apply_tombstones(&self) -> Result<()> {
        let mut conn = lock(&self.conn);
        let from = self.tombstone_watermark();
        let upto: i64 = conn.query_row(
            "SELECT coalesce(max(n), ?1) FROM store.tombstones WHERE n > ?1",
            [from],
            |r| r.get(0),
        )?;
        if upto > from {
            let tx = conn.transaction()?;
            tx.execute(
                "DELETE FROM entries_fts WHERE rowid IN \
                 (SELECT seq FROM store.tombstones WHERE n > ?1 AND n <= ?2)",
                [from, upto],
            )?;
            tx.execute("UPDATE state SET value = ? WHERE key = 'tomb'", [upto])?;
            tx.commit()?;
            self.tomb.store(upto, Ordering::SeqCst);
        }
        Ok(())
    }

    pub(super) fn checkpoint(&self) {
        let conn = lock(&self.conn);
        let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    }
}

fn connect(path: &Path, store_db: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    // The index is derived data: losing its last commits to a power cut only
    // means indexing them again.
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value ANY NOT NULL) STRICT;
         CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
             content, tokenize = 'trigram', content = '', contentless_delete = 1);
         INSERT OR IGNORE INTO state (key, value) VALUES ('rev', 0), ('tomb', 0), ('schema', 1);",
    )?;
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
        "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'probe'",
        [],
        |r| r.get::<_, i64>(0),
    )?;
    conn.execute("ATTACH DATABASE ? AS store", [store_db.to_string_lossy()])?;
    Ok(conn)
}

impl Store {
    /// Case-insensitive substring search over live entries. Every word of the
    /// query must occur; results rank by BM25 relevance, then recency. Words of
    /// three or more characters go through the trigram index; shorter ones
    /// (which a trigram cannot match) are checked with LIKE, and a query made
    /// only of short words scans the filtered entries, newest first.
    pub fn search_text(
        &self,
        query: &str,
        filter: &EntryFilter,
        limit: u32,
    ) -> Result<Vec<(Entry, f64)>> {
        self.catch_up_text()?;
        let (long, short): (Vec<&str>, Vec<&str>) = query
            .split_whitespace()
            .partition(|w| w.chars().count() >= 3);
        let mut args: Vec<Sql> = Vec::new();
        let mut sql = if long.is_empty() {
            format!(
                "SELECT {ENTRY_COLUMNS}, 0.0 FROM entries e JOIN pads p ON p.name = e.pad WHERE 1"
            )
        } else {
            let fts_query = long
                .iter()
                .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
                .collect::<Vec<_>>()
                .join(" ");
            args.push(Sql::Text(fts_query));
            format!(
                "SELECT {ENTRY_COLUMNS}, -entries_fts.rank FROM fts.entries_fts \
                 JOIN entries e ON e.seq = entries_fts.rowid JOIN pads p ON p.name = e.pad \
                 WHERE entries_fts MATCH ?"
            )
        };
        filter.push_sql(&mut sql, &mut args);
        for w in &short {
            let escaped = w
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            sql.push_str(" AND e.content LIKE ? ESCAPE '\\'");
            args.push(Sql::Text(format!("%{escaped}%")));
        }
        sql.push_str(if long.is_empty() {
            " ORDER BY e.seq DESC LIMIT ?"
        } else {
            " ORDER BY entries_fts.rank, e.seq DESC LIMIT ?"
        });
        args.push(Sql::Integer(limit as i64));
        let conn = self.reader()?;
        let hits = conn
            .prepare_cached(&sql)?
            .query_map(params_from_iter(args), |r| {
                Ok((EntryRow::read(r)?.entry, r.get::<_, f64>(20)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(hits)
    }
}
