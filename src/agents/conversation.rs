//! One addressed note's conversation with one A2A agent: its state and
//! every transition, pure — no I/O, no clock of its own.
//!
//! The dispatcher (`engine/dispatch.rs`) turns what happened in one look at
//! the agent into an `Event`, hands it to `Conversation::on`, and carries
//! out the `Effect`s it returns (posting the agent's words in the thread,
//! asking the person); what an effect produced comes back through
//! `posted` and `asked`. The person's words reach it through `heard`.
//!
//! A conversation sends its outbox one message at a time, then follows the
//! task the agent answers with — every 0.25 s, and after 10 s without a
//! change slower, up to every 2 s — and turns each change of the task's
//! state into at most one reply: a status line while it works, a question
//! tagged `needs_eyes` when it needs input, a result when it completes, a
//! note tagged `needs_eyes` when it fails. Failed sends are retried with
//! back-off; past the give-up time (at once for a refused token) the person
//! is asked whether to retry or drop.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::a2a::{Reply, Task};
use crate::model::{fmt_time, Entry, Kind};
use crate::protocol::{Delivery, DeliveryState};

/// The longest a live conversation waits between looks at its task.
pub const MAX_POLL: Duration = Duration::from_secs(2);
/// How often a task is looked at while it is young, or just changed.
const FIRST_POLL: Duration = Duration::from_millis(250);
/// Looks at `FIRST_POLL` before backing off: 10 s of quiet.
const QUICK_POLLS: u32 = 40;
/// The longest wait between two tries of a failing send.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Answers the person gives to "could not deliver": stop trying, or try again.
pub const DROP: &str = "drop";
pub const RETRY: &str = "retry";

/// A message waiting to go to the agent.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Outgoing {
    /// The entry it carries.
    pub entry: String,
    pub text: String,
    /// Continue this task (an answer to its question).
    pub on_task: Option<String>,
}

/// One addressed note's conversation with one agent, as stored.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Conversation {
    pub delivery: Delivery,
    /// The A2A context: the thread, `pad-<root id>` until the agent names its own.
    pub context: String,
    /// Entries of the thread that belong to this conversation: a reply to
    /// any of them by someone else is a follow-up for the agent.
    pub thread: Vec<String>,
    pub outbox: Vec<Outgoing>,
    /// The entry the agent's next reply answers.
    pub reply_to: String,
    /// When to try or look again (ms). Not stored: a conversation read
    /// back (an engine restarted) is looked at at once.
    #[serde(skip)]
    pub next_at: i64,
    /// Since when sending has failed (ms), for giving up.
    pub failing_since: Option<i64>,
    /// The task state last turned into a reply, and how many of the
    /// task's agent messages have been.
    pub posted_state: Option<String>,
    pub posted_messages: usize,
    /// How many polls in a row found nothing new (for backing off).
    #[serde(skip)]
    pub quiet_polls: u32,
    /// The last message the agent accepted: sent again, once, if the agent
    /// loses its task (a restart of an agent keeping tasks in memory).
    #[serde(default)]
    pub last_sent: Option<Outgoing>,
    /// Whether it was sent again already.
    #[serde(default)]
    pub resent: bool,
}

/// What one look at the agent found.
pub enum Event {
    /// It accepted the outbox's first message, answering with a task or at
    /// once with a message.
    Accepted(Reply),
    /// Sending failed (or, `refused`, it refused the token).
    NotSent { why: String, refused: bool },
    /// The task as it stands now.
    Polled(Task),
    /// It no longer knows the task (it restarted).
    Lost,
    /// Looking at the task failed.
    Unreachable(String),
}

/// A reply for the thread, authored by the agent, marked `{task, state}` so
/// it is never posted twice.
#[derive(Debug, PartialEq)]
pub struct Post {
    pub task: String,
    pub state: String,
    pub kind: Kind,
    pub text: String,
    pub needs_eyes: bool,
    /// Its id becomes the delivery's open question (`posted`).
    pub asks: bool,
}

/// What the dispatcher does for a transition.
#[derive(Debug, PartialEq)]
pub enum Effect {
    /// Post the agent's words in the thread, then call `posted`.
    Post(Post),
    /// Ask the person (as the engine, tagged `needs_eyes`, with the choices
    /// `RETRY` and `DROP`) whether to try again, then call `asked`.
    AskPerson(String),
}

/// The wait before the next try after `attempts` failures.
pub fn backoff(attempts: u32) -> i64 {
    let ms = 1000u64.saturating_mul(1 << attempts.min(10));
    ms.min(MAX_BACKOFF.as_millis() as u64) as i64
}

impl Conversation {
    /// A new conversation: the note `e` handed to `agent`, in the A2A
    /// context of its thread (`pad-<the note it answers, or its own id>`)
    /// until the agent names its own. A context is one agent's: another
    /// agent's conversation in the same thread has its own.
    pub fn start(e: &Entry, agent: &str, now: i64) -> Conversation {
        let context = format!("pad-{}", e.reply_to.as_deref().unwrap_or(&e.id));
        Conversation {
            delivery: Delivery {
                entry: e.id.clone(),
                pad: e.pad.clone(),
                agent: agent.to_string(),
                state: DeliveryState::Pending,
                detail: None,
                task: None,
                question: None,
                attempts: 0,
                updated_at: fmt_time(now),
            },
            context,
            thread: vec![e.id.clone()],
            outbox: vec![Outgoing {
                entry: e.id.clone(),
                text: e.content.clone(),
                on_task: None,
            }],
            reply_to: e.id.clone(),
            next_at: now,
            failing_since: None,
            posted_state: None,
            posted_messages: 0,
            quiet_polls: 0,
            last_sent: None,
            resent: false,
        }
    }

    pub fn is_live(&self) -> bool {
        !self.outbox.is_empty() || !self.delivery.state.finished()
    }

    /// Tries sending again at `now`, as if it had never failed (the person
    /// said retry, or registered the agent again).
    pub fn retry(&mut self, now: i64) {
        self.failing_since = None;
        self.delivery.state = DeliveryState::Pending;
        self.delivery.question = None;
        self.delivery.attempts = 0;
        self.next_at = now;
    }

    /// Someone other than the agent replied to `parent`, an entry of this
    /// conversation: the person's word on a note that could not be
    /// delivered (drop, or anything else to retry), or a follow-up for the
    /// agent — on the same task when it answers the agent's question.
    pub fn heard(&mut self, e: &Entry, parent: &str, now: i64) {
        if self.failing_since.is_some() && self.delivery.question.as_deref() == Some(parent) {
            if e.content.trim().eq_ignore_ascii_case(DROP) {
                self.outbox.clear();
                self.delivery.detail = Some("not delivered: dropped".into());
            } else {
                self.retry(now);
            }
            self.thread.push(e.id.clone());
            return;
        }
        let on_task = match (&self.delivery.question, &self.delivery.task) {
            (Some(q), Some(t)) if q == parent => Some(t.clone()),
            _ => None,
        };
        self.outbox.push(Outgoing {
            entry: e.id.clone(),
            text: e.content.clone(),
            on_task,
        });
        self.thread.push(e.id.clone());
        self.reply_to = e.id.clone();
        self.next_at = now;
        self.quiet_polls = 0;
    }

    /// Takes in what one look found; `give_up_ms` is how long a failing
    /// send is retried before the person is asked.
    pub fn on(&mut self, event: Event, now: i64, give_up_ms: i64) -> Vec<Effect> {
        match event {
            Event::Accepted(reply) => {
                if !self.outbox.is_empty() {
                    self.last_sent = Some(self.outbox.remove(0));
                }
                self.failing_since = None;
                self.delivery.attempts = 0;
                self.delivery.question = None;
                self.delivery.detail = None;
                match reply {
                    Reply::Task(t) => self.absorb(t, now),
                    Reply::Message(text) => {
                        self.delivery.state = DeliveryState::Done;
                        self.posted_state = Some("completed".into());
                        vec![Effect::Post(self.post(
                            "completed",
                            Kind::Result,
                            text,
                            false,
                        ))]
                    }
                }
            }
            Event::NotSent { why, refused } => self.not_sent(why, refused, now, give_up_ms),
            // Asked about one task, the agent told of another: not this
            // conversation's (an agent minting a task per look would
            // otherwise post without end).
            Event::Polled(t) if self.delivery.task.as_ref().is_some_and(|id| *id != t.id) => {
                let asked = self.delivery.task.clone().unwrap_or_default();
                self.on(
                    Event::Unreachable(format!(
                        "asked for task {asked}, it answered with task {}",
                        t.id
                    )),
                    now,
                    give_up_ms,
                )
            }
            Event::Polled(t) => self.absorb(t, now),
            Event::Lost => self.lost(now),
            Event::Unreachable(why) => {
                self.delivery.detail = Some(format!("lost touch: {why}"));
                self.quiet_polls = self.quiet_polls.saturating_add(1);
                self.next_at = now + backoff(self.quiet_polls);
                Vec::new()
            }
        }
    }

    /// A post was made (`id`: its first entry, `None` if it failed).
    pub fn posted(&mut self, post: &Post, id: Option<String>) {
        if post.asks {
            if let Some(id) = id {
                self.delivery.question = Some(id.into());
            }
        }
    }

    /// The person was asked whether to retry (`question` the entry asking).
    pub fn asked(&mut self, question: String) {
        self.delivery.state = DeliveryState::Failed;
        self.delivery.question = Some(question.clone().into());
        self.thread.push(question);
        self.next_at = i64::MAX;
    }

    /// Whether the store keeps the same of `self` as of `other` (when to
    /// look next, and how quiet it was, are not kept).
    pub fn stores_as(&self, other: &Conversation) -> bool {
        let mut same = other.clone();
        same.next_at = self.next_at;
        same.quiet_polls = self.quiet_polls;
        *self == same
    }

    fn post(&self, state: &str, kind: Kind, text: String, needs_eyes: bool) -> Post {
        Post {
            task: self.delivery.task.clone().unwrap_or_default(),
            state: state.to_string(),
            kind,
            text,
            needs_eyes,
            asks: false,
        }
    }

    fn not_sent(&mut self, why: String, refused: bool, now: i64, give_up_ms: i64) -> Vec<Effect> {
        self.delivery.attempts += 1;
        let since = *self.failing_since.get_or_insert(now);
        self.delivery.detail = Some(format!("not delivered: {why}"));
        self.next_at = now + backoff(self.delivery.attempts);
        if self.delivery.question.is_some() {
            return Vec::new(); // asked already
        }
        // A refused token does not heal by waiting: ask at once.
        if !refused && now - since < give_up_ms {
            return Vec::new();
        }
        let name = &self.delivery.agent;
        let minutes = (now - since) / 60_000;
        let text = if refused {
            format!(
                "{name} refused this note: {why}. If its A2A URL changed (Agent Zero's does when its login changes: Settings → MCP/A2A → A2A server shows the new one), register it again — `echo 'NEW_URL' | pad agent add {name} --a2a - --replace`, or Register in the app's Agents view — and the note goes out at once. Or reply '{RETRY}' to try again as it is, or '{DROP}' to stop."
            )
        } else {
            format!(
                "I could not deliver this note to {name} for {}: {why}. Reply '{RETRY}' to try again, or '{DROP}' to stop.",
                if minutes >= 1 { format!("{minutes} min") } else { format!("{} s", (now - since) / 1000) }
            )
        };
        vec![Effect::AskPerson(text)]
    }

    /// The agent no longer knows its task: said in the thread and the last
    /// message sent again, once; a second loss is the person's to look at.
    fn lost(&mut self, now: i64) -> Vec<Effect> {
        let name = self.delivery.agent.clone();
        match self.last_sent.clone().filter(|_| !self.resent) {
            Some(again) => {
                let said = self.post(
                    "lost",
                    Kind::Note,
                    format!(
                        "{name} lost this task (it restarted, or forgot it); sending it again."
                    ),
                    false,
                );
                self.resent = true;
                self.delivery.task = None;
                self.posted_state = None;
                self.posted_messages = 0;
                self.outbox.insert(
                    0,
                    Outgoing {
                        on_task: None,
                        ..again
                    },
                );
                self.delivery.state = DeliveryState::Pending;
                self.delivery.detail = Some("sent again: the agent lost the task".into());
                self.next_at = now;
                vec![Effect::Post(said)]
            }
            None => {
                let said = self.post(
                    "lost",
                    Kind::Note,
                    format!("{name} lost this task again; it is not sent a third time. Hand it over again when {name} runs steadily."),
                    true,
                );
                self.delivery.task = None;
                self.delivery.state = DeliveryState::Failed;
                self.delivery.detail = Some("the agent lost the task twice".into());
                self.next_at = i64::MAX;
                vec![Effect::Post(said)]
            }
        }
    }

    /// Takes in the task as the agent tells it: at most one reply per change.
    fn absorb(&mut self, t: Task, now: i64) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.delivery.task.as_deref() != Some(&t.id) {
            self.delivery.task = Some(t.id.clone());
            self.posted_state = None;
            self.posted_messages = 0;
        }
        if let Some(ctx) = &t.context {
            self.context = ctx.clone();
        }
        let said: Vec<&str> = t
            .history
            .iter()
            .filter(|m| m.agent && !m.text.trim().is_empty())
            .map(|m| m.text.as_str())
            .collect();
        let new: Vec<&str> = said.iter().skip(self.posted_messages).copied().collect();
        let changed = self.posted_state.as_deref() != Some(t.state.as_str());
        let status = t
            .status_text
            .clone()
            .or_else(|| new.last().map(|s| s.to_string()));
        if changed {
            self.quiet_polls = 0;
            // What the agent said in states the polls did not catch (it
            // worked and asked between two looks): one status reply first.
            let result_is_said = t.state == "completed" && t.artifacts.is_empty();
            let earlier: Vec<&str> = new
                .iter()
                .copied()
                .filter(|m| Some(*m) != status.as_deref())
                .collect();
            if t.state != "working" && !result_is_said && !earlier.is_empty() {
                effects.push(Effect::Post(self.post(
                    "working",
                    Kind::Note,
                    earlier.join("\n\n"),
                    false,
                )));
            }
            effects.extend(self.entered(&t, status.as_deref(), &new));
            self.posted_state = Some(t.state.clone());
        } else {
            self.quiet_polls = self.quiet_polls.saturating_add(1);
        }
        self.posted_messages = said.len();
        self.schedule(now);
        effects
    }

    /// The task entered a new state: the delivery's state follows, and
    /// what the agent said in it is posted.
    fn entered(&mut self, t: &Task, status: Option<&str>, new: &[&str]) -> Option<Effect> {
        let agent = self.delivery.agent.clone();
        let state = t.state.as_str();
        let said = match state {
            "submitted" => {
                self.delivery.state = DeliveryState::Sent;
                None
            }
            "working" => {
                self.delivery.state = DeliveryState::Working;
                self.delivery.detail = status.map(str::to_owned);
                status.map(|s| self.post(state, Kind::Note, s.to_owned(), false))
            }
            "input-required" | "auth-required" => {
                let q = status.map_or_else(
                    || format!("{agent} needs more from you to go on; reply here."),
                    str::to_owned,
                );
                let mut ask = self.post(state, Kind::Question, q.clone(), true);
                ask.asks = true;
                self.delivery.state = DeliveryState::WaitingForYou;
                self.delivery.detail = Some(q);
                Some(ask)
            }
            "completed" => {
                let text = if !t.artifacts.is_empty() {
                    t.artifacts.join("\n\n")
                } else if !new.is_empty() {
                    new.join("\n\n")
                } else if let Some(s) = status {
                    s.to_owned()
                } else {
                    format!("{agent} finished, with nothing to show.")
                };
                self.delivery.state = DeliveryState::Done;
                self.delivery.detail = None;
                Some(self.post(state, Kind::Result, text, false))
            }
            "failed" | "rejected" | "canceled" => {
                let why = status.unwrap_or("it gave no reason").to_owned();
                let text = format!("{agent} {state}: {why}");
                self.delivery.state = DeliveryState::Failed;
                self.delivery.detail = Some(why);
                Some(self.post(state, Kind::Note, text, true))
            }
            _ => None,
        };
        said.map(Effect::Post)
    }

    /// When to look again: never while the person or nobody needs to act,
    /// else sooner after a change, slower while the task is quiet.
    fn schedule(&mut self, now: i64) {
        let waiting = matches!(
            self.delivery.state,
            DeliveryState::Done | DeliveryState::Failed | DeliveryState::WaitingForYou
        );
        self.next_at = if waiting && self.outbox.is_empty() {
            i64::MAX
        } else {
            let slower = self.quiet_polls.saturating_sub(QUICK_POLLS).min(4);
            let ms = FIRST_POLL.as_millis() as i64 * (1 << slower) as i64;
            now + ms.min(MAX_POLL.as_millis() as i64)
        };
    }
}

#[cfg(test)]
mod tests;
