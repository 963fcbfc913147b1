//! JSON-RPC 2.0: request handling and the one `dispatch` match.
//!
//! Transport-neutral: the socket server feeds it lines, the desktop app and
//! MCP feed it values. A `Session` is one client's state (its author, its
//! subscriptions); it ends when the client goes away. Nothing a client sends
//! can panic or stop the engine: every failure becomes an error response.

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::access::Access;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model;
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

/// The name of the token a connection presented, if it did.
fn token_name(access: &Access) -> Option<&str> {
    match access {
        Access::Token { name, .. } => Some(name),
        _ => None,
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

/// Routes one method call to the engine, after checking that the client may
/// make it: a token's grant is looked up afresh on every call, so a revoked
/// token stops at once.
pub async fn dispatch(
    engine: &Engine,
    session: &mut Session,
    method: &str,
    params: Option<Value>,
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
        if let Some(name) = token_name(&access) {
            session.author = Some(name.to_owned());
        }
        tracing::debug!(client = ?p.client, author = ?session.author, "hello");
        session.here = session.author.as_deref().map(|a| engine.here(a));
        return Ok(reply(engine.hello(session.author.clone(), &access)));
    }
    let access = session.access(engine)?;
    let grant = engine.grant(&access)?;
    let g = grant.as_deref();
    if let Some(a) = &session.author {
        engine.seen(a);
    }
    // Checks an entry's pad before acting on it by id, and gives the id to
    // act on. To a token, an entry outside its grant does not exist: its
    // prefix resolves among the entries it may read only (a foreign entry
    // neither matches nor makes a prefix ambiguous), the error names no
    // foreign pad, and the call goes on with the full id it resolved to.
    let entry_pad = async |id: &str, write: bool| -> Result<String> {
        let Some(g) = g else {
            return Ok(id.to_owned());
        };
        let covers = |pad: &str| g.covers(pad);
        match engine.visible_matches(id, &covers).await?.as_slice() {
            [] => Err(crate::store::entries::no_entry(
                "id",
                &id.trim().to_lowercase(),
            )),
            // Readable already (the pad is covered): a write needs more.
            [(full, pad)] => {
                if write {
                    g.check_write(pad)?;
                }
                Ok(full.clone())
            }
            _ => Err(crate::store::entries::ambiguous("id", id)),
        }
    };
    let pad_check = |raw: &str, field: &str, write: bool| -> Result<()> {
        if let Some(g) = g {
            let pad = crate::model::pad_name(field, raw)?;
            if write {
                g.check_write(&pad)?;
            } else {
                g.check_read(&pad)?;
            }
        }
        Ok(())
    };
    let out = match method {
        "entry.add" => {
            let mut p: AddParams = parse(method, params)?;
            if let Some(name) = token_name(&access) {
                p.author = Some(name.to_owned());
            }
            pad_check(&p.pad, "pad", true)?;
            if let Some(g) = g {
                for a in &p.to {
                    let agent = a.trim().trim_start_matches('@').to_lowercase();
                    if engine.is_registered_agent(&agent) {
                        g.check_dispatch(&agent)?;
                    }
                }
            }
            if let Some(parent) = &mut p.reply_to {
                *parent = entry_pad(parent.as_str(), false)
                    .await
                    .map_err(|e| e.for_field("reply_to"))?;
            }
            // A token's task may wait only on tasks it can read (else it
            // could watch a foreign task turn ready in plan.order).
            for dep in &mut p.depends_on {
                *dep = entry_pad(dep.as_str(), false)
                    .await
                    .map_err(|e| e.for_field("depends_on"))?;
            }
            let looks_like = match p.check_duplicates {
                true => {
                    let author =
                        model::entry_author(p.author.as_deref(), session.author.as_deref())?;
                    engine.looks_like(&p.pad, &author, &p.content, g).await?
                }
                false => None,
            };
            let entry = engine.add(p, session.author.as_deref()).await?;
            reply(EntryResult { entry, looks_like })
        }
        "entry.thread" => {
            let mut p: IdParams = parse(method, params)?;
            p.id = entry_pad(&p.id, false).await?;
            reply(engine.thread(p, g).await?)
        }
        "ask" => {
            let mut p: AskParams = parse(method, params)?;
            if let Some(name) = token_name(&access) {
                p.author = Some(name.to_owned());
            }
            match &mut p.id {
                // Waiting on a question asked before: reading it suffices.
                Some(id) => *id = entry_pad(id.as_str(), false).await?,
                None => pad_check(p.pad.as_deref().unwrap_or(crate::model::INBOX), "pad", true)?,
            }
            reply(engine.ask(p, session.author.as_deref()).await?)
        }
        "entry.get" => {
            let mut p: IdParams = parse(method, params)?;
            p.id = entry_pad(&p.id, false).await?;
            reply(EntryResult::of(engine.get(&p.id).await?))
        }
        "entry.update" => {
            let mut p: UpdateParams = parse(method, params)?;
            p.id = entry_pad(&p.id, true).await?;
            for dep in p.depends_on.iter_mut().flatten() {
                *dep = entry_pad(dep.as_str(), false)
                    .await
                    .map_err(|e| e.for_field("depends_on"))?;
            }
            reply(EntryResult::of(engine.update(p, &actor(session)).await?))
        }
        "entry.delete" => {
            let mut p: DeleteParams = parse(method, params)?;
            p.id = entry_pad(&p.id, true).await?;
            let (gone, change) = engine.delete(p, &actor(session)).await?;
            reply(DeleteResult {
                deleted: true,
                id: gone.id,
                change: (change > 0).then_some(change),
            })
        }
        "entry.history" => reply(engine.history(parse(method, params)?, g).await?),
        "entry.trash" => reply(engine.trash(parse(method, params)?, g).await?),
        "entry.restore" => {
            let p: RestoreParams = parse(method, params)?;
            if let Some(g) = g {
                g.check_any_write()?;
            }
            reply(engine.restore(p, &actor(session), g).await?)
        }
        "entry.purge" => {
            let p: PurgeParams = parse(method, params)?;
            engine.owner_only(&access, "purge the history and trash for good")?;
            reply(engine.purge(p).await?)
        }
        "entry.changes" => reply(engine.changes(parse(method, params)?, g).await?),
        "entry.list" => reply(engine.list(parse(method, params)?, g).await?),
        "search" => reply(engine.search(parse(method, params)?, g).await?),
        "tags.list" => reply(engine.tags(parse(method, params)?, g).await?),
        "pad.list" => reply(PadListResult {
            pads: engine.pads(parse(method, params)?, g).await?,
        }),
        "pad.configure" => {
            let p: ConfigureParams = parse(method, params)?;
            pad_check(&p.name, "name", true)?;
            reply(PadResult {
                pad: engine.configure(p).await?,
            })
        }
        "pad.touch" => {
            let p: PadNameParams = parse(method, params)?;
            pad_check(&p.name, "name", true)?;
            reply(PadResult {
                pad: engine.touch(p).await?,
            })
        }
        "pad.clear" => {
            let p: ClearParams = parse(method, params)?;
            pad_check(&p.name, "name", true)?;
            let (deleted, change) = engine.clear(p, &actor(session)).await?;
            reply(ClearResult {
                deleted,
                change: (deleted > 0 && change > 0).then_some(change),
            })
        }
        "pad.export" => {
            let p: ExportParams = parse(method, params)?;
            pad_check(&p.name, "name", false)?;
            reply(engine.export(p).await?)
        }
        "plan.order" => {
            let p: PlanParams = parse(method, params)?;
            pad_check(&p.pad, "pad", false)?;
            reply(engine.plan_order(p).await?)
        }
        "task.claim" => {
            let p: ClaimParams = parse(method, params)?;
            pad_check(&p.pad, "pad", true)?;
            reply(engine.claim(p, session.author.as_deref()).await?)
        }
        "task.heartbeat" => {
            let mut p: HeartbeatParams = parse(method, params)?;
            p.id = entry_pad(&p.id, true).await?;
            reply(EntryResult::of(engine.heartbeat(p).await?))
        }
        "task.complete" => {
            let mut p: CompleteParams = parse(method, params)?;
            p.id = entry_pad(&p.id, true).await?;
            reply(EntryResult::of(engine.complete(p).await?))
        }
        "task.fail" => {
            let mut p: FailParams = parse(method, params)?;
            p.id = entry_pad(&p.id, true).await?;
            reply(EntryResult::of(engine.fail(p).await?))
        }
        "entry.share" => {
            let mut p: ShareParams = parse(method, params)?;
            p.id = entry_pad(&p.id, false).await?;
            if let Some(name) = token_name(&access) {
                p.author = Some(name.to_owned());
            }
            reply(engine.share(p, session.author.as_deref(), g).await?)
        }
        "report" => reply(engine.report(parse(method, params)?, g).await?),
        "subscribe" => {
            let p: SubscribeParams = parse(method, params)?;
            if session.subscriptions.len() >= MAX_SUBSCRIPTIONS {
                return Err(Error::TooLarge {
                    field: None,
                    message: format!(
                        "this connection already has {MAX_SUBSCRIPTIONS} subscriptions, the limit. Unsubscribe from one first, or subscribe once with a broader filter (several pads, tags or kinds in one subscription)."
                    ),
                    limit: MAX_SUBSCRIPTIONS as u64,
                    got: session.subscriptions.len() as u64 + 1,
                });
            }
            let Some(out) = session.events.clone() else {
                return Err(Error::Unavailable(
                    "this transport cannot deliver events; subscribe over the socket (pad watch) instead.".into(),
                ));
            };
            let mut sub = engine.subscribe(p, g)?;
            let id = sub.id;
            let (engine, access) = (engine.clone(), access.clone());
            let task = tokio::spawn(async move {
                while let Some(event) = sub.next().await {
                    // A token revoked since: its subscription ends, and
                    // nothing more reaches it.
                    if engine.grant(&access).is_err() {
                        break;
                    }
                    if out.send(event).await.is_err() {
                        break;
                    }
                }
            });
            session.subscriptions.insert(id, task.abort_handle());
            reply(SubscribeResult { subscription: id })
        }
        "unsubscribe" => {
            let p: UnsubscribeParams = parse(method, params)?;
            match session.subscriptions.remove(&p.subscription) {
                Some(task) => {
                    task.abort();
                    reply(OkResult { ok: true })
                }
                None => {
                    return Err(Error::NotFound {
                        field: "subscription",
                        message: format!(
                            "this connection has no subscription {}; its subscriptions are {:?}.",
                            p.subscription,
                            session.subscriptions.keys().collect::<Vec<_>>()
                        ),
                    })
                }
            }
        }
        "stats" => reply(engine.stats(parse(method, params)?, g).await?),
        "reindex" => {
            let _: ReindexParams = parse(method, params)?;
            engine.owner_only(&access, "rebuild the semantic index")?;
            reply(engine.reindex().await?)
        }
        "inbox" => {
            let p: InboxParams = parse(method, params)?;
            if let (Some(name), Some(asked)) = (token_name(&access), p.author.as_deref()) {
                if !asked.eq_ignore_ascii_case(name) {
                    return Err(Error::Forbidden(format!(
                        "token '{name}' reads only its own inbox (author '{name}'); leave 'author' out."
                    )));
                }
            }
            reply(engine.inbox(p, session.author.as_deref(), g).await?)
        }
        "agent.add" => {
            let p: AgentAddParams = parse(method, params)?;
            engine.owner_only(&access, "register agents")?;
            reply(engine.agent_add(p, &actor(session)).await?)
        }
        "agent.remove" => {
            let p: AgentNameParams = parse(method, params)?;
            engine.owner_only(&access, "remove agents")?;
            reply(engine.agent_remove(p)?)
        }
        "agent.list" => reply(engine.agent_list(parse(method, params)?, g).await?),
        "agent.deliveries" => reply(engine.deliveries(parse(method, params)?, g)?),
        "token.create" => {
            let p: TokenCreateParams = parse(method, params)?;
            engine.owner_only(&access, "create tokens")?;
            reply(engine.token_create(p).await?)
        }
        "token.list" => {
            let _: TokenListParams = parse(method, params)?;
            engine.owner_only(&access, "list tokens")?;
            reply(engine.token_list().await?)
        }
        "token.revoke" => {
            let p: TokenRevokeParams = parse(method, params)?;
            engine.owner_only(&access, "revoke tokens")?;
            reply(engine.token_revoke(p).await?)
        }
        other => {
            return Err(Error::MethodNotFound {
                method: other.to_string(),
                hint: suggest_method(other),
            })
        }
    };
    Ok(out)
}

/// A result or a whole response, serialized once, straight from its types:
/// building a `Value` tree first cost ~6 µs for one entry.
type Reply = Box<RawValue>;

fn reply<T: serde::Serialize>(v: T) -> Reply {
    serde_json::value::to_raw_value(&v).expect("results serialize")
}

/// A success response, fields in the order the `Value` path wrote them.
#[derive(serde::Serialize)]
struct Response<'a> {
    id: &'a Value,
    jsonrpc: &'static str,
    result: &'a RawValue,
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
fn parse<T: DeserializeOwned>(method: &str, params: Option<Value>) -> Result<T> {
    let params = match params {
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
            let mut out = Vec::with_capacity(batch.len());
            let mut bytes = 0usize;
            for v in batch {
                // Past the byte cap the rest is not run: a batch of reads
                // cannot make the engine hold gigabytes of answers.
                if bytes > MAX_BATCH_BYTES {
                    let id = v.get("id").cloned();
                    if let Some(id) = id {
                        out.push(reply(refused(
                            engine,
                            id,
                            &Error::TooLarge {
                                field: None,
                                message: format!(
                                    "not run: this batch's answers passed {} MiB, the limit. Send this request again on its own, or ask for less (a 'limit' or a 'budget').",
                                    MAX_BATCH_BYTES >> 20
                                ),
                                limit: MAX_BATCH_BYTES as u64,
                                got: bytes as u64,
                            },
                        )));
                    }
                    continue;
                }
                if let Some(r) = handle_value(engine, session, v).await {
                    bytes += r.get().len();
                    out.push(r);
                }
                // A batch runs on the connection's task: between its
                // requests, let other connections on this thread run.
                tokio::task::yield_now().await;
            }
            (!out.is_empty()).then(|| serde_json::to_vec(&out).expect("replies serialize"))
        }
        v => handle_value(engine, session, v)
            .await
            .map(|r| Box::<str>::from(r).into_boxed_bytes().into_vec()),
    }
}

/// Handles one request object; `None` for a notification (no `id`).
pub async fn handle_value(engine: &Engine, session: &mut Session, v: Value) -> Option<Reply> {
    let Value::Object(mut req) = v else {
        return Some(reply(refused(
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
        return Some(reply(refused(
            engine,
            Value::Null,
            &Error::InvalidRequest(format!(
                "'id' must be a string or a number, not {}.",
                kind_of(bad)
            )),
        )));
    }
    if req.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(reply(refused(
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
            return Some(reply(refused(
                engine,
                reply_id,
                &Error::InvalidRequest(
                    "missing \"method\" (a string such as \"entry.add\").".into(),
                ),
            )))
        }
    };
    let started = std::time::Instant::now();
    let result = dispatch(engine, session, &method, req.remove("params")).await;
    if let Some(m) = engine.metrics() {
        m.request(
            &method,
            started.elapsed(),
            result.as_ref().err().map(Error::code),
        );
    }
    id.as_ref()?;
    Some(match result {
        Ok(r) => reply(Response {
            id: &reply_id,
            jsonrpc: "2.0",
            result: &r,
        }),
        Err(e) => reply(error_response(reply_id, &e)),
    })
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
