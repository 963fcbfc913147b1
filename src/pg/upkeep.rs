//! Upkeep on PostgreSQL (`store/upkeep.rs` on SQLite): the sweep of idle
//! and old pads, once across engines, and the planner's statistics after a
//! large load (`statistics.rs`); text is indexed as it is written.

use super::keep::keep_deleting;
use super::{bounded, upkeep, Arg, PgStore};
use crate::protocol::Action;
use crate::storage::Fut;
use crate::storage::PadSweep;
use crate::storage::Upkeep;

impl Upkeep for PgStore {
    /// Archives idle pads and purges old archives, once across engines: the
    /// statements take the rows they change, so a second engine sweeping at
    /// the same moment finds nothing left to do.
    fn sweep(&self, now: i64, retention_ms: i64) -> Fut<'_, PadSweep> {
        upkeep(async move {
            let mut tx = self.begin_write().await?;
            let archived: Vec<String> = sqlx::query_scalar(
                "UPDATE pads SET archived_at = $1 WHERE archived_at IS NULL \
                 AND ttl_seconds IS NOT NULL AND last_write_at + ttl_seconds * 1000 <= $1 \
                 RETURNING name",
            )
            .bind(now)
            .fetch_all(&mut *tx)
            .await?;
            let cutoff = now - retention_ms;
            let expired = "NOT pinned AND pad IN \
                 (SELECT name FROM pads WHERE archived_at IS NOT NULL AND archived_at <= $4)";
            let which = (expired, Arg::Int(cutoff));
            let (_, _, purged) = keep_deleting(
                &mut tx,
                self.keeping(),
                Action::Expire,
                "engine",
                now,
                which,
                false,
            )
            .await?;
            let purged_entries = purged.values().sum();
            let purged_pads = sqlx::query(
                "DELETE FROM pads WHERE archived_at IS NOT NULL AND archived_at <= $1 AND entries = 0",
            )
            .bind(cutoff)
            .execute(&mut *tx)
            .await?
            .rows_affected() as usize;
            sqlx::query("DELETE FROM deliveries WHERE NOT taken AND updated_at < $1")
                .bind(now - crate::storage::rules::UNCLAIMED_DELIVERY_MS)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM idempotency WHERE created_at < $1")
                .bind(crate::storage::once::expired(now))
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(PadSweep {
                archived,
                purged_entries,
                purged_pads,
            })
        })
    }

    fn write_epoch(&self) -> Option<u64> {
        None
    }

    fn checkpoint(&self) -> Fut<'_, ()> {
        Box::pin(PgStore::analyze_if_loaded(self))
    }

    fn close(&self) -> Fut<'_, ()> {
        bounded(async move {
            self.pool().close().await;
            Ok(())
        })
    }
}
