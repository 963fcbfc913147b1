//! Tasks, leases and reminders: the writes that make a pad a work queue.
//!
//! Every state change here runs on the writer connection while its mutex is
//! held, so "find the next ready task and take it" is one atomic step: two
//! agents claiming at once are served one after the other and never get the
//! same task. The sequences are `storage::write`'s, their statements
//! `storage::tasks`'.

use rusqlite::OptionalExtension;

use super::sqlite::ready;
use super::{committed_if, in_transaction, Sqlite};
use crate::model::Entry;
use crate::storage::once::{Key, Once};
use crate::storage::write;
use crate::storage::Fut;
use crate::storage::{tasks, Tasks};
use crate::storage::{EntryFilter, Finish, PlanRow, ReportRow};

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
                |w| ready(write::claim(&mut s.tx(w), pad, agent, lease_ms, now, key)),
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

    /// A read first: the common case (nothing due) never takes the writer.
    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        self.blocking(
            move |s| match ready(tasks::next_reminder(&mut *s.reader()?))? {
                Some(at) if at <= now => {
                    ready(tasks::take_due_reminders(&mut s.writer().conn, now))
                }
                _ => Ok(Vec::new()),
            },
        )
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<PlanRow>> {
        let pad = pad.to_string();
        self.blocking(move |s| ready(tasks::plan(&mut *s.reader()?, &pad)))
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        let filter = filter.clone();
        self.blocking(move |s| ready(tasks::report(&mut *s.reader()?, &filter)))
    }
}
