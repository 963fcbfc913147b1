//! Deliveries to A2A agents on PostgreSQL (`store/deliveries.rs` on
//! SQLite): the sequences written once (`storage::deliveries`); every
//! engine of a team sees the same rows.

use super::{bounded, PgStore};
use crate::storage::deliveries;
use crate::storage::Deliveries;
use crate::storage::DeliveryRow;
use crate::storage::Fut;

impl Deliveries for PgStore {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(
            async move { deliveries::waiting(&mut *self.pool().acquire().await?, agents).await },
        )
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        bounded(async move { deliveries::conversations(&mut *self.pool().acquire().await?).await })
    }

    fn save_conversation<'a>(
        &'a self,
        c: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            deliveries::save(&mut *tx, c, taken, now).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn drop_delivery<'a>(&'a self, d: &'a DeliveryRow) -> Fut<'a, ()> {
        bounded(async move { deliveries::drop_one(&mut *self.pool().acquire().await?, d).await })
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let n = deliveries::drop_agent(&mut *tx, agent).await?;
            tx.commit().await?;
            Ok(n)
        })
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(async move { deliveries::of(&mut *self.pool().acquire().await?, pad, entry).await })
    }
}
