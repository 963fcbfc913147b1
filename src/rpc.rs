//! JSON-RPC 2.0: request handling, and `dispatch` to the methods' table
//! (`rpc/methods.rs`).
//!
//! Transport-neutral: every client's request arrives as a line on the
//! engine's socket (the desktop app, `pad mcp` and the HTTP front are
//! clients of the socket too). A `Session` is one client's state (its author, its
//! subscriptions); it ends when the client goes away. Nothing a client sends
//! can panic or stop the engine: every failure becomes an error response.

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

pub mod declared;
mod methods;

use crate::access::Access;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::protocol::*;

/// One client's state across calls.
#[derive(Default)]
pub struct Session {
    /// Default author for writes, set by `hello`.
    pub author: Option<String>,
    /// What this client may do; set by the engine's policy and `hello`.
    access: Option<Access>,
    /// Where event notifications go; `None` on transports without push.
    events: Option<mpsc::Sender<Value>>,
    subscriptions: HashMap<u64, AbortHandle>,
    /// Counts this connection in its author's presence (the roster).
    here: Option<crate::agents::Here>,
}

impl Session {
    pub fn new(events: Option<mpsc::Sender<Value>>) -> Self {
        Session {
            author: None,
            access: None,
            events,
            subscriptions: HashMap::new(),
            here: None,
        }
    }

    /// What this client may do: as its `hello` said, else the engine's
    /// default for a client without a token.
    fn access(&mut self, engine: &Engine) -> Result<Access> {
        if self.access.is_none() {
            self.access = Some(engine.authenticate(None)?);
        }
        Ok(self.access.clone().unwrap_or_default())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for (_, task) in self.subscriptions.drain() {
            task.abort();
        }
    }
}

/// A call's params as they came: straight from the request line (read
/// into the method's params type without a `Value` tree in between), or a
/// value (a batch's request, or params a token's scope rewrote).
pub(crate) enum Params<'a> {
    Absent,
    Raw(&'a RawValue),
    Value(Value),
}

impl Params<'_> {
    /// The params as a value, for what reads them field by field.
    fn into_value(self) -> Option<Value> {
        match self {
            Params::Absent => None,
            Params::Value(v) => Some(v),
            // It came in a line that parsed, so it parses.
            Params::Raw(raw) => serde_json::from_str(raw.get()).ok(),
        }
    }
}

/// Who a change is recorded as made by: the connection's author (a token's
/// name for a token), else `anonymous`.
fn actor(session: &Session) -> String {
    session
        .author
        .clone()
        .unwrap_or_else(|| "anonymous".to_owned())
}

/// Every method but `hello` with what it declares and the fields its
/// params type declares, in the table's order (for the scope matrix in
/// tests/scope.rs).
pub fn declarations(
) -> impl Iterator<Item = (&'static str, declared::Declared, &'static [declared::Field])> {
    methods::TABLE
        .iter()
        .map(|r| (r.name, r.declared, r.fields))
}

/// Routes one method call to its handler (`methods::TABLE`) with the call's
/// guard: a token's grant is looked up afresh on every call, so a revoked
/// token stops at once.
async fn dispatch(
    engine: &Engine,
    session: &mut Session,
    method: &str,
    params: Params<'_>,
) -> Result<Reply> {
    if method == "hello" {
        let p: HelloParams = parse(method, params)?;
        if p.token.is_some() || session.access.is_none() {
            session.access = Some(engine.authenticate(p.token.as_deref())?);
        }
        if let Some(a) = &p.author {
            session.author = Some(crate::model::author("author", a)?);
        }
        let access = session.access(engine)?;
        // A token writes under its own name, whatever the hello said: it
        // cannot speak as the person or as another agent.
        if let Access::Token { name, .. } = &access {
            session.author = Some(name.to_owned());
        }
        tracing::debug!(client = ?p.client, author = ?session.author, "hello");
        session.here = session.author.as_deref().map(|a| engine.here(a));
        return Ok(reply(engine.hello(session.author.clone(), &access)));
    }
    let access = session.access(engine)?;
    let grant = engine.grant(&access)?;
    let guard = Guard::new(access, grant);
    if let Some(a) = &session.author {
        engine.seen(a);
    }
    let Some(row) = methods::TABLE.iter().find(|r| r.name == method) else {
        return Err(Error::MethodNotFound {
            method: method.to_string(),
            hint: suggest_method(method),
        });
    };
    (row.run)(
        methods::Call {
            engine,
            session,
            guard,
            key: None,
        },
        params,
    )
    .await
}

/// A method's result as JSON text, serialized once, straight from its
/// types (building a `Value` tree first cost ~6 µs for one entry).
pub(crate) struct Reply(String);

impl Reply {
    pub(crate) fn get(&self) -> &str {
        &self.0
    }
}

/// `v` as its caller's answer, through the seal (`seal::to_text`).
async fn sealed_reply<T: serde::Serialize + ?Sized>(
    guard: &Guard,
    engine: &Engine,
    v: &T,
) -> Result<Reply> {
    let text = crate::seal::to_text(guard, engine.db(), v).await?;
    // SAFETY: serde_json writes UTF-8.
    Ok(Reply(unsafe { String::from_utf8_unchecked(text) }))
}

fn reply<T: serde::Serialize>(v: T) -> Reply {
    // Room for a note's answer from the start: grown from serde_json's
    // 128 bytes, one note's answer was copied three times on the way.
    let mut text = Vec::with_capacity(1024);
    serde_json::to_writer(&mut text, &v).expect("results serialize");
    // SAFETY: serde_json writes UTF-8.
    Reply(unsafe { String::from_utf8_unchecked(text) })
}

fn suggest_method(got: &str) -> String {
    let close = METHODS
        .iter()
        .find(|m| m.ends_with(got) || got.ends_with(*m) || m.replace('.', "_") == got);
    match close {
        Some(m) => format!("Did you mean '{m}'? Methods: {}.", METHODS.join(", ")),
        None => format!("Methods: {}.", METHODS.join(", ")),
    }
}

/// Deserializes params, naming the offending field in the error.
fn parse<T: DeserializeOwned>(method: &str, params: Params<'_>) -> Result<T> {
    // Most params are right: read them straight from the line; only params
    // that fail are read again, as a value, to say why.
    if let Params::Raw(raw) = params {
        if raw.get().starts_with('{') {
            if let Ok(p) = serde_json::from_str(raw.get()) {
                return Ok(p);
            }
        }
    }
    let params = match params.into_value() {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v @ Value::Object(_)) => v,
        Some(other) => {
            return Err(Error::InvalidParams {
                field: None,
                message: format!(
                    "params of {method} must be an object of named fields, not {}; e.g. {{\"pad\": \"inbox\", \"content\": \"…\"}}.",
                    kind_of(&other)
                ),
                limit: None,
                got: Some(json!(kind_of(&other))),
            })
        }
    };
    // Read without tracking where a mistake is; only a wrong one is read
    // again to name its field.
    if let Ok(p) = T::deserialize(&params) {
        return Ok(p);
    }
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let field = if path != "." {
            Some(path)
        } else {
            // "missing field `x`" / "unknown field `x`, expected …": the field is in the text.
            inner.split('`').nth(1).map(str::to_string)
        };
        let message = match &field {
            Some(f) => {
                format!("{method}: bad '{f}': {inner}. See docs/protocol.md for {method}'s params.")
            }
            None => format!("{method}: {inner}. See docs/protocol.md for {method}'s params."),
        };
        Error::InvalidParams {
            field,
            message,
            limit: None,
            got: None,
        }
    })
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The most subscriptions one connection may hold at once (each is a task
/// and a filter every event is matched against).
pub const MAX_SUBSCRIPTIONS: usize = 64;
/// The most requests one batch may hold.
pub const MAX_BATCH_REQUESTS: usize = 100;
/// The answers of one batch stop being computed past this many bytes.
pub const MAX_BATCH_BYTES: usize = 16 << 20;

/// Handles one request line (a request or a batch); returns the response line
/// to send, without its newline, or `None` when nothing is owed (notifications).
pub async fn handle_line(engine: &Engine, session: &mut Session, line: &[u8]) -> Option<Vec<u8>> {
    // A well-formed request is read straight into its parts, its params left
    // as text for the method's own type; anything else goes the long way,
    // which says what is wrong with it.
    if let Ok(call) = serde_json::from_slice::<Envelope>(line) {
        let id_ok = matches!(
            call.id,
            None | Some(Value::String(_) | Value::Number(_) | Value::Null)
        );
        if call.jsonrpc == "2.0" && id_ok {
            let params = call.params.map_or(Params::Absent, Params::Raw);
            return answer(engine, session, call.id, &call.method, params).await;
        }
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Some(render(refused(
                engine,
                Value::Null,
                &Error::Parse(format!(
                    "this line is not valid JSON ({e}). Send one JSON-RPC 2.0 object per line, e.g. {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{{}}}}."
                )),
            )))
        }
    };
    match value {
        Value::Array(batch) => {
            if batch.is_empty() {
                return Some(render(refused(
                    engine,
                    Value::Null,
                    &Error::InvalidRequest(
                        "empty batch: a batch array needs at least one request.".into(),
                    ),
                )));
            }
            if batch.len() > MAX_BATCH_REQUESTS {
                return Some(render(refused(
                    engine,
                    Value::Null,
                    &Error::TooLarge {
                        field: None,
                        message: format!(
                            "this batch holds {} requests; the limit is {MAX_BATCH_REQUESTS}. Nothing in it was run: send it as several batches, or pipeline single requests.",
                            batch.len()
                        ),
                        limit: MAX_BATCH_REQUESTS as u64,
                        got: batch.len() as u64,
                    },
                )));
            }
            let mut out = b"[".to_vec();
            for v in batch {
                // Past the byte cap the rest is not run: a batch of reads
                // cannot make the engine hold gigabytes of answers.
                if out.len() > MAX_BATCH_BYTES {
                    let id = v.get("id").cloned();
                    if let Some(id) = id {
                        let got = out.len() as u64;
                        push_answer(
                            &mut out,
                            render(refused(
                                engine,
                                id,
                                &Error::TooLarge {
                                    field: None,
                                    message: format!(
                                        "not run: this batch's answers passed {} MiB, the limit. Send this request again on its own, or ask for less (a 'limit' or a 'budget').",
                                        MAX_BATCH_BYTES >> 20
                                    ),
                                    limit: MAX_BATCH_BYTES as u64,
                                    got,
                                },
                            )),
                        );
                    }
                    continue;
                }
                if let Some(r) = handle_value(engine, session, v).await {
                    push_answer(&mut out, r);
                }
                // A batch runs on the connection's task: between its
                // requests, let other connections on this thread run.
                tokio::task::yield_now().await;
            }
            out.push(b']');
            (out.len() > 2).then_some(out)
        }
        v => handle_value(engine, session, v).await,
    }
}

/// A request line's parts, when it is a well-formed request.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: std::borrow::Cow<'a, str>,
    /// `Some(Null)` for `"id": null`, which is owed an answer; `None` for
    /// no id at all (a notification).
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Adds one answer to a batch's array.
fn push_answer(out: &mut Vec<u8>, answer: Vec<u8>) {
    if out.len() > 1 {
        out.push(b',');
    }
    out.extend_from_slice(&answer);
}

/// Handles one request object; `None` for a notification (no `id`).
async fn handle_value(engine: &Engine, session: &mut Session, v: Value) -> Option<Vec<u8>> {
    let Value::Object(mut req) = v else {
        return Some(render(refused(
            engine,
            Value::Null,
            &Error::InvalidRequest(format!(
                "a request must be a JSON object, not {}; e.g. {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\"}}.",
                kind_of(&v)
            )),
        )));
    };
    let id = req.remove("id");
    let reply_id = id.clone().unwrap_or(Value::Null);
    if let Some(bad) = id
        .as_ref()
        .filter(|i| !matches!(i, Value::String(_) | Value::Number(_) | Value::Null))
    {
        return Some(render(refused(
            engine,
            Value::Null,
            &Error::InvalidRequest(format!(
                "'id' must be a string or a number, not {}.",
                kind_of(bad)
            )),
        )));
    }
    if req.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(render(refused(
            engine,
            reply_id,
            &Error::InvalidRequest(
                "missing \"jsonrpc\": \"2.0\"; every request must carry it.".into(),
            ),
        )));
    }
    let method = match req.remove("method") {
        Some(Value::String(m)) => m,
        _ => {
            return Some(render(refused(
                engine,
                reply_id,
                &Error::InvalidRequest(
                    "missing \"method\" (a string such as \"entry.add\").".into(),
                ),
            )))
        }
    };
    let params = req.remove("params").map_or(Params::Absent, Params::Value);
    answer(engine, session, id, &method, params).await
}

/// Runs one well-formed call and words its response; `None` for a
/// notification (no `id`).
async fn answer(
    engine: &Engine,
    session: &mut Session,
    id: Option<Value>,
    method: &str,
    params: Params<'_>,
) -> Option<Vec<u8>> {
    let started = engine.metrics().map(|_| std::time::Instant::now());
    let result = dispatch(engine, session, method, params).await;
    if let (Some(m), Some(started)) = (engine.metrics(), started) {
        m.request(
            method,
            started.elapsed(),
            result.as_ref().err().map(Error::code),
        );
    }
    let id = id?;
    Some(match result {
        Ok(r) => response_line(&id, &r),
        Err(e) => render(error_response(id, &e)),
    })
}

/// A success response, fields in the order the `Value` path wrote them,
/// the result copied in as it was serialized.
fn response_line(id: &Value, result: &Reply) -> Vec<u8> {
    let mut line = Vec::with_capacity(result.get().len() + 48);
    line.extend_from_slice(b"{\"id\":");
    serde_json::to_writer(&mut line, id).expect("ids serialize");
    line.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"result\":");
    line.extend_from_slice(result.get().as_bytes());
    line.push(b'}');
    line
}

/// An error answered before any method ran (bad JSON, a bad request),
/// counted in the metrics.
pub fn refused(engine: &Engine, id: Value, e: &Error) -> Value {
    if let Some(m) = engine.metrics() {
        m.error(e.code());
    }
    error_response(id, e)
}

pub fn error_response(id: Value, e: &Error) -> Value {
    if let Error::Internal(msg) = e {
        tracing::error!("internal error answered to a client: {msg}");
    }
    let mut err = json!({"code": e.code(), "message": e.to_string()});
    if let Some(data) = e.data() {
        err["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

fn render(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).expect("values serialize")
}
