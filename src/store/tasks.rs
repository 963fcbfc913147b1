//! Tasks, leases and reminders: the writes that make a pad a work queue.
//!
//! Every state change here runs on the writer connection while its mutex is
//! held, so "find the next ready task and take it" is one atomic step: two
//! agents claiming at once are served one after the other and never get the
//! same task.

use rusqlite::{params, Connection, OptionalExtension};

use super::entries::resolve;
use super::journal::Journal;
use super::rows::{read_entry, returning_columns, ENTRY_COLUMNS};
use super::Sqlite;
use super::Store;
use crate::error::Result;
use crate::model::{Entry, Kind, Status};
use crate::storage::rules::{is_task, may_finish, may_heartbeat};
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::Tasks;
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
    /// Hands the oldest ready task of `pad` to `agent`: a `todo` task (or one
    /// whose holder's lease ran out) whose dependencies are all met. It
    /// becomes `doing`, held until `lease_until`. Returns it before and after,
    /// or `None` when nothing is ready.
    pub fn claim(
        &self,
        pad: &str,
        agent: &str,
        lease_ms: i64,
        now: i64,
    ) -> Result<Option<(Entry, Entry)>> {
        let w = self.writer();
        let candidates: Vec<(i64, String)> = w
            .conn
            .prepare_cached(
                "SELECT seq, depends_on FROM entries WHERE pad = ?1 AND kind = 'task' \
                 AND (status = 'todo' OR (status = 'doing' AND lease_until <= ?2)) ORDER BY seq",
            )?
            .query_map(params![pad, now], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (seq, deps) in candidates {
            let deps: Vec<String> = serde_json::from_str(&deps).unwrap_or_default();
            if !unmet(&w.conn, &deps)?.is_empty() {
                continue;
            }
            let before = load(&w.conn, seq)?;
            let after = w
                .conn
                .prepare_cached(&format!(
                    "UPDATE entries SET status = 'doing', assignee = ?2, lease_until = ?4 + ?3, \
                     lease_ms = ?3, claimed_at = ?4, finished_at = NULL, attempts = attempts + 1, \
                     updated_at = ?4, version = version + 1 WHERE seq = ?1 RETURNING {}",
                    returning_columns()
                ))?
                .query_row(params![seq, agent, lease_ms, now], read_entry)?;
            return Ok(Some((before, after)));
        }
        Ok(None)
    }

    /// Extends the lease of a task being worked on (by `lease_ms`, else by
    /// as much as the holder's claim asked for), and records where the work
    /// stands. `agent`, when given, must be the holder.
    pub fn heartbeat(
        &self,
        id: &str,
        agent: Option<&str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Result<(Entry, Entry)> {
        let w = self.writer();
        let (seq, full_id, before) = task(&w.conn, &self.journal, id)?;
        may_heartbeat(&full_id, &before, agent)?;
        let after = w
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
            )?;
        Ok((before, after))
    }

    /// Ends an attempt at a task: done, failed, or failed and back in the queue.
    pub fn finish(
        &self,
        id: &str,
        agent: Option<&str>,
        how: Finish,
        now: i64,
    ) -> Result<(Entry, Entry)> {
        let w = self.writer();
        let (seq, full_id, before) = task(&w.conn, &self.journal, id)?;
        may_finish(&full_id, &before, agent)?;
        let sql = format!(
            "UPDATE entries SET status = ?2, error = CASE WHEN ?3 THEN ?4 ELSE error END, \
             resume = coalesce(?5, resume), lease_until = NULL, finished_at = ?6, \
             assignee = coalesce(assignee, ?7), updated_at = ?6, version = version + 1 \
             WHERE seq = ?1 RETURNING {}",
            returning_columns()
        );
        let (status, error, resume) = match how {
            Finish::Done { resume } => (Status::Done, None, resume),
            Finish::Failed {
                error,
                resume,
                retry,
            } => (
                if retry { Status::Todo } else { Status::Failed },
                Some(error),
                resume,
            ),
        };
        let after = w.conn.prepare_cached(&sql)?.query_row(
            params![
                seq,
                status.as_str(),
                error.is_some(),
                error,
                resume,
                now,
                agent
            ],
            read_entry,
        )?;
        Ok((before, after))
    }

    /// Puts tasks whose lease ran out back in the queue (`todo`), keeping
    /// their `resume` note and last holder. Returns them before and after.
    pub fn release_expired(&self, now: i64) -> Result<Vec<(Entry, Entry)>> {
        // A read first: the common case (nothing expired) never takes the writer.
        let any: Option<i64> = self
            .reader()?
            .prepare_cached(
                "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= ? LIMIT 1",
            )?
            .query_row([now], |r| r.get(0))
            .optional()?;
        if any.is_none() {
            return Ok(Vec::new());
        }
        let mut w = self.writer();
        let tx = w.conn.transaction()?;
        let seqs: Vec<i64> = tx
            .prepare_cached(
                "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= ? ORDER BY seq",
            )?
            .query_map([now], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::with_capacity(seqs.len());
        for seq in seqs {
            let before = load(&tx, seq)?;
            let after = tx
                .prepare_cached(&format!(
                    "UPDATE entries SET status = 'todo', lease_until = NULL, updated_at = ?2, \
                     version = version + 1 WHERE seq = ?1 RETURNING {}",
                    returning_columns()
                ))?
                .query_row(params![seq, now], read_entry)?;
            out.push((before, after));
        }
        tx.commit()?;
        Ok(out)
    }

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

    /// A pad's tasks and plans, oldest first, and for each task the
    /// dependencies still holding it up.
    pub fn plan_entries(&self, pad: &str) -> Result<Vec<(Entry, Vec<String>)>> {
        let conn = self.reader()?;
        let entries: Vec<Entry> = conn
            .prepare_cached(&format!(
                "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.pad = ?1 AND e.kind = 'task' \
                 UNION ALL SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.pad = ?1 AND e.kind = 'plan' \
                 ORDER BY 1"
            ))?
            .query_map([pad], read_entry)?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            let waiting = unmet(&conn, &e.depends_on)?;
            out.push((e, waiting));
        }
        Ok(out)
    }

    /// What `report` needs of the entries on live pads passing `filter`.
    pub fn report_rows(&self, filter: &crate::storage::EntryFilter) -> Result<Vec<ReportRow>> {
        let mut args = Vec::new();
        let mut sql = String::from(
            // A task's title is its first line: 300 characters are plenty,
            // and a report over a million entries must not hold their text.
            "SELECT e.seq, e.pad, e.author, e.kind, \
             CASE WHEN e.kind = 'task' THEN substr(e.content, 1, 300) ELSE '' END, \
             e.status, e.assignee, e.attempts, \
             CASE WHEN e.kind = 'task' THEN e.error END, e.claimed_at, e.finished_at, \
             CASE WHEN e.meta IS NOT NULL THEN json_extract(e.meta, '$.tokens') END, \
             CASE WHEN e.meta IS NOT NULL THEN json_type(e.meta, '$.tokens') END \
             FROM entries e JOIN pads p ON p.name = e.pad WHERE 1",
        );
        filter.push_sql(&mut sql, &mut args);
        sql.push_str(" ORDER BY e.seq");
        let conn = self.reader()?;
        let rows = conn
            .prepare(&sql)?
            .query_map(rusqlite::params_from_iter(args), |r| {
                let kind: String = r.get(3)?;
                let status: Option<String> = r.get(5)?;
                let tokens_type: Option<String> = r.get(12)?;
                let tokens = match tokens_type.as_deref() {
                    Some("integer") => Some(serde_json::json!(r.get::<_, i64>(11)?)),
                    Some("real") => Some(serde_json::json!(r.get::<_, f64>(11)?)),
                    Some("object") => r
                        .get::<_, Option<String>>(11)?
                        .and_then(|t| serde_json::from_str(&t).ok()),
                    _ => None,
                };
                Ok(ReportRow {
                    id: crate::id::encode(r.get(0)?),
                    pad: r.get(1)?,
                    author: r.get(2)?,
                    kind: Kind::parse(&kind).unwrap_or_default(),
                    content: r.get(4)?,
                    status: status.as_deref().and_then(Status::parse),
                    assignee: r.get(6)?,
                    attempts: r.get(7)?,
                    error: r.get(8)?,
                    claimed_at: r.get(9)?,
                    finished_at: r.get(10)?,
                    tokens,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}

fn load(conn: &Connection, seq: i64) -> Result<Entry> {
    Ok(super::entries::load(conn, seq)?.entry)
}

/// The task `id` names (resolved on the writer, so it cannot change under
/// the caller): its row, full id and current state.
fn task(conn: &Connection, journal: &Journal, id: &str) -> Result<(i64, String, Entry)> {
    let (seq, full_id) = resolve(conn, journal, "id", id)?;
    let entry = load(conn, seq)?;
    is_task(&entry)?;
    Ok((seq, full_id, entry))
}

impl Tasks for Sqlite {
    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
    ) -> Fut<'a, Option<(Entry, Entry)>> {
        self.inline(move |s| s.claim(pad, agent, lease_ms, now))
    }

    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| s.heartbeat(id, agent, resume, lease_ms, now))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| s.finish(id, agent, how, now))
    }

    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>> {
        self.blocking(move |s| s.release_expired(now))
    }

    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        self.blocking(move |s| match s.next_reminder()? {
            Some(at) if at <= now => s.take_due_reminders(now),
            _ => Ok(Vec::new()),
        })
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<(Entry, Vec<String>)>> {
        let pad = pad.to_string();
        self.blocking(move |s| s.plan_entries(&pad))
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        let filter = filter.clone();
        self.blocking(move |s| s.report_rows(&filter))
    }
}
