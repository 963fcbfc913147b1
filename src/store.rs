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
//! New entries are acknowledged once they are in the insert journal
//! (`store::journal`) and applied to SQLite in batches; whoever takes the
//! writer applies them first, and a read takes the writer while any are
//! pending, so every read sees every acknowledged write.
//!
//! Invariants:
//! - every SQLite write is one transaction; new entries go through one
//!   function (`entries::insert_rows`) that keeps `pads` and `entry_tags` in
//!   step, and triggers do so for edits and deletions;
//! - ids are handed out by the journal in append order and applied in that
//!   order, so id order is commit order: an indexer that has seen every id up
//!   to N in a snapshot has seen every entry that will ever have an id up to N;
//! - content edits and deletions are logged in `changes` by triggers, so
//!   indexers learn of them whatever path made them.

mod activity;
mod derived;
mod entries;
mod filter;
mod history;
mod journal;
mod keep;
mod migrate;
mod pads;
mod rank;
mod room;
mod sparse;
mod sqlite;
mod tasks;
pub mod text;
mod tokens;
mod tx;
mod upkeep;
mod vector_source;
pub mod vectors;

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

pub use sqlite::Sqlite;
pub use text::TextIndex;
pub use vector_source::SqliteVectors;
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

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Durability::Normal => "normal",
            Durability::Full => "full",
        })
    }
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

/// How long the journal thread lets acknowledged inserts gather before it
/// applies them.
const APPLY_DELAY: Duration = Duration::from_millis(1);
/// The journal thread's priority (`Store::apply_loop`).
const APPLIER_NICE: libc::c_int = 19;
/// Entries the journal thread applies per turn with the writer: ~1.7 ms of
/// work (~13 µs an entry), so a read or an edit waiting for the writer
/// waits for that much at most, however far behind the journal is.
const APPLY_CHUNK: usize = 128;

/// Read connections kept open between uses.
const IDLE_READERS: usize = 8;

pub struct Store {
    writer: Mutex<Writer>,
    /// Copies WAL pages into the database file in the background, so no
    /// write ever pays for a checkpoint (the writer's auto-checkpoint is off).
    checkpointer: Mutex<Connection>,
    /// Acknowledged inserts not yet in SQLite; whoever takes the writer
    /// applies them first.
    journal: journal::Journal,
    /// Bumped whenever the writer is released, so background work can tell
    /// "nothing was written" without asking SQLite.
    writes: std::sync::atomic::AtomicU64,
    idle_readers: Mutex<Vec<Connection>>,
    text: TextIndex,
    /// Stored embeddings, when semantic search is on.
    vectors: Option<VectorStore>,
    db_path: PathBuf,
    wal_restart_pages: i64,
    /// Whether changes keep what they replace, and their numbers.
    keeper: keep::Keeper,
}

/// The one write connection.
pub(crate) struct Writer {
    conn: Connection,
}

/// The writer, held.
pub(crate) struct WriterGuard<'a> {
    /// Always `Some` until drop.
    guard: Option<MutexGuard<'a, Writer>>,
    store: &'a Store,
}

thread_local! {
    /// Whether this thread holds the writer: a read it makes then must not
    /// wait for the writer to apply the journal (it would wait for itself).
    static HOLDS_WRITER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How long the engine waits for a write lock another process holds on
/// `pad.db` (a `sqlite3` shell or a backup in a write transaction). The
/// wait is shared: the first write to find the lock taken starts it, and
/// every write waiting meanwhile gives up when it ends (with `-32005`), so
/// queued requests do not add their waits up; for `LOCK_RETRY_AFTER` more,
/// writes that find the lock still taken give up at once. A request waits
/// at most `FOREIGN_LOCK_WAIT` (plus whatever it queued behind), however
/// long the lock is held.
pub const FOREIGN_LOCK_WAIT: Duration = Duration::from_secs(2);
const LOCK_RETRY_AFTER: Duration = Duration::from_secs(1);

/// When the current wait for a foreign lock began (ms on a monotonic clock;
/// 0: none).
static LOCK_WAIT_SINCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The writer's busy handler: SQLite calls it while another process holds
/// the lock; `false` gives up with `SQLITE_BUSY`.
fn wait_for_foreign_lock(_tries: i32) -> bool {
    use std::sync::atomic::Ordering;
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let now = BASE
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
        + 1;
    let (wait, cycle) = (
        FOREIGN_LOCK_WAIT.as_millis() as u64,
        (FOREIGN_LOCK_WAIT + LOCK_RETRY_AFTER).as_millis() as u64,
    );
    let mut since = LOCK_WAIT_SINCE.load(Ordering::Acquire);
    if since == 0 || now.saturating_sub(since) >= cycle {
        LOCK_WAIT_SINCE.store(now, Ordering::Release);
        since = now;
    }
    let waited = now.saturating_sub(since);
    if waited >= wait {
        return false;
    }
    std::thread::sleep(Duration::from_millis(5).min(Duration::from_millis(wait - waited)));
    true
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
        HOLDS_WRITER.with(|h| h.set(false));
        self.store
            .writes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
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

/// The statements still prepared on one connection that were re-prepared,
/// with how often.
#[cfg(test)]
fn reprepared(conn: &Connection) -> Vec<(String, u64)> {
    use rusqlite::ffi;
    let mut out = Vec::new();
    // SAFETY: the handle stays valid while `conn` is borrowed, and walking its
    // statements with sqlite3_next_stmt only reads them.
    unsafe {
        let db = conn.handle();
        let mut stmt = ffi::sqlite3_next_stmt(db, std::ptr::null_mut());
        while !stmt.is_null() {
            let n = ffi::sqlite3_stmt_status(stmt, ffi::SQLITE_STMTSTATUS_REPREPARE, 0);
            if n > 0 {
                let sql = std::ffi::CStr::from_ptr(ffi::sqlite3_sql(stmt));
                out.push((sql.to_string_lossy().into_owned(), n as u64));
            }
            stmt = ffi::sqlite3_next_stmt(db, stmt);
        }
    }
    out
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a connection cannot leave SQLite half-written (its
    // transaction rolls back), so a poisoned lock is still safe to use.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a WAL file is cut back to once a checkpoint has emptied it. The WAL
/// is reused from its start, not shrunk, so after a burst (a 185k-entry
/// fill left a 100 MB WAL) it would keep its largest size on disk.
pub(crate) const WAL_SIZE_LIMIT: i64 = 32 << 20;

/// Opens a connection to one of the store's databases (`pad.db`, the text
/// index, the vectors).
///
/// Each has SQLite's query-planner stability guarantee on: a plan never
/// depends on the values bound to it. Without it SQLite plans some
/// statements around their bound values (a `pad = ?` with `ORDER BY seq`,
/// a `LIMIT ?`, FTS5's own segment lookups) and expires them whenever new
/// values are bound, so a cached statement was parsed and planned again on
/// every call: ~45 of the ~50 µs of a one-entry `entry.list`. Our plans do
/// not gain from seeing values (no statistics, no LIKE on indexed columns).
///
/// Each also has `pad_contains(text, needle)`: whether `needle` occurs in
/// `text`, ignoring case (Unicode lowercase, as the trigram tokenizer folds
/// case). Substring search checks its candidates with it, since the trigram
/// index only says that every trigram of the needle occurs somewhere.
pub(crate) fn open_connection(path: &Path, flags: OpenFlags) -> rusqlite::Result<Connection> {
    use rusqlite::functions::FunctionFlags;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    conn.create_scalar_function(
        "pad_contains",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text = ctx.get_raw(0).as_str().unwrap_or("");
            let needle = ctx.get_raw(1).as_str().unwrap_or("");
            Ok(contains_ignoring_case(text, needle))
        },
    )?;
    rank::register(&conn)?;
    Ok(conn)
}

/// Whether `needle` occurs in `text`, ignoring case.
fn contains_ignoring_case(text: &str, needle: &str) -> bool {
    if text.is_ascii() && needle.is_ascii() {
        let (t, n) = (text.as_bytes(), needle.as_bytes());
        return n.is_empty() || t.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    text.to_lowercase().contains(&needle.to_lowercase())
}

pub(crate) fn pragmas(conn: &Connection, sync: &str) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON; \
         PRAGMA journal_size_limit = {WAL_SIZE_LIMIT};"
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
        crate::paths::create_private_dir(dir).map_err(|e| {
            Error::Internal(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        let db_path = dir.join("pad.db");
        let (journal, replay) = journal::Journal::open(dir, durability == Durability::Full)?;
        let mut conn = open_connection(&db_path, OpenFlags::default())?;
        pragmas(
            &conn,
            match durability {
                Durability::Normal => "NORMAL",
                Durability::Full => "FULL",
            },
        )?;
        migrate::run(&mut conn, now)?;
        conn.busy_handler(Some(wait_for_foreign_lock))?;
        // Checkpoints run in the background (`checkpoint_passive`), off the write path.
        conn.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
        let checkpointer = open_connection(&db_path, OpenFlags::default())?;
        checkpointer.busy_timeout(Duration::from_secs(10))?;
        checkpointer.execute_batch(&format!("PRAGMA journal_size_limit = {WAL_SIZE_LIMIT};"))?;
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
        // Entries acknowledged before a crash and not yet applied.
        let mut writer = Writer { conn };
        let replay = entries::not_stored(&writer.conn, replay)?;
        if !replay.is_empty() {
            tracing::info!("replaying {} journaled entries", replay.len());
        }
        journal.replay(replay)?;
        entries::apply(&mut writer, &journal, journal.take(usize::MAX));
        let conn = writer.conn;
        // The newest entry may have been deleted: never hand out an id that an
        // index or the change log has already seen.
        let floor: i64 = conn.query_row(
            "SELECT max((SELECT coalesce(max(seq), 0) FROM entries), \
                        (SELECT coalesce(max(seq), 0) FROM changes))",
            [],
            |r| r.get(0),
        )?;
        journal.set_floor(
            floor
                .max(text.watermark())
                .max(vectors.as_ref().map_or(0, VectorStore::watermark)),
        );
        Ok(Store {
            checkpointer: Mutex::new(checkpointer),
            writer: Mutex::new(Writer { conn }),
            journal,
            writes: std::sync::atomic::AtomicU64::new(0),
            idle_readers: Mutex::new(Vec::new()),
            text,
            vectors,
            db_path,
            wal_restart_pages,
            keeper: Default::default(),
        })
    }

    /// The writer, with every acknowledged insert applied.
    pub(crate) fn writer(&self) -> WriterGuard<'_> {
        self.writer_applying(usize::MAX)
    }

    /// The writer, with the oldest `max` acknowledged inserts applied (the
    /// journal thread's turn, `APPLY_CHUNK`).
    fn writer_applying(&self, max: usize) -> WriterGuard<'_> {
        let mut w = WriterGuard {
            guard: Some(lock(&self.writer)),
            store: self,
        };
        HOLDS_WRITER.with(|h| h.set(true));
        entries::apply(&mut w, &self.journal, self.journal.take(max));
        w
    }

    /// Applies journaled inserts in the background, so they reach SQLite
    /// (and its indexers) soon even when nobody reads. The thread ends
    /// once the store is dropped; its handle, for whoever wants to see that.
    pub fn start_applier(self: &std::sync::Arc<Self>) -> Option<std::thread::JoinHandle<()>> {
        let store = std::sync::Arc::downgrade(self);
        let wake = self.journal.waker();
        let spawned = std::thread::Builder::new()
            .name("pad-journal".into())
            .spawn(move || Store::apply_loop(store, &wake));
        match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                tracing::error!(
                    "cannot start the journal thread ({e}); reads and a long queue apply the journal instead"
                );
                None
            }
        }
    }

    /// The journal thread: applies acknowledged inserts shortly after they
    /// come, many to a transaction, until the store is dropped. It runs at
    /// nice 19: at the same priority as the requests, its bursts of
    /// applying took the CPU from a request waking on the same core (a
    /// single writer's p99 ~200 µs, against ~40 µs; docs/benchmarks.md).
    /// So that nobody waits long behind it for the writer — a read applies
    /// what is pending itself, at its own priority — it holds the writer
    /// for `APPLY_CHUNK` entries at a time; on a machine so busy that it
    /// gets no CPU, the journal fills and writes apply it themselves
    /// (`Journal::overflowing`).
    fn apply_loop(store: std::sync::Weak<Store>, wake: &journal::Signal) {
        crate::priority::set_nice(APPLIER_NICE, "the journal thread");
        // The database's WAL, synced with the journal (`check_write_back`).
        let wal_path = store.upgrade().map(|s| {
            let mut p = s.db_path.clone().into_os_string();
            p.push("-wal");
            PathBuf::from(p)
        });
        let wal = wal_path
            .as_ref()
            .and_then(|p| std::fs::File::open(p).ok().map(|f| (p.clone(), f)));
        let mut checked = std::time::Instant::now();
        // Entries replayed after a crash may be pending already.
        let mut timeout = Some(Duration::ZERO);
        loop {
            // Holds no reference while it waits, so the store can drop (its
            // journal raises the signal as it goes). With nothing pending it
            // sleeps until an entry comes: an idle engine's thread stays
            // asleep rather than looking four times a second.
            wake.wait(timeout);
            // Let a burst gather: one commit for many entries costs far less
            // than a commit each, and nobody waits for it (a read applies
            // what is pending itself).
            std::thread::sleep(APPLY_DELAY);
            let Some(store) = store.upgrade() else { break };
            while store.journal.has_pending() {
                drop(store.writer_applying(APPLY_CHUNK));
                if store.journal.failing() {
                    break;
                }
            }
            // What was acknowledged reaches the disk, or acknowledgements
            // stop: looked at every `WRITE_BACK_CHECK` while writes come.
            let check_in = journal::WRITE_BACK_CHECK.saturating_sub(checked.elapsed());
            if store.journal.written() && check_in.is_zero() {
                store
                    .journal
                    .check_write_back(wal.as_ref().map(|(p, f)| (p.as_path(), f)));
                checked = std::time::Instant::now();
            }
            // SQLite refused the whole batch (a full disk?): it stays
            // journaled, and is tried again in a second. New entries raise
            // the signal only when none were pending, so this thread must
            // look again itself — and again for the write-back check.
            let retry = store
                .journal
                .has_pending()
                .then_some(Duration::from_secs(1));
            let check = store
                .journal
                .written()
                .then(|| journal::WRITE_BACK_CHECK.saturating_sub(checked.elapsed()));
            timeout = match (retry, check) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }

    /// Applies every acknowledged insert still journaled, so what reads the
    /// database next sees it. Not while the disk refuses writes: every read
    /// would try and fail again; the journal thread retries every second,
    /// and reads meanwhile answer from what the database holds.
    fn settle(&self) {
        if self.journal.has_pending() && !self.journal.failing() && !HOLDS_WRITER.with(|h| h.get())
        {
            drop(self.writer());
        }
    }

    /// A read connection that sees every acknowledged write.
    pub(crate) fn reader(&self) -> Result<Reader<'_>> {
        self.settle();
        let conn = lock(&self.idle_readers).pop();
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = open_connection(
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

    /// The newest entry id and change-log row: once the embedding
    /// watermarks reach both, every write so far is embedded.
    pub fn embed_target(&self) -> Result<(i64, i64)> {
        let conn = self.reader()?;
        Ok(conn.query_row(
            "SELECT coalesce((SELECT max(seq) FROM entries), 0), \
                    coalesce((SELECT max(n) FROM changes), 0)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// Entries and edits written but not yet embedded (0 without semantic search).
    pub fn embed_queue(&self) -> Result<i64> {
        self.embed_queue_in(None)
    }

    /// `embed_queue` in the pads `scope` names (`None`: all of them).
    pub fn embed_queue_in(&self, scope: Option<&[String]>) -> Result<i64> {
        match &self.vectors {
            Some(v) => self.behind(v.watermark(), v.change_watermark(), scope),
            None => Ok(0),
        }
    }

    /// Brings the text index up to every committed change, then returns.
    pub fn catch_up_text(&self) -> Result<()> {
        self.settle();
        self.text.catch_up()
    }

    /// Entries acknowledged and still only in the journal: not yet in
    /// `pad.db`. Read it before anything that reads the store, which
    /// applies them first.
    pub fn journal_queue(&self) -> i64 {
        self.journal.pending() as i64
    }

    /// How often SQLite re-planned a cached statement of the read and write
    /// connections. A statement whose plan looked at a bound value is
    /// expired each time a new value is bound, so a cached statement that
    /// shows up here is parsed and planned again on every call.
    /// Returns each such statement's SQL with its count.
    #[cfg(test)]
    pub(crate) fn reprepared(&self) -> Vec<(String, u64)> {
        let mut out = reprepared(&self.writer().conn);
        for reader in lock(&self.idle_readers).iter() {
            out.extend(reprepared(reader));
        }
        out
    }

    /// Entries and edits written but not yet in the text index.
    pub fn index_queue(&self) -> Result<i64> {
        self.behind(self.text.watermark(), self.text.change_watermark(), None)
    }

    /// New entries and change-log rows past these watermarks, in the pads
    /// `scope` names (`None`: all of them).
    fn behind(&self, seq: i64, change: i64, scope: Option<&[String]>) -> Result<i64> {
        let conn = self.reader()?;
        let Some(scope) = scope else {
            let n = conn.query_row(
                "SELECT (SELECT count(*) FROM entries WHERE seq > ?1) + \
                        (SELECT count(*) FROM changes WHERE n > ?2)",
                [seq, change],
                |r| r.get(0),
            )?;
            return Ok(n);
        };
        use crate::storage::query::Arg;
        let mut q = sqlite::query("SELECT (SELECT count(*) FROM entries e WHERE");
        q.push(" e.seq > $?", Arg::Int(seq))
            .scope(scope)
            .push(
                ") + (SELECT count(*) FROM changes c JOIN entries e ON e.seq = c.seq \
                 WHERE c.n > $?",
                Arg::Int(change),
            )
            .scope(scope)
            .raw(")");
        let n = conn.query_row(&q.sql, rusqlite::params_from_iter(q.args()), |r| r.get(0))?;
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

impl Drop for Store {
    /// Applies what is still journaled, so a clean close leaves it empty.
    fn drop(&mut self) {
        drop(self.writer());
    }
}

/// Runs `f` in one write transaction: committed if it succeeds, else rolled
/// back.
pub(crate) fn in_transaction<T>(
    w: &mut Writer,
    f: impl FnOnce(&mut Writer) -> Result<T>,
) -> Result<T> {
    committed_if(w, f, |_| true)
}

/// `in_transaction`, rolled back instead of committed when `keep` finds
/// that the answer changed nothing worth a commit (a keyed claim that found
/// no task: its key's row is not kept).
pub(crate) fn committed_if<T>(
    w: &mut Writer,
    f: impl FnOnce(&mut Writer) -> Result<T>,
    keep: impl FnOnce(&T) -> bool,
) -> Result<T> {
    room::make(w)?;
    w.conn.execute_batch("BEGIN IMMEDIATE")?;
    match f(w) {
        Ok(v) if !keep(&v) => {
            w.conn.execute_batch("ROLLBACK")?;
            Ok(v)
        }
        Ok(v) => {
            if let Err(e) = w.conn.execute_batch("COMMIT") {
                let _ = w.conn.execute_batch("ROLLBACK");
                return Err(e.into());
            }
            Ok(v)
        }
        Err(e) => {
            let _ = w.conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}
