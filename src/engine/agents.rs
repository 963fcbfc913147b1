//! Reaching agents: `agent.add`, `agent.list` (the roster), `agent.remove`,
//! `agent.deliveries`, and the dispatcher that carries addressed notes to
//! A2A agents and brings what they say back into the thread.
//!
//! A conversation (`agents::Conversation`) is one addressed note and one
//! agent. The dispatcher sends its outbox one message at a time
//! (non-blocking sends), then follows the task the agent answers with by
//! polling it — every 0.25 s, and after 10 s without a change slower, up
//! to every 2 s — and
//! turns each change of the task's state into at most one reply authored by
//! the agent: a status line while it works, a `question` tagged
//! `needs_eyes` when it needs input, a `result` when it completes, a note
//! tagged `needs_eyes` when it fails. A reply by the person to that question
//! goes back on the same task (and where the server opens a new task for
//! it, as FastA2A does, the new task is followed). Sends that fail are
//! retried with back-off; past `Config::agent_give_up` the person is asked.
//! Everything is in `agents.json`, so a restarted engine picks up where it
//! was; replies carry `meta.a2a` = {task, state}, and a reply already in
//! the thread is not posted again.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map};
use tokio::sync::watch;

use super::Engine;
use crate::access::Grant;
use crate::agents::a2a::{self, Reply, Task};
use crate::agents::{Conversation, Outgoing, Registered};
use crate::error::{Error, Result};
use crate::model::{self, Kind, NEEDS_EYES};
use crate::protocol::*;

/// The longest a live conversation waits between looks at its task.
const MAX_POLL: Duration = Duration::from_secs(2);
/// How often a task is looked at while it is young, or just changed.
const FIRST_POLL: Duration = Duration::from_millis(250);
/// Looks at `FIRST_POLL` before backing off: 10 s of quiet.
const QUICK_POLLS: u32 = 40;
/// The longest wait between two tries of a failing send.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Answers the person gives to "could not deliver" to stop trying.
const DROP: &str = "drop";
const RETRY: &str = "retry";

/// Wall-clock milliseconds: deliveries are scheduled in real time, whatever
/// clock the engine's entries use.
fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn backoff(attempts: u32) -> i64 {
    let ms = 1000u64.saturating_mul(1 << attempts.min(10));
    ms.min(MAX_BACKOFF.as_millis() as u64) as i64
}

impl Engine {
    pub async fn agent_add(&self, p: AgentAddParams, by: &str) -> Result<AgentResult> {
        let name = model::author("name", &p.name)?;
        if name == "user" {
            return Err(Error::invalid(
                "name",
                "'user' is the person; give the agent a name of its own, e.g. 'agent-zero'.",
            ));
        }
        let url = p.url.trim().to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(Error::invalid(
                "url",
                format!("'{}' is not an A2A endpoint URL; give the http:// or https:// address the agent serves A2A at, e.g. Agent Zero's http://localhost:50001/a2a/t-TOKEN (Settings → MCP/A2A → A2A server).", a2a::redact(&url)),
            ));
        }
        let token = p
            .token
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let (u, t) = (url.clone(), token.clone());
        let (card, dialect) = tokio::task::spawn_blocking(move || a2a::card(&u, t.as_deref()))
            .await
            .map_err(|e| Error::Internal(format!("reading the agent card: {e}")))?
            .map_err(|why| {
                Error::Unavailable(format!(
                    "{why}. Is the agent running, with its A2A server on? (Agent Zero: Settings → MCP/A2A → A2A server)"
                ))
            })?;
        let agent = Registered {
            name: name.clone(),
            url,
            token,
            dialect,
            card: Some(card),
            added_at: self.now(),
            added_by: by.to_string(),
            reachable: Some(true),
            error: None,
        };
        self.0.agents.add(agent, p.replace)?;
        tracing::info!("registered agent {name}");
        let info = self
            .0
            .agents
            .infos()
            .into_iter()
            .find(|a| a.name == name)
            .ok_or_else(|| Error::Internal("the agent just added is gone".into()))?;
        Ok(AgentResult { agent: info })
    }

    pub fn agent_remove(&self, p: AgentNameParams) -> Result<AgentRemoveResult> {
        let name = model::author("name", &p.name)?;
        let (removed, dropped) = self.0.agents.remove(&name)?;
        if !removed {
            return Err(Error::NotFound {
                field: "name",
                message: format!(
                    "no agent named '{name}' is registered; `pad agent ls` lists them"
                ),
            });
        }
        Ok(AgentRemoveResult { removed, dropped })
    }

    pub fn deliveries(
        &self,
        p: DeliveriesParams,
        grant: Option<&Grant>,
    ) -> Result<DeliveriesResult> {
        let mut deliveries = self
            .0
            .agents
            .deliveries(p.pad.as_deref(), p.entry.as_deref());
        if let Some(g) = grant {
            deliveries.retain(|d| g.covers(&d.pad));
        }
        Ok(DeliveriesResult { deliveries })
    }

    /// Whether `name` is a registered A2A agent.
    pub fn is_registered_agent(&self, name: &str) -> bool {
        self.0.agents.registered(name).is_some()
    }

    /// Says that a connection speaks as `author` until the guard drops.
    pub fn here(&self, author: &str) -> crate::agents::Here {
        self.0.agents.here(author, self.now())
    }

    /// Notes a call by `author` (for the roster's "last seen").
    pub fn seen(&self, author: &str) {
        self.0.agents.seen(author, self.now());
    }

    /// Tells the dispatcher about a committed entry (an addressed note, or
    /// a reply in an agent's conversation).
    pub(super) fn agents_notice(&self, e: &model::Entry) {
        if e.to.is_empty() && e.reply_to.is_none() {
            return;
        }
        match self.0.agents.noticed(e, wall_ms()) {
            Ok(true) => self.0.agents.wake.notify_one(),
            Ok(false) => {}
            Err(err) => tracing::warn!("cannot record the delivery of {}: {err}", e.id),
        }
    }

    /// Carries addressed notes to their agents until `stop`.
    pub(super) async fn run_agents(self, mut stop: watch::Receiver<bool>) {
        loop {
            let now = wall_ms();
            for c in self.0.agents.due(now) {
                if *stop.borrow() {
                    return;
                }
                self.step(c).await;
            }
            let wait = match self.0.agents.next_due() {
                Some(at) => Duration::from_millis((at - wall_ms()).clamp(20, 5000) as u64),
                None => MAX_POLL,
            };
            tokio::select! {
                _ = stop.changed() => return,
                _ = self.0.agents.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// One look at one conversation: send what waits, or read its task.
    async fn step(&self, mut c: Conversation) {
        let read_outbox = c.outbox.len();
        let before = c.delivery.clone();
        let Some(agent) = self.0.agents.registered(&c.delivery.agent) else {
            return;
        };
        let ep = agent.endpoint();
        let now = wall_ms();
        if let Some(out) = c.outbox.first().cloned() {
            let (id, ctx) = (
                format!("pad-{}-{}", out.entry, c.delivery.agent),
                c.context.clone(),
            );
            let text = out.text.clone();
            let on_task = out.on_task.clone();
            let sent = blocking(move || a2a::send(&ep, &id, &text, &ctx, on_task.as_deref())).await;
            match sent {
                Ok(reply) => {
                    c.last_sent = Some(c.outbox.remove(0));
                    c.failing_since = None;
                    c.delivery.attempts = 0;
                    c.delivery.question = None;
                    c.delivery.detail = None;
                    self.reached(&agent, None);
                    match reply {
                        Reply::Task(t) => self.absorb(&mut c, t, now).await,
                        Reply::Message(text) => {
                            self.post(&mut c, "completed", Kind::Result, &text, &[])
                                .await;
                            c.delivery.state = DeliveryState::Done;
                            c.posted_state = Some("completed".into());
                        }
                    }
                }
                Err(e) => self.failed_send(&mut c, &agent, e, now).await,
            }
        } else if let Some(task) = c.delivery.task.clone() {
            match blocking(move || a2a::get(&ep, &task)).await {
                Ok(t) => {
                    self.reached(&agent, None);
                    self.absorb(&mut c, t, now).await;
                }
                Err(e) if e.lost => {
                    self.reached(&agent, None);
                    self.lost_task(&mut c, now).await;
                }
                Err(e) if e.refused => self.failed_send(&mut c, &agent, e, now).await,
                Err(a2a::CallError { why, .. }) => {
                    self.reached(&agent, Some(why.clone()));
                    c.delivery.detail = Some(format!("lost touch: {why}"));
                    c.quiet_polls = c.quiet_polls.saturating_add(1);
                    c.next_at = now + backoff(c.quiet_polls);
                }
            }
        } else {
            // Nothing to send and no task: finished.
            c.next_at = i64::MAX;
        }
        if c.delivery != before {
            c.delivery.updated_at = model::fmt_time(self.now());
            self.0.bus.delivery(&c.delivery.pad, c.delivery.clone());
        }
        if let Err(e) = self.0.agents.put(c, read_outbox) {
            tracing::warn!("cannot save a delivery: {e}");
        }
    }

    fn reached(&self, agent: &Registered, error: Option<String>) {
        if let Err(e) = self.0.agents.reached(&agent.name, error) {
            tracing::warn!("cannot save the agent's state: {e}");
        }
    }

    async fn failed_send(
        &self,
        c: &mut Conversation,
        agent: &Registered,
        e: a2a::CallError,
        now: i64,
    ) {
        let why = e.why;
        self.reached(agent, Some(why.clone()));
        c.delivery.attempts += 1;
        let since = *c.failing_since.get_or_insert(now);
        c.delivery.detail = Some(format!("not delivered: {why}"));
        c.next_at = now + backoff(c.delivery.attempts);
        if c.delivery.question.is_some() {
            return; // asked already
        }
        let give_up = self.0.config.agent_give_up.as_millis() as i64;
        // A refused token does not heal by waiting: ask at once.
        if !e.refused && now - since < give_up {
            return;
        }
        // Long enough: ask the person, and wait for their word.
        let minutes = (now - since) / 60_000;
        let name = &c.delivery.agent;
        let text = if e.refused {
            format!(
                "{name} refused this note: {why}. If its A2A URL changed (Agent Zero's does when its login changes: Settings → MCP/A2A → A2A server shows the new one), register it again — `pad agent add {name} --a2a 'NEW_URL' --replace`, or Register in the app's Agents view — and the note goes out at once. Or reply '{RETRY}' to try again as it is, or '{DROP}' to stop."
            )
        } else {
            format!(
                "I could not deliver this note to {name} for {}: {why}. Reply '{RETRY}' to try again, or '{DROP}' to stop.",
                if minutes >= 1 { format!("{minutes} min") } else { format!("{} s", (now - since) / 1000) }
            )
        };
        let question = self
            .add(
                AddParams {
                    pad: c.delivery.pad.clone(),
                    content: text,
                    author: Some("engine".into()),
                    tags: vec![NEEDS_EYES.into()],
                    reply_to: Some(c.delivery.entry.clone()),
                    choices: vec![RETRY.into(), DROP.into()],
                    ..Default::default()
                },
                None,
            )
            .await;
        match question {
            Ok(q) => {
                c.delivery.state = DeliveryState::Failed;
                c.delivery.question = Some(q.id.clone());
                c.thread.push(q.id);
                c.next_at = i64::MAX;
            }
            Err(e) => tracing::warn!("cannot ask about an undelivered note: {e}"),
        }
    }

    /// The agent no longer knows the task it was given (it restarted: Agent
    /// Zero keeps tasks in memory): said in the thread, and the last message
    /// sent again, once; a second loss is the person's to look at.
    async fn lost_task(&self, c: &mut Conversation, now: i64) {
        let name = c.delivery.agent.clone();
        match c.last_sent.clone().filter(|_| !c.resent) {
            Some(again) => {
                c.resent = true;
                let text = format!(
                    "{name} lost this task (it restarted, or forgot it); sending it again."
                );
                self.post(c, "lost", Kind::Note, &text, &[]).await;
                c.delivery.task = None;
                c.posted_state = None;
                c.posted_messages = 0;
                c.outbox.insert(
                    0,
                    Outgoing {
                        on_task: None,
                        ..again
                    },
                );
                c.delivery.state = DeliveryState::Pending;
                c.delivery.detail = Some("sent again: the agent lost the task".into());
                c.next_at = now;
            }
            None => {
                let text = format!(
                    "{name} lost this task again; it is not sent a third time. Hand it over again when {name} runs steadily."
                );
                self.post(c, "lost", Kind::Note, &text, &[NEEDS_EYES]).await;
                c.delivery.task = None;
                c.delivery.state = DeliveryState::Failed;
                c.delivery.detail = Some("the agent lost the task twice".into());
                c.next_at = i64::MAX;
            }
        }
    }

    /// Takes in the task as the agent tells it: at most one reply per change.
    async fn absorb(&self, c: &mut Conversation, t: Task, now: i64) {
        if c.delivery.task.as_deref() != Some(&t.id) {
            c.delivery.task = Some(t.id.clone());
            c.posted_state = None;
            c.posted_messages = 0;
        }
        if let Some(ctx) = &t.context {
            c.context = ctx.clone();
        }
        let said: Vec<&str> = t
            .history
            .iter()
            .filter(|m| m.agent && !m.text.trim().is_empty())
            .map(|m| m.text.as_str())
            .collect();
        let new: Vec<&str> = said.iter().skip(c.posted_messages).copied().collect();
        let changed = c.posted_state.as_deref() != Some(t.state.as_str());
        let status = t
            .status_text
            .clone()
            .or_else(|| new.last().map(|s| s.to_string()));
        if changed {
            c.quiet_polls = 0;
            // What the agent said in states the polls did not catch (it
            // worked and asked between two looks): one status reply first.
            let result_is_said = t.state == "completed" && t.artifacts.is_empty();
            let earlier: Vec<&str> = new
                .iter()
                .copied()
                .filter(|m| Some(*m) != status.as_deref())
                .collect();
            if t.state != "working" && !result_is_said && !earlier.is_empty() {
                self.post(c, "working", Kind::Note, &earlier.join("\n\n"), &[])
                    .await;
            }
            match t.state.as_str() {
                "submitted" => c.delivery.state = DeliveryState::Sent,
                "working" => {
                    c.delivery.state = DeliveryState::Working;
                    if let Some(s) = &status {
                        self.post(c, &t.state, Kind::Note, s, &[]).await;
                    }
                    c.delivery.detail = status.clone();
                }
                "input-required" | "auth-required" => {
                    let q = status.clone().unwrap_or_else(|| {
                        format!(
                            "{} needs more from you to go on; reply here.",
                            c.delivery.agent
                        )
                    });
                    if let Some(id) = self
                        .post(c, &t.state, Kind::Question, &q, &[NEEDS_EYES])
                        .await
                    {
                        c.delivery.question = Some(id);
                    }
                    c.delivery.state = DeliveryState::WaitingForYou;
                    c.delivery.detail = Some(q);
                }
                "completed" => {
                    let text = if !t.artifacts.is_empty() {
                        t.artifacts.join("\n\n")
                    } else if !new.is_empty() {
                        new.join("\n\n")
                    } else {
                        format!("{} finished, with nothing to show.", c.delivery.agent)
                    };
                    self.post(c, &t.state, Kind::Result, &text, &[]).await;
                    c.delivery.state = DeliveryState::Done;
                    c.delivery.detail = None;
                }
                "failed" | "rejected" | "canceled" => {
                    let why = status.clone().unwrap_or_else(|| "it gave no reason".into());
                    let text = format!("{} {}: {why}", c.delivery.agent, t.state);
                    self.post(c, &t.state, Kind::Note, &text, &[NEEDS_EYES])
                        .await;
                    c.delivery.state = DeliveryState::Failed;
                    c.delivery.detail = Some(why);
                }
                _ => {}
            }
            c.posted_state = Some(t.state.clone());
        } else {
            c.quiet_polls = c.quiet_polls.saturating_add(1);
        }
        c.posted_messages = said.len();
        let waiting = matches!(
            c.delivery.state,
            DeliveryState::Done | DeliveryState::Failed | DeliveryState::WaitingForYou
        );
        c.next_at = if waiting && c.outbox.is_empty() {
            i64::MAX
        } else {
            let slower = c.quiet_polls.saturating_sub(QUICK_POLLS).min(4);
            let ms = FIRST_POLL.as_millis() as i64 * (1 << slower) as i64;
            now + ms.min(MAX_POLL.as_millis() as i64)
        };
    }

    /// Posts what the agent said as a reply in the thread, authored by it,
    /// split into several entries when longer than an entry may be. Not
    /// again if a reply for this task and state is already there (a restart
    /// between posting and saving). Returns the (first) entry's id.
    async fn post(
        &self,
        c: &mut Conversation,
        state: &str,
        kind: Kind,
        text: &str,
        tags: &[&str],
    ) -> Option<String> {
        let task = c.delivery.task.clone().unwrap_or_default();
        let mark = json!({"task": task, "state": state});
        if let Ok(thread) = self
            .thread(
                IdParams {
                    id: c.delivery.entry.clone(),
                },
                None,
            )
            .await
        {
            if let Some(e) = thread.replies.iter().find(|e| {
                e.author == c.delivery.agent
                    && e.meta.as_ref().and_then(|m| m.get("a2a")) == Some(&mark)
            }) {
                return Some(e.id.clone());
            }
        }
        let max = self.0.config.max_content_chars.max(100);
        let chars: Vec<char> = text.chars().collect();
        let mut first = None;
        for part in chars.chunks(max) {
            let mut meta = Map::new();
            meta.insert("a2a".into(), mark.clone());
            let content: String = part.iter().collect();
            if content.trim().is_empty() {
                continue;
            }
            let added = self
                .add(
                    AddParams {
                        pad: c.delivery.pad.clone(),
                        content,
                        author: Some(c.delivery.agent.clone()),
                        kind: Some(kind),
                        tags: tags.iter().map(|t| t.to_string()).collect(),
                        reply_to: Some(c.reply_to.clone()),
                        meta: Some(meta),
                        ..Default::default()
                    },
                    None,
                )
                .await;
            match added {
                Ok(e) => {
                    c.thread.push(e.id.clone());
                    first.get_or_insert(e.id);
                }
                Err(e) => {
                    tracing::warn!("cannot post {}'s reply: {e}", c.delivery.agent);
                    break;
                }
            }
        }
        first
    }

    /// The roster: registered agents, and every author seen within
    /// `seen_within` (default a day) with what it is doing.
    pub async fn agent_list(
        &self,
        p: AgentListParams,
        grant: Option<&Grant>,
    ) -> Result<AgentListResult> {
        let within = p.seen_within.unwrap_or(86_400).min(365 * 86_400) as i64;
        let now = self.now();
        let since = model::fmt_time(now - within * 1000);
        let recent = self
            .list(
                ListParams {
                    since: Some(since),
                    limit: Some(MAX_LIST_LIMIT),
                    ..Default::default()
                },
                grant,
            )
            .await?
            .entries;
        let doing = self
            .list(
                ListParams {
                    status: Some(model::Status::Doing),
                    limit: Some(500),
                    ..Default::default()
                },
                grant,
            )
            .await?
            .entries;
        let questions = self
            .list(
                ListParams {
                    kind: Some(Kind::Question),
                    limit: Some(500),
                    ..Default::default()
                },
                grant,
            )
            .await?
            .entries;
        let registered = self.0.agents.names();
        let presence = self.0.agents.presence();
        let brief = |e: &model::Entry| Brief {
            id: e.id.clone(),
            pad: e.pad.clone(),
            content: e.content.chars().take(200).collect(),
            at: e.updated_at.clone(),
        };
        let mut seen: Vec<SeenAuthor> = Vec::new();
        let mut names: Vec<String> = presence
            .iter()
            .filter(|(_, p)| p.connected > 0 || now - p.last_seen <= within * 1000)
            .map(|(a, _)| a.clone())
            .collect();
        for e in &recent {
            if !names.contains(&e.author) {
                names.push(e.author.clone());
            }
        }
        for name in registered.iter() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        for author in names {
            let last = recent.iter().find(|e| e.author == author);
            let live = presence.get(&author).copied().unwrap_or_default();
            let wrote = last.and_then(|e| model::parse_time("at", &e.created_at).ok());
            let last_seen = wrote.unwrap_or(0).max(live.last_seen);
            if last_seen == 0 && !registered.contains(&author) {
                continue;
            }
            seen.push(SeenAuthor {
                last_seen: if last_seen > 0 {
                    model::fmt_time(last_seen)
                } else {
                    String::new()
                },
                connected: live.connected,
                registered: registered.contains(&author),
                pad: last.map(|e| e.pad.clone()),
                last_note: last.map(brief),
                claimed: doing
                    .iter()
                    .filter(|e| e.assignee.as_deref() == Some(author.as_str()))
                    .map(brief)
                    .collect(),
                open_questions: questions
                    .iter()
                    .filter(|e| e.author == author && e.answer.is_none())
                    .map(brief)
                    .collect(),
                author,
            });
        }
        seen.sort_by(|a, b| b.last_seen.cmp(&a.last_seen));
        Ok(AgentListResult {
            agents: self.0.agents.infos(),
            seen,
        })
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, a2a::CallError> + Send + 'static,
) -> std::result::Result<T, a2a::CallError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(format!("the call to the agent panicked: {e}").into()))
}
