//! Agents the person can reach: the registry of A2A endpoints, the
//! deliveries of addressed notes (one conversation per note and agent), and
//! who is connected right now.
//!
//! Registry and deliveries live in `<data>/agents.json` (0600, written whole
//! and renamed into place on every change), because they hold secrets
//! (tokens, Agent Zero's token in its URL) that must not travel to a shared
//! database, and because an endpoint such as `http://localhost:50001` is
//! reachable from one machine: each engine reaches the agents registered
//! with it. A conversation's states and transitions are
//! `agents/conversation.rs`; the dispatcher that talks to the agents is
//! `engine/agents.rs`; the wire client is `agents/a2a.rs`. This module is
//! pure state: no I/O but its own file.

pub mod a2a;
pub mod conversation;

pub use conversation::{Conversation, Outgoing};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{fmt_time, Entry};
use crate::protocol::{AgentCard, AgentInfo, Delivery};

pub const FILE: &str = "agents.json";

/// A registered agent, as stored (with its secrets).
#[derive(Clone, Serialize, Deserialize)]
pub struct Registered {
    pub name: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    pub dialect: a2a::Dialect,
    pub card: Option<AgentCard>,
    pub added_at: i64,
    pub added_by: String,
    #[serde(default)]
    pub reachable: Option<bool>,
    #[serde(default)]
    pub error: Option<String>,
}

impl Registered {
    pub fn endpoint(&self) -> a2a::Endpoint {
        a2a::Endpoint {
            url: self.url.clone(),
            token: self.token.clone(),
            dialect: self.dialect,
        }
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Saved {
    agents: Vec<Registered>,
    deliveries: Vec<Conversation>,
}

/// Finished conversations kept (for the notes' delivery state and follow-ups).
const KEEP_FINISHED: usize = 500;

/// Replies one agent may have posted in a minute: past it, its tasks are not
/// looked at again until the minute frees up, so nothing it says is lost and
/// no agent floods a pad.
pub const MAX_REPLIES_PER_MINUTE: usize = 30;
const MINUTE: i64 = 60_000;

/// Registered agents, deliveries and presence, behind one lock.
pub struct Agents {
    path: PathBuf,
    state: Mutex<Saved>,
    /// Connections that said hello, by author, and when each author last called.
    presence: Arc<Mutex<HashMap<String, Presence>>>,
    /// Woken when there is something to send.
    pub wake: tokio::sync::Notify,
    /// When each agent's replies of the last minute were posted (ms).
    replies: Mutex<HashMap<String, std::collections::VecDeque<i64>>>,
}

#[derive(Default, Clone, Copy)]
pub struct Presence {
    pub connected: usize,
    pub last_seen: i64,
}

/// Held by a connection that said hello as an author; dropping it (the
/// connection closing) says it went.
pub struct Here {
    presence: Arc<Mutex<HashMap<String, Presence>>>,
    author: String,
}

impl Drop for Here {
    fn drop(&mut self) {
        if let Ok(mut p) = self.presence.lock() {
            if let Some(e) = p.get_mut(&self.author) {
                e.connected = e.connected.saturating_sub(1);
            }
        }
    }
}

impl Agents {
    pub fn open(dir: &Path) -> Result<Agents> {
        let path = dir.join(FILE);
        let saved = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                Error::Internal(format!(
                    "{} is damaged ({e}); move it aside to start with no registered agents",
                    path.display()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Saved::default(),
            Err(e) => {
                return Err(Error::Internal(format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        };
        Ok(Agents {
            path,
            state: Mutex::new(saved),
            presence: Arc::default(),
            wake: tokio::sync::Notify::new(),
            replies: Mutex::default(),
        })
    }

    fn save(&self, s: &Saved) -> Result<()> {
        let text = serde_json::to_string_pretty(s).expect("agents serialize");
        crate::paths::write_private(&self.path, &text)
            .map_err(|e| Error::Internal(format!("cannot write {}: {e}", self.path.display())))
    }

    /// Runs `f` on the state and saves it.
    fn change<T>(&self, f: impl FnOnce(&mut Saved) -> Result<T>) -> Result<T> {
        let mut s = self.state.lock().expect("agents lock");
        let out = f(&mut s)?;
        self.save(&s)?;
        Ok(out)
    }

    pub fn registered(&self, name: &str) -> Option<Registered> {
        let s = self.state.lock().expect("agents lock");
        s.agents.iter().find(|a| a.name == name).cloned()
    }

    pub fn add(&self, agent: Registered, replace: bool) -> Result<()> {
        self.change(|s| {
            match s.agents.iter().position(|a| a.name == agent.name) {
                Some(_) if !replace => {
                    return Err(Error::Conflict {
                        message: format!(
                            "an agent named '{}' is registered already; remove it first (`pad agent rm {}`) or give replace: true",
                            agent.name, agent.name
                        ),
                        expected: None,
                        actual: None,
                    })
                }
                Some(i) => {
                    // Registered again (a new URL or token): what could not
                    // be sent to it, or whose task could not be read, is tried now.
                    for c in s.deliveries.iter_mut() {
                        if c.delivery.agent == agent.name && c.failing_since.is_some() {
                            c.retry(0);
                        }
                    }
                    s.agents[i] = agent
                }
                None => s.agents.push(agent),
            }
            Ok(())
        })
    }

    /// Forgets the agent and drops its unfinished deliveries: (removed, dropped).
    pub fn remove(&self, name: &str) -> Result<(bool, usize)> {
        self.change(|s| {
            let before = s.agents.len();
            s.agents.retain(|a| a.name != name);
            let live = s.deliveries.len();
            s.deliveries
                .retain(|c| c.delivery.agent != name || !c.is_live());
            Ok((before != s.agents.len(), live - s.deliveries.len()))
        })
    }

    /// Notes whether the last call to `name` got through.
    pub fn reached(&self, name: &str, error: Option<String>) -> Result<()> {
        let mut s = self.state.lock().expect("agents lock");
        let Some(a) = s.agents.iter_mut().find(|a| a.name == name) else {
            return Ok(());
        };
        let reachable = Some(error.is_none());
        if a.reachable == reachable && a.error == error {
            return Ok(());
        }
        a.reachable = reachable;
        a.error = error;
        self.save(&s)
    }

    /// The registered agents, their active deliveries counted in the pads
    /// `counts(pad)` allows.
    pub fn infos(&self, counts: &dyn Fn(&str) -> bool) -> Vec<AgentInfo> {
        let s = self.state.lock().expect("agents lock");
        s.agents
            .iter()
            .map(|a| AgentInfo {
                name: a.name.clone(),
                url: a2a::redact(&a.url),
                card: a.card.clone(),
                reachable: a.reachable,
                error: a.error.clone(),
                added_at: fmt_time(a.added_at),
                added_by: a.added_by.clone(),
                active: s
                    .deliveries
                    .iter()
                    .filter(|c| c.delivery.agent == a.name && c.is_live())
                    .filter(|c| counts(&c.delivery.pad))
                    .count(),
            })
            .collect()
    }

    /// What a newly written entry means for the agents: a note addressed to
    /// a registered agent opens a conversation; a reply by someone else to
    /// a conversation's question or thread goes to the agent. Returns
    /// whether there is something to send. Called after the entry is
    /// committed, before it is acknowledged. `may_reach(agent)` says whether
    /// the writer may hand work to that agent: a reply by a token whose
    /// grant does not name it stays in the thread and is not passed on.
    pub fn noticed(&self, e: &Entry, now: i64, may_reach: &dyn Fn(&str) -> bool) -> Result<bool> {
        let mut s = self.state.lock().expect("agents lock");
        let mut changed = false;
        // What agents and the engine itself ("could not deliver …") write
        // in a thread is said to the person, never passed on as a follow-up.
        let by_agent = e.author == "engine" || s.agents.iter().any(|a| a.name == e.author);
        if let Some(parent) = e.reply_to.as_ref().filter(|_| !by_agent) {
            for c in s.deliveries.iter_mut() {
                if c.delivery.agent == e.author
                    || !c.thread.contains(parent)
                    || !may_reach(&c.delivery.agent)
                {
                    continue;
                }
                c.heard(e, parent, now);
                changed = true;
            }
        }
        for name in &e.to {
            if *name == e.author || !s.agents.iter().any(|a| a.name == *name) || !may_reach(name) {
                continue;
            }
            // A reply already carried to this agent as a follow-up above.
            if s.deliveries
                .iter()
                .any(|c| c.delivery.agent == *name && c.thread.contains(&e.id))
            {
                continue;
            }
            // The thread's conversation with this agent, if it has one: a
            // context is one agent's (another's would mix two conversations).
            let root = e
                .reply_to
                .as_ref()
                .and_then(|p| {
                    s.deliveries
                        .iter()
                        .find(|c| c.delivery.agent == *name && c.thread.contains(p))
                        .map(|c| c.context.clone())
                })
                .unwrap_or_else(|| format!("pad-{}", e.reply_to.as_deref().unwrap_or(&e.id)));
            s.deliveries.push(Conversation::start(e, name, root, now));
            changed = true;
        }
        if changed {
            prune(&mut s.deliveries);
            self.save(&s)?;
        }
        Ok(changed)
    }

    /// Conversations with something to do at `now`.
    pub fn due(&self, now: i64) -> Vec<Conversation> {
        let s = self.state.lock().expect("agents lock");
        s.deliveries
            .iter()
            .filter(|c| c.is_live() && c.next_at <= now)
            .cloned()
            .collect()
    }

    /// When the next conversation not `busy(entry, agent)` is due (ms), if
    /// any is live.
    pub fn next_due(&self, busy: &dyn Fn(&str, &str) -> bool) -> Option<i64> {
        let s = self.state.lock().expect("agents lock");
        s.deliveries
            .iter()
            .filter(|c| c.is_live() && !busy(&c.delivery.entry, &c.delivery.agent))
            .map(|c| c.next_at)
            .min()
    }

    /// Stores a conversation's new state, unless it was dropped meanwhile.
    /// Messages that arrived for it since it was read (when its outbox held
    /// `read_outbox`) are kept.
    pub fn put(&self, c: Conversation, read_outbox: usize) -> Result<()> {
        self.change(|s| {
            if let Some(old) = s.deliveries.iter_mut().find(|o| {
                o.delivery.entry == c.delivery.entry && o.delivery.agent == c.delivery.agent
            }) {
                let arrived: Vec<Outgoing> = old.outbox.iter().skip(read_outbox).cloned().collect();
                let thread: Vec<String> = old
                    .thread
                    .iter()
                    .filter(|t| !c.thread.contains(t))
                    .cloned()
                    .collect();
                let reply_to = old.reply_to.clone();
                let newer = !arrived.is_empty();
                *old = c;
                old.outbox.extend(arrived);
                old.thread.extend(thread);
                if newer {
                    old.reply_to = reply_to;
                    old.next_at = 0;
                }
            }
            Ok(())
        })
    }

    pub fn deliveries(&self, pad: Option<&str>, entry: Option<&str>) -> Vec<Delivery> {
        let s = self.state.lock().expect("agents lock");
        s.deliveries
            .iter()
            .filter(|c| pad.is_none_or(|p| c.delivery.pad == p))
            .filter(|c| entry.is_none_or(|id| c.delivery.entry == id))
            .map(|c| c.delivery.clone())
            .collect()
    }

    /// Notes a reply of `agent` posted at `now`.
    pub fn replied(&self, agent: &str, now: i64) {
        let mut r = self.replies.lock().expect("replies lock");
        r.entry(agent.to_string()).or_default().push_back(now);
    }

    /// When `agent` may be looked at again, if it has posted its minute's
    /// worth of replies (`MAX_REPLIES_PER_MINUTE`); `None`: now.
    pub fn reply_room(&self, agent: &str, now: i64) -> Option<i64> {
        let mut r = self.replies.lock().expect("replies lock");
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

    /// Says that a connection speaks as `author`, until the guard drops.
    pub fn here(&self, author: &str, now: i64) -> Here {
        let mut p = self.presence.lock().expect("presence lock");
        let e = p.entry(author.to_string()).or_default();
        e.connected += 1;
        e.last_seen = now;
        age(&mut p);
        Here {
            presence: self.presence.clone(),
            author: author.to_string(),
        }
    }

    /// Notes a call by `author`.
    pub fn seen(&self, author: &str, now: i64) {
        let mut p = self.presence.lock().expect("presence lock");
        if let Some(e) = p.get_mut(author) {
            e.last_seen = now;
        } else {
            p.insert(
                author.to_string(),
                Presence {
                    connected: 0,
                    last_seen: now,
                },
            );
            age(&mut p);
        }
    }

    pub fn presence(&self) -> HashMap<String, Presence> {
        self.presence.lock().expect("presence lock").clone()
    }

    pub fn names(&self) -> Vec<String> {
        let s = self.state.lock().expect("agents lock");
        s.agents.iter().map(|a| a.name.clone()).collect()
    }
}

/// Authors the presence list remembers: past it, those not connected go,
/// longest unseen first, down to nine tenths of it. (200,000 names said in
/// `hello` once made the roster 35 MB.) Who wrote is found in the entries.
pub const MAX_PRESENCE: usize = 1000;

fn age(p: &mut HashMap<String, Presence>) {
    if p.len() <= MAX_PRESENCE {
        return;
    }
    let mut gone: Vec<(i64, String)> = p
        .iter()
        .filter(|(_, e)| e.connected == 0)
        .map(|(a, e)| (e.last_seen, a.clone()))
        .collect();
    gone.sort_unstable();
    let over = p.len() - MAX_PRESENCE * 9 / 10;
    for (_, a) in gone.into_iter().take(over) {
        p.remove(&a);
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
    use super::*;

    #[test]
    fn an_agent_past_its_replies_a_minute_waits_for_the_minute_to_free_up() {
        let dir = tempfile::tempdir().unwrap();
        let agents = Agents::open(dir.path()).unwrap();
        assert_eq!(agents.reply_room("helper", 0), None);
        for i in 0..MAX_REPLIES_PER_MINUTE as i64 {
            assert_eq!(agents.reply_room("helper", 1_000 + i), None);
            agents.replied("helper", 1_000 + i);
        }
        assert_eq!(agents.reply_room("helper", 5_000), Some(61_000));
        assert_eq!(agents.reply_room("other", 5_000), None, "per agent");
        assert_eq!(
            agents.reply_room("helper", 61_000),
            None,
            "the first aged out"
        );
        assert_eq!(agents.reply_room("helper", 200_000), None);
        assert!(agents.replies.lock().unwrap().is_empty(), "forgotten");
    }

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
    fn a_note_to_another_agent_in_a_thread_starts_its_own_context() {
        let dir = tempfile::tempdir().unwrap();
        let agents = Agents::open(dir.path()).unwrap();
        for name in ["alpha", "beta"] {
            let agent = Registered {
                name: name.into(),
                url: "http://127.0.0.1:9/".into(),
                token: None,
                dialect: a2a::Dialect::V03,
                card: None,
                added_at: 0,
                added_by: "user".into(),
                reachable: None,
                error: None,
            };
            agents.add(agent, false).unwrap();
        }
        let all = |_: &str| true;
        agents
            .noticed(&entry("n1", "user", &["alpha"], None), 0, &all)
            .unwrap();
        let mut s = agents.state.lock().unwrap();
        s.deliveries[0].context = "alphas-own-context".into();
        drop(s);
        agents
            .noticed(&entry("n2", "user", &["beta"], Some("n1")), 0, &all)
            .unwrap();
        agents
            .noticed(&entry("n3", "user", &["alpha"], Some("n1")), 0, &all)
            .unwrap();
        let s = agents.state.lock().unwrap();
        let of = |agent: &str| -> Vec<&str> {
            s.deliveries
                .iter()
                .filter(|c| c.delivery.agent == agent)
                .map(|c| c.context.as_str())
                .collect()
        };
        assert_eq!(of("beta"), ["pad-n1"], "not alpha's context");
        assert_eq!(
            of("alpha"),
            ["alphas-own-context"],
            "n3 joined alpha's conversation"
        );
    }

    #[test]
    fn presence_forgets_the_longest_unseen_past_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let agents = Agents::open(dir.path()).unwrap();
        let _kept = agents.here("connected-early", 0);
        for i in 0..200_000 {
            agents.seen(&format!("author-{i}"), 1 + i);
        }
        let p = agents.presence();
        assert!(p.len() <= MAX_PRESENCE, "{}", p.len());
        assert!(
            p.contains_key("connected-early"),
            "a connected author stays"
        );
        assert!(p.contains_key("author-199999") && !p.contains_key("author-0"));
    }
}
