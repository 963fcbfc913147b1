//! Reaching agents: `agent.add`, `agent.list` (the roster), `agent.remove`,
//! `agent.deliveries`, and the dispatcher that carries addressed notes to
//! A2A agents and brings what they say back into the thread.
//!
//! A conversation (`agents::conversation`, where its states and transitions
//! are) is one addressed note and one agent. The dispatcher here sends its
//! outbox one message at a time (non-blocking sends), polls the task the
//! agent answers with, and carries out what the conversation's transitions
//! say: replies authored by the agent in the thread, or a question to the
//! person when a note cannot be delivered. A reply by the person to the
//! agent's question goes back on the same task (and where the server opens
//! a new task for it, as FastA2A does, the new task is followed).
//! Everything is in `agents.json`, so a restarted engine picks up where it
//! was; replies carry `meta.a2a` = {task, state}, and a reply already in
//! the thread is not posted again.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::Engine;
use crate::agents::a2a;
use crate::agents::conversation::{Effect, Event, Post, DROP, MAX_POLL, RETRY};
use crate::agents::{Conversation, Registered};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model::{self, Kind, NEEDS_EYES};
use crate::protocol::*;

/// Looks at conversations running at once, in all and with one agent: a
/// look waits on the agent (up to its 15 s time-out), so one slow agent
/// delays only its own conversations.
const STEPS: usize = 32;
const STEPS_PER_AGENT: usize = 4;

/// Wall-clock milliseconds: deliveries are scheduled in real time, whatever
/// clock the engine's entries use.
fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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
            .infos(&|_| true)
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

    pub fn deliveries(&self, p: DeliveriesParams, guard: &Guard) -> Result<DeliveriesResult> {
        let mut deliveries = self
            .0
            .agents
            .deliveries(p.pad.as_deref(), p.entry.as_deref());
        deliveries.retain(|d| guard.covers(&d.pad));
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
    pub(super) fn agents_notice(&self, e: &model::Entry, guard: &Guard) {
        if e.to.is_empty() && e.reply_to.is_none() {
            return;
        }
        match self
            .0
            .agents
            .noticed(e, wall_ms(), &|agent| guard.may_hand_to(agent))
        {
            Ok(true) => self.0.agents.wake.notify_one(),
            Ok(false) => {}
            Err(err) => tracing::warn!("cannot record the delivery of {}: {err}", e.id),
        }
    }

    /// Carries addressed notes to their agents until `stop`. Conversations
    /// are looked at concurrently — at most `STEPS_PER_AGENT` of one agent
    /// and `STEPS` in all, each conversation by one look at a time — so a
    /// hanging agent holds up only its own. A stop returns at once: calls
    /// still out are left to their time-out, their conversations saved as
    /// they were before the look.
    pub(super) async fn run_agents(self, mut stop: watch::Receiver<bool>) {
        let mut running: JoinSet<()> = JoinSet::new();
        let mut out: HashMap<tokio::task::Id, (String, String)> = HashMap::new();
        loop {
            let now = wall_ms();
            for c in self.0.agents.due(now) {
                let key = (c.delivery.entry.clone(), c.delivery.agent.clone());
                let of_agent = out.values().filter(|(_, a)| *a == key.1).count();
                if out.values().any(|k| *k == key)
                    || of_agent >= STEPS_PER_AGENT
                    || out.len() >= STEPS
                {
                    continue;
                }
                let engine = self.clone();
                let task = running.spawn(async move { engine.step(c).await });
                out.insert(task.id(), key);
            }
            // Waiting for a look to end says when the rest may go.
            let busy = |e: &str, a: &str| {
                out.len() >= STEPS
                    || out.values().filter(|(_, oa)| oa == a).count() >= STEPS_PER_AGENT
                    || out.values().any(|(oe, oa)| oe == e && oa == a)
            };
            let wait = match self.0.agents.next_due(&busy) {
                Some(at) => Duration::from_millis((at - wall_ms()).clamp(20, 5000) as u64),
                None => MAX_POLL,
            };
            tokio::select! {
                _ = stop.changed() => return,
                _ = self.0.agents.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
                Some(done) = running.join_next_with_id(), if !running.is_empty() => {
                    // Done, or panicked: either way its conversation is free.
                    let id = match done {
                        Ok((id, ())) => id,
                        Err(e) => e.id(),
                    };
                    out.remove(&id);
                }
            }
        }
    }

    /// One look at one conversation: send what waits, or read its task;
    /// then what it found goes through the conversation's state machine
    /// (`agents::conversation`), whose effects are carried out here.
    async fn step(&self, mut c: Conversation) {
        let read_outbox = c.outbox.len();
        let before = c.delivery.clone();
        let Some(agent) = self.0.agents.registered(&c.delivery.agent) else {
            return;
        };
        let now = wall_ms();
        if let Some(at) = self.0.agents.reply_room(&agent.name, now) {
            c.next_at = at;
            if let Err(e) = self.0.agents.put(c, read_outbox) {
                tracing::warn!("cannot save a delivery: {e}");
            }
            return;
        }
        let ep = agent.endpoint();
        let event = if let Some(out) = c.outbox.first().cloned() {
            let (id, ctx) = (
                format!("pad-{}-{}", out.entry, c.delivery.agent),
                c.context.clone(),
            );
            let on_task = out.on_task.clone();
            match blocking(move || a2a::send(&ep, &id, &out.text, &ctx, on_task.as_deref())).await {
                Ok(reply) => Event::Accepted(reply),
                Err(e) => Event::NotSent {
                    why: e.why,
                    refused: e.refused,
                },
            }
        } else if let Some(task) = c.delivery.task.clone() {
            match blocking(move || a2a::get(&ep, &task)).await {
                Ok(t) => Event::Polled(t),
                Err(e) if e.lost => Event::Lost,
                Err(e) if e.refused => Event::NotSent {
                    why: e.why,
                    refused: true,
                },
                Err(e) => Event::Unreachable(e.why),
            }
        } else {
            // Nothing to send and no task: finished.
            c.next_at = i64::MAX;
            if let Err(e) = self.0.agents.put(c, read_outbox) {
                tracing::warn!("cannot save a delivery: {e}");
            }
            return;
        };
        self.reached(
            &agent,
            match &event {
                Event::NotSent { why, .. } | Event::Unreachable(why) => Some(why.clone()),
                _ => None,
            },
        );
        let give_up = self.0.config.agent_give_up.as_millis() as i64;
        for effect in c.on(event, now, give_up) {
            match effect {
                Effect::Post(p) => {
                    let id = self.post(&mut c, &p).await;
                    if id.is_some() {
                        self.0.agents.replied(&agent.name, wall_ms());
                    }
                    c.posted(&p, id);
                }
                Effect::AskPerson(text) => {
                    if let Some(q) = self.ask_about(&c, text).await {
                        c.asked(q);
                    }
                }
            }
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

    /// Asks the person, as the engine, whether to try a note again;
    /// returns the question's id.
    async fn ask_about(&self, c: &Conversation, text: String) -> Option<String> {
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
                &Guard::owner(),
            )
            .await;
        match question {
            Ok(q) => Some(q.id),
            Err(e) => {
                tracing::warn!("cannot ask about an undelivered note: {e}");
                None
            }
        }
    }

    /// Posts what the agent said as one reply in the thread, authored by it,
    /// cut to what an entry may hold (`fold`). Not
    /// again if a reply for this task and state is already there (a restart
    /// between posting and saving). Returns the (first) entry's id.
    async fn post(&self, c: &mut Conversation, p: &Post) -> Option<String> {
        let mark = json!({"task": p.task, "state": p.state});
        if let Ok(thread) = self
            .thread(
                IdParams {
                    id: c.delivery.entry.clone(),
                },
                &Guard::owner(),
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
        let content = fold(
            &p.text,
            self.0.config.max_content_chars,
            &c.delivery.agent,
            &p.task,
        );
        if content.trim().is_empty() {
            return None;
        }
        let mut meta = Map::new();
        meta.insert("a2a".into(), mark);
        let added = self
            .add(
                AddParams {
                    pad: c.delivery.pad.clone(),
                    content,
                    author: Some(c.delivery.agent.clone()),
                    kind: Some(p.kind),
                    tags: if p.needs_eyes {
                        vec![NEEDS_EYES.into()]
                    } else {
                        Vec::new()
                    },
                    reply_to: Some(c.reply_to.clone()),
                    meta: Some(meta),
                    ..Default::default()
                },
                None,
                &Guard::owner(),
            )
            .await;
        match added {
            Ok(e) => {
                c.thread.push(e.id.clone());
                Some(e.id)
            }
            Err(e) => {
                tracing::warn!("cannot post {}'s reply: {e}", c.delivery.agent);
                None
            }
        }
    }

    /// The roster: registered agents, and every author seen within
    /// `seen_within` (default a day) with what it is doing.
    pub async fn agent_list(&self, p: AgentListParams, guard: &Guard) -> Result<AgentListResult> {
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
                guard,
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
                guard,
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
                guard,
            )
            .await?
            .entries;
        // To a token, the roster holds what its pads show: the agents its
        // grant names (their last error, which may quote any pad, left
        // out), and the authors who wrote in its pads — not who else is
        // connected.
        let scoped = guard.grant().is_some();
        let mut registered = self.0.agents.names();
        registered.retain(|a| guard.may_hand_to(a));
        let mut presence = self.0.agents.presence();
        if scoped {
            presence.retain(|a, _| recent.iter().any(|e| e.author == *a));
        }
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
        let mut agents = self.0.agents.infos(&|pad| guard.covers(pad));
        agents.retain(|a| registered.contains(&a.name));
        if scoped {
            for a in &mut agents {
                a.error = None;
            }
        }
        Ok(AgentListResult { agents, seen })
    }
}

/// What an agent said, as one note's content: cut when longer than a note
/// may be, with a line saying how much went and where the whole is. One
/// answer is one note, however long (a 4 MB answer once became ~1,000).
fn fold(text: &str, max_chars: usize, agent: &str, task: &str) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let whole = if task.is_empty() {
        agent.to_string()
    } else {
        format!("{agent} (task {task})")
    };
    let said = |cut: usize| {
        format!(
            "\n\n[… {cut} more characters cut: a note holds at most {max_chars}. The whole answer is with {whole}.]"
        )
    };
    // The line's own length depends on the number in it: measure with the
    // largest it can be.
    let room = max_chars.saturating_sub(said(total).chars().count());
    let kept: String = text.chars().take(room).collect();
    format!("{kept}{}", said(total - room))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, a2a::CallError> + Send + 'static,
) -> std::result::Result<T, a2a::CallError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(format!("the call to the agent panicked: {e}").into()))
        .map_err(|mut e| {
            // What went wrong may quote the agent at length: the roster and
            // the delivery's detail keep the start of it.
            e.why = a2a::cut(&e.why, MAX_WHY);
            e
        })
}

/// The most kept of why a call to an agent failed.
const MAX_WHY: usize = 500;

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn a_long_answer_is_one_note_cut_to_the_limit_and_says_so() {
        assert_eq!(fold("short", 100, "helper", "t1"), "short");
        let long = "é".repeat(4_000_000);
        let folded = fold(&long, 20_000, "helper", "t1");
        assert_eq!(folded.chars().count(), 20_000);
        let room = folded.find("\n\n[…").unwrap();
        let cut = 4_000_000 - folded[..room].chars().count();
        assert!(
            folded.ends_with(&format!(
                "[… {cut} more characters cut: a note holds at most 20000. The whole answer is with helper (task t1).]"
            )),
            "{}",
            &folded[room..]
        );
    }
}
