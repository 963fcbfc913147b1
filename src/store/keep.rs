//! What a change keeps on SQLite (`pg/keep.rs` on PostgreSQL): the entries
//! an edit, a deletion or a clear replaces, copied into `entry_history` as
//! one change in the transaction that then changes them (`history.rs`
//! reads them back, restores and prunes).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use rusqlite::{Connection, ToSql};

use crate::error::Result;
use crate::protocol::Action;
use crate::storage::rules::KEPT_COLUMNS;

/// Whether changes keep history, and the last change number handed out
/// (kept in memory: one engine owns the store, and the writer lock
/// orders its changes).
#[derive(Debug, Default)]
pub(crate) struct Keeper {
    off: AtomicBool,
    last: AtomicI64,
}

impl Keeper {
    /// Whether changes keep what they replace from now on.
    pub(crate) fn turn(&self, on: bool) {
        self.off.store(!on, Ordering::Relaxed);
    }

    /// The next change number, or `None` with history off.
    fn next(&self, conn: &Connection) -> Result<Option<i64>> {
        if self.off.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let mut last = self.last.load(Ordering::Relaxed);
        if last == 0 {
            last = conn
                .prepare_cached("SELECT coalesce(max(batch), 0) FROM entry_history")?
                .query_row([], |r| r.get(0))?;
        }
        self.last.store(last + 1, Ordering::Relaxed);
        Ok(Some(last + 1))
    }
}

/// Copies the entries `cond` selects (a condition on `entries`, its
/// parameters numbered from `?5`) into the history as one change, and
/// returns the change. Call it in the transaction that then changes or
/// deletes them. With history off it keeps nothing (and returns 0).
pub(crate) fn keep(
    conn: &Connection,
    keeper: &Keeper,
    action: Action,
    by: &str,
    now: i64,
    cond: &str,
    args: &[&dyn ToSql],
) -> Result<i64> {
    let Some(batch) = keeper.next(conn)? else {
        return Ok(0);
    };
    let action = action.as_str();
    let mut all: Vec<&dyn ToSql> = vec![&batch, &action, &by, &now];
    all.extend_from_slice(args);
    conn.prepare_cached(&format!(
        "INSERT INTO entry_history (batch, action, actor, at, {KEPT_COLUMNS}) \
         SELECT ?1, ?2, ?3, ?4, {KEPT_COLUMNS} FROM entries WHERE {cond}"
    ))?
    .execute(all.as_slice())?;
    Ok(batch)
}
