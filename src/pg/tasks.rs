//! Tasks, leases, reminders, plans and the report on PostgreSQL
//! (`store/tasks.rs` on SQLite): `storage::write`'s sequences and
//! `storage::tasks`' statements, each in one transaction.

use super::{bounded, upkeep, PgStore};
use crate::model::Entry;
use crate::storage::once::{Key, Once};
use crate::storage::write;
use crate::storage::{tasks, Tasks};
use crate::storage::{EntryFilter, Finish, Fut, PlanRow, ReportRow};

impl Tasks for PgStore {
    /// `storage::write::claim`. Only the task taken is locked, and a row
    /// another claimant holds is passed over (`SKIP LOCKED`): claimants on
    /// every engine proceed at once, never take the same task, and find
    /// one while any is ready.
    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
        key: Option<&'a Key>,
    ) -> Fut<'a, Once<Option<(Entry, Entry)>>> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let claimed =
                write::claim(&mut self.tx(&mut tx), pad, agent, lease_ms, now, key).await?;
            // Nothing taken, or a retry: rolled back (dropped), so an idle
            // poll keeps no key's row.
            if let Once::Wrote(Some(_)) = claimed {
                tx.commit().await?;
            }
            Ok(claimed)
        })
    }

    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out =
                write::heartbeat(&mut self.tx(&mut tx), id, agent, resume, lease_ms, now).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::finish(&mut self.tx(&mut tx), id, agent, how, now).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    /// `storage::write::release_expired`, each task once across engines
    /// (rows another engine is releasing are skipped).
    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::release_expired(&mut self.tx(&mut tx), now).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    /// Each due reminder is taken by one engine only (`tasks::take_due_reminders`).
    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            match tasks::next_reminder(&mut *conn).await? {
                Some(at) if at <= now => tasks::take_due_reminders(&mut *conn, now).await,
                _ => Ok(Vec::new()),
            }
        })
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<PlanRow>> {
        bounded(async move { tasks::plan(&mut *self.pool().acquire().await?, pad).await })
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        upkeep(async move { tasks::report(&mut *self.pool().acquire().await?, filter).await })
    }
}
