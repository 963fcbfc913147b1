//! The SQLite store: every read and write of pads and entries.
//!
//! Layout: `pad.db` holds pads and entries (the source of truth); `search.db`
//! beside it holds the text index, which a background indexer fills (see
//! `store::text`). Writes go through one connection behind an async mutex, so
//! they never fight over SQLite's write lock (SQLite's busy handler sleeps in
//! milliseconds); reads use a pool and see a consistent WAL snapshot.
//!
//! Invariants:
//! - every write is one transaction (an `entry.add` is a single INSERT whose
//!   triggers keep `pads` and `entry_tags` in step);
//! - each insert or update stamps the row with a fresh `rev`, a number that
//!   only grows, so indexers can follow changes with a watermark;
//! - `committed_rev` is published only after the commit, so an indexer never
//!   waits for a change that may still roll back.

mod entries;
mod pads;
mod rows;
pub mod text;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{ConnectOptions, Executor};
use tokio::sync::{Mutex, MutexGuard};

use crate::error::{Error, Result};

pub use entries::{EntryFilter, NewEntry, Page, Patch};
pub(crate) use pads::no_pad;
pub use pads::{Counts, PadSweep};
pub use text::TextIndex;

/// How hard a commit works to reach the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// WAL with `synchronous=NORMAL`: survives a killed process, may lose the
    /// last commits on power loss or an OS crash.
    #[default]
    Normal,
    /// WAL with `synchronous=FULL`: also survives power loss, at an fsync per commit.
    Full,
}

impl FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "normal" => Ok(Durability::Normal),
            "full" => Ok(Durability::Full),
            other => Err(format!("durability '{other}': use 'normal' or 'full'")),
        }
    }
}

pub struct Store {
    writer: Mutex<Writer>,
    readers: SqlitePool,
    committed_rev: AtomicI64,
    text: TextIndex,
    db_path: PathBuf,
}

/// The one write connection and the next change number it hands out.
pub(crate) struct Writer {
    conn: SqliteConnection,
    next_rev: i64,
}

impl Writer {
    fn take_rev(&mut self) -> i64 {
        let r = self.next_rev;
        self.next_rev += 1;
        r
    }
}

impl Store {
    pub async fn open(
        dir: &Path,
        durability: Durability,
        default_ttl: Option<i64>,
    ) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::Internal(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        let db_path = dir.join("pad.db");
        let sync = match durability {
            Durability::Normal => SqliteSynchronous::Normal,
            Durability::Full => SqliteSynchronous::Full,
        };
        let base = SqliteConnectOptions::new()
            .filename(&db_path)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(sync)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            .disable_statement_logging();
        let mut conn = base.clone().create_if_missing(true).connect().await?;
        sqlx::migrate!("./migrations").run(&mut conn).await?;
        sqlx::query("UPDATE settings SET value = ? WHERE key = 'default_ttl_seconds'")
            .bind(default_ttl)
            .execute(&mut conn)
            .await?;

        let text = TextIndex::open(dir, &db_path).await?;
        let max_rev: i64 = sqlx::query_scalar("SELECT coalesce(max(rev), 0) FROM entries")
            .fetch_one(&mut conn)
            .await?;
        // A deleted newest entry leaves max(rev) below what the index has seen;
        // never hand out a number the index already passed.
        let last_rev = max_rev.max(text.watermark());

        let search_db = text.path().to_owned();
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(1)
            .after_connect(move |conn, _| {
                let search_db = search_db.clone();
                Box::pin(async move {
                    sqlx::query("ATTACH DATABASE ? AS fts")
                        .bind(search_db.to_string_lossy().into_owned())
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
            })
            .connect_with(base.read_only(true))
            .await?;

        Ok(Store {
            writer: Mutex::new(Writer {
                conn,
                next_rev: last_rev + 1,
            }),
            readers,
            committed_rev: AtomicI64::new(last_rev),
            text,
            db_path,
        })
    }

    pub(crate) async fn writer(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().await
    }

    /// Marks `rev` as committed (call with the writer still held).
    fn publish(&self, rev: i64) {
        self.committed_rev.fetch_max(rev, Ordering::SeqCst);
    }

    pub fn committed_rev(&self) -> i64 {
        self.committed_rev.load(Ordering::SeqCst)
    }

    pub fn text(&self) -> &TextIndex {
        &self.text
    }

    pub fn readers(&self) -> &SqlitePool {
        &self.readers
    }

    /// Brings the text index up to every committed change, then returns.
    pub async fn catch_up_text(&self) -> Result<()> {
        self.text.catch_up(self.committed_rev()).await
    }

    /// Bytes on disk of the database, its WAL and the text index.
    pub fn disk_bytes(&self) -> u64 {
        let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let wal = PathBuf::from(format!("{}-wal", self.db_path.display()));
        size(self.db_path.clone()) + size(wal) + self.text.disk_bytes()
    }

    /// Deletes tombstones every indexer has already applied.
    pub async fn prune_tombstones(&self) -> Result<u64> {
        let upto = self.text.tombstone_watermark();
        let mut w = self.writer().await;
        let done = sqlx::query("DELETE FROM tombstones WHERE n <= ?")
            .bind(upto)
            .execute(&mut w.conn)
            .await?;
        Ok(done.rows_affected())
    }

    /// Flushes the WAL into the database and closes every connection.
    pub async fn close(&self) {
        let mut w = self.writer.lock().await;
        let _ = w.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").await;
        self.readers.close().await;
        self.text.close().await;
    }
}
