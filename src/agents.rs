//! Agents the person can reach: the registry of A2A endpoints
//! (`agents/registry.rs`), the conversations of addressed notes (one per
//! note and agent, here), who is connected right now
//! (`agents/presence.rs`), and how often an agent may reply
//! (`ReplyLimit`, here) — each its own type behind its own lock.
//!
//! Deliveries live in the store with the notes (the `deliveries` table,
//! written in the note's own transaction: `handoffs` says which rows a new
//! entry brings); `Conversations` keeps those begun in memory, as the store
//! has them, for the dispatcher. A conversation's states and transitions
//! are `agents/conversation.rs`; the dispatcher that talks to the agents
//! and saves the conversations is `engine/dispatch.rs`; the wire client is
//! `agents/a2a.rs`. This module does no I/O but the registry's file.

pub mod a2a;
pub mod conversation;
mod presence;
mod registry;

pub use conversation::{Conversation, Outgoing};
pub use presence::{Here, Presence, Seen, MAX_PRESENCE};
pub use registry::{Registered, Registry, FILE};

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::Result;
use crate::model::fmt_time;
use crate::protocol::AgentInfo;
use crate::storage::Handoff;

/// Finished conversations kept in memory, as many as the store keeps.
const KEEP_FINISHED: usize = crate::storage::rules::KEEP_FINISHED_CONVERSATIONS;

/// The one lock policy of the agents' parts: each change under these locks
/// is a whole insert, removal or replacement, so a panic elsewhere while
/// one was held leaves its value whole — it is taken over, not poisoned.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub struct Agents {
    pub registry: Registry,
    pub conversations: Conversations,
    pub presence: Presence,
    pub limit: ReplyLimit,
    /// Woken when there is something to send.
    pub wake: tokio::sync::Notify,
    /// The open "could not deliver" question of each agent: one per agent,
    /// however many notes wait for it. Held while a question is asked.
    pub give_ups: tokio::sync::Mutex<HashMap<String, String>>,
}

/// The conversations begun, as the store has them.
#[derive(Default)]
pub struct Conversations(Mutex<Vec<Conversation>>);

impl Agents {
    /// The agents of `dir`, and the conversations the registry's file still
    /// held from before the store kept them (for the engine to move there,
    /// then `Registry::rewrite`).
    pub fn open(dir: &Path) -> Result<(Agents, Vec<Conversation>)> {
        let (registry, old) = Registry::open(dir)?;
        let agents = Agents {
            registry,
            conversations: Conversations::default(),
            presence: Presence::default(),
            limit: ReplyLimit::default(),
            wake: tokio::sync::Notify::new(),
            give_ups: tokio::sync::Mutex::default(),
        };
        Ok((agents, old))
    }

    /// Registers `agent`. Registered again (a new URL or token): what could
    /// not be sent to it, or whose task could not be read, is tried now.
    pub fn add(&self, agent: Registered, replace: bool) -> Result<()> {
        let name = agent.name.clone();
        if self.registry.add(agent, replace)? {
            self.conversations.retry_failing(&name);
        }
        Ok(())
    }

    /// Forgets the agent and its unfinished conversations here (the store's
    /// go with `Storage::drop_agent_deliveries`); whether it was registered.
    pub fn remove(&self, name: &str) -> Result<bool> {
        let was = self.registry.remove(name)?;
        lock(&self.conversations.0).retain(|c| c.delivery.agent != name || !c.is_live());
        Ok(was)
    }

    /// The registered agents, their active deliveries counted in the pads
    /// `counts(pad)` allows.
    pub fn infos(&self, counts: &dyn Fn(&str) -> bool) -> Vec<AgentInfo> {
        let registered = self.registry.all();
        let conversations = lock(&self.conversations.0);
        registered
            .into_iter()
            .map(|a| AgentInfo {
                active: conversations
                    .iter()
                    .filter(|c| c.delivery.agent == a.name && c.is_live())
                    .filter(|c| counts(&c.delivery.pad))
                    .count(),
                url: a2a::redact(&a.url),
                added_at: fmt_time(a.added_at),
                name: a.name,
                card: a.card,
                reachable: a.reachable,
                error: a.error,
                added_by: a.added_by,
            })
            .collect()
    }

    /// Which agents a new entry goes to (`Handoff`s, written with it): a
    /// reply by someone else in a conversation's thread (`reply_to`, an id
    /// or a prefix of one) is passed on in that conversation; a note
    /// addressed (`to`) to an agent starts a conversation with it. What
    /// agents and the engine itself ("could not deliver …") write is said
    /// to the person, never passed on. `may_reach(agent)`: whether the
    /// writer may hand work to that agent (a token's grant names it).
    /// Addressed names no engine here has registered are handed off too:
    /// another engine of a team may reach them.
    pub fn handoffs(
        &self,
        author: &str,
        to: &[String],
        reply_to: Option<&str>,
        may_reach: &dyn Fn(&str) -> bool,
    ) -> Vec<Handoff> {
        let mut out: Vec<Handoff> = Vec::new();
        if to.is_empty() && reply_to.is_none() {
            return out;
        }
        let by_agent = author == "engine" || self.registry.contains(author);
        let conversations = lock(&self.conversations.0);
        if let Some(parent) = reply_to.filter(|_| !by_agent) {
            let parent = parent.trim().to_lowercase();
            for c in conversations.iter() {
                let agent = &c.delivery.agent;
                if agent == author
                    || !may_reach(agent)
                    || !c.thread.iter().any(|t| t.starts_with(&parent))
                {
                    continue;
                }
                out.push(Handoff {
                    agent: agent.clone(),
                    root: Some(c.delivery.entry.clone()),
                });
            }
        }
        for name in to {
            if name == author || !may_reach(name) || out.iter().any(|h| h.agent == *name) {
                continue;
            }
            out.push(Handoff {
                agent: name.clone(),
                root: None,
            });
        }
        out
    }
}

impl Conversations {
    /// Takes in the conversations the store holds (at start).
    pub fn load(&self, conversations: Vec<Conversation>) {
        *lock(&self.0) = conversations;
    }

    /// The conversation of the note `root` with `agent`, if begun.
    pub fn conversation(&self, root: &str, agent: &str) -> Option<Conversation> {
        lock(&self.0)
            .iter()
            .find(|c| c.delivery.entry == root && c.delivery.agent == agent)
            .cloned()
    }

    /// A conversation begun, or changed by a message it took in.
    pub fn begun(&self, c: Conversation) {
        let mut s = lock(&self.0);
        match s
            .iter_mut()
            .find(|o| o.delivery.entry == c.delivery.entry && o.delivery.agent == c.delivery.agent)
        {
            Some(old) => *old = c,
            None => s.push(c),
        }
        prune(&mut s);
    }

    /// Conversations with something to do at `now`.
    pub fn due(&self, now: i64) -> Vec<Conversation> {
        lock(&self.0)
            .iter()
            .filter(|c| c.is_live() && c.next_at <= now)
            .cloned()
            .collect()
    }

    /// When the next conversation not `busy(entry, agent)` is due (ms), if
    /// any is live.
    pub fn next_due(&self, busy: &dyn Fn(&str, &str) -> bool) -> Option<i64> {
        lock(&self.0)
            .iter()
            .filter(|c| c.is_live() && !busy(&c.delivery.entry, &c.delivery.agent))
            .map(|c| c.next_at)
            .min()
    }

    /// Keeps a conversation's new state after a look, unless it was
    /// dropped meanwhile (its agent removed). Nothing else changes a
    /// conversation while it is looked at: messages for it wait in the
    /// store until the look ends.
    pub fn put(&self, c: Conversation) {
        let mut s = lock(&self.0);
        if let Some(old) = s
            .iter_mut()
            .find(|o| o.delivery.entry == c.delivery.entry && o.delivery.agent == c.delivery.agent)
        {
            *old = c;
        }
    }

    /// What could not be sent to `agent`, or whose task could not be read,
    /// is tried now.
    fn retry_failing(&self, agent: &str) {
        for c in lock(&self.0).iter_mut() {
            if c.delivery.agent == agent && c.failing_since.is_some() {
                c.retry(0);
            }
        }
    }
}

/// Replies one agent may have posted in a minute: past it, its tasks are not
/// looked at again until the minute frees up, so nothing it says is lost and
/// no agent floods a pad.
pub const MAX_REPLIES_PER_MINUTE: usize = 30;
const MINUTE: i64 = 60_000;

/// When each agent's replies of the last minute were posted (ms).
#[derive(Default)]
pub struct ReplyLimit(Mutex<HashMap<String, VecDeque<i64>>>);

impl ReplyLimit {
    /// Notes a reply of `agent` posted at `now`.
    pub fn replied(&self, agent: &str, now: i64) {
        lock(&self.0)
            .entry(agent.to_string())
            .or_default()
            .push_back(now);
    }

    /// When `agent` may be looked at again, if it has posted its minute's
    /// worth of replies (`MAX_REPLIES_PER_MINUTE`); `None`: now.
    pub fn room(&self, agent: &str, now: i64) -> Option<i64> {
        let mut r = lock(&self.0);
        let times = r.get_mut(agent)?;
        while times.front().is_some_and(|t| now - t >= MINUTE) {
            times.pop_front();
        }
        if times.is_empty() {
            r.remove(agent);
            return None;
        }
        (times.len() >= MAX_REPLIES_PER_MINUTE).then(|| times[0] + MINUTE)
    }
}

/// Keeps every live conversation and the newest finished ones.
fn prune(list: &mut Vec<Conversation>) {
    let finished = list.iter().filter(|c| !c.is_live()).count();
    if finished <= KEEP_FINISHED {
        return;
    }
    let mut drop = finished - KEEP_FINISHED;
    list.retain(|c| {
        if drop > 0 && !c.is_live() {
            drop -= 1;
            false
        } else {
            true
        }
    });
}

#[cfg(test)]
mod tests {
    use super::registry::tests::registered;
    use super::*;
    use crate::model::Entry;

    fn entry(id: &str, author: &str, to: &[&str], reply_to: Option<&str>) -> Entry {
        serde_json::from_value(serde_json::json!({
            "id": id, "pad": "proj", "author": author, "kind": "note", "content": "x",
            "tags": [], "status": null, "assignee": null, "resume": null, "lease_until": null,
            "category": null, "confidence": null, "depends_on": [], "remind_at": null,
            "pinned": false, "meta": null, "created_at": "2026-11-25T00:00:00Z",
            "updated_at": "2026-11-25T00:00:00Z", "version": 1, "to": to, "reply_to": reply_to
        }))
        .expect("an entry")
    }

    #[test]
    fn a_new_entry_is_handed_to_the_conversations_of_its_thread_and_its_addressees() {
        let dir = tempfile::tempdir().unwrap();
        let (agents, _) = Agents::open(dir.path()).unwrap();
        for name in ["alpha", "beta"] {
            agents.add(registered(name), false).unwrap();
        }
        let all = |_: &str| true;
        let note = entry("n1abc", "user", &["alpha"], None);
        assert_eq!(
            agents.handoffs("user", &note.to, None, &all),
            [Handoff {
                agent: "alpha".into(),
                root: None
            }]
        );
        agents
            .conversations
            .begun(Conversation::start(&note, "alpha", 0));
        // A reply in alpha's thread (by a prefix of its id) addressed to beta:
        // a follow-up for alpha, a new conversation for beta, in its own
        // context.
        let to = vec!["beta".to_string(), "alpha".to_string()];
        assert_eq!(
            agents.handoffs("user", &to, Some("N1A"), &all),
            [
                Handoff {
                    agent: "alpha".into(),
                    root: Some("n1abc".into())
                },
                Handoff {
                    agent: "beta".into(),
                    root: None
                },
            ]
        );
        let reply = entry("n2", "user", &["beta"], Some("n1abc"));
        assert_eq!(Conversation::start(&reply, "beta", 0).context, "pad-n1abc");
        // What alpha itself, the engine, or a writer that may not reach it
        // writes there stays in the thread.
        assert!(agents
            .handoffs("alpha", &[], Some("n1abc"), &all)
            .is_empty());
        assert!(agents
            .handoffs("engine", &[], Some("n1abc"), &all)
            .is_empty());
        assert!(agents
            .handoffs("user", &to, Some("n1abc"), &|a: &str| a == "beta")
            .iter()
            .all(|h| h.agent == "beta"));
    }

    #[test]
    fn an_agent_past_its_replies_a_minute_waits_for_the_minute_to_free_up() {
        let limit = ReplyLimit::default();
        assert_eq!(limit.room("helper", 0), None);
        for i in 0..MAX_REPLIES_PER_MINUTE as i64 {
            assert_eq!(limit.room("helper", 1_000 + i), None);
            limit.replied("helper", 1_000 + i);
        }
        assert_eq!(limit.room("helper", 5_000), Some(61_000));
        assert_eq!(limit.room("other", 5_000), None, "per agent");
        assert_eq!(limit.room("helper", 61_000), None, "the first aged out");
        assert_eq!(limit.room("helper", 200_000), None);
        assert!(lock(&limit.0).is_empty(), "forgotten");
    }
}
