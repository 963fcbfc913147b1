//! Tasks, leases and reminders: the writes that make a pad a work queue.
//!
//! Every state change here runs on the writer connection while its mutex is
//! held, so "find the next ready task and take it" is one atomic step: two
//! agents claiming at once are served one after the other and never get the
//! same task. The sequences are `storage::write`'s; the statements here.

use rusqlite::{params, Connection, OptionalExtension};

use super::rows::REPORT_COLUMNS;
use super::rows::{read_entry, returning_columns, ENTRY_COLUMNS, ENTRY_COLUMN_COUNT};
use super::sqlite::ready;
use super::tx::SqliteTx;
use super::{committed_if, in_transaction, Sqlite, Store};
use crate::error::Result;
use crate::model::Entry;
use crate::storage::once::{self, Key, Once};
use crate::storage::rows::read_report;
use crate::storage::write::{self, Ended, TaskTx};
use crate::storage::Fut;
use crate::storage::Tasks;
use crate::storage::{EntryFilter, PlanRow};
use crate::storage::{Finish, ReportRow, DEFAULT_LEASE_MS};

/// Whether the dependency `id` no longer holds anything up: it is done, it is
/// not a task (a note or a result is there once written), or it is gone.
fn dependency_met(conn: &Connection, id: &str) -> Result<bool> {
    let Some((seq, _)) = crate::id::prefix_range(id).filter(|(lo, hi)| lo == hi) else {
        return Ok(true);
    };
    let row: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT kind, status FROM entries WHERE seq = ?")?
        .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(match row {
        None => true,
        Some((kind, status)) => {
            status.as_deref() == Some("done") || (kind != "task" && status.is_none())
        }
    })
}

/// The dependencies of an entry still holding it up.
pub(crate) fn unmet(conn: &Connection, depends_on: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for d in depends_on {
        if !dependency_met(conn, d)? {
            out.push(d.clone());
        }
    }
    Ok(out)
}

impl Store {
    /// When the next undelivered reminder is due, if any.
    pub fn next_reminder(&self) -> Result<Option<i64>> {
        Ok(self.reader()?.query_row(
            "SELECT min(remind_at) FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// Marks every reminder due by `now` delivered and returns their entries.
    /// Delivery is recorded in the same statement that selects them, so each
    /// reminder is handed out once, across restarts too.
    pub fn take_due_reminders(&self, now: i64) -> Result<Vec<Entry>> {
        let w = self.writer();
        let mut due = w
            .conn
            .prepare_cached(&format!(
                "UPDATE entries SET reminded_at = ?1 WHERE remind_at IS NOT NULL \
                 AND reminded_at IS NULL AND remind_at <= ?1 RETURNING {}",
                returning_columns()
            ))?
            .query_map([now], read_entry)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        due.sort_by(|a, b| a.remind_at.cmp(&b.remind_at).then(a.id.cmp(&b.id)));
        Ok(due)
    }
}

/// SQLite's statements moving a task along (`storage::write`).
impl TaskTx for SqliteTx<'_> {
    async fn claimable(&mut self, pad: &str, now: i64) -> Result<Vec<(i64, Vec<String>)>> {
        let rows: Vec<(i64, String)> = self
            .conn
            .prepare_cached(
                "SELECT seq, depends_on FROM entries WHERE pad = ?1 AND kind = 'task' \
                 AND (status = 'todo' OR (status = 'doing' AND lease_until <= ?2)) ORDER BY seq",
            )?
            .query_map(params![pad, now], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows
            .into_iter()
            .map(|(seq, deps)| (seq, serde_json::from_str(&deps).unwrap_or_default()))
            .collect())
    }

    /// The writer is the only claimant: what `claimable` read still holds.
    async fn hold_claimable(&mut self, _seq: i64, _now: i64) -> Result<bool> {
        Ok(true)
    }

    async fn unmet(&mut self, depends_on: &[String]) -> Result<Vec<String>> {
        unmet(self.conn, depends_on)
    }

    async fn take(&mut self, seq: i64, agent: &str, lease_ms: i64, now: i64) -> Result<Entry> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "UPDATE entries SET status = 'doing', assignee = ?2, lease_until = ?4 + ?3, \
                 lease_ms = ?3, claimed_at = ?4, finished_at = NULL, attempts = attempts + 1, \
                 updated_at = ?4, version = version + 1 WHERE seq = ?1 RETURNING {}",
                returning_columns()
            ))?
            .query_row(params![seq, agent, lease_ms, now], read_entry)?)
    }

    async fn extend_lease(
        &mut self,
        seq: i64,
        lease_ms: Option<i64>,
        resume: Option<String>,
        now: i64,
    ) -> Result<Entry> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "UPDATE entries SET lease_ms = coalesce(?2, lease_ms, ?5), \
                 lease_until = ?4 + coalesce(?2, lease_ms, ?5), resume = coalesce(?3, resume), \
                 updated_at = ?4, version = version + 1 WHERE seq = ?1 RETURNING {}",
                returning_columns()
            ))?
            .query_row(
                params![seq, lease_ms, resume, now, DEFAULT_LEASE_MS],
                read_entry,
            )?)
    }

    async fn end_attempt(&mut self, seq: i64, end: Ended<'_>, now: i64) -> Result<Entry> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "UPDATE entries SET status = ?2, error = CASE WHEN ?3 THEN ?4 ELSE error END, \
                 resume = coalesce(?5, resume), lease_until = NULL, finished_at = ?6, \
                 assignee = coalesce(assignee, ?7), updated_at = ?6, version = version + 1 \
                 WHERE seq = ?1 RETURNING {}",
                returning_columns()
            ))?
            .query_row(
                params![
                    seq,
                    end.status.as_str(),
                    end.error.is_some(),
                    end.error,
                    end.resume,
                    now,
                    end.agent
                ],
                read_entry,
            )?)
    }

    async fn expired(&mut self, now: i64) -> Result<Vec<i64>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= ? ORDER BY seq",
            )?
            .query_map([now], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?)
    }

    async fn requeue(&mut self, seq: i64, now: i64) -> Result<Entry> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "UPDATE entries SET status = 'todo', lease_until = NULL, updated_at = ?2, \
                 version = version + 1 WHERE seq = ?1 RETURNING {}",
                returning_columns()
            ))?
            .query_row(params![seq, now], read_entry)?)
    }
}

impl Tasks for Sqlite {
    /// `storage::write::claim` on the writer: one claimant at a time.
    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
        key: Option<&'a Key>,
    ) -> Fut<'a, Once<Option<(Entry, Entry)>>> {
        self.inline(move |s| {
            let mut w = s.writer();
            // Nothing claimed: rolled back, so an idle poll writes no key's row.
            committed_if(
                &mut w,
                |w| {
                    let tx = &mut s.tx(w);
                    if let Some(first) = ready(once::taken(tx, key, now))? {
                        return Ok(Once::Again(first));
                    }
                    let claimed = ready(write::claim(tx, pad, agent, lease_ms, now))?;
                    if let Some((_, after)) = &claimed {
                        ready(once::keep(tx, key, &after.id))?;
                    }
                    Ok(Once::Wrote(claimed))
                },
                |o| !matches!(o, Once::Wrote(None)),
            )
        })
    }

    /// `storage::write::heartbeat` on the writer.
    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| {
            let mut w = s.writer();
            in_transaction(&mut w, |w| {
                ready(write::heartbeat(
                    &mut s.tx(w),
                    id,
                    agent,
                    resume,
                    lease_ms,
                    now,
                ))
            })
        })
    }

    /// `storage::write::finish` on the writer.
    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| {
            let mut w = s.writer();
            in_transaction(&mut w, |w| {
                ready(write::finish(&mut s.tx(w), id, agent, how, now))
            })
        })
    }

    /// `storage::write::release_expired` on the writer.
    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>> {
        self.blocking(move |s| {
            // A read first: the common case (nothing expired) never takes the writer.
            let any: Option<i64> = s
                .reader()?
                .prepare_cached(
                    "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= ? LIMIT 1",
                )?
                .query_row([now], |r| r.get(0))
                .optional()?;
            if any.is_none() {
                return Ok(Vec::new());
            }
            let mut w = s.writer();
            in_transaction(&mut w, |w| ready(write::release_expired(&mut s.tx(w), now)))
        })
    }

    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        self.blocking(move |s| match s.next_reminder()? {
            Some(at) if at <= now => s.take_due_reminders(now),
            _ => Ok(Vec::new()),
        })
    }

    /// A pad's tasks and plans, oldest first, and for each task the
    /// dependencies still holding it up and when it was last claimed and
    /// finished.
    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<PlanRow>> {
        let pad = pad.to_string();
        self.blocking(move |s| {
            let pad = &pad;
            let conn = s.reader()?;
            let rows: Vec<(Entry, Option<i64>, Option<i64>)> = conn
                .prepare_cached(&format!(
                    "SELECT {ENTRY_COLUMNS}, e.claimed_at, e.finished_at FROM entries e \
                     WHERE e.pad = ?1 AND e.kind = 'task' \
                     UNION ALL SELECT {ENTRY_COLUMNS}, e.claimed_at, e.finished_at FROM entries e \
                     WHERE e.pad = ?1 AND e.kind = 'plan' ORDER BY 1"
                ))?
                .query_map([pad], |r| {
                    Ok((
                        read_entry(r)?,
                        r.get(ENTRY_COLUMN_COUNT)?,
                        r.get(ENTRY_COLUMN_COUNT + 1)?,
                    ))
                })?
                .collect::<rusqlite::Result<_>>()?;
            let mut out = Vec::with_capacity(rows.len());
            for (entry, claimed_at, finished_at) in rows {
                let deps: Vec<String> = entry.depends_on.iter().map(|r| r.to_string()).collect();
                let waiting = unmet(&conn, &deps)?;
                out.push(PlanRow {
                    entry,
                    waiting,
                    claimed_at,
                    finished_at,
                });
            }
            Ok(out)
        })
    }

    /// What `report` needs of the entries on live pads passing `filter`.
    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        let filter = filter.clone();
        self.blocking(move |s| {
            let filter = &filter;
            let mut q = super::query::query(format!(
                "SELECT {REPORT_COLUMNS}, \
                 CASE WHEN e.meta IS NOT NULL THEN json_extract(e.meta, '$.tokens') END, \
                 CASE WHEN e.meta IS NOT NULL THEN json_type(e.meta, '$.tokens') END \
                 FROM entries e JOIN pads p ON p.name = e.pad WHERE 1"
            ));
            q.filter(filter).raw(" ORDER BY e.seq");
            let conn = s.reader()?;
            let rows = conn
                .prepare(&q.sql)?
                .query_map(rusqlite::params_from_iter(q.args()), |r| {
                    let tokens_type: Option<String> = r.get(12)?;
                    let tokens = match tokens_type.as_deref() {
                        Some("integer") => Some(serde_json::json!(r.get::<_, i64>(11)?)),
                        Some("real") => Some(serde_json::json!(r.get::<_, f64>(11)?)),
                        Some("object") => r
                            .get::<_, Option<String>>(11)?
                            .and_then(|t| serde_json::from_str(&t).ok()),
                        _ => None,
                    };
                    read_report(r, tokens)
                })?
                .collect::<rusqlite::Result<_>>()?;
            Ok(rows)
        })
    }
}
