//! What `stats` reads on PostgreSQL (`store/activity.rs` on SQLite); the
//! write rates and the busiest pads are written once above the stores
//! (`storage::activity`).

use sqlx::Row;

use super::{upkeep, PgStore};
use crate::storage::activity;
use crate::storage::Counts;
use crate::storage::Figures;
use crate::storage::Fut;
use crate::storage::PadRow;
use crate::storage::Visible;

impl Figures for PgStore {
    /// The tags in use are counted from `entry_tags`' index, a step from
    /// each tag to the next: counting them over every entry's tags took
    /// 0.6–1.1 s at a million notes.
    fn counts(&self) -> Fut<'_, Counts> {
        upkeep(async move {
            let r = sqlx::query(
                "WITH RECURSIVE tag AS ( \
                     SELECT min(tag) AS tag FROM entry_tags \
                     UNION ALL \
                     SELECT (SELECT min(n.tag) FROM entry_tags n WHERE n.tag > tag.tag) \
                     FROM tag WHERE tag.tag IS NOT NULL) \
                 SELECT (SELECT coalesce(sum(entries), 0)::bigint FROM pads), \
                        (SELECT count(*) FROM pads WHERE archived_at IS NULL), \
                        (SELECT count(*) FROM pads WHERE archived_at IS NOT NULL), \
                        (SELECT count(tag) FROM tag)",
            )
            .fetch_one(self.pool())
            .await?;
            Ok(Counts {
                entries: r.try_get(0)?,
                live_pads: r.try_get(1)?,
                archived_pads: r.try_get(2)?,
                tags: r.try_get(3)?,
            })
        })
    }

    /// Live pads, most entries first or least recently written first.
    fn pads_by(&self, stalest: bool, limit: usize) -> Fut<'_, Vec<PadRow>> {
        upkeep(async move {
            activity::pads_by(&mut *self.pool().acquire().await?, stalest, limit).await
        })
    }

    /// Live entries and their average size in bytes.
    fn content_size(&self) -> Fut<'_, (i64, f64)> {
        upkeep(async move {
            Ok(sqlx::query_as(
                "SELECT count(*), coalesce(avg(octet_length(e.content)), 0)::float8 \
                 FROM entries e JOIN pads p ON p.name = e.pad WHERE p.archived_at IS NULL",
            )
            .fetch_one(self.pool())
            .await?)
        })
    }

    /// Entries written in each of the last `minutes` minutes up to `now`,
    /// oldest first, counting only pads `keep` accepts.
    fn writes_per_minute<'a>(
        &'a self,
        now: i64,
        minutes: usize,
        keep: Visible<'a>,
    ) -> Fut<'a, Vec<u64>> {
        upkeep(async move {
            let mut conn = self.pool().acquire().await?;
            activity::writes_per_minute(&mut *conn, now, minutes, keep).await
        })
    }

    /// The `limit` pads written to most since `since`, with their counts.
    fn recent_writes_by_pad(&self, since: i64, limit: usize) -> Fut<'_, Vec<(String, i64)>> {
        upkeep(async move {
            let mut conn = self.pool().acquire().await?;
            activity::recent_writes_by_pad(&mut *conn, since, limit).await
        })
    }

    fn queues(&self) -> Fut<'_, (i64, i64)> {
        Box::pin(async { Ok((0, 0)) })
    }

    fn embed_queue(&self) -> Fut<'_, i64> {
        upkeep(async move { Ok(self.embed_backlog().await?.1) })
    }

    /// The shared database's size on its server.
    fn disk_bytes(&self) -> Fut<'_, u64> {
        upkeep(async move {
            let n: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
                .fetch_one(self.pool())
                .await?;
            Ok(n as u64)
        })
    }

    fn disk_usage(&self) -> Fut<'_, Vec<(&'static str, u64)>> {
        upkeep(async move { Ok(vec![("postgresql", PgStore::disk_bytes(self).await?)]) })
    }
}
