//! Room for the WAL on a small disk: `pad.db`'s WAL is copied into `pad.db`
//! before anything more is written into it, whenever it has grown past a
//! quarter of the room left on its disk (every commit on the writer looks:
//! `store::committed_if`), and after SQLite refused a journal batch (a
//! full disk). A commit made first would take the room the disk gave back
//! at the WAL's end, the checkpoint would find none left to grow `pad.db`,
//! and the WAL — never started over while frames wait in it — would refill
//! a small disk and stall the journal until a restart. Once its frames are
//! copied the next write starts the WAL over, in the file's own room.

use super::Writer;
use crate::error::{Error, Result};

/// Below this a WAL is not worth a look at the disk's room.
const MIN_WAL_CHECK: u64 = 1 << 20;

/// Before a commit on the writer: the WAL copied into `pad.db` first when
/// it has grown past a quarter of the room left (the background
/// checkpoint, once a second, comes too late for a burst). Fails, and the
/// write with it, when the copy cannot be finished.
pub(crate) fn make(w: &mut Writer) -> Result<()> {
    match wal_over_room(w) {
        true => checkpoint(w),
        false => Ok(()),
    }
}

/// Copies every frame of the WAL into `pad.db`, or fails (still no room,
/// or a reader holds frames back): a checkpoint counts as done only when
/// it copied the whole log. PASSIVE: it waits for nobody, so a foreign
/// lock costs no more time.
pub(crate) fn checkpoint(w: &mut Writer) -> Result<()> {
    let (log, copied): (i64, i64) =
        w.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                Ok((r.get(1)?, r.get(2)?))
            })?;
    if log == copied {
        return Ok(());
    }
    Err(Error::Unavailable(format!(
        "the disk holding pad.db is nearly full: its write-ahead log could not be copied into pad.db ({copied} of {log} frames), so nothing more is written until it can; free some space on that disk, then retry (with the same idempotency_key, if the write had one)"
    )))
}

/// Whether `pad.db`'s WAL has grown past a quarter of the room left on its
/// disk.
fn wal_over_room(w: &Writer) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Some(db) = w.conn.path() else {
        return false;
    };
    let wal = std::fs::metadata(format!("{db}-wal")).map_or(0, |m| m.len());
    if wal < MIN_WAL_CHECK {
        return false;
    }
    let Ok(dir) = std::ffi::CString::new(
        std::path::Path::new(db)
            .parent()
            .map_or(&b"."[..], |p| p.as_os_str().as_bytes()),
    ) else {
        return false;
    };
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct of the right type.
    if unsafe { libc::statvfs(dir.as_ptr(), &mut st) } != 0 {
        return false;
    }
    wal > st.f_bavail as u64 * st.f_frsize as u64 / 4
}
