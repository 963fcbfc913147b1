//! Tasks, leases, reminders, plans and the report on PostgreSQL (`store/tasks.rs` on SQLite).

use sqlx::Row;

use super::tx::PgTx;
use super::{bounded, read_entry, statement, upkeep, PgStore, Run, ENTRY_COLUMNS, REPORT_COLUMNS};
use crate::error::Result;
use crate::model::Entry;
use crate::storage::once::{self, Key, Once};
use crate::storage::rows::read_report;
use crate::storage::write::{self, Ended, TaskTx};
use crate::storage::Tasks;
use crate::storage::{EntryFilter, Finish, ReportRow, DEFAULT_LEASE_MS};
use crate::storage::{Fut, PlanRow};

impl PgStore {
    pub async fn next_reminder(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT min(remind_at) FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL",
        )
        .fetch_one(self.pool())
        .await?)
    }

    /// Marks due reminders delivered in the statement that takes them: each
    /// is handed out by one engine only.
    pub async fn take_due_reminders(&self, now: i64) -> Result<Vec<Entry>> {
        let rows = sqlx::query(sql!(
            "UPDATE entries e SET reminded_at = $1 WHERE seq IN ( \
               SELECT seq FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL \
               AND remind_at <= $1 FOR UPDATE SKIP LOCKED) \
             RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        let mut due = rows.iter().map(read_entry).collect::<Result<Vec<_>>>()?;
        due.sort_by(|a, b| a.remind_at.cmp(&b.remind_at).then(a.id.cmp(&b.id)));
        Ok(due)
    }
}

/// The dependencies in `depends_on` not met yet: tasks not done, and
/// entries with a status other than done. Deleted ones count as met.
async fn unmet(conn: &mut sqlx::PgConnection, depends_on: &[String]) -> Result<Vec<String>> {
    if depends_on.is_empty() {
        return Ok(Vec::new());
    }
    let seqs: Vec<i64> = depends_on
        .iter()
        .filter_map(|d| {
            crate::id::prefix_range(d)
                .filter(|(lo, hi)| lo == hi)
                .map(|r| r.0)
        })
        .collect();
    let waiting: Vec<i64> = sqlx::query_scalar(
        "SELECT seq FROM entries WHERE seq = ANY($1) \
         AND (status IS DISTINCT FROM 'done') AND (kind = 'task' OR status IS NOT NULL)",
    )
    .bind(&seqs)
    .fetch_all(&mut *conn)
    .await?;
    Ok(depends_on
        .iter()
        .filter(|d| {
            crate::id::prefix_range(d)
                .filter(|(lo, hi)| lo == hi)
                .is_some_and(|(s, _)| waiting.contains(&s))
        })
        .cloned()
        .collect())
}

/// PostgreSQL's statements moving a task along (`storage::write`).
impl TaskTx for PgTx<'_> {
    async fn claimable(&mut self, pad: &str, now: i64) -> Result<Vec<(i64, Vec<String>)>> {
        Ok(sqlx::query_as(
            "SELECT seq, depends_on FROM entries WHERE pad = $1 AND kind = 'task' \
             AND (status = 'todo' OR (status = 'doing' AND lease_until <= $2)) ORDER BY seq",
        )
        .bind(pad)
        .bind(now)
        .fetch_all(&mut *self.conn)
        .await?)
    }

    /// The row is locked only if no one holds it, and read again as it is
    /// now: a task another claimant took since `claimable` read it is no
    /// longer `todo`.
    async fn hold_claimable(&mut self, seq: i64, now: i64) -> Result<bool> {
        Ok(sqlx::query(
            "SELECT 1 FROM entries WHERE seq = $1 \
             AND (status = 'todo' OR (status = 'doing' AND lease_until <= $2)) \
             FOR UPDATE SKIP LOCKED",
        )
        .bind(seq)
        .bind(now)
        .fetch_optional(&mut *self.conn)
        .await?
        .is_some())
    }

    async fn unmet(&mut self, depends_on: &[String]) -> Result<Vec<String>> {
        unmet(self.conn, depends_on).await
    }

    async fn take(&mut self, seq: i64, agent: &str, lease_ms: i64, now: i64) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET status = 'doing', assignee = $2, lease_until = $4 + $3, \
             lease_ms = $3, claimed_at = $4, finished_at = NULL, attempts = attempts + 1, \
             updated_at = $4, version = version + 1 WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(agent)
        .bind(lease_ms)
        .bind(now)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }

    async fn extend_lease(
        &mut self,
        seq: i64,
        lease_ms: Option<i64>,
        resume: Option<String>,
        now: i64,
    ) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET lease_ms = coalesce($2, lease_ms, $5), \
             lease_until = $4 + coalesce($2, lease_ms, $5), resume = coalesce($3, resume), \
             updated_at = $4, version = version + 1 WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(lease_ms)
        .bind(resume)
        .bind(now)
        .bind(DEFAULT_LEASE_MS)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }

    async fn end_attempt(&mut self, seq: i64, end: Ended<'_>, now: i64) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET status = $2, error = CASE WHEN $3 THEN $4 ELSE error END, \
             resume = coalesce($5, resume), lease_until = NULL, finished_at = $6, \
             assignee = coalesce(assignee, $7), updated_at = $6, version = version + 1 \
             WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(end.status.as_str())
        .bind(end.error.is_some())
        .bind(end.error)
        .bind(end.resume)
        .bind(now)
        .bind(end.agent)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }

    async fn expired(&mut self, now: i64) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= $1 \
             ORDER BY seq FOR UPDATE SKIP LOCKED",
        )
        .bind(now)
        .fetch_all(&mut *self.conn)
        .await?)
    }

    async fn requeue(&mut self, seq: i64, now: i64) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET status = 'todo', lease_until = NULL, updated_at = $2, \
             version = version + 1 WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(now)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }
}

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
            let w = &mut self.tx(&mut tx);
            if let Some(first) = once::taken(w, key, now).await? {
                return Ok(Once::Again(first));
            }
            let Some(claimed) = write::claim(w, pad, agent, lease_ms, now).await? else {
                // Rolled back (dropped): an idle poll keeps no key's row.
                return Ok(Once::Wrote(None));
            };
            once::keep(w, key, &claimed.1.id).await?;
            tx.commit().await?;
            let claimed = Some(claimed);
            Ok(Once::Wrote(claimed))
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

    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        bounded(async move {
            match self.next_reminder().await? {
                Some(at) if at <= now => self.take_due_reminders(now).await,
                _ => Ok(Vec::new()),
            }
        })
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<PlanRow>> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            let rows = sqlx::query(sql!(
                "SELECT {ENTRY_COLUMNS}, e.claimed_at, e.finished_at FROM entries e \
                 WHERE e.pad = $1 AND e.kind IN ('task', 'plan') ORDER BY e.seq"
            ))
            .bind(pad)
            .fetch_all(&mut *conn)
            .await?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                let entry = read_entry(r)?;
                let deps: Vec<String> = entry.depends_on.iter().map(|r| r.to_string()).collect();
                let waiting = unmet(&mut conn, &deps).await?;
                out.push(PlanRow {
                    entry,
                    waiting,
                    claimed_at: r.try_get("claimed_at")?,
                    finished_at: r.try_get("finished_at")?,
                });
            }
            Ok(out)
        })
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        upkeep(async move {
            let mut q = statement(format!(
                "SELECT {REPORT_COLUMNS}, \
                 CASE WHEN e.meta IS NOT NULL AND e.meta::jsonb ? 'tokens' THEN (e.meta::jsonb -> 'tokens')::text END \
                 FROM entries e JOIN pads p ON p.name = e.pad WHERE true"
            ));
            q.filter(filter);
            q.raw(" ORDER BY e.seq");
            let rows = q.build().fetch_all(self.pool()).await?;
            rows.iter()
                .map(|r| {
                    let tokens = r
                        .try_get::<Option<String>, _>(11)?
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                        .filter(|v| v.is_number() || v.is_object());
                    read_report(r, tokens)
                })
                .collect()
        })
    }
}
