//! The plan and task tools of `pad mcp`: what a planner or a sub-agent needs
//! to pick up work, say where it stands, hand it over and pass on learnings.

use crate::model::Status;
use crate::protocol::method as m;
use crate::protocol::{
    ClaimParams, CompleteParams, FailParams, HeartbeatParams, PlanParams, ShareParams, UpdateParams,
};
use rmcp::model::CallToolResult;
use rmcp::schemars;
use serde::Deserialize;
use serde_json::Value;

use super::text::{fail, line, ok, word};
use super::{Link, PadTools};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ClaimTask {
    #[schemars(description = "The pad whose plan to take work from.")]
    pub pad: String,
    #[schemars(
        description = "How long the claim holds without a heartbeat, in seconds (default 300). If you stop sending heartbeats, the task goes back to the queue for another agent."
    )]
    pub lease_seconds: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UpdateTask {
    #[schemars(description = "The task's id, as claim_task or plan gave it.")]
    pub id: String,
    #[schemars(
        description = "done when finished; failed when it cannot be done (with error); todo or blocked to set it aside. Leave out to only report progress.",
        extend("enum" = Status::ALL)
    )]
    pub status: Option<String>,
    #[schemars(
        description = "Where the work stands, so that whoever continues (you after a restart, or another agent) can pick up: the step reached, partial results, file paths."
    )]
    pub resume: Option<String>,
    #[schemars(description = "With status failed: what went wrong.")]
    pub error: Option<String>,
    #[schemars(
        description = "With status failed: put the task back in the queue so that it is tried again."
    )]
    #[serde(default)]
    pub retry: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct PlanOf {
    #[schemars(description = "The pad whose plan to show.")]
    pub pad: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ShareNote {
    #[schemars(description = "The id of the note to share.")]
    pub id: String,
    #[schemars(description = "The pads to copy it to.")]
    pub to: Vec<String>,
}

/// The parts of a task an agent needs to work on it.
fn task_text(e: &Value) -> String {
    let mut text = line(e);
    if let Some(r) = e["resume"].as_str() {
        text.push_str(&format!("\nResume from: {r}"));
    }
    if let Some(err) = e["error"].as_str() {
        text.push_str(&format!("\nLast error: {err}"));
    }
    text
}

impl PadTools {
    pub(super) async fn claim_task_body(
        &self,
        link: &mut Link<'_>,
        p: ClaimTask,
    ) -> CallToolResult {
        let pad = p.pad;
        let agent = match link.acts_as().await {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        let params = ClaimParams {
            pad: pad.clone(),
            agent: Some(agent),
            lease_seconds: p.lease_seconds,
            idempotency_key: None,
        };
        let r = match link.write::<m::TaskClaim>(params).await {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        let e = &r["entry"];
        if e.is_null() {
            let n = &r["counts"];
            let advice = if n["running"].as_u64() > Some(0) {
                "Other agents are still working on tasks that unblock more; try again in a minute."
            } else if n["blocked"].as_u64() > Some(0) || n["failed"].as_u64() > Some(0) {
                "What is left waits on failed or blocked tasks; look at the plan (plan tool)."
            } else if n["done"].as_u64() > Some(0) {
                "Every task is done."
            } else {
                "The pad has no tasks; add some with add_note (kind task, depends_on for order)."
            };
            return ok(format!(
                "No task is ready in '{pad}' ({} running, {} blocked, {} done, {} failed). {advice}",
                n["running"], n["blocked"], n["done"], n["failed"]
            ));
        }
        let retry = match e["attempts"].as_u64() {
            Some(n) if n > 1 => format!(" This is attempt {n}: continue from the resume note."),
            _ => String::new(),
        };
        ok(format!(
            "You now hold task {} until {}.{retry} Report progress with update_task (resume) before then, and status done when finished.\n\n{}",
            e["id"].as_str().unwrap_or(""),
            e["lease_until"].as_str().unwrap_or(""),
            task_text(e)
        ))
    }

    pub(super) async fn update_task_body(
        &self,
        link: &mut Link<'_>,
        p: UpdateTask,
    ) -> CallToolResult {
        let agent = match link.acts_as().await {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        let heartbeat = p.status.is_none();
        let (id, resume) = (p.id, p.resume);
        let agent = Some(agent);
        // Read as the engine reads words ("Done" is done): a finish is a
        // completion or a failure, whatever its case.
        let status = p.status.map(|s| s.trim().to_lowercase());
        let answer = match status.as_deref() {
            Some("done") => {
                let done = CompleteParams { id, agent, resume };
                link.send::<m::TaskComplete>(done).await
            }
            Some("failed") => {
                let failed = FailParams {
                    id,
                    agent,
                    error: p.error,
                    resume,
                    retry: p.retry,
                };
                link.send::<m::TaskFail>(failed).await
            }
            None => {
                let beat = HeartbeatParams {
                    id,
                    agent,
                    resume,
                    lease_seconds: None,
                };
                link.send::<m::TaskHeartbeat>(beat).await
            }
            // Any other status is filed as the note's.
            Some(other) => {
                let otherwise = "to report progress only";
                let raw = Some(other.to_owned());
                let status = match word("update_task", "status", raw, Status::ALL, otherwise) {
                    Ok(s) => s,
                    Err(e) => return e,
                };
                let filed = UpdateParams {
                    id,
                    status: status.map(Some),
                    resume: resume.map(Some),
                    ..UpdateParams::default()
                };
                link.send::<m::EntryUpdate>(filed).await
            }
        };
        match answer {
            Ok(r) => {
                let e = &r["entry"];
                let lease = match e["lease_until"].as_str() {
                    Some(l) if heartbeat => format!(" You hold it until {l}."),
                    _ => String::new(),
                };
                ok(format!(
                    "Task {} is {}.{lease}\n\n{}",
                    e["id"].as_str().unwrap_or(""),
                    e["status"].as_str().unwrap_or("?"),
                    task_text(e)
                ))
            }
            Err(e) => fail(e),
        }
    }

    pub(super) async fn plan_body(&self, link: &mut Link<'_>, p: PlanOf) -> CallToolResult {
        let pad = p.pad;
        let r = match link
            .send::<m::PlanOrder>(PlanParams { pad: pad.clone() })
            .await
        {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        let mut text = String::new();
        for plan in r["plans"].as_array().into_iter().flatten() {
            text.push_str(&format!(
                "Plan [{}]: {}\n\n",
                plan["id"].as_str().unwrap_or(""),
                plan["content"].as_str().unwrap_or("")
            ));
        }
        let steps = r["entries"].as_array().cloned().unwrap_or_default();
        if steps.is_empty() {
            text.push_str(&format!("Pad '{pad}' has no tasks yet. Add them with add_note (kind task; depends_on lists the ids a task waits on)."));
            return ok(text);
        }
        let n = &r["counts"];
        text.push_str(&format!(
            "{} task(s) in '{pad}' in dependency order: {} ready, {} running, {} blocked, {} done, {} failed.",
            steps.len(), n["ready"], n["running"], n["blocked"], n["done"], n["failed"]
        ));
        for (i, s) in steps.iter().enumerate() {
            let e = &s["entry"];
            let mut row = format!(
                "\n{}. [{}] {} — {}",
                i + 1,
                e["id"].as_str().unwrap_or(""),
                s["state"].as_str().unwrap_or(""),
                e["content"].as_str().unwrap_or("")
            );
            if let Some(a) = e["assignee"].as_str() {
                row.push_str(&format!(" (held by {a})"));
            }
            let waiting: Vec<&str> = s["waiting_on"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if !waiting.is_empty() {
                row.push_str(&format!(" — waits on {}", waiting.join(", ")));
            }
            if let Some(r) = e["resume"].as_str() {
                row.push_str(&format!("\n   resume: {r}"));
            }
            text.push_str(&row);
        }
        ok(text)
    }

    pub(super) async fn share_note_body(
        &self,
        link: &mut Link<'_>,
        p: ShareNote,
    ) -> CallToolResult {
        let share = ShareParams {
            id: p.id.clone(),
            to: p.to,
            author: None,
        };
        match link.send::<m::EntryShare>(share).await {
            Ok(r) => {
                let copies: Vec<String> = r["copies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        format!(
                            "{} as {}",
                            c["pad"].as_str().unwrap_or(""),
                            c["id"].as_str().unwrap_or("")
                        )
                    })
                    .collect();
                ok(format!(
                    "Shared {} to {}. Each copy names where it came from (meta.shared_from).",
                    p.id,
                    copies.join(", ")
                ))
            }
            Err(e) => fail(e),
        }
    }
}
