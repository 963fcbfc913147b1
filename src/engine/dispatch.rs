//! The dispatcher: carries addressed notes to A2A agents and brings what
//! they say back into the thread.
//!
//! A conversation (`agents::conversation`, where its states and transitions
//! are) is one addressed note and one agent. The store holds what is to be
//! delivered, written with each note (`deliveries`: the note itself, and
//! each reply to pass on); the dispatcher takes those messages into their
//! conversations (`take_waiting`), sends each conversation's outbox one
//! message at a time (non-blocking sends, the note's text as it is now: a
//! deleted note is not sent), polls the task the agent answers with, and
//! carries out what the conversation's transitions say: replies authored by
//! the agent in the thread, or a question to the person when a note cannot
//! be delivered (one open question per agent). A reply by the person to the
//! agent's question goes back on the same task (and where the server opens
//! a new task for it, as FastA2A does, the new task is followed). Each
//! conversation's state is saved in the store when it changes, so a
//! restarted engine picks up where it was; replies carry `meta.a2a` =
//! {task, state}, and a reply already in the thread is not posted again.
//!
//! The dispatcher is its own part: the agents, the store and the engine's
//! settings it was given, and `Said` — the one way it writes. What an
//! agent says is an entry the dispatcher makes itself (author, thread,
//! kind, meta), never a client's call made in the person's name: it
//! passes no access check because it asks none, and brings no hand-offs
//! (what agents and the engine write is said to the person, never passed
//! on).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::Engine;
use crate::agents::a2a;
use crate::agents::conversation::{Effect, Event, Post, DROP, MAX_POLL, RETRY};
use crate::agents::{Agents, Conversation, Registered};
use crate::error::{Error, Result};
use crate::model::{self, Entry, Kind, NEEDS_EYES};
use crate::protocol::{Delivery, DeliveryState};
use crate::storage::{DeliveryRow, NewEntry, Storage};

/// How the dispatcher writes: an entry it made, with everything a write
/// tells (subscribers, an `ask` waiting for it), and a delivery that moved.
/// The engine is the one that does (`impl Said for Engine`, below).
pub(super) trait Said: Send + Sync + 'static {
    fn post(&self, entry: NewEntry) -> impl Future<Output = Result<Entry>> + Send;
    fn delivery_moved(&self, delivery: &Delivery);
    /// The engine's clock (entries' times; deliveries are scheduled by the wall).
    fn now(&self) -> i64;
}

/// The dispatcher's writes: an entry it made (its content and author
/// checked there) goes in as any other does (`Engine::insert`: subscribers
/// told, an `ask` waiting for it answered), and a delivery that moved is
/// told to subscribers.
impl Said for Engine {
    fn post(&self, entry: NewEntry) -> impl Future<Output = Result<Entry>> + Send {
        self.insert(entry)
    }

    fn delivery_moved(&self, delivery: &Delivery) {
        self.0.bus.delivery(&delivery.pad, delivery.clone());
    }

    fn now(&self) -> i64 {
        Engine::now(self)
    }
}

/// Looks at conversations running at once, in all and with one agent: a
/// look waits on the agent (up to its 15 s time-out), so one slow agent
/// delays only its own conversations.
const STEPS: usize = 32;
const STEPS_PER_AGENT: usize = 4;

/// The most kept of why a call to an agent failed.
const MAX_WHY: usize = 500;

pub(super) struct Dispatcher<S> {
    pub agents: Arc<Agents>,
    pub store: Arc<dyn Storage>,
    pub said: S,
    /// How long a note may fail to reach its agent before the person is asked.
    pub give_up: Duration,
    /// The most characters an entry holds (an answer is cut to it: `fold`).
    pub max_chars: usize,
}

/// Whether the conversation of `entry` with `agent` must wait for a look
/// to end: it is being looked at, or its agent (or everyone) has as many
/// looks going as allowed.
fn busy(out: &HashMap<tokio::task::Id, (String, String)>, entry: &str, agent: &str) -> bool {
    out.len() >= STEPS
        || out.values().filter(|(_, a)| a == agent).count() >= STEPS_PER_AGENT
        || out.values().any(|(e, a)| e == entry && a == agent)
}

/// Wall-clock milliseconds: deliveries are scheduled in real time, whatever
/// clock the engine's entries use.
pub(super) fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A conversation as the store keeps it (its note's row).
pub(super) fn stored(c: &Conversation) -> DeliveryRow {
    DeliveryRow {
        entry: c.delivery.entry.clone(),
        agent: c.delivery.agent.clone(),
        root: c.delivery.entry.clone(),
        pad: c.delivery.pad.clone(),
        state: Some(serde_json::to_string(c).expect("a conversation serializes")),
        live: c.is_live(),
    }
}

impl<S: Said> Dispatcher<S> {
    /// Carries addressed notes to their agents until `stop`. Conversations
    /// are looked at concurrently — at most `STEPS_PER_AGENT` of one agent
    /// and `STEPS` in all, each conversation by one look at a time — so a
    /// hanging agent holds up only its own. A stop returns at once: calls
    /// still out are left to their time-out, their conversations saved as
    /// they were before the look.
    pub async fn run(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
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
            for c in self.agents.conversations.due(wall_ms()) {
                if busy(&out, &c.delivery.entry, &c.delivery.agent) {
                    continue;
                }
                let key = (c.delivery.entry.clone(), c.delivery.agent.clone());
                let me = self.clone();
                let task = running.spawn(async move { me.step(c).await });
                out.insert(task.id(), key);
            }
            let wait = match self.agents.conversations.next_due(&|e, a| busy(&out, e, a)) {
                Some(at) => Duration::from_millis((at - wall_ms()).clamp(20, 5000) as u64),
                None => MAX_POLL,
            };
            tokio::select! {
                _ = stop.changed() => return,
                _ = self.agents.wake.notified() => take = true,
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

    /// Takes the messages waiting in the store into their conversations:
    /// a note starts one, a reply goes into its note's; a message whose
    /// entry is gone is forgotten. Messages of a conversation being looked
    /// at (`looking`: note and agent) wait for the next turn: whether any
    /// did (or the store could not be read) is returned.
    async fn take_waiting(&self, looking: &[(String, String)]) -> bool {
        let agents = self.agents.registry.names();
        if agents.is_empty() {
            return false;
        }
        let waiting = match self.store.deliveries_waiting(&agents).await {
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
            let entry = match self.store.get(&row.entry).await {
                Ok(e) => e,
                Err(Error::NotFound { .. }) => {
                    // Deleted (or purged) before it could be sent.
                    let _ = self.store.drop_delivery(&row).await;
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
                    .agents
                    .conversations
                    .conversation(&row.root, &row.agent)
                else {
                    let _ = self.store.drop_delivery(&row).await;
                    continue;
                };
                let parent: String = entry.reply_to.clone().map(String::from).unwrap_or_default();
                c.heard(&entry, &parent, now);
                // The person's word on the agent's give-up question: the
                // next failure asks afresh.
                let mut open = self.agents.give_ups.lock().await;
                if open.get(&row.agent) == Some(&parent) {
                    open.remove(&row.agent);
                }
                c
            };
            match self
                .store
                .save_conversation(&stored(&c), Some(&row.entry), self.said.now())
                .await
            {
                Ok(()) => self.agents.conversations.begun(c),
                Err(e) => tracing::warn!("cannot save the delivery of {}: {e}", row.entry),
            }
        }
        left
    }

    /// One look at one conversation: send what waits, or read its task;
    /// then what it found goes through the conversation's state machine
    /// (`agents::conversation`), whose effects are carried out here.
    async fn step(&self, mut c: Conversation) {
        let before = c.delivery.clone();
        let kept = c.clone();
        let Some(agent) = self.agents.registry.get(&c.delivery.agent) else {
            return;
        };
        let now = wall_ms();
        if let Some(at) = self.agents.limit.room(&agent.name, now) {
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
                c.delivery.updated_at = model::fmt_time(self.said.now());
                self.said.delivery_moved(&c.delivery);
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
        let give_up = self.give_up.as_millis() as i64;
        for effect in c.on(event, now, give_up) {
            self.carry_out(effect, &mut c, &agent.name).await;
        }
        if c.delivery != before {
            c.delivery.updated_at = model::fmt_time(self.said.now());
            self.said.delivery_moved(&c.delivery);
        }
        self.keep(c, &kept).await
    }

    /// What goes out is the note as it is now: edited, its new text;
    /// deleted (or purged), nothing.
    async fn refresh_outbox(&self, c: &mut Conversation) {
        while let Some(out) = c.outbox.first() {
            match self.store.get(&out.entry).await {
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
                    self.agents.limit.replied(name, wall_ms());
                }
                c.posted(&p, id);
            }
            Effect::AskPerson(text) => {
                // One question per agent: a note failing beside one
                // already asked about waits for the same answer.
                let mut open = self.agents.give_ups.lock().await;
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
                .store
                .save_conversation(&stored(&c), None, self.said.now())
                .await
            {
                tracing::warn!("cannot save the delivery of {}: {e}", c.delivery.entry);
            }
        }
        self.agents.conversations.put(c);
    }

    fn reached(&self, agent: &Registered, error: Option<String>) {
        if let Err(e) = self.agents.registry.reached(&agent.name, error) {
            tracing::warn!("cannot save the agent's state: {e}");
        }
    }

    /// Asks the person, as the engine, whether to try a note again;
    /// returns the question's id.
    async fn ask_about(&self, c: &Conversation, text: String) -> Option<String> {
        let question = NewEntry {
            kind: Kind::Question,
            tags: vec![NEEDS_EYES.into()],
            choices: vec![RETRY.into(), DROP.into()],
            ..self.reply(c, "engine", text, c.delivery.entry.clone())
        };
        match self.checked_post(question).await {
            Ok(q) => Some(q.id),
            Err(e) => {
                tracing::warn!("cannot ask about an undelivered note: {e}");
                None
            }
        }
    }

    /// Posts what the agent said as one reply in the thread, authored by it,
    /// cut to what an entry may hold (`fold`). Not again if a reply for this
    /// task and state is already there (a restart between posting and
    /// saving). Returns the entry's id.
    async fn post(&self, c: &mut Conversation, p: &Post) -> Option<String> {
        let mark = json!({"task": p.task, "state": p.state});
        let agent = c.delivery.agent.clone();
        if let Ok((_, replies)) = self
            .store
            .thread(&c.delivery.entry, crate::protocol::MAX_THREAD_REPLIES)
            .await
        {
            if let Some(e) = replies.iter().find(|e| {
                e.author == agent && e.meta.as_ref().and_then(|m| m.get("a2a")) == Some(&mark)
            }) {
                return Some(e.id.clone());
            }
        }
        let content = fold(&p.text, self.max_chars, &agent, &p.task);
        if content.trim().is_empty() {
            return None;
        }
        let mut meta = Map::new();
        meta.insert("a2a".into(), mark);
        // The task id and state are the agent's words: held to what any
        // entry's meta may be.
        let meta = match super::meta_text(&meta) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!("cannot post {agent}'s reply: {e}");
                return None;
            }
        };
        let reply = NewEntry {
            kind: p.kind,
            tags: if p.needs_eyes {
                vec![NEEDS_EYES.into()]
            } else {
                Vec::new()
            },
            meta: Some(meta),
            ..self.reply(c, &agent, content, c.reply_to.clone())
        };
        match self.checked_post(reply).await {
            Ok(e) => {
                c.thread.push(e.id.clone());
                Some(e.id)
            }
            Err(e) => {
                tracing::warn!("cannot post {agent}'s reply: {e}");
                None
            }
        }
    }

    /// A note by `author` replying to `parent` in the conversation's pad.
    fn reply(&self, c: &Conversation, author: &str, content: String, parent: String) -> NewEntry {
        NewEntry {
            pad: c.delivery.pad.clone(),
            author: author.to_owned(),
            content,
            reply_to: Some(parent),
            now: self.said.now(),
            ..NewEntry::default()
        }
    }

    /// Posts `entry` once it holds to what any entry must (its content's
    /// length, its author's name: an agent's name comes from `agents.json`,
    /// which a person may edit by hand).
    async fn checked_post(&self, mut entry: NewEntry) -> Result<Entry> {
        model::content("content", &entry.content, self.max_chars)?;
        entry.author = model::author("author", &entry.author)?;
        self.said.post(entry).await
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
    // largest it can be. A limit too small for the line keeps the text alone.
    let line = said(total).chars().count();
    if line >= max_chars {
        return text.chars().take(max_chars).collect();
    }
    let room = max_chars - line;
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
        // However small the limit, never past it.
        for max in [1, 40, 90, 200] {
            assert!(
                fold(&long, max, "helper", "t1").chars().count() <= max,
                "{max}"
            );
        }
        assert!(
            folded.ends_with(&format!(
                "[… {cut} more characters cut: a note holds at most 20000. The whole answer is with helper (task t1).]"
            )),
            "{}",
            &folded[room..]
        );
    }
}
