//! Deliveries to A2A agents on PostgreSQL (`store/deliveries.rs` on
//! SQLite): the statements written once (`storage::deliveries`); every
//! engine of a team sees the same rows.

use super::{bounded, PgStore};
use crate::id;
use crate::storage::deliveries::{self as stmt, read_delivery, COLUMNS, KEEP_FINISHED};
use crate::storage::dialect::Dialect;
use crate::storage::Deliveries;
use crate::storage::DeliveryRow;
use crate::storage::Fut;

impl Deliveries for PgStore {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(async move {
            let rows = sqlx::query(sql!(
                "SELECT {COLUMNS} FROM deliveries WHERE NOT taken AND agent = ANY($1) ORDER BY entry"
            ))
            .bind(agents)
            .fetch_all(self.pool())
            .await?;
            rows.iter().map(read_delivery).collect()
        })
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        bounded(async move {
            let rows = sqlx::query(stmt::CONVERSATIONS)
                .bind(KEEP_FINISHED)
                .fetch_all(self.pool())
                .await?;
            rows.iter().map(read_delivery).collect()
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
            sqlx::query(stmt::SAVE)
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
                sqlx::query(stmt::DROP_ONE)
                    .bind(root)
                    .bind(&c.agent)
                    .bind(t)
                    .execute(&mut *tx)
                    .await?;
            }
            if !c.live {
                sqlx::query(stmt::TRIM_FINISHED)
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
            sqlx::query(stmt::DROP_ONE)
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
            let n = sqlx::query(stmt::DROP_LIVE)
                .bind(agent)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query(sqlx::AssertSqlSafe(stmt::drop_waiting(Dialect::Postgres)))
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
            let rows = sqlx::query(stmt::OF)
                .bind(pad)
                .bind(entry)
                .fetch_all(self.pool())
                .await?;
            rows.iter().map(read_delivery).collect()
        })
    }
}
