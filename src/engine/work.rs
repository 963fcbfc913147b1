//! Resumable work: plans in dependency order, task claims under leases,
//! reminders, shared learnings and the per-agent report.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use super::{meta_text, named, text_field, Engine};
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::guard::Guard;
use crate::model::{self, Entry, Kind, Status};
use crate::protocol::*;
use crate::storage::once::{Key, Once};
use crate::storage::{Finish, NewEntry, PlanRow, ReportRow};

/// A claim lasts this long unless the claimant asks otherwise or heartbeats.
pub const DEFAULT_LEASE_SECONDS: u64 = (crate::storage::DEFAULT_LEASE_MS / 1000) as u64;
pub const MAX_LEASE_SECONDS: u64 = 24 * 3600;
/// An entry may be shared to at most this many pads at once.
pub const MAX_SHARE_TARGETS: usize = 20;
/// `report` lists at most this many tasks (the newest); `tasks_total` counts all.
pub const MAX_REPORTED_TASKS: usize = 1000;

impl Engine {
    /// A pad's tasks, each after everything it depends on (ties: oldest
    /// first), with what is ready, running, blocked, done and failed.
    pub async fn plan_order(&self, p: PlanParams) -> Result<PlanResult> {
        let pad = model::pad_name("pad", &p.pad)?;
        let now = self.now();
        let name = pad.clone();
        let rows = {
            let _turn = self.turn().await?;
            self.db().plan_entries(&name).await?
        };
        Ok(plan(pad, rows, now))
    }

    /// Hands the next ready task of a pad to an agent.
    /// With `key` taken by an earlier call, claims nothing and answers with
    /// the task that call took while `agent` still holds it, else `-32002`.
    pub async fn claim(
        &self,
        p: ClaimParams,
        default_author: Option<&str>,
        key: Option<Key>,
    ) -> Result<ClaimResult> {
        let pad = model::pad_name("pad", &p.pad)?;
        let agent = named(
            "agent",
            p.agent.as_deref().or(default_author),
            "who claims the task? Give agent (e.g. 'agent-research'), or say hello with an author first.",
        )?;
        let now = self.now();
        let lease = lease_ms(p.lease_seconds)?;
        let claimed = match self
            .db()
            .claim(&pad, &agent, lease, now, key.as_ref())
            .await?
        {
            Once::Wrote(claimed) => claimed,
            // Read again: the answer is the task only while the claim holds.
            Once::Again(id) => {
                let task = still_held(self.db().get(&id).await?, &agent, now)?;
                return Ok(ClaimResult {
                    entry: Some(task),
                    counts: None,
                });
            }
        };
        let Some((before, after)) = claimed else {
            let plan = self.plan_order(PlanParams { pad }).await?;
            return Ok(ClaimResult {
                entry: None,
                counts: Some(plan.counts),
            });
        };
        self.0
            .bus
            .entry_changed(EventType::Updated, Some(&before), &after);
        Ok(ClaimResult {
            entry: Some(after),
            counts: None,
        })
    }

    pub async fn heartbeat(&self, p: HeartbeatParams) -> Result<Entry> {
        let agent = holder(p.agent.as_deref())?;
        let resume = self.resume(p.resume)?;
        let lease = p.lease_seconds.map(|s| lease_ms(Some(s))).transpose()?;
        let now = self.now();
        let (before, after) = self
            .db()
            .heartbeat(&p.id, agent.as_deref(), resume, lease, now)
            .await?;
        self.0
            .bus
            .entry_changed(EventType::Updated, Some(&before), &after);
        Ok(after)
    }

    pub async fn complete(&self, p: CompleteParams) -> Result<Entry> {
        let agent = holder(p.agent.as_deref())?;
        let resume = self.resume(p.resume)?;
        self.finish(&p.id, agent, Finish::Done { resume }).await
    }

    pub async fn fail(&self, p: FailParams) -> Result<Entry> {
        let agent = holder(p.agent.as_deref())?;
        let resume = self.resume(p.resume)?;
        let error = match p.error {
            Some(e) if !e.trim().is_empty() => {
                text_field("error", e, self.0.config.max_content_chars)?
            }
            _ => "failed without saying why".to_string(),
        };
        self.finish(
            &p.id,
            agent,
            Finish::Failed {
                error,
                resume,
                retry: p.retry,
            },
        )
        .await
    }

    async fn finish(&self, id: &str, agent: Option<String>, how: Finish) -> Result<Entry> {
        let now = self.now();
        let (before, after) = self.db().finish(id, agent.as_deref(), how, now).await?;
        self.0
            .bus
            .entry_changed(EventType::Updated, Some(&before), &after);
        Ok(after)
    }

    fn resume(&self, raw: Option<String>) -> Result<Option<String>> {
        raw.map(|r| text_field("resume", r, self.0.config.max_content_chars))
            .transpose()
    }

    /// Puts tasks whose holder's lease ran out back in the queue; returns how many.
    pub async fn release_leases(&self) -> Result<usize> {
        let now = self.now();
        let released = self.db().release_expired(now).await?;
        for (before, after) in &released {
            tracing::info!(
                "lease on task {} ({}) ran out; it is back in the queue",
                after.id,
                before.assignee.as_deref().unwrap_or("?")
            );
            self.0
                .bus
                .entry_changed(EventType::Updated, Some(before), after);
        }
        Ok(released.len())
    }

    /// Delivers every reminder that came due (once each, also after a
    /// restart that spanned the due time); returns how many.
    pub async fn deliver_reminders(&self) -> Result<usize> {
        let now = self.now();
        let due = self.db().due_reminders(now).await?;
        for entry in &due {
            tracing::info!("reminder due on {} for {}", entry.id, entry.author);
            self.0
                .bus
                .publish(EventType::Reminder, &entry.pad.clone(), Some(entry.clone()));
        }
        Ok(due.len())
    }

    /// Copies an entry to other pads, each copy saying where it came from.
    pub async fn share(
        &self,
        p: ShareParams,
        default_author: Option<&str>,
        guard: &Guard,
    ) -> Result<ShareResult> {
        let source = self.get(&p.id).await?;
        guard.may_read(&source.pad)?;
        if p.to.is_empty() {
            return Err(Error::invalid(
                "to",
                "'to' is empty; name the pads to share to, e.g. [\"proj-y\"].",
            ));
        }
        if p.to.len() > MAX_SHARE_TARGETS {
            return Err(Error::over_limit(
                "to",
                format!(
                    "{} pads; an entry may be shared to at most {MAX_SHARE_TARGETS} at once.",
                    p.to.len()
                ),
                MAX_SHARE_TARGETS,
                p.to.len(),
            ));
        }
        let mut targets: Vec<String> = Vec::with_capacity(p.to.len());
        for raw in &p.to {
            let pad = model::pad_name("to", raw)?;
            if pad == source.pad {
                return Err(Error::invalid(
                    "to",
                    format!(
                        "entry {} is already on pad '{pad}'; share it to other pads.",
                        source.id
                    ),
                ));
            }
            guard.may_write(&pad)?;
            if !targets.contains(&pad) {
                targets.push(pad);
            }
        }
        let author = match p.author.as_deref().or(default_author) {
            Some(a) => model::author("author", a)?,
            None => source.author.clone(),
        };
        let mut meta = source.meta.clone().unwrap_or_default();
        meta.insert(
            model::SHARED_FROM.into(),
            serde_json::json!({"pad": source.pad, "id": source.id, "author": source.author}),
        );
        let meta = meta_text(&meta)?;
        let mut copies = Vec::with_capacity(targets.len());
        for pad in targets {
            let copy = NewEntry {
                pad,
                author: author.clone(),
                kind: source.kind,
                content: source.content.clone(),
                tags: source.tags.clone(),
                status: (source.kind == Kind::Task).then_some(Status::Todo),
                assignee: None,
                resume: None,
                category: source.category,
                confidence: source.confidence,
                depends_on: Vec::new(),
                reply_to: None,
                choices: source.choices.clone(),
                to: Vec::new(),
                supersedes: None,
                remind_at: None,
                pinned: false,
                meta: Some(meta.clone()),
                now: self.now(),
                handoffs: Vec::new(),
                by_token: false,
                key: None,
            };
            copies.push(self.insert(copy).await?);
        }
        Ok(ShareResult { copies })
    }

    /// Per author and per task: what was written, finished, failed, retried,
    /// how long tasks took, and the tokens agents recorded in `meta.tokens`.
    pub async fn report(&self, p: ReportParams, guard: &Guard) -> Result<ReportResult> {
        let filter = guard.pad_scope(p.pad.as_deref())?;
        let pad = filter.pad.clone();
        let rows = {
            let _turn = self.turn().await?;
            self.db().report_rows(&filter).await?
        };
        Ok(report(pad, rows))
    }
}

fn holder(agent: Option<&str>) -> Result<Option<String>> {
    agent.map(|a| model::author("agent", a)).transpose()
}

fn lease_ms(seconds: Option<u64>) -> Result<i64> {
    let s = seconds.unwrap_or(DEFAULT_LEASE_SECONDS);
    if s == 0 || s > MAX_LEASE_SECONDS {
        return Err(Error::over_limit(
            "lease_seconds",
            format!("lease_seconds is {s}; give 1 to {MAX_LEASE_SECONDS} (a day). Renew a long job with task.heartbeat instead of one long lease."),
            MAX_LEASE_SECONDS,
            s,
        ));
    }
    Ok(s as i64 * 1000)
}

/// Orders tasks so each comes after what it depends on (Kahn's algorithm,
/// oldest first among the ready), and says where each stands.
fn plan(pad: String, rows: Vec<PlanRow>, now: i64) -> PlanResult {
    let mut plans = Vec::new();
    let mut tasks = Vec::new();
    for r in rows {
        if r.entry.kind == Kind::Plan {
            plans.push(r.entry);
        } else {
            tasks.push(r);
        }
    }
    plans.reverse();
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, r)| (r.entry.id.as_str(), i))
        .collect();
    let mut indegree = vec![0usize; tasks.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, r) in tasks.iter().enumerate() {
        for d in &r.entry.depends_on {
            if let Some(&j) = index.get(d.as_str()) {
                indegree[i] += 1;
                dependents[j].push(i);
            }
        }
    }
    // Tasks are oldest first, so the smallest index is the oldest.
    let mut ready: BinaryHeap<Reverse<usize>> = (0..tasks.len())
        .filter(|&i| indegree[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(tasks.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &j in &dependents[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.push(Reverse(j));
            }
        }
    }
    // Cycles are refused on write; should one exist anyway, list its tasks last.
    if order.len() < tasks.len() {
        let placed: std::collections::HashSet<usize> = order.iter().copied().collect();
        order.extend((0..tasks.len()).filter(|i| !placed.contains(i)));
    }
    let mut slots: Vec<Option<PlanRow>> = tasks.into_iter().map(Some).collect();
    let mut counts = PlanCounts::default();
    let entries = order
        .into_iter()
        .filter_map(|i| slots[i].take())
        .map(|row| {
            let PlanRow {
                entry,
                waiting: waiting_on,
                claimed_at,
                finished_at,
            } = row;
            let lease_live = lease_live(&entry, now);
            let state = match entry.status {
                Some(Status::Done) => StepState::Done,
                Some(Status::Failed) => StepState::Failed,
                Some(Status::Doing) if lease_live => StepState::Running,
                Some(Status::Blocked) => StepState::Blocked,
                _ if !waiting_on.is_empty() => StepState::Blocked,
                _ => StepState::Ready,
            };
            match state {
                StepState::Ready => counts.ready += 1,
                StepState::Running => counts.running += 1,
                StepState::Blocked => counts.blocked += 1,
                StepState::Done => counts.done += 1,
                StepState::Failed => counts.failed += 1,
            }
            // Since when it stands where it stands, where the store knows:
            // `doing` since its start, with a lease or not (an agent that
            // writes its own tasks holds no lease).
            let since = match entry.status {
                Some(Status::Doing) => claimed_at,
                Some(Status::Done | Status::Failed) => finished_at,
                _ => None,
            };
            PlanStep {
                entry,
                state,
                waiting_on: crate::seal::refs(waiting_on),
                since: since.map(model::fmt_time),
            }
        })
        .collect();
    PlanResult {
        pad,
        plans,
        entries,
        counts,
    }
}

/// Token counts as agents record them: a number, or an object of numbers
/// (`{"input": 1200, "output": 300}`; a `total` field wins when present).
fn token_count(v: &Option<serde_json::Value>) -> u64 {
    let as_u64 = |v: &serde_json::Value| v.as_f64().filter(|n| *n >= 0.0).map(|n| n as u64);
    match v {
        Some(serde_json::Value::Object(o)) => match o.get("total").and_then(as_u64) {
            Some(t) => t,
            None => o.values().filter_map(as_u64).sum(),
        },
        Some(n) => as_u64(n).unwrap_or(0),
        None => 0,
    }
}

fn report(pad: Option<String>, rows: Vec<ReportRow>) -> ReportResult {
    let mut authors: BTreeMap<String, AuthorReport> = BTreeMap::new();
    let mut tasks = Vec::new();
    fn of<'a>(m: &'a mut BTreeMap<String, AuthorReport>, who: &str) -> &'a mut AuthorReport {
        m.entry(who.to_string()).or_insert_with(|| AuthorReport {
            author: who.to_string(),
            ..AuthorReport::default()
        })
    }
    for r in rows {
        let tokens = token_count(&r.tokens);
        let a = of(&mut authors, &r.author);
        a.entries += 1;
        a.tokens += tokens;
        if r.kind != Kind::Task {
            continue;
        }
        let retries = (r.attempts - 1).max(0);
        if let Some(h) = &r.assignee {
            let h = of(&mut authors, h);
            h.retries += retries as u64;
            match r.status {
                Some(Status::Done) => h.tasks_done += 1,
                Some(Status::Failed) => h.tasks_failed += 1,
                _ => {}
            }
        }
        let finished = matches!(r.status, Some(Status::Done) | Some(Status::Failed));
        let duration_seconds = match (r.claimed_at, r.finished_at) {
            (Some(c), Some(f)) if finished && f >= c => Some((f - c) as f64 / 1000.0),
            _ => None,
        };
        let first_line = r.content.lines().next().unwrap_or("").trim();
        let title = if first_line.chars().count() > 80 {
            format!("{}…", first_line.chars().take(79).collect::<String>())
        } else {
            first_line.to_string()
        };
        tasks.push(TaskReport {
            id: r.id,
            pad: r.pad,
            title,
            status: r.status,
            assignee: r.assignee,
            attempts: r.attempts,
            retries,
            error: r.error,
            duration_seconds,
            tokens,
        });
    }
    let mut totals = AuthorReport {
        author: "*".into(),
        ..AuthorReport::default()
    };
    for a in authors.values() {
        totals.entries += a.entries;
        totals.tasks_done += a.tasks_done;
        totals.tasks_failed += a.tasks_failed;
        totals.retries += a.retries;
        totals.tokens += a.tokens;
    }
    let tasks_total = tasks.len();
    if tasks.len() > MAX_REPORTED_TASKS {
        tasks.drain(..tasks.len() - MAX_REPORTED_TASKS);
    }
    let mut authors: Vec<AuthorReport> = authors.into_values().collect();
    authors.sort_by(|a, b| b.entries.cmp(&a.entries).then(a.author.cmp(&b.author)));
    ReportResult {
        pad,
        authors,
        tasks,
        tasks_total,
        totals,
    }
}

/// Whether `task`'s lease runs past `now`.
fn lease_live(task: &Entry, now: i64) -> bool {
    task.lease_until
        .as_deref()
        .and_then(|t| model::parse_time("lease_until", t).ok())
        .is_some_and(|t| t > now)
}

/// The task a keyed claim took, read again on its retry: its answer only
/// while `agent` holds it on a live lease; else what became of it, as a
/// conflict (after an outage longer than the lease, it may be another's).
fn still_held(task: Entry, agent: &str, now: i64) -> Result<Entry> {
    let doing = task.status == Some(Status::Doing);
    let holder = task.assignee.as_deref().unwrap_or("nobody");
    if doing && holder == agent && lease_live(&task, now) {
        return Ok(task);
    }
    let became = if doing && holder != agent {
        format!("its lease ran out and {holder} holds it now")
    } else if doing || task.status == Some(Status::Todo) {
        // Still `doing` until the sweep puts it back in the queue.
        "its lease ran out, so any agent may claim it now".to_string()
    } else {
        format!(
            "it is {} now",
            task.status
                .map(Status::as_str)
                .unwrap_or("without a status")
        )
    };
    Err(Error::Conflict {
        message: format!(
            "this idempotency_key's claim took task {} for {agent}, but {became}. Stop work on it; claim the next task with a fresh idempotency_key (task.claim).",
            task.id
        ),
        expected: None,
        actual: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_accept_numbers_and_objects() {
        use serde_json::json;
        assert_eq!(token_count(&Some(json!(1200))), 1200);
        assert_eq!(
            token_count(&Some(json!({"input": 1000, "output": 250}))),
            1250
        );
        assert_eq!(
            token_count(&Some(json!({"input": 1000, "output": 250, "total": 1300}))),
            1300
        );
        assert_eq!(token_count(&Some(json!(-5))), 0);
        assert_eq!(token_count(&None), 0);
    }
}
