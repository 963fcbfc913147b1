//! What the derived databases (`search.db`, `vectors.db`) share: each is
//! rebuilt from `pad.db` when unusable, and each follows `pad.db` by two
//! watermarks — the highest entry id it has seen and the last `changes` row
//! it has applied.

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::Connection;

use crate::error::Result;

/// Opens a derived database with `connect`; if that fails (corrupt, another
/// schema), deletes the files and starts it afresh, to be refilled.
pub(crate) fn open_or_recreate(
    path: &Path,
    what: &str,
    connect: impl Fn() -> Result<Connection>,
) -> Result<Connection> {
    match connect() {
        Ok(c) => Ok(c),
        Err(e) => {
            tracing::warn!("{what} {} unusable ({e}); rebuilding it", path.display());
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            connect()
        }
    }
}

/// Opens a derived database (the text index, the vectors) as the store's
/// connections are opened, in WAL mode without syncing each commit: losing
/// its last commits to a power cut only means deriving them again.
pub(crate) fn connect_derived(path: &Path) -> Result<Connection> {
    let conn = super::open_connection(path, rusqlite::OpenFlags::default())?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
         PRAGMA journal_size_limit = {};",
        super::WAL_SIZE_LIMIT
    ))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(conn)
}

/// Bytes on disk of a database and its WAL.
pub(crate) fn disk_bytes(path: &Path) -> u64 {
    let size = |p: String| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    size(path.display().to_string()) + size(format!("{}-wal", path.display()))
}

/// How far a derived database has followed `pad.db`.
#[derive(Default)]
pub(crate) struct Watermarks {
    seq: AtomicI64,
    change: AtomicI64,
}

impl Watermarks {
    /// Every entry with an id up to this has been seen.
    pub fn seq(&self) -> i64 {
        self.seq.load(Ordering::SeqCst)
    }

    /// Every edit and deletion of the change log up to this row is applied.
    pub fn change(&self) -> i64 {
        self.change.load(Ordering::SeqCst)
    }

    pub fn set(&self, seq: i64, change: i64) {
        self.seq.store(seq, Ordering::SeqCst);
        self.change.store(change, Ordering::SeqCst);
    }
}
