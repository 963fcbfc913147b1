//! Reaching agents: `agent.add`, `agent.list` (the roster), `agent.remove`,
//! `agent.deliveries`, and the dispatcher that carries addressed notes to
//! A2A agents and brings what they say back into the thread.
//!
//! A conversation (`agents::conversation`, where its states and transitions
//! are) is one addressed note and one agent. The store holds what is to be
//! delivered, written with each note (`deliveries`: the note itself, and
//! each reply to pass on); the dispatcher here takes those messages into
//! their conversations (`take_waiting`), sends each conversation's outbox
//! one message at a time (non-blocking sends, the note's text as it is
//! now: a deleted note is not sent), polls the task the agent answers
//! with, and carries out what the conversation's transitions say: replies
//! authored by the agent in the thread, or a question to the person when a
//! note cannot be delivered (one open question per agent). A reply by the
//! person to the agent's question goes back on the same task (and where
//! the server opens a new task for it, as FastA2A does, the new task is
//! followed). Each conversation's state is saved in the store when it
//! changes, so a restarted engine picks up where it was; replies carry
//! `meta.a2a` = {task, state}, and a reply already in the thread is not
//! posted again.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::Engine;
use crate::agents::a2a;
use crate::agents::conversation::{Effect, Event, Post, DROP, MAX_POLL, RETRY};
use crate::agents::{Agents, Conversation, Registered};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model::{self, NEEDS_EYES};
use crate::protocol::*;
use crate::storage::{DeliveryRow, Storage};

/// Whether the conversation of `entry` with `agent` must wait for a look
/// to end: it is being looked at, or its agent (or everyone) has as many
/// looks going as allowed.
fn busy(out: &HashMap<tokio::task::Id, (String, String)>, entry: &str, agent: &str) -> bool {
    out.len() >= STEPS
        || out.values().filter(|(_, a)| a == agent).count() >= STEPS_PER_AGENT
        || out.values().any(|(e, a)| e == entry && a == agent)
}

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

/// The registry of the engine's data directory, with the conversations
/// the store holds; a registry file still holding deliveries (from before
/// the store kept them) has them moved to the store.
pub(super) async fn open(config: &super::Config, store: &dyn Storage) -> Result<Agents> {
    let (agents, old) = Agents::open(&config.data_dir)?;
    let mut conversations = Vec::new();
    for row in store.conversations().await? {
        let Some(state) = row.state else { continue };
        match serde_json::from_str::<Conversation>(&state) {
            Ok(c) => conversations.push(c),
            Err(e) => tracing::warn!("a stored delivery of {} cannot be read: {e}", row.entry),
        }
    }
    if !old.is_empty() {
        let now = wall_ms();
        for c in &old {
            store.save_conversation(&stored(c), None, now).await?;
        }
        tracing::info!(
            "moved {} deliveries from {} to the store",
            old.len(),
            crate::agents::FILE
        );
        conversations.extend(old);
        agents.registry.rewrite()?;
    }
    agents.conversations.load(conversations);
    Ok(agents)
}

/// A conversation as the store keeps it (its note's row).
fn stored(c: &Conversation) -> DeliveryRow {
    DeliveryRow {
        entry: c.delivery.entry.clone(),
        agent: c.delivery.agent.clone(),
        root: c.delivery.entry.clone(),
        pad: c.delivery.pad.clone(),
        state: Some(serde_json::to_string(c).expect("a conversation serializes")),
        live: c.is_live(),
    }
}

impl Engine {
    pub async fn agent_add(&self, p: AgentAddParams, by: &str) -> Result<AgentResult> {
        let name = model::agent_name("name", &p.name)?;
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
        // Registered again: what could not be sent is tried at once, and a
        // later failure asks afresh.
        self.0.agents.give_ups.lock().await.remove(&name);
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

    pub async fn agent_remove(&self, p: AgentNameParams) -> Result<AgentRemoveResult> {
        let name = model::author("name", &p.name)?;
        if !p.drop_pending && self.is_registered_agent(&name) {
            // Waiting rows first: the dispatcher may take one into its
            // conversation between the two reads (a row only ever goes from
            // waiting to taken), so read in that order and count each once.
            let waiting = self
                .db()
                .deliveries_waiting(std::slice::from_ref(&name))
                .await?;
            let live = self.db().conversations().await?;
            let unfinished: std::collections::HashSet<(&str, &str)> = waiting
                .iter()
                .chain(
                    live.iter()
                        .filter(|r| r.agent == name && r.live && r.entry == r.root),
                )
                .map(|r| (r.root.as_str(), r.entry.as_str()))
                .collect();
            let unfinished = unfinished.len();
            if unfinished > 0 {
                return Err(Error::Conflict {
                    message: format!(
                        "agent '{name}' has {unfinished} unfinished deliveries (notes handed to it, or replies waiting to reach it); removing it drops them. Call again with drop_pending: true (pad agent rm {name} --drop-pending), or wait until agent.deliveries shows them done."
                    ),
                    expected: None,
                    actual: None,
                });
            }
        }
        let removed = self.0.agents.remove(&name)?;
        let dropped = if removed {
            self.db().drop_agent_deliveries(&name).await?
        } else {
            0
        };
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

    /// The deliveries of a pad or a note, as the store has them (a team's
    /// engines see the same); a note not yet taken up is `pending`.
    pub async fn deliveries(
        &self,
        p: DeliveriesParams,
        guard: &Guard,
        caller: Option<&str>,
    ) -> Result<DeliveriesResult> {
        let rows = self
            .db()
            .deliveries(p.pad.as_deref(), p.entry.as_deref())
            .await?;
        // One not begun is shown for an agent registered here, and to the
        // agent it is for (Agent Zero's plugin asks whether a note was
        // handed to it: its writer's grant named it); a name nobody
        // registered has none for anyone else.
        let deliveries = rows
            .into_iter()
            .filter(|r| guard.covers(&r.pad))
            .filter(|r| {
                r.state.is_some()
                    || self.is_registered_agent(&r.agent)
                    || caller.is_some_and(|c| c.eq_ignore_ascii_case(&r.agent))
            })
            .map(|r| {
                r.state
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Conversation>(s).ok())
                    .map(|c| c.delivery)
                    .unwrap_or_else(|| Delivery {
                        entry: r.entry,
                        pad: r.pad,
                        agent: r.agent,
                        state: DeliveryState::Pending,
                        detail: None,
                        task: None,
                        question: None,
                        attempts: 0,
                        updated_at: model::fmt_time(self.now()),
                    })
            })
            .collect();
        Ok(DeliveriesResult { deliveries })
    }

    /// Whether `name` is a registered A2A agent.
    pub fn is_registered_agent(&self, name: &str) -> bool {
        self.0.agents.registry.get(name).is_some()
    }

    /// Says that a connection speaks as `author` until the guard drops.
    pub fn here(&self, author: &str) -> crate::agents::Here {
        self.0.agents.presence.here(author, self.now())
    }

    /// Notes a call by `author` (for the roster's "last seen").
    pub fn seen(&self, author: &str) {
        self.0.agents.presence.seen(author, self.now());
    }

    /// Wakes the dispatcher for a committed entry that brought deliveries
    /// (their rows committed with it).
    pub(super) fn agents_notice(&self, handed: bool) {
        if handed {
            self.0.agents.wake.notify_one();
        }
    }

    /// Takes the messages waiting in the store into their conversations:
    /// a note starts one, a reply goes into its note's; a message whose
    /// entry is gone is forgotten. Messages of a conversation being looked
    /// at (`looking`: note and agent) wait for the next turn: whether any
    /// did (or the store could not be read) is returned.
    async fn take_waiting(&self, looking: &[(String, String)]) -> bool {
        let agents = self.0.agents.registry.names();
        if agents.is_empty() {
            return false;
        }
        let waiting = match self.db().deliveries_waiting(&agents).await {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("cannot read the deliveries waiting: {e}");
                return true;
            }
        };
        let now = wall_ms();
        let mut left = false;
        for row in waiting {
            if looking
                .iter()
                .any(|(e, a)| *e == row.root && *a == row.agent)
            {
                left = true;
                continue;
            }
            let entry = match self.db().get(&row.entry).await {
                Ok(e) => e,
                Err(Error::NotFound { .. }) => {
                    // Deleted (or purged) before it could be sent.
                    let _ = self.db().drop_delivery(&row).await;
                    continue;
                }
                Err(e) => {
                    tracing::warn!("cannot read {} to deliver it: {e}", row.entry);
                    continue;
                }
            };
            let c = if row.entry == row.root {
                Conversation::start(&entry, &row.agent, now)
            } else {
                let Some(mut c) = self
                    .0
                    .agents
                    .conversations
                    .conversation(&row.root, &row.agent)
                else {
                    let _ = self.db().drop_delivery(&row).await;
                    continue;
                };
                let parent: String = entry.reply_to.clone().map(String::from).unwrap_or_default();
                c.heard(&entry, &parent, now);
                // The person's word on the agent's give-up question: the
                // next failure asks afresh.
                let mut open = self.0.agents.give_ups.lock().await;
                if open.get(&row.agent) == Some(&parent) {
                    open.remove(&row.agent);
                }
                c
            };
            match self
                .db()
                .save_conversation(&stored(&c), Some(&row.entry), self.now())
                .await
            {
                Ok(()) => self.0.agents.conversations.begun(c),
                Err(e) => tracing::warn!("cannot save the delivery of {}: {e}", row.entry),
            }
        }
        left
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
        // Waiting messages are read when a note brought some (a wake), when
        // some were left for a look to end, and every `MAX_POLL` (another
        // engine of a team may have written some) — not after every look.
        let mut take = true;
        let mut taken_at = Instant::now();
        loop {
            if take || taken_at.elapsed() >= MAX_POLL {
                let looking: Vec<(String, String)> = out.values().cloned().collect();
                take = self.take_waiting(&looking).await;
                taken_at = Instant::now();
            }
            for c in self.0.agents.conversations.due(wall_ms()) {
                if busy(&out, &c.delivery.entry, &c.delivery.agent) {
                    continue;
                }
                let key = (c.delivery.entry.clone(), c.delivery.agent.clone());
                let engine = self.clone();
                let task = running.spawn(async move { engine.step(c).await });
                out.insert(task.id(), key);
            }
            let wait = match self
                .0
                .agents
                .conversations
                .next_due(&|e, a| busy(&out, e, a))
            {
                Some(at) => Duration::from_millis((at - wall_ms()).clamp(20, 5000) as u64),
                None => MAX_POLL,
            };
            tokio::select! {
                _ = stop.changed() => return,
                _ = self.0.agents.wake.notified() => take = true,
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
        let before = c.delivery.clone();
        let kept = c.clone();
        let Some(agent) = self.0.agents.registry.get(&c.delivery.agent) else {
            return;
        };
        let now = wall_ms();
        if let Some(at) = self.0.agents.limit.room(&agent.name, now) {
            c.next_at = at;
            return self.keep(c, &kept).await;
        }
        self.refresh_outbox(&mut c).await;
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
            if c.delivery != before {
                c.delivery.updated_at = model::fmt_time(self.now());
                self.0.bus.delivery(&c.delivery.pad, c.delivery.clone());
            }
            return self.keep(c, &kept).await;
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
            self.carry_out(effect, &mut c, &agent.name).await;
        }
        if c.delivery != before {
            c.delivery.updated_at = model::fmt_time(self.now());
            self.0.bus.delivery(&c.delivery.pad, c.delivery.clone());
        }
        self.keep(c, &kept).await
    }

    /// What goes out is the note as it is now: edited, its new text;
    /// deleted (or purged), nothing.
    async fn refresh_outbox(&self, c: &mut Conversation) {
        while let Some(out) = c.outbox.first() {
            match self.db().get(&out.entry).await {
                Ok(e) => {
                    c.outbox[0].text = e.content;
                    break;
                }
                Err(Error::NotFound { .. }) => {
                    c.outbox.remove(0);
                    c.delivery.detail = Some("not sent: the note was deleted".into());
                    if c.outbox.is_empty() && c.delivery.task.is_none() {
                        c.delivery.state = DeliveryState::Failed;
                    }
                }
                Err(e) => {
                    tracing::warn!("cannot read {} to send it: {e}", out.entry);
                    break;
                }
            }
        }
    }

    /// One effect of the conversation's state machine, carried out.
    async fn carry_out(&self, effect: Effect, c: &mut Conversation, name: &str) {
        match effect {
            Effect::Post(p) => {
                let id = self.post(c, &p).await;
                if id.is_some() {
                    self.0.agents.limit.replied(name, wall_ms());
                }
                c.posted(&p, id);
            }
            Effect::AskPerson(text) => {
                // One question per agent: a note failing beside one
                // already asked about waits for the same answer.
                let mut open = self.0.agents.give_ups.lock().await;
                let asked = match open.get(name) {
                    Some(q) => Some(q.clone()),
                    None => {
                        let q = self.ask_about(c, text).await;
                        if let Some(q) = &q {
                            open.insert(name.to_owned(), q.clone());
                        }
                        q
                    }
                };
                drop(open);
                if let Some(q) = asked {
                    c.asked(q);
                }
            }
        }
    }

    /// Keeps a conversation after a look: in memory, and in the store when
    /// what is stored of it changed (`kept`: as stored before).
    async fn keep(&self, c: Conversation, kept: &Conversation) {
        if !c.stores_as(kept) {
            if let Err(e) = self
                .db()
                .save_conversation(&stored(&c), None, self.now())
                .await
            {
                tracing::warn!("cannot save the delivery of {}: {e}", c.delivery.entry);
            }
        }
        self.0.agents.conversations.put(c);
    }

    fn reached(&self, agent: &Registered, error: Option<String>) {
        if let Err(e) = self.0.agents.registry.reached(&agent.name, error) {
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
                None,
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
                None,
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
