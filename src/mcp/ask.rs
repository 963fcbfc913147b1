//! `ask_person`: the tool an agent uses to ask the person and wait for the
//! answer — before an irreversible step, or when it is stuck on a decision.
//!
//! It is one `ask` call on the engine: the question is written (tagged
//! `needs_eyes`, so the person's desktop shows a notification with the
//! choices as buttons) and the call returns once the person answers, or
//! after the wait with the question's id. Each call is self-contained, as
//! Agent Zero runs every tool call in a fresh `pad mcp` process.
//!
//! A client that declared form elicitation (Claude Code, VS Code, Cursor,
//! Codex) is asked too, where the person is: the first answer wins, and it
//! lands in the thread as the person's reply whichever way it came (the
//! desktop's notification then goes); an answer on the desktop withdraws the
//! client's form (`notifications/cancelled`). On protocol 2026-07-28 the
//! form is an input-required round trip instead (`ask_in_round_trips`).
//! While it waits, a client that
//! sent a progress token gets progress every 5 s, so clocks that reset on
//! progress (the TypeScript SDK's, when asked to) keep waiting.

use std::time::{Duration, Instant};

use crate::protocol::method as m;
use crate::protocol::{AddParams, AskParams, IdParams};
use rmcp::model::{
    CallToolResult, CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequiredResult,
    InputResponses, ProgressNotificationParam, ProtocolVersion, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
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

/// What `ask_person` comes back with: its result (and the answer's id, so
/// the inbox line does not repeat it), or, on protocol 2026-07-28, a form
/// for the client to show before it calls again.
pub(super) enum Asked {
    Done(CallToolResult, Option<String>),
    InClient(InputRequiredResult),
}

/// The key of the form in an input-required round trip.
const FORM: &str = "answer";

impl PadTools {
    pub(super) async fn ask_person_body(
        &self,
        link: &mut Link<'_>,
        p: AskPerson,
        ctx: RequestContext<RoleServer>,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Asked {
        let a = Asking {
            question: p.question,
            pad: self.pad(p.pad),
            choices: p.choices,
            wait: p.wait_seconds.unwrap_or(DEFAULT_WAIT_SECONDS),
        };
        match (a.wait > 0).then(|| elicitation(&ctx)).flatten() {
            Some(Elicitation::RoundTrip) => {
                self.ask_in_round_trips(link, &ctx, a, state, responses)
                    .await
            }
            Some(Elicitation::Request) => done(self.ask_both_ways(link, &ctx, a).await),
            None => {
                let params = a.params(a.wait);
                done(with_progress(&ctx, a.wait, link.write::<m::Ask>(params)).await)
            }
        }
    }

    /// The first call writes the question (the desktop asks at once) and
    /// returns the form, with a one-time state this server holds (`Held`);
    /// the call again with the person's response writes an accepted answer
    /// as their reply, then waits on the desktop as any ask does — so an
    /// answer given there meanwhile wins, and a declined form leaves the
    /// desktop asking.
    async fn ask_in_round_trips(
        &self,
        link: &mut Link<'_>,
        ctx: &RequestContext<RoleServer>,
        a: Asking,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Asked {
        let bound = Bound {
            author: self.author(),
            session: session_of(ctx),
        };
        let Some(state) = state else {
            let qid = match write_question(link, &a).await {
                Ok(qid) => qid,
                Err(e) => return Asked::Done(fail(e), None),
            };
            let form = InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: form_message(&a.question),
                    requested_schema: form(&a.choices),
                },
            ));
            let state = HELD.hold(qid, bound, Instant::now());
            return Asked::InClient(InputRequiredResult::new(
                Some([(FORM.to_string(), form)].into()),
                Some(state),
            ));
        };
        // The state comes back from the client: only one this server gave,
        // to this caller and session, names a question — once.
        let Some(qid) = HELD.take(&state, &bound, Instant::now()) else {
            return Asked::Done(
                fail("ask_person: the request state is not one this server gave this session (or it was used, or it expired); call ask_person again without it.".to_string()),
                None,
            );
        };
        let asked = match link.send::<m::EntryGet>(IdParams { id: qid.clone() }).await {
            Ok(r) => r["entry"].clone(),
            Err(e) => return Asked::Done(fail(e), None),
        };
        let given = responses
            .and_then(|mut r| r.remove(FORM))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v).ok())
            .and_then(|r| form_answer(&ClientResult::ElicitResult(r)));
        if let (Some(text), true) = (given, asked["answer"].is_null()) {
            let pad = asked["pad"].as_str().unwrap_or_default().to_owned();
            let person = link.speaks_for_person().await.unwrap_or(false);
            let reply = persons_answer(pad, text, &qid, person);
            if let Err(e) = link.write::<m::EntryAdd>(reply).await {
                return Asked::Done(fail(e), None);
            }
        }
        let r = with_progress(ctx, a.wait, link.send::<m::Ask>(wait_on(&qid, a.wait))).await;
        done(r)
    }

    /// Asks on the desktop (the question, its notification) and in the
    /// client (an elicitation form) at once; the first answer wins. One
    /// given in the client is written as the person's reply, so the thread
    /// holds it whichever way it came and the desktop's notification goes;
    /// one given on the desktop withdraws the client's form.
    async fn ask_both_ways(
        &self,
        link: &mut Link<'_>,
        ctx: &RequestContext<RoleServer>,
        a: Asking,
    ) -> Result<Value, String> {
        let qid = write_question(link, &a).await?;
        let (question, pad, choices, wait) = (&a.question, a.pad.as_str(), &a.choices, a.wait);
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: form_message(question),
                requested_schema: form(choices),
            },
        ));
        let prompt = ctx
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await;
        let wait_answer = with_progress(ctx, wait, link.send::<m::Ask>(wait_on(&qid, wait)));
        let Ok(prompt) = prompt else {
            return wait_answer.await;
        };
        let prompt_id = prompt.id.clone();
        let in_client = prompt.await_response();
        tokio::pin!(wait_answer, in_client);
        let mut open = true;
        loop {
            tokio::select! {
                r = &mut wait_answer => {
                    if open {
                        let withdrawn = CancelledNotificationParam::new(
                            Some(prompt_id),
                            Some("answered elsewhere, or the wait ran out".into()),
                        );
                        let _ = ctx.peer.notify_cancelled(withdrawn).await;
                    }
                    break r;
                }
                given = &mut in_client, if open => {
                    open = false;
                    // Declined, dismissed or failed: the desktop may still answer.
                    if let Some(text) = given.ok().and_then(|g| form_answer(&g)) {
                        let mut answering = self.link();
                        let person = answering.speaks_for_person().await.unwrap_or(false);
                        let reply = persons_answer(pad.to_owned(), text, &qid, person);
                        if let Err(e) = answering.write::<m::EntryAdd>(reply).await {
                            tracing::warn!("ask_person: the answer given in the client could not be stored: {e}");
                        }
                    }
                }
            }
        }
    }
}

/// Whom a round trip's state was given to: the caller (the server's author
/// or the token it speaks for) and the MCP session, where the transport has
/// one (over stdio the process is the session).
#[derive(Clone, PartialEq, Debug)]
struct Bound {
    author: String,
    session: Option<String>,
}

/// The MCP session a call came through over HTTP (`Mcp-Session-Id`).
fn session_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// How long a round trip's state stays good: past the longest wait, with
/// room for the person to fill in the form.
const HELD_FOR: Duration = Duration::from_secs(3600);
/// Round trips held at once; the oldest goes first past it.
const HELD_MAX: usize = 1000;

/// The states of round trips this server has open: a random key the client
/// carries back (`requestState` is the client's to change, so it names
/// nothing by itself), the question it stands for and whom it was given to.
/// Taken once.
struct Held(std::sync::Mutex<Vec<(String, String, Bound, Instant)>>);

static HELD: Held = Held(std::sync::Mutex::new(Vec::new()));

impl Held {
    fn hold(&self, qid: String, bound: Bound, now: Instant) -> String {
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).expect("the system's random source");
        let key: String = key.iter().map(|b| format!("{b:02x}")).collect();
        let mut held = self.0.lock().expect("held states");
        held.retain(|(.., at)| now.duration_since(*at) < HELD_FOR);
        if held.len() >= HELD_MAX {
            held.remove(0);
        }
        held.push((key.clone(), qid, bound, now));
        key
    }

    /// The question `key` stands for, if it was given to `bound` and is
    /// still good; it is spent either way.
    fn take(&self, key: &str, bound: &Bound, now: Instant) -> Option<String> {
        let mut held = self.0.lock().expect("held states");
        let i = held.iter().position(|(k, ..)| k == key)?;
        let (_, qid, to, at) = held.remove(i);
        (to == *bound && now.duration_since(at) < HELD_FOR).then_some(qid)
    }
}

/// A question on its way to the person.
struct Asking {
    question: String,
    pad: String,
    choices: Vec<String>,
    wait: u64,
}

impl Asking {
    /// `ask` putting this question, waiting `wait` seconds for its answer.
    fn params(&self, wait: u64) -> AskParams {
        AskParams {
            content: Some(self.question.clone()),
            id: None,
            pad: Some(self.pad.clone()),
            choices: self.choices.clone(),
            wait_seconds: Some(wait),
            author: None,
            answer_from: Vec::new(),
            idempotency_key: None,
        }
    }
}

/// How a client is asked too, besides the desktop.
enum Elicitation {
    /// A request to the client (protocols before 2026-07-28).
    Request,
    /// An input-required result the client answers by calling again
    /// (2026-07-28, which forbids requests to the client).
    RoundTrip,
}

/// Whether and how to ask through the client too: it declared form
/// elicitation (an empty declaration, from before forms and URLs were told
/// apart, is a form), and the call speaks for the server's own author — an
/// access token's caller writes only under its own name, so an answer given
/// in its client could not be the person's.
fn elicitation(ctx: &RequestContext<RoleServer>) -> Option<Elicitation> {
    let form = ctx
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    (form && super::caller().is_none()).then(|| {
        if speaks_2026_07_28(ctx) {
            Elicitation::RoundTrip
        } else {
            Elicitation::Request
        }
    })
}

/// Writes the question (tagged needs_eyes: the desktop asks at once)
/// without waiting; its id.
async fn write_question(link: &mut Link<'_>, a: &Asking) -> Result<String, String> {
    let asked = link.write::<m::Ask>(a.params(0)).await?;
    Ok(asked["question"]["id"].as_str().unwrap_or("").to_string())
}

/// The tool's result for an `ask` call's outcome.
fn done(r: Result<Value, String>) -> Asked {
    match r {
        Ok(r) => {
            let (result, answer) = answered(&r);
            Asked::Done(result, answer)
        }
        Err(e) => Asked::Done(fail(e), None),
    }
}

/// Protocol 2026-07-28 or later: no requests to the client.
fn speaks_2026_07_28(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn form_message(question: &str) -> String {
    format!(
        "{question}\n(The agent is waiting for your answer; you can also answer in Scratchpad.)"
    )
}

/// Who answers in the client: the person, as the desktop app and `pad reply`
/// name them by default.
const PERSON: &str = "user";

/// The form a client shows: the choices (when there are any) and a free answer.
fn form(choices: &[String]) -> ElicitationSchema {
    let mut props = serde_json::Map::new();
    if !choices.is_empty() {
        props.insert(
            "choice".into(),
            json!({"type": "string", "title": "Answer", "enum": choices}),
        );
    }
    props.insert(
        "answer".into(),
        json!({"type": "string", "title": if choices.is_empty() { "Answer" } else { "Or in your own words" }}),
    );
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    ElicitationSchema::from_json_schema(schema)
        .expect("a form of string properties is a valid elicitation schema")
}

/// The text of an accepted form: the free answer, else the choice.
fn form_answer(result: &ClientResult) -> Option<String> {
    let ClientResult::ElicitResult(r) = result else {
        return None;
    };
    if r.action != ElicitationAction::Accept {
        return None;
    }
    let content = r.content.as_ref()?;
    ["answer", "choice"]
        .iter()
        .filter_map(|k| content[k].as_str())
        .map(str::trim)
        .find(|t| !t.is_empty())
        .map(str::to_string)
}

/// Awaits `call`, sending progress notifications every `PROGRESS_EVERY` to a
/// client that sent a progress token.
async fn with_progress<F>(
    ctx: &RequestContext<RoleServer>,
    wait: u64,
    call: F,
) -> Result<Value, String>
where
    F: std::future::Future<Output = Result<Value, String>>,
{
    let Some(token) = ctx.meta.get_progress_token() else {
        return call.await;
    };
    tokio::pin!(call);
    let started = Instant::now();
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            r = &mut call => break r,
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

/// The answer given in the client, as a reply to question `qid`: the
/// person's, or (`person` false: an access token speaks through this
/// server) the token's own reply, as the engine writes a token's words.
fn persons_answer(pad: String, content: String, qid: &str, person: bool) -> AddParams {
    AddParams {
        pad,
        content,
        reply_to: Some(qid.to_owned()),
        author: person.then(|| PERSON.to_owned()),
        ..AddParams::default()
    }
}

/// `ask` waiting on the question `qid` for up to `wait` seconds.
fn wait_on(qid: &str, wait: u64) -> AskParams {
    AskParams {
        content: None,
        id: Some(qid.to_owned()),
        pad: None,
        choices: Vec::new(),
        wait_seconds: Some(wait),
        author: None,
        answer_from: Vec::new(),
        idempotency_key: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(author: &str, session: Option<&str>) -> Bound {
        Bound {
            author: author.into(),
            session: session.map(str::to_string),
        }
    }

    #[test]
    fn a_held_state_answers_once_and_only_the_caller_and_session_it_was_given_to() {
        let now = Instant::now();
        let held = Held(std::sync::Mutex::new(Vec::new()));
        let mine = to("agent-a", Some("s1"));
        let key = held.hold("q1".into(), mine.clone(), now);
        assert_eq!(key.len(), 32);
        assert_ne!(
            key,
            held.hold("q1".into(), mine.clone(), now),
            "keys are random"
        );
        // Another session, another caller, a question's id: nothing.
        assert_eq!(held.take(&key, &to("agent-a", Some("s2")), now), None);
        let key = held.hold("q1".into(), mine.clone(), now);
        assert_eq!(held.take(&key, &to("agent-b", Some("s1")), now), None);
        assert_eq!(held.take("q1", &mine, now), None);
        let key = held.hold("q1".into(), mine.clone(), now);
        assert_eq!(held.take(&key, &mine, now).as_deref(), Some("q1"));
        assert_eq!(held.take(&key, &mine, now), None, "spent");
        let key = held.hold("q2".into(), mine.clone(), now);
        assert_eq!(held.take(&key, &mine, now + HELD_FOR), None, "expired");
    }

    #[test]
    fn held_states_are_bounded() {
        let now = Instant::now();
        let held = Held(std::sync::Mutex::new(Vec::new()));
        let first = held.hold("q0".into(), to("a", None), now);
        for i in 1..=HELD_MAX {
            held.hold(format!("q{i}"), to("a", None), now);
        }
        assert_eq!(held.0.lock().unwrap().len(), HELD_MAX);
        assert_eq!(held.take(&first, &to("a", None), now), None);
    }
}
