//! The SQLite store: every read and write of pads and entries.
//!
//! Layout: `pad.db` holds pads and entries (the source of truth); `search.db`
//! beside it holds the text index, which a background indexer fills (see
//! `store::text`). The store is synchronous: SQLite answers a point query in
//! microseconds, far less than handing the work to another thread costs, so
//! callers run point operations inline and send scans (search, export, sweeps)
//! to a blocking thread.
//!
//! Writes go through one connection behind a mutex, so they never fight over
//! SQLite's write lock (whose busy handler sleeps in milliseconds); reads use
//! a small pool of read-only connections that see consistent WAL snapshots.
//!
//! Invariants:
//! - every write is one transaction (an `entry.add` is a single INSERT whose
//!   triggers keep `pads` and `entry_tags` in step);
//! - ids are handed out under the writer lock, so id order is commit order:
//!   an indexer that has seen every id up to N in a snapshot has seen every
//!   entry that will ever have an id up to N;
//! - content edits and deletions are logged in `changes` by triggers, so
//!   indexers learn of them whatever path made them.

mod activity;
mod derived;
mod entries;
mod migrate;
mod pads;
mod rows;
mod tasks;
pub mod text;
mod tokens;
pub mod vectors;

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::id::IdGen;

pub use activity::PadRow;
pub use entries::{EntryFilter, NewEntry, Page, Patch};
pub(crate) use pads::no_pad;
pub use pads::{Counts, Inbox, PadSweep};
pub use tasks::{Finish, ReportRow, DEFAULT_LEASE_MS};
pub use text::TextIndex;
pub use tokens::TokenRow;
pub use vectors::VectorStore;

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

/// Read connections kept open between uses.
const IDLE_READERS: usize = 8;

pub struct Store {
    writer: Mutex<Writer>,
    /// Copies WAL pages into the database file in the background, so no
    /// write ever pays for a checkpoint (the writer's auto-checkpoint is off).
    checkpointer: Mutex<Connection>,
    /// Inserts waiting for the writer; whoever holds it commits them together.
    pending: Mutex<Vec<entries::Job>>,
    /// Signalled whenever the writer is released.
    writer_free: tokio::sync::Notify,
    /// Bumped whenever the writer is released, so background work can tell
    /// "nothing was written" without asking SQLite.
    writes: std::sync::atomic::AtomicU64,
    idle_readers: Mutex<Vec<Connection>>,
    text: TextIndex,
    /// Stored embeddings, when semantic search is on.
    vectors: Option<VectorStore>,
    db_path: PathBuf,
    wal_restart_pages: i64,
}

/// The one write connection and the ids it hands out.
pub(crate) struct Writer {
    conn: Connection,
    ids: IdGen,
}

/// The writer, held; releasing it wakes inserts waiting to be combined.
pub(crate) struct WriterGuard<'a> {
    /// Always `Some` until drop, which must unlock *before* it notifies: a
    /// waiter woken while the mutex is still held would fail its `try_lock`
    /// and wait for a notification that never comes.
    guard: Option<MutexGuard<'a, Writer>>,
    store: &'a Store,
}

impl Deref for WriterGuard<'_> {
    type Target = Writer;
    fn deref(&self) -> &Writer {
        self.guard.as_ref().expect("held until drop")
    }
}

impl DerefMut for WriterGuard<'_> {
    fn deref_mut(&mut self) -> &mut Writer {
        self.guard.as_mut().expect("held until drop")
    }
}

impl Drop for WriterGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        self.store
            .writes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
        self.store.writer_free.notify_waiters();
    }
}

/// A pooled read connection, returned to the pool on drop.
pub(crate) struct Reader<'a> {
    conn: Option<Connection>,
    store: &'a Store,
}

impl Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("present until drop")
    }
}

impl DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("present until drop")
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        let mut idle = lock(&self.store.idle_readers);
        if idle.len() < IDLE_READERS {
            idle.extend(self.conn.take());
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a connection cannot leave SQLite half-written (its
    // transaction rolls back), so a poisoned lock is still safe to use.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn pragmas(conn: &Connection, sync: &str) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON;"
    ))?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

impl Store {
    pub fn open(
        dir: &Path,
        durability: Durability,
        default_ttl: Option<i64>,
        wal_restart_pages: i64,
        now: i64,
        semantic: bool,
    ) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::Internal(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        let db_path = dir.join("pad.db");
        let mut conn = Connection::open(&db_path)?;
        pragmas(
            &conn,
            match durability {
                Durability::Normal => "NORMAL",
                Durability::Full => "FULL",
            },
        )?;
        migrate::run(&mut conn, now)?;
        // Checkpoints run in the background (`checkpoint_passive`), off the write path.
        conn.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
        let checkpointer = Connection::open(&db_path)?;
        checkpointer.busy_timeout(Duration::from_secs(10))?;
        conn.execute(
            "UPDATE settings SET value = ? WHERE key = 'default_ttl_seconds'",
            [default_ttl],
        )?;

        let text = TextIndex::open(dir, &db_path)?;
        let vectors = if semantic {
            Some(VectorStore::open(dir, &db_path)?)
        } else {
            None
        };
        // The newest entry may have been deleted: never hand out an id that an
        // index or the change log has already seen.
        let floor: i64 = conn.query_row(
            "SELECT max((SELECT coalesce(max(seq), 0) FROM entries), \
                        (SELECT coalesce(max(seq), 0) FROM changes))",
            [],
            |r| r.get(0),
        )?;
        Ok(Store {
            checkpointer: Mutex::new(checkpointer),
            writer: Mutex::new(Writer {
                conn,
                ids: IdGen::after(
                    floor
                        .max(text.watermark())
                        .max(vectors.as_ref().map_or(0, VectorStore::watermark)),
                ),
            }),
            pending: Mutex::new(Vec::new()),
            writer_free: tokio::sync::Notify::new(),
            writes: std::sync::atomic::AtomicU64::new(0),
            idle_readers: Mutex::new(Vec::new()),
            text,
            vectors,
            db_path,
            wal_restart_pages,
        })
    }

    pub(crate) fn writer(&self) -> WriterGuard<'_> {
        WriterGuard {
            guard: Some(lock(&self.writer)),
            store: self,
        }
    }

    fn try_writer(&self) -> Option<WriterGuard<'_>> {
        let guard = match self.writer.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        Some(WriterGuard {
            guard: Some(guard),
            store: self,
        })
    }

    pub(crate) fn reader(&self) -> Result<Reader<'_>> {
        let conn = lock(&self.idle_readers).pop();
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = Connection::open_with_flags(
                    &self.db_path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY
                        | OpenFlags::SQLITE_OPEN_NO_MUTEX
                        | OpenFlags::SQLITE_OPEN_URI,
                )?;
                c.busy_timeout(Duration::from_secs(10))?;
                c.set_prepared_statement_cache_capacity(64);
                c.execute(
                    "ATTACH DATABASE ? AS fts",
                    [self.text.path().to_string_lossy()],
                )?;
                if let Some(v) = &self.vectors {
                    c.execute("ATTACH DATABASE ? AS vec", [v.path().to_string_lossy()])?;
                }
                c
            }
        };
        Ok(Reader {
            conn: Some(conn),
            store: self,
        })
    }

    /// A number that changes whenever anything may have been written.
    pub fn write_epoch(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn text(&self) -> &TextIndex {
        &self.text
    }

    /// Stored embeddings; `None` when the engine runs without semantic search.
    pub fn vectors(&self) -> Option<&VectorStore> {
        self.vectors.as_ref()
    }

    /// Entries and edits written but not yet embedded (0 without semantic search).
    pub fn embed_queue(&self) -> Result<i64> {
        match &self.vectors {
            Some(v) => self.behind(v.watermark(), v.change_watermark()),
            None => Ok(0),
        }
    }

    /// Brings the text index up to every committed change, then returns.
    pub fn catch_up_text(&self) -> Result<()> {
        self.text.catch_up()
    }

    /// Entries and edits written but not yet in the text index.
    pub fn index_queue(&self) -> Result<i64> {
        self.behind(self.text.watermark(), self.text.change_watermark())
    }

    /// New entries and change-log rows past these watermarks.
    fn behind(&self, seq: i64, change: i64) -> Result<i64> {
        let conn = self.reader()?;
        let n = conn.query_row(
            "SELECT (SELECT count(*) FROM entries WHERE seq > ?1) + \
                    (SELECT count(*) FROM changes WHERE n > ?2)",
            [seq, change],
            |r| r.get(0),
        )?;
        Ok(n)
    }

    /// Bytes on disk of the database, its WAL and the text index.
    pub fn disk_bytes(&self) -> u64 {
        let db = std::fs::metadata(&self.db_path)
            .map(|m| m.len())
            .unwrap_or(0);
        db + self.wal_bytes()
            + self.text.disk_bytes()
            + self.vectors.as_ref().map_or(0, VectorStore::disk_bytes)
    }

    /// Deletes change-log rows every index has already applied.
    pub fn prune_changes(&self) -> Result<usize> {
        let upto = self.text.change_watermark().min(
            self.vectors
                .as_ref()
                .map_or(i64::MAX, VectorStore::change_watermark),
        );
        let w = self.writer();
        Ok(w.conn.execute("DELETE FROM changes WHERE n <= ?", [upto])?)
    }

    /// Folds the WAL back into the database files; the store stays usable.
    /// Copies committed WAL pages into the database file, off the write path.
    ///
    /// A passive checkpoint blocks nobody, but under a steady stream of writes
    /// it never catches the newest frames, so the WAL would never be reused
    /// and would grow without end. So once the WAL passes `wal_restart_pages`,
    /// a second pass runs holding the writer: it only has the tail left to
    /// copy, completes, and the next write reuses the WAL from its start.
    /// Returns the WAL's size in pages before the pass.
    pub fn checkpoint_passive(&self) -> Result<i64> {
        let pass = |mode: &str| -> Result<i64> {
            let conn = lock(&self.checkpointer);
            let (_busy, wal_pages, _copied): (i64, i64, i64) =
                conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
            Ok(wal_pages)
        };
        let wal_pages = pass("PASSIVE")?;
        if wal_pages > self.wal_restart_pages {
            // No write can start meanwhile, so this pass copies the tail and
            // completes; the next write then starts the WAL over (once no
            // reader still needs the old frames). PASSIVE again, never a mode
            // that waits for readers: this holds the writer.
            let _writer = self.writer();
            pass("PASSIVE")?;
        }
        Ok(wal_pages)
    }

    /// The WAL's size on disk, in bytes.
    pub fn wal_bytes(&self) -> u64 {
        std::fs::metadata(format!("{}-wal", self.db_path.display()))
            .map(|m| m.len())
            .unwrap_or(0)
    }

    pub fn checkpoint(&self) {
        let w = self.writer();
        if let Err(e) = w.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);") {
            tracing::warn!("checkpoint failed: {e}");
        }
        self.text.checkpoint();
        if let Some(v) = &self.vectors {
            v.checkpoint();
        }
    }
}
