//! A small A2A client: reading an agent's card, sending it a message,
//! reading a task. Blocking (ureq, already linked for model downloads): the
//! dispatcher calls it on a blocking thread, a few calls a second at most.
//!
//! Two dialects of the protocol are spoken, chosen from the card: 0.3
//! (`message/send`, `tasks/get`, states such as `input-required`; what
//! FastA2A and so Agent Zero serve) and 1.0 (`SendMessage`, `GetTask`,
//! `TASK_STATE_INPUT_REQUIRED`, the `A2A-Version: 1.0` header; the official
//! SDK's own). Answers of either are read into one `Task`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::protocol::{AgentCard, AgentSkill};

/// How long one call may take before the agent counts as unreachable.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Answers larger than this are refused (a task's whole history included).
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;
/// The longest task or context id an agent may give: the engine keeps it
/// with the delivery and marks each reply it posts with it.
const MAX_ID_CHARS: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Dialect {
    #[serde(rename = "0.3")]
    V03,
    #[serde(rename = "1.0")]
    V10,
}

/// Where an agent is reached, with its secret.
#[derive(Clone)]
pub struct Endpoint {
    pub url: String,
    pub token: Option<String>,
    pub dialect: Dialect,
}

/// A message from the agent: its text parts joined.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub agent: bool,
    pub text: String,
}

/// A task as either dialect tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    pub context: Option<String>,
    /// `submitted`, `working`, `input-required`, `completed`, `failed`, …
    pub state: String,
    /// The status's own message, if any.
    pub status_text: Option<String>,
    pub history: Vec<Said>,
    /// Each artifact's text.
    pub artifacts: Vec<String>,
}

pub enum Reply {
    Task(Task),
    /// The agent answered at once with a message and no task.
    Message(String),
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(CALL_TIMEOUT))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// The URL with its secrets masked: Agent Zero's `t-TOKEN` path segment,
/// any user info and any query. What answers, logs and errors show.
pub fn redact(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (host, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = host.rsplit('@').next().unwrap_or(host);
    let path: Vec<&str> = path
        .split('/')
        .map(|seg| if seg.starts_with("t-") { "t-…" } else { seg })
        .collect();
    let sep = if scheme.is_empty() { "" } else { "://" };
    format!("{scheme}{sep}{host}{}", path.join("/"))
}

/// The URL without a trailing `/`, to put well-known paths under.
fn base(url: &str) -> String {
    url.trim_end_matches('/').to_string()
}

/// Where calls go: the URL as registered, or its root `/` when it has no path.
fn endpoint_url(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, r)| r);
    if after_scheme.contains('/') {
        url.to_string()
    } else {
        format!("{url}/")
    }
}

/// `why` with the endpoint's secrets masked, whatever a library put in it.
fn scrub(why: String, url: &str, token: Option<&str>) -> String {
    let mut why = why.replace(url, &redact(url));
    if let Some(t) = token.filter(|t| !t.is_empty()) {
        why = why.replace(t, "…");
    }
    for seg in url.split(['/', '?', '&', '=']).filter(|s| s.len() > 4) {
        if seg.starts_with("t-") || url.contains(&format!("={seg}")) {
            why = why.replace(seg, "…");
        }
    }
    why
}

/// Why a call to an agent failed, in words (secrets masked), and what kind
/// of failure it is: the engine treats these two apart.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    pub why: String,
    /// The agent refused the token (HTTP 401/403): only a new registration
    /// helps (Agent Zero's A2A URL changes when its login does).
    pub refused: bool,
    /// The agent does not know the task (A2A's TaskNotFoundError, -32001):
    /// it lost it, e.g. in a restart (Agent Zero keeps tasks in memory).
    pub lost: bool,
}

impl From<String> for CallError {
    fn from(why: String) -> Self {
        CallError {
            why,
            refused: false,
            lost: false,
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// A2A's TaskNotFoundError.
const TASK_NOT_FOUND: i64 = -32001;

fn call(ep: &Endpoint, method: &str, params: Value) -> Result<Value, CallError> {
    match call_raw(ep, method, params) {
        Ok(mut v) => {
            scrub_all(&mut v, &ep.url, ep.token.as_deref());
            Ok(v)
        }
        Err(e) => Err(CallError {
            why: scrub(e.why, &ep.url, ep.token.as_deref()),
            ..e
        }),
    }
}

/// Every text of an agent's answer with the endpoint's secrets masked, as
/// it arrives: an agent may repeat its own URL token or bearer, and what it
/// says is kept in the thread and shown in events, the roster and the CLI.
fn scrub_all(v: &mut Value, url: &str, token: Option<&str>) {
    match v {
        Value::String(s) => *s = scrub(std::mem::take(s), url, token),
        Value::Array(a) => a.iter_mut().for_each(|x| scrub_all(x, url, token)),
        Value::Object(m) => m.values_mut().for_each(|x| scrub_all(x, url, token)),
        _ => {}
    }
}

fn call_raw(ep: &Endpoint, method: &str, params: Value) -> Result<Value, CallError> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let url = endpoint_url(&ep.url);
    let mut req = agent()
        .post(&url)
        .header("Content-Type", "application/json");
    if ep.dialect == Dialect::V10 {
        req = req.header("A2A-Version", "1.0");
    }
    if let Some(t) = &ep.token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    let mut resp = req
        .send(body.to_string())
        .map_err(|e| CallError::from(unreachable(&ep.url, &e)))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_string()
        .map_err(|e| CallError::from(format!("reading the answer of {}: {e}", redact(&ep.url))))?;
    if status == 401 || status == 403 {
        return Err(CallError {
            why: format!(
                "{} refused the call (HTTP {status}): its token is wrong, missing or changed; register it again with the right URL or token",
                redact(&ep.url)
            ),
            refused: true,
            lost: false,
        });
    }
    if !(200..300).contains(&status) {
        let head: String = text.chars().take(200).collect();
        return Err(format!("{} answered HTTP {status}: {head}", redact(&ep.url)).into());
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        CallError::from(format!(
            "{} answered with something that is not JSON: {e}",
            redact(&ep.url)
        ))
    })?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Err(CallError {
            why: format!(
                "the agent refused {method}: {} {}",
                err["code"],
                err["message"].as_str().unwrap_or("")
            ),
            refused: false,
            lost: err["code"].as_i64() == Some(TASK_NOT_FOUND),
        });
    }
    Ok(v["result"].clone())
}

fn unreachable(url: &str, e: &ureq::Error) -> String {
    let why = match e {
        ureq::Error::Io(io) => io.to_string(),
        ureq::Error::Timeout(_) => format!("no answer within {} s", CALL_TIMEOUT.as_secs()),
        other => other.to_string(),
    };
    format!("cannot reach {}: {why}", redact(url))
}

/// The agent's card: `/.well-known/agent-card.json` (A2A 0.3 and 1.0) or
/// `/.well-known/agent.json` (FastA2A, older servers), under the
/// endpoint's path and then at its origin. Also says which dialect to speak.
pub fn card(url: &str, token: Option<&str>) -> Result<(AgentCard, Dialect), String> {
    card_raw(url, token).map_err(|why| scrub(why, url, token))
}

fn card_raw(url: &str, token: Option<&str>) -> Result<(AgentCard, Dialect), String> {
    // A query (a token some servers take there) goes after the card's path.
    let (url_path, query) = match url.split_once('?') {
        Some((p, q)) => (p, format!("?{}", q.split('#').next().unwrap_or(""))),
        None => (url.split('#').next().unwrap_or(url), String::new()),
    };
    let base = base(url_path);
    let origin = match base.split_once("://") {
        Some((s, rest)) => format!("{s}://{}", rest.split('/').next().unwrap_or(rest)),
        None => base.clone(),
    };
    let mut last = String::new();
    let roots = if base == origin {
        vec![&base]
    } else {
        vec![&base, &origin]
    };
    for root in roots {
        for name in ["agent-card.json", "agent.json"] {
            let u = format!("{root}/.well-known/{name}{query}");
            let mut req = agent().get(&u);
            if let Some(t) = token {
                req = req.header("Authorization", &format!("Bearer {t}"));
            }
            match req.call() {
                Ok(mut r) if r.status().is_success() => {
                    let text = r
                        .body_mut()
                        .with_config()
                        .limit(MAX_ANSWER_BYTES)
                        .read_to_string()
                        .map_err(|e| format!("reading the card of {}: {e}", redact(url)))?;
                    let mut v: Value = serde_json::from_str(&text)
                        .map_err(|e| format!("the card of {} is not JSON: {e}", redact(url)))?;
                    scrub_all(&mut v, url, token);
                    return Ok(read_card(&v));
                }
                Ok(r) => last = format!("HTTP {}", r.status().as_u16()),
                Err(e) => return Err(unreachable(url, &e)),
            }
        }
    }
    Err(format!(
        "{} has no agent card at /.well-known/agent-card.json or /.well-known/agent.json ({last}): check that the URL is the agent's A2A endpoint",
        redact(url)
    ))
}

/// The most a card keeps of what the agent says of itself: its name and
/// version, its description, a skill's words, and how many skills.
const CARD_NAME: usize = 100;
const CARD_TEXT: usize = 1000;
const CARD_SKILLS: usize = 32;

/// `text` cut to `max` characters, with `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(max.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

fn read_card(v: &Value) -> (AgentCard, Dialect) {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    let short = |v: &Value| cut(v.as_str().unwrap_or(""), CARD_NAME);
    let long = |v: &Value| cut(v.as_str().unwrap_or(""), CARD_TEXT);
    let v10 = v["supportedInterfaces"]
        .as_array()
        .is_some_and(|l| l.iter().any(|i| s(&i["protocolVersion"]).starts_with('1')))
        || s(&v["protocolVersion"]).starts_with('1');
    let skills = v["skills"]
        .as_array()
        .map(|l| {
            l.iter()
                .take(CARD_SKILLS)
                .map(|k| AgentSkill {
                    id: short(&k["id"]),
                    name: short(&k["name"]),
                    description: long(&k["description"]),
                })
                .collect()
        })
        .unwrap_or_default();
    (
        AgentCard {
            name: short(&v["name"]),
            description: long(&v["description"]),
            version: short(&v["version"]),
            skills,
        },
        if v10 { Dialect::V10 } else { Dialect::V03 },
    )
}

/// Sends `text` as the person's message: in `context` (the pad thread's
/// conversation), on `task` when continuing one; non-blocking.
pub fn send(
    ep: &Endpoint,
    message_id: &str,
    text: &str,
    context: &str,
    task: Option<&str>,
) -> Result<Reply, CallError> {
    let result = match ep.dialect {
        Dialect::V03 => {
            let mut message = json!({
                "kind": "message", "role": "user", "messageId": message_id,
                "parts": [{"kind": "text", "text": text}], "contextId": context,
            });
            if let Some(t) = task {
                message["taskId"] = json!(t);
            }
            call(
                ep,
                "message/send",
                json!({"message": message, "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]}}),
            )?
        }
        Dialect::V10 => {
            let mut message = json!({
                "role": "ROLE_USER", "messageId": message_id,
                "parts": [{"text": text}], "contextId": context,
            });
            if let Some(t) = task {
                message["taskId"] = json!(t);
            }
            call(
                ep,
                "SendMessage",
                json!({"message": message, "configuration": {"returnImmediately": true, "acceptedOutputModes": ["text/plain"]}}),
            )?
        }
    };
    // 0.3: the task or message itself, told apart by `kind`; 1.0: {task} or {message}.
    if let Some(t) = result.get("task") {
        return Ok(read_task(t).map(Reply::Task)?);
    }
    if let Some(m) = result.get("message") {
        return Ok(Reply::Message(said(m).text));
    }
    if result["kind"] == "message" || result.get("messageId").is_some() {
        return Ok(Reply::Message(said(&result).text));
    }
    Ok(read_task(&result).map(Reply::Task)?)
}

/// Reads the task as it stands now.
pub fn get(ep: &Endpoint, id: &str) -> Result<Task, CallError> {
    let result = match ep.dialect {
        Dialect::V03 => call(ep, "tasks/get", json!({"id": id}))?,
        Dialect::V10 => call(ep, "GetTask", json!({"id": id}))?,
    };
    Ok(read_task(result.get("task").unwrap_or(&result))?)
}

fn text_of(parts: &Value) -> String {
    parts
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn said(m: &Value) -> Said {
    let role = m["role"].as_str().unwrap_or("");
    Said {
        agent: role.eq_ignore_ascii_case("agent") || role == "ROLE_AGENT",
        text: text_of(&m["parts"]),
    }
}

fn read_task(t: &Value) -> Result<Task, String> {
    let id = t["id"]
        .as_str()
        .ok_or_else(|| format!("the agent answered without a task id: {}", short(t)))?;
    for (what, id) in [("task", Some(id)), ("context", t["contextId"].as_str())] {
        if let Some(len) = id.map(|i| i.chars().count()).filter(|n| *n > MAX_ID_CHARS) {
            return Err(format!(
                "the agent answered with a {what} id of {len} characters; the most kept is {MAX_ID_CHARS}, so its answer was not taken. Ask its owner to keep ids short."
            ));
        }
    }
    let state = t["status"]["state"].as_str().unwrap_or("unknown");
    let state = state
        .strip_prefix("TASK_STATE_")
        .unwrap_or(state)
        .to_lowercase()
        .replace('_', "-");
    let status_text = t["status"]
        .get("message")
        .filter(|m| !m.is_null())
        .map(|m| said(m).text)
        .filter(|s| !s.trim().is_empty());
    Ok(Task {
        id: id.to_string(),
        context: t["contextId"].as_str().map(str::to_string),
        state,
        status_text,
        history: t["history"]
            .as_array()
            .map(|h| h.iter().map(said).collect())
            .unwrap_or_default(),
        artifacts: t["artifacts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| text_of(&x["parts"]))
                    .filter(|s| !s.trim().is_empty())
                    .collect()
            })
            .unwrap_or_default(),
    })
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_urls_are_masked() {
        assert_eq!(
            redact("http://10.0.0.2:50001/a2a/t-s3cr3t/p-proj"),
            "http://10.0.0.2:50001/a2a/t-…/p-proj"
        );
        assert_eq!(
            redact("https://bob:pw@agents.example/rpc?key=abc"),
            "https://agents.example/rpc"
        );
        assert_eq!(redact("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
        let url = "http://h:1/a2a/t-s3cr3t/p-x";
        let why = scrub(
            format!("bad {url} and t-s3cr3t and Bearer tok123"),
            url,
            Some("tok123"),
        );
        assert!(!why.contains("s3cr3t") && !why.contains("tok123"), "{why}");
    }

    #[test]
    fn a_task_id_past_its_bound_is_refused_saying_why() {
        let long = "t".repeat(100_000);
        let task = json!({"kind": "task", "id": long, "status": {"state": "completed"}});
        let why = read_task(&task).unwrap_err();
        assert!(why.contains("task id of 100000 characters"), "{why}");
        let context = json!({"kind": "task", "id": "t1", "contextId": long,
                             "status": {"state": "completed"}});
        assert!(read_task(&context).unwrap_err().contains("context id"));
        let fine = json!({"kind": "task", "id": "t".repeat(256), "status": {"state": "completed"}});
        assert!(read_task(&fine).is_ok());
    }

    #[test]
    fn both_dialects_read_into_one_task() {
        let v03 = json!({"kind": "task", "id": "t1", "contextId": "c",
            "status": {"state": "input-required", "timestamp": "2026-11-24T10:00:00"},
            "history": [{"role": "user", "parts": [{"kind": "text", "text": "hi"}]},
                        {"role": "agent", "parts": [{"kind": "text", "text": "which db?"}]}]});
        let t = read_task(&v03).unwrap();
        assert_eq!(t.state, "input-required");
        assert_eq!(
            t.history[1],
            Said {
                agent: true,
                text: "which db?".into()
            }
        );
        let v10 = json!({"id": "t2", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                       "message": {"role": "ROLE_AGENT", "parts": [{"text": "approve $1,900?"}]}},
            "artifacts": [{"artifactId": "a", "parts": [{"text": "report"}]}]});
        let t = read_task(&v10).unwrap();
        assert_eq!(t.state, "input-required");
        assert_eq!(t.status_text.as_deref(), Some("approve $1,900?"));
        assert_eq!(t.artifacts, vec!["report".to_string()]);
    }

    #[test]
    fn the_card_says_the_dialect() {
        let (card, d) = read_card(&json!({"name": "Agent Zero", "protocolVersion": "0.2.5",
            "skills": [{"id": "g", "name": "General", "description": "anything"}]}));
        assert_eq!((card.name.as_str(), d), ("Agent Zero", Dialect::V03));
        assert_eq!(card.skills[0].name, "General");
        let (_, d) = read_card(&json!({"name": "x", "supportedInterfaces": [
            {"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}));
        assert_eq!(d, Dialect::V10);
    }

    #[test]
    fn a_card_keeps_a_bounded_amount_of_what_the_agent_says() {
        let skill = json!({"id": "s".repeat(500), "name": "n", "description": "d".repeat(5000)});
        let (card, _) = read_card(&json!({"name": "N".repeat(10_000),
            "description": "D".repeat(1_000_000), "version": "1",
            "skills": vec![skill; 1000]}));
        assert_eq!(card.name.chars().count(), CARD_NAME);
        assert!(card.name.ends_with('…'));
        assert_eq!(card.description.chars().count(), CARD_TEXT);
        assert_eq!(card.skills.len(), CARD_SKILLS);
        assert_eq!(card.skills[0].id.chars().count(), CARD_NAME);
        assert_eq!(card.skills[0].description.chars().count(), CARD_TEXT);
        assert_eq!(cut("short", 10), "short");
    }
}
