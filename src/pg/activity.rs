//! What `stats` reads on PostgreSQL (`store/activity.rs` on SQLite).

use sqlx::Row;

use super::PgStore;
use crate::error::Result;
use crate::storage::PadRow;

impl PgStore {
    /// Entries written in each of the last `minutes` minutes up to `now`,
    /// oldest first, counting only pads `keep` accepts.
    pub async fn writes_per_minute(
        &self,
        now: i64,
        minutes: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<u64>> {
        let start = now - minutes as i64 * 60_000;
        let rows = sqlx::query(
            "SELECT (created_at - $1) / 60000 AS m, pad, count(*) FROM entries \
             WHERE seq >= $2 AND created_at >= $1 AND created_at <= $3 GROUP BY m, pad",
        )
        .bind(start)
        .bind(crate::id::first_at(start))
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        let rows = rows
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(crate::storage::rules::by_minute(rows, minutes, keep))
    }

    /// Live pads, most entries first or least recently written first.
    pub async fn pads_by(&self, stalest: bool, limit: usize) -> Result<Vec<PadRow>> {
        let order = if stalest {
            "last_write_at ASC, name"
        } else {
            "entries DESC, name"
        };
        let rows = sqlx::query(sql!(
            "SELECT name, entries, last_write_at, ttl_seconds FROM pads \
             WHERE archived_at IS NULL ORDER BY {order} LIMIT $1"
        ))
        .bind(limit as i64)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(PadRow {
                    name: r.try_get(0)?,
                    entries: r.try_get(1)?,
                    last_write_at: r.try_get(2)?,
                    ttl_seconds: r.try_get(3)?,
                })
            })
            .collect()
    }

    /// The `limit` pads written to most since `since`, with their counts.
    pub async fn recent_writes_by_pad(
        &self,
        since: i64,
        limit: usize,
    ) -> Result<Vec<(String, i64)>> {
        Ok(sqlx::query_as(
            "SELECT pad, count(*) AS n FROM entries WHERE seq >= $1 AND created_at >= $2 \
             GROUP BY pad ORDER BY n DESC, pad LIMIT $3",
        )
        .bind(crate::id::first_at(since))
        .bind(since)
        .bind(limit as i64)
        .fetch_all(self.pool())
        .await?)
    }

    /// Live entries and their average size in bytes.
    pub async fn content_size(&self) -> Result<(i64, f64)> {
        Ok(sqlx::query_as(
            "SELECT count(*), coalesce(avg(octet_length(e.content)), 0)::float8 \
             FROM entries e JOIN pads p ON p.name = e.pad WHERE p.archived_at IS NULL",
        )
        .fetch_one(self.pool())
        .await?)
    }

    /// The shared database's size on its server.
    pub async fn disk_bytes(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
            .fetch_one(self.pool())
            .await?;
        Ok(n as u64)
    }
}
