//! Plans, tasks and the report: the params and results of `plan.order`,
//! `task.claim`, `task.heartbeat`, `task.complete`, `task.fail`,
//! `entry.share` and `report` (docs/protocol.md, "Plans and tasks").

use serde::{Deserialize, Serialize};

use crate::model::{Entry, Status};
use crate::seal::NoteRef;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct PlanParams {
    pub pad: String,
}

/// Where a task stands in its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum StepState {
    /// `todo` with every dependency met (or `doing` with its lease run out).
    Ready,
    /// `doing`, under a live lease.
    Running,
    /// Waiting on dependencies, or marked `blocked`.
    Blocked,
    Done,
    Failed,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Ready => "ready",
            StepState::Running => "running",
            StepState::Blocked => "blocked",
            StepState::Done => "done",
            StepState::Failed => "failed",
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PlanStep {
    pub entry: Entry,
    pub state: StepState,
    /// Dependencies not yet done.
    #[serde(serialize_with = "crate::seal::list")]
    pub waiting_on: Vec<NoteRef>,
    /// Since when it stands where it stands, RFC 3339: a `doing` task's
    /// start (`task.claim`, or `doing` written by `entry.add` or
    /// `entry.update`), a done or failed task's finish (`task.complete`,
    /// `task.fail`, or the status written); `null` for the others.
    #[serde(default)]
    pub since: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PlanCounts {
    pub ready: usize,
    pub running: usize,
    pub blocked: usize,
    pub done: usize,
    pub failed: usize,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PlanResult {
    pub pad: String,
    /// Entries of kind `plan` (the goal and the approach), newest first.
    pub plans: Vec<Entry>,
    /// The pad's tasks, each after everything it depends on.
    pub entries: Vec<PlanStep>,
    pub counts: PlanCounts,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ClaimParams {
    pub pad: String,
    /// Who takes the task; defaults to the connection's `hello` author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_seconds: Option<u64>,
    /// A key naming this write, e.g. a fresh UUID, sent again only when
    /// retrying it: the same key from the same caller within a day writes
    /// once and answers as the first call did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ClaimResult {
    /// The task now held, or `null` when nothing is ready.
    pub entry: Option<Entry>,
    /// When nothing is ready: where the pad's tasks stand (are others still
    /// running, is everything done?).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub counts: Option<PlanCounts>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct HeartbeatParams {
    pub id: String,
    /// The holder; when given, the call fails if someone else holds the task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_seconds: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct CompleteParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct FailParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Put the task back in the queue for the next claimant instead of
    /// leaving it `failed`.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub retry: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ShareParams {
    pub id: String,
    pub to: Vec<String>,
    /// Who shares; defaults to the connection's `hello` author, else the
    /// entry's author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ShareResult {
    /// One copy per pad, each with `meta.shared_from` = {pad, id, author}.
    pub copies: Vec<Entry>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ReportParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AuthorReport {
    pub author: String,
    /// Entries written (of any kind).
    pub entries: u64,
    /// Tasks this author finished, as their holder.
    pub tasks_done: u64,
    pub tasks_failed: u64,
    /// Claims beyond the first of the tasks this author holds or held last.
    pub retries: u64,
    /// Sum of `meta.tokens` over this author's entries.
    pub tokens: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TaskReport {
    pub id: String,
    pub pad: String,
    /// The task's first line, shortened.
    pub title: String,
    pub status: Option<Status>,
    pub assignee: Option<String>,
    pub attempts: i64,
    pub retries: i64,
    pub error: Option<String>,
    /// From the last claim to completion (done or failed).
    pub duration_seconds: Option<f64>,
    pub tokens: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ReportResult {
    pub pad: Option<String>,
    pub authors: Vec<AuthorReport>,
    /// The newest 1,000 tasks; `tasks_total` counts them all.
    pub tasks: Vec<TaskReport>,
    pub tasks_total: usize,
    pub totals: AuthorReport,
}
