//! Deliveries to A2A agents as PostgreSQL keeps them (as on SQLite,
//! `store/deliveries.rs`): every engine of a team sees the same rows.

use sqlx::Row;

use super::{bounded, PgStore};
use crate::id;
use crate::storage::rules::KEEP_FINISHED_CONVERSATIONS;
use crate::storage::Deliveries;
use crate::storage::DeliveryRow;
use crate::storage::Fut;

/// Finished conversations kept (`rules::KEEP_FINISHED_CONVERSATIONS`).
const KEEP_FINISHED: i64 = KEEP_FINISHED_CONVERSATIONS as i64;

fn row(r: &sqlx::postgres::PgRow) -> DeliveryRow {
    DeliveryRow {
        entry: id::encode(r.get(0)),
        agent: r.get(1),
        root: id::encode(r.get(2)),
        pad: r.get(3),
        state: r.get(4),
        live: r.get(5),
    }
}

impl Deliveries for PgStore {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(async move {
            let rows = sqlx::query(
                "SELECT entry, agent, root, pad, state, live FROM deliveries \
                 WHERE NOT taken AND agent = ANY($1) ORDER BY entry",
            )
            .bind(agents)
            .fetch_all(self.pool())
            .await?;
            Ok(rows.iter().map(row).collect())
        })
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        bounded(async move {
            let rows = sqlx::query(
                "SELECT entry, agent, root, pad, state, live FROM deliveries \
                 WHERE entry = root AND state IS NOT NULL AND (live OR entry IN \
                   (SELECT entry FROM deliveries WHERE entry = root AND NOT live \
                    ORDER BY updated_at DESC LIMIT $1)) ORDER BY entry",
            )
            .bind(KEEP_FINISHED)
            .fetch_all(self.pool())
            .await?;
            Ok(rows.iter().map(row).collect())
        })
    }

    fn save_conversation<'a>(
        &'a self,
        c: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        bounded(async move {
            let (Some(entry), Some(root)) = (id::decode(&c.entry), id::decode(&c.root)) else {
                return Ok(());
            };
            let mut tx = self.begin_write().await?;
            sqlx::query(
                "INSERT INTO deliveries (entry, agent, root, pad, state, taken, live, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, TRUE, $6, $7) ON CONFLICT (root, agent, entry) DO UPDATE SET \
                 state = excluded.state, taken = TRUE, live = excluded.live, \
                 updated_at = excluded.updated_at",
            )
            .bind(entry)
            .bind(&c.agent)
            .bind(root)
            .bind(&c.pad)
            .bind(&c.state)
            .bind(c.live)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if let Some(t) = taken.and_then(id::decode).filter(|t| *t != entry) {
                sqlx::query("DELETE FROM deliveries WHERE root = $1 AND agent = $2 AND entry = $3")
                    .bind(root)
                    .bind(&c.agent)
                    .bind(t)
                    .execute(&mut *tx)
                    .await?;
            }
            if !c.live {
                sqlx::query(
                    "DELETE FROM deliveries WHERE entry = root AND NOT live AND entry NOT IN \
                     (SELECT entry FROM deliveries WHERE entry = root AND NOT live \
                      ORDER BY updated_at DESC LIMIT $1)",
                )
                .bind(KEEP_FINISHED)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn drop_delivery<'a>(&'a self, d: &'a DeliveryRow) -> Fut<'a, ()> {
        bounded(async move {
            let (Some(entry), Some(root)) = (id::decode(&d.entry), id::decode(&d.root)) else {
                return Ok(());
            };
            sqlx::query("DELETE FROM deliveries WHERE root = $1 AND agent = $2 AND entry = $3")
                .bind(root)
                .bind(&d.agent)
                .bind(entry)
                .execute(self.pool())
                .await?;
            Ok(())
        })
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let n =
                sqlx::query("DELETE FROM deliveries WHERE agent = $1 AND entry = root AND live")
                    .bind(agent)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            sqlx::query("DELETE FROM deliveries WHERE agent = $1 AND NOT taken")
                .bind(agent)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(n as usize)
        })
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(async move {
            let entry = entry.map(|e| id::decode(e).unwrap_or(-1));
            let rows = sqlx::query(
                "SELECT entry, agent, root, pad, state, live FROM deliveries WHERE entry = root \
                 AND ($1::text IS NULL OR pad = $1) AND ($2::bigint IS NULL OR entry = $2) ORDER BY entry",
            )
            .bind(pad)
            .bind(entry)
            .fetch_all(self.pool())
            .await?;
            Ok(rows.iter().map(row).collect())
        })
    }
}
