//! Tasks' statements, written once for both stores over the connection a
//! write's transaction runs on (`WriteTx::conn`) or a store's read
//! connection: what `storage::write`'s task sequences run (a claimable
//! task found, held and taken, a lease extended, an attempt ended, an
//! expired lease released), the due reminders taken, a pad's plan and the
//! report read.
//!
//! Where the databases differ the dialect says how: a row another engine
//! holds is passed over on PostgreSQL (`Dialect::hold_free_rows`; SQLite's
//! one writer holds them all), a list is JSON text or an array
//! (`Dialect::any_of`).

use super::query::{
    read_entry, read_report, returning_columns, Arg, Columns, Execute, Query, Select,
    ENTRY_COLUMNS, ENTRY_COLUMN_COUNT, REPORT_COLUMNS,
};
use super::rules::no_entry;
use super::{EntryFilter, PlanRow, ReportRow, DEFAULT_LEASE_MS};
use crate::error::Result;
use crate::model::{Entry, Status};

/// How an attempt at a task ended, as its row takes it.
pub struct Ended<'a> {
    pub status: Status,
    /// Set when given (a failure); kept from before when not.
    pub error: Option<String>,
    pub resume: Option<String>,
    /// The holder's name, kept when the task had none.
    pub agent: Option<&'a str>,
}

/// Runs `UPDATE entries … RETURNING` on the task `seq`: the task after.
async fn updated<C: Execute>(c: &mut C, set: &str, seq: i64, args: Vec<Arg>) -> Result<Entry> {
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "UPDATE entries SET {set}, version = version + 1 WHERE seq = $1 RETURNING {}",
            returning_columns()
        ),
        [vec![Arg::Int(seq)], args].concat(),
    );
    c.first(&q, |r| read_entry(r))
        .await?
        .ok_or_else(|| no_entry("id", &crate::id::encode(seq)))
}

/// `(seq, depends_on)` of the pad's tasks a claimant may take (`todo`, or
/// `doing` with the lease run out), oldest first; none of them held.
pub async fn claimable<C: Select>(
    c: &mut C,
    pad: &str,
    now: i64,
) -> Result<Vec<(i64, Vec<String>)>> {
    let q = Query::prepared(
        C::DIALECT,
        "SELECT seq, depends_on FROM entries WHERE pad = $1 AND kind = 'task' \
         AND (status = 'todo' OR (status = 'doing' AND lease_until <= $2)) ORDER BY seq",
        vec![Arg::Text(pad.into()), Arg::Int(now)],
    );
    c.rows(&q, |r| Ok((r.int(0)?, r.texts(1)?))).await
}

/// Holds the task `seq` for this transaction if it is still claimable and
/// no other claimant holds it: false when another claimant has it (read
/// again as it is now: one another claimant took since `claimable` read
/// it is no longer `todo`).
pub async fn hold_claimable<C: Select>(c: &mut C, seq: i64, now: i64) -> Result<bool> {
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "SELECT seq FROM entries WHERE seq = $1 \
             AND (status = 'todo' OR (status = 'doing' AND lease_until <= $2)){}",
            C::DIALECT.hold_free_rows()
        ),
        vec![Arg::Int(seq), Arg::Int(now)],
    );
    Ok(c.first(&q, |r| r.int(0)).await?.is_some())
}

/// The dependencies in `depends_on` still holding a task up: tasks not
/// done, and entries with a status other than done. One gone, or a note
/// without a status, is met.
pub async fn unmet<C: Select>(c: &mut C, depends_on: &[String]) -> Result<Vec<String>> {
    let full = |d: &String| {
        crate::id::prefix_range(d)
            .filter(|(lo, hi)| lo == hi)
            .map(|r| r.0)
    };
    let seqs: Vec<i64> = depends_on.iter().filter_map(full).collect();
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "SELECT seq FROM entries WHERE {} \
             AND (status IS NULL OR status <> 'done') AND (kind = 'task' OR status IS NOT NULL)",
            C::DIALECT.any_of("seq", "$1")
        ),
        vec![Arg::Ints(seqs)],
    );
    let waiting = c.rows(&q, |r| r.int(0)).await?;
    Ok(depends_on
        .iter()
        .filter(|d| full(d).is_some_and(|s| waiting.contains(&s)))
        .cloned()
        .collect())
}

/// Hands the task `seq` to `agent` until `now + lease_ms`.
pub async fn take<C: Execute>(
    c: &mut C,
    seq: i64,
    agent: &str,
    lease_ms: i64,
    now: i64,
) -> Result<Entry> {
    let set = "status = 'doing', assignee = $2, lease_until = $4 + $3, lease_ms = $3, \
               claimed_at = $4, finished_at = NULL, attempts = attempts + 1, updated_at = $4";
    let args = vec![Arg::Text(agent.into()), Arg::Int(lease_ms), Arg::Int(now)];
    updated(c, set, seq, args).await
}

/// Extends the task's lease (by `lease_ms`, else as its claim asked) and
/// records where the work stands.
pub async fn extend_lease<C: Execute>(
    c: &mut C,
    seq: i64,
    lease_ms: Option<i64>,
    resume: Option<String>,
    now: i64,
) -> Result<Entry> {
    let set = "lease_ms = coalesce($2, lease_ms, $3), \
               lease_until = $4 + coalesce($2, lease_ms, $3), resume = coalesce($5, resume), \
               updated_at = $4";
    let args = vec![
        Arg::opt_int(lease_ms),
        Arg::Int(DEFAULT_LEASE_MS),
        Arg::Int(now),
        Arg::opt_text(resume),
    ];
    updated(c, set, seq, args).await
}

/// Ends the task's attempt in `end.status`.
pub async fn end_attempt<C: Execute>(
    c: &mut C,
    seq: i64,
    end: Ended<'_>,
    now: i64,
) -> Result<Entry> {
    let set = "status = $2, error = CASE WHEN $3 THEN $4 ELSE error END, \
               resume = coalesce($5, resume), lease_until = NULL, finished_at = $6, \
               assignee = coalesce(assignee, $7), updated_at = $6";
    let args = vec![
        Arg::Text(end.status.as_str().into()),
        Arg::Bool(end.error.is_some()),
        Arg::opt_text(end.error),
        Arg::opt_text(end.resume),
        Arg::Int(now),
        Arg::opt_text(end.agent),
    ];
    updated(c, set, seq, args).await
}

/// Tasks `doing` whose lease ran out by `now`, oldest first, held (one
/// another engine is releasing passed over).
pub async fn expired<C: Select>(c: &mut C, now: i64) -> Result<Vec<i64>> {
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= $1 ORDER BY seq{}",
            C::DIALECT.hold_free_rows()
        ),
        vec![Arg::Int(now)],
    );
    c.rows(&q, |r| r.int(0)).await
}

/// Puts the task `seq` back to `todo`.
pub async fn requeue<C: Execute>(c: &mut C, seq: i64, now: i64) -> Result<Entry> {
    let set = "status = 'todo', lease_until = NULL, updated_at = $2";
    updated(c, set, seq, vec![Arg::Int(now)]).await
}

/// When the next undelivered reminder is due, if any.
pub async fn next_reminder<C: Select>(c: &mut C) -> Result<Option<i64>> {
    let q = Query::prepared(
        C::DIALECT,
        "SELECT min(remind_at) FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL",
        Vec::new(),
    );
    Ok(c.first(&q, |r| r.opt_int(0)).await?.flatten())
}

/// Marks every reminder due by `now` delivered and returns their entries,
/// soonest first. Delivery is recorded in the statement that takes them,
/// so each is handed out once, across restarts and engines too.
pub async fn take_due_reminders<C: Execute>(c: &mut C, now: i64) -> Result<Vec<Entry>> {
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "UPDATE entries SET reminded_at = $1 WHERE seq IN ( \
               SELECT seq FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL \
               AND remind_at <= $1{}) \
             RETURNING {}",
            C::DIALECT.hold_free_rows(),
            returning_columns()
        ),
        vec![Arg::Int(now)],
    );
    let mut due = c.rows(&q, |r| read_entry(r)).await?;
    due.sort_by(|a, b| a.remind_at.cmp(&b.remind_at).then(a.id.cmp(&b.id)));
    Ok(due)
}

/// A pad's tasks and plans, oldest first: for each, the dependencies still
/// holding it up and when it was last claimed and finished.
pub async fn plan<C: Select>(c: &mut C, pad: &str) -> Result<Vec<PlanRow>> {
    // One arm per kind, each on the (pad, kind) index.
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "SELECT {ENTRY_COLUMNS}, e.claimed_at, e.finished_at FROM entries e \
             WHERE e.pad = $1 AND e.kind = 'task' \
             UNION ALL SELECT {ENTRY_COLUMNS}, e.claimed_at, e.finished_at FROM entries e \
             WHERE e.pad = $1 AND e.kind = 'plan' ORDER BY 1"
        ),
        vec![Arg::Text(pad.into())],
    );
    let rows = c
        .rows(&q, |r| {
            let (claimed, finished) = (ENTRY_COLUMN_COUNT, ENTRY_COLUMN_COUNT + 1);
            Ok((read_entry(r)?, r.opt_int(claimed)?, r.opt_int(finished)?))
        })
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for (entry, claimed_at, finished_at) in rows {
        let deps: Vec<String> = entry.depends_on.iter().map(|r| r.to_string()).collect();
        let waiting = unmet(c, &deps).await?;
        out.push(PlanRow {
            entry,
            waiting,
            claimed_at,
            finished_at,
        });
    }
    Ok(out)
}

/// What `report` needs of the entries on live pads passing `filter`, in
/// the order written: a task's tokens are its meta's `tokens`, a number or
/// an object.
pub async fn report<C: Select>(c: &mut C, filter: &EntryFilter) -> Result<Vec<ReportRow>> {
    let mut q = C::query(format!(
        "SELECT {REPORT_COLUMNS}, {} FROM entries e JOIN pads p ON p.name = e.pad WHERE true",
        C::DIALECT.json_field("e.meta", "tokens")
    ));
    q.filter(filter).raw(" ORDER BY e.seq");
    c.rows(&q, |r| {
        let tokens = r
            .opt_text(11)?
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter(|v| v.is_number() || v.is_object());
        read_report(r, tokens)
    })
    .await
}
