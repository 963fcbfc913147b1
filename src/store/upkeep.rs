//! Upkeep on SQLite (`pg/upkeep.rs` on PostgreSQL): the sweep of idle and
//! old pads, the text index brought up to the writes, and checkpoints,
//! each on a blocking thread.

use super::Sqlite;
use crate::storage::Upkeep;
use crate::storage::{Fut, PadSweep};

impl Upkeep for Sqlite {
    fn sweep(&self, now: i64, retention_ms: i64) -> Fut<'_, PadSweep> {
        self.blocking(move |s| {
            let done = s.sweep(now, retention_ms)?;
            if done.purged_entries > 0 || done.purged_pads > 0 {
                // The text index drops the purged entries before the change
                // log that tells it of them is pruned.
                s.catch_up_text()?;
                s.prune_changes()?;
            }
            Ok(done)
        })
    }

    fn write_epoch(&self) -> Option<u64> {
        Some(self.store.write_epoch())
    }

    fn checkpoint(&self) -> Fut<'_, ()> {
        self.blocking(|s| s.checkpoint_passive().map(drop))
    }

    fn close(&self) -> Fut<'_, ()> {
        self.blocking(|s| {
            s.checkpoint();
            Ok(())
        })
    }
}
