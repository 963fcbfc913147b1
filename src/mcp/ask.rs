//! `ask_person`: the tool an agent uses to ask the person and wait for the
//! answer — before an irreversible step, or when it is stuck on a decision.
//!
//! It is one `ask` call on the engine: the question is written (tagged
//! `needs_eyes`, so the person's desktop shows a notification with the
//! choices as buttons) and the call returns once the person answers, or
//! after the wait with the question's id. Each call is self-contained, as
//! Agent Zero runs every tool call in a fresh `pad mcp` process.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{schemars, RoleServer};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{fail, ok, Link, PadTools};

/// `ask_person`'s wait when the caller names none: under the 60 s request
/// time-out of the TypeScript SDK (and the IDEs built on it), with room for
/// the round trips, so a client that does not reset its clock on progress
/// still gets the result.
pub const DEFAULT_WAIT_SECONDS: u64 = 45;

/// How often a waiting `ask_person` reports progress to a client that sent
/// a progress token (clients that reset their time-out on progress then
/// wait for as long as the caller asked).
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AskPerson {
    #[schemars(
        description = "The question, complete on its own: what you are about to do, why, and what you need decided. E.g. 'About to drop the staging database to re-seed it (all staging data is lost). Proceed?'"
    )]
    pub question: String,
    #[schemars(
        description = "Answers to offer as buttons, e.g. [\"approve\", \"deny\"]; up to 10, each up to 64 characters. The person may still write something else."
    )]
    #[serde(default)]
    pub choices: Vec<String>,
    #[schemars(
        description = "How long to wait for the answer, in seconds: 0-110 (default 45, which every MCP client's clock allows; ask for more only if your client waits longer). If nobody answers in time, the question stays open and the answer reaches you later in the Inbox line."
    )]
    pub wait_seconds: Option<u64>,
    #[schemars(description = "The pad to ask in; defaults to this server's pad.")]
    pub pad: Option<String>,
}

impl PadTools {
    pub(super) async fn ask_person_body(
        &self,
        link: &mut Link<'_>,
        p: AskPerson,
        ctx: RequestContext<RoleServer>,
    ) -> (CallToolResult, Option<String>) {
        let wait = p.wait_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        let params = json!({"content": p.question, "pad": self.pad(p.pad),
                            "choices": p.choices, "wait_seconds": wait});
        let ask = link.call("ask", params);
        let r = match ctx.meta.get_progress_token() {
            None => ask.await,
            Some(token) => {
                tokio::pin!(ask);
                let started = Instant::now();
                let mut tick = tokio::time::interval_at(
                    tokio::time::Instant::now() + PROGRESS_EVERY,
                    PROGRESS_EVERY,
                );
                loop {
                    tokio::select! {
                        r = &mut ask => break r,
                        _ = tick.tick() => {
                            let waited = started.elapsed().as_secs();
                            let note = ProgressNotificationParam::new(token.clone(), waited as f64)
                                .with_total(wait as f64)
                                .with_message(format!("waiting for the person's answer ({waited} of {wait} s)"));
                            // A client gone away ends the call anyway.
                            let _ = ctx.peer.notify_progress(note).await;
                        }
                    }
                }
            }
        };
        match r {
            Ok(r) => answered(&r),
            Err(e) => (fail(e), None),
        }
    }
}

/// The tool's text for an `ask` result, and the answer's id (so the inbox
/// line does not report it a second time).
fn answered(r: &Value) -> (CallToolResult, Option<String>) {
    let question = &r["question"];
    let qid = question["id"].as_str().unwrap_or("");
    let answer = &r["answer"];
    if answer.is_null() {
        let waited = r["waited_seconds"].as_f64().unwrap_or(0.0).round();
        return (
            ok(format!(
                "No answer yet after {waited} s; the question is {qid}. The answer will appear in your Inbox line when the person replies. Do not go ahead with what you asked about until then: continue with other work, or ask again later."
            )),
            None,
        );
    }
    let text = answer["content"].as_str().unwrap_or("").trim();
    let by = answer["author"].as_str().unwrap_or("");
    let choices: Vec<&str> = question["choices"]
        .as_array()
        .map(|c| c.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let chosen = choices
        .iter()
        .find(|c| c.eq_ignore_ascii_case(text))
        .map(|c| format!(" (the choice \"{c}\" of {})", choices.join(", ")))
        .unwrap_or_default();
    (
        ok(format!(
            "Answer from {by}: {text}{chosen}\n(question {qid}, answered by reply {} after {} s)",
            answer["id"].as_str().unwrap_or(""),
            r["waited_seconds"].as_f64().unwrap_or(0.0)
        )),
        answer["id"].as_str().map(str::to_string),
    )
}
