//! The text index: FTS5 with the trigram tokenizer, kept off the write path.
//!
//! The index lives in `search.db`, a database of its own, so indexing takes
//! `search.db`'s write lock and never `pad.db`'s: writers never wait for it.
//! It follows `pad.db` by two watermarks stored in the same transaction as the
//! index rows: `rev` (entries inserted or updated up to this change number are
//! indexed) and `tomb` (deletions up to this tombstone are applied). A crash
//! loses at most the batch in flight, which is redone; a missing or corrupt
//! `search.db` is rebuilt from `pad.db`.
//!
//! Searches stay read-your-writes by calling `catch_up` with the last
//! committed change before they query: usually a no-op, at worst one batch.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, Executor};
use tokio::sync::Mutex;

use crate::error::Result;

/// Changes indexed per transaction: bounds how long one batch holds `search.db`.
const BATCH: i64 = 2000;
const SCHEMA_VERSION: i64 = 1;

pub struct TextIndex {
    conn: Mutex<SqliteConnection>,
    rev: AtomicI64,
    tomb: AtomicI64,
    path: PathBuf,
}

impl TextIndex {
    pub(super) async fn open(dir: &Path, store_db: &Path) -> Result<Self> {
        let path = dir.join("search.db");
        let conn = match connect(&path, store_db).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(
                    "text index {} unusable ({e}); rebuilding it",
                    path.display()
                );
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                connect(&path, store_db).await?
            }
        };
        let mut conn = conn;
        let store_id: String =
            sqlx::query_scalar("SELECT value FROM store.settings WHERE key = 'store_id'")
                .fetch_one(&mut conn)
                .await?;
        let indexed_for: Option<String> =
            sqlx::query_scalar("SELECT value FROM state WHERE key = 'store_id'")
                .fetch_optional(&mut conn)
                .await?;
        if indexed_for.as_deref() != Some(store_id.as_str()) {
            // A new store, or pad.db was replaced under the index (a restored
            // backup): what the index holds is not about this store.
            let mut tx = conn.begin().await?;
            tx.execute("DELETE FROM entries_fts").await?;
            tx.execute("UPDATE state SET value = 0 WHERE key IN ('rev', 'tomb')")
                .await?;
            sqlx::query("INSERT OR REPLACE INTO state (key, value) VALUES ('store_id', ?)")
                .bind(&store_id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        }
        let (rev, tomb): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT value FROM state WHERE key = 'rev'), (SELECT value FROM state WHERE key = 'tomb')",
        )
        .fetch_one(&mut conn)
        .await?;
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
    pub async fn catch_up(&self, target: i64) -> Result<()> {
        if self.watermark() >= target {
            return Ok(());
        }
        let mut conn = self.conn.lock().await;
        while self.watermark() < target {
            self.index_batch(&mut conn, target).await?;
        }
        Ok(())
    }

    async fn index_batch(&self, conn: &mut SqliteConnection, target: i64) -> Result<()> {
        let from = self.watermark();
        let mut tx = conn.begin().await?;
        // Changed rows: drop what the index holds for them, then index them anew.
        let (max, count): (Option<i64>, i64) = sqlx::query_as(
            "SELECT max(rev), count(*) FROM (SELECT rev FROM store.entries \
             WHERE rev > ?1 AND rev <= ?2 ORDER BY rev LIMIT ?3)",
        )
        .bind(from)
        .bind(target)
        .bind(BATCH)
        .fetch_one(&mut *tx)
        .await?;
        // A full batch stops at its last row; a short one covers up to the target.
        let upto = match max {
            Some(m) if count >= BATCH => m,
            _ => target,
        };
        if count > 0 {
            sqlx::query(
                "DELETE FROM entries_fts WHERE rowid IN \
                 (SELECT seq FROM store.entries WHERE rev > ?1 AND rev <= ?2)",
            )
            .bind(from)
            .bind(upto)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO entries_fts (rowid, content) \
                 SELECT seq, content FROM store.entries WHERE rev > ?1 AND rev <= ?2",
            )
            .bind(from)
            .bind(upto)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("UPDATE state SET value = ? WHERE key = 'rev'")
            .bind(upto)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.rev.store(upto, Ordering::SeqCst);
        Ok(())
    }

    /// Drops deleted entries from the index.
    pub async fn apply_tombstones(&self) -> Result<()> {
        let mut conn = self.conn.lock().await;
        let from = self.tombstone_watermark();
        let mut tx = conn.begin().await?;
        let upto: i64 =
            sqlx::query_scalar("SELECT coalesce(max(n), ?1) FROM store.tombstones WHERE n > ?1")
                .bind(from)
                .fetch_one(&mut *tx)
                .await?;
        if upto > from {
            sqlx::query(
                "DELETE FROM entries_fts WHERE rowid IN \
                 (SELECT seq FROM store.tombstones WHERE n > ?1 AND n <= ?2)",
            )
            .bind(from)
            .bind(upto)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE state SET value = ? WHERE key = 'tomb'")
                .bind(upto)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.tomb.store(upto, Ordering::SeqCst);
        Ok(())
    }

    /// Empties the index so the next catch-up rebuilds it from the store.
    pub async fn reset(&self) -> Result<()> {
        let mut conn = self.conn.lock().await;
        let mut tx = conn.begin().await?;
        tx.execute("DELETE FROM entries_fts").await?;
        tx.execute("UPDATE state SET value = 0 WHERE key IN ('rev', 'tomb')")
            .await?;
        tx.commit().await?;
        self.rev.store(0, Ordering::SeqCst);
        self.tomb.store(0, Ordering::SeqCst);
        Ok(())
    }

    pub(super) async fn close(&self) {
        let mut conn = self.conn.lock().await;
        let _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").await;
    }
}

async fn connect(path: &Path, store_db: &Path) -> Result<SqliteConnection> {
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // The index is derived data: losing its last commits to a power cut
        // only means re-indexing them.
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10))
        .disable_statement_logging()
        .connect()
        .await?;
    conn.execute(
        "CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value ANY NOT NULL) STRICT;
         CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
             content, tokenize = 'trigram', content = '', contentless_delete = 1);
         INSERT OR IGNORE INTO state (key, value) VALUES ('rev', 0), ('tomb', 0), ('schema', 1);",
    )
    .await?;
    let schema: i64 = sqlx::query_scalar("SELECT value FROM state WHERE key = 'schema'")
        .fetch_one(&mut conn)
        .await?;
    if schema != SCHEMA_VERSION {
        return Err(
            sqlx::Error::Protocol(format!("index schema {schema}, want {SCHEMA_VERSION}")).into(),
        );
    }
    // A quick integrity probe: a corrupt file fails here rather than mid-search.
    conn.execute("SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'xyz'")
        .await?;
    sqlx::query("ATTACH DATABASE ? AS store")
        .bind(store_db.to_string_lossy().into_owned())
        .execute(&mut conn)
        .await?;
    Ok(conn)
}

/// A row found by text search, with its relevance.
#[derive(sqlx::FromRow)]
struct ScoredRow {
    #[sqlx(flatten)]
    entry: super::rows::EntryRow,
    score: f64,
}

impl super::Store {
    /// Case-insensitive substring search over live entries. Every word of the
    /// query must occur; results are ranked by BM25 relevance, then recency.
    /// Words of three or more characters go through the trigram index; shorter
    /// ones (which a trigram cannot match) are checked with LIKE, and a query
    /// made only of short words scans the filtered entries, newest first.
    pub async fn search_text(
        &self,
        query: &str,
        filter: &super::EntryFilter,
        limit: u32,
    ) -> Result<Vec<(crate::model::Entry, f64)>> {
        use sqlx::{QueryBuilder, Sqlite};

        self.catch_up_text().await?;
        let words: Vec<&str> = query.split_whitespace().collect();
        let (long, short): (Vec<&str>, Vec<&str>) =
            words.iter().partition(|w| w.chars().count() >= 3);
        let cols = super::rows::ENTRY_COLUMNS;
        let fts_query = long
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" ");
        let likes: Vec<String> = short
            .iter()
            .map(|w| {
                let escaped = w
                    .replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_");
                format!("%{escaped}%")
            })
            .collect();

        let mut q = if long.is_empty() {
            QueryBuilder::<Sqlite>::new(format!(
                "SELECT {cols}, 0.0 AS score FROM entries e JOIN pads p ON p.name = e.pad WHERE 1"
            ))
        } else {
            let mut q = QueryBuilder::<Sqlite>::new(format!(
                "SELECT {cols}, -entries_fts.rank AS score FROM fts.entries_fts \
                 JOIN entries e ON e.seq = entries_fts.rowid JOIN pads p ON p.name = e.pad \
                 WHERE entries_fts MATCH "
            ));
            q.push_bind(&fts_query);
            q
        };
        filter.push_sql(&mut q);
        for like in &likes {
            q.push(" AND e.content LIKE ")
                .push_bind(like)
                .push(" ESCAPE '\\'");
        }
        if long.is_empty() {
            q.push(" ORDER BY e.seq DESC LIMIT ");
        } else {
            q.push(" ORDER BY entries_fts.rank, e.seq DESC LIMIT ");
        }
        q.push_bind(limit as i64);
        let rows: Vec<ScoredRow> = q.build_query_as().fetch_all(self.readers()).await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.entry.into_entry(), r.score))
            .collect())
    }
}
