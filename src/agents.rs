//! Agents the person can reach: the registry of A2A endpoints, the
//! conversations of addressed notes (one per note and agent), and who is
//! connected right now.
//!
//! The registry lives in `<data>/agents.json` (0600, written whole and
//! renamed into place when an agent is added, removed or its state
//! changes), because it holds secrets (tokens, Agent Zero's token in its
//! URL) that must not travel to a shared database, and because an endpoint
//! such as `http://localhost:50001` is reachable from one machine: each
//! engine reaches the agents registered with it. Deliveries live in the
//! store with the notes (the `deliveries` table, written in the note's own
//! transaction: `handoffs` says which rows a new entry brings); this module
//! keeps the conversations begun in memory, as the store has them, for
//! the dispatcher. A conversation's states and transitions are
//! `agents/conversation.rs`; the dispatcher that talks to the agents and
//! saves the conversations is `engine/agents.rs`; the wire client is
//! `agents/a2a.rs`. This module does no I/O but its own file.

pub mod a2a;
pub mod conversation;

pub use conversation::{Conversation, Outgoing};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::fmt_time;
use crate::protocol::{AgentCard, AgentInfo};
use crate::storage::Handoff;

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

/// The registry as saved, and the conversations as held in memory (in
/// the file before the store kept them: read once, to move them there).
#[derive(Default, Serialize, Deserialize)]
struct Saved {
    agents: Vec<Registered>,
    #[serde(default, skip_serializing)]
    deliveries: Vec<Conversation>,
}

/// Finished conversations kept in memory, as many as the store keeps.
const KEEP_FINISHED: usize = crate::storage::rules::KEEP_FINISHED_CONVERSATIONS;

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
    /// The open "could not deliver" question of each agent: one per agent,
    /// however many notes wait for it. Held while a question is asked.
    pub give_ups: tokio::sync::Mutex<HashMap<String, String>>,
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
    /// The registry of `dir`, and the conversations its file still held
    /// from before the store kept them (for the engine to move there, then
    /// `forget_file_deliveries`). A damaged file is moved aside, said in
    /// the log, and the engine starts with no registered agents: a broken
    /// file must not keep the person's notes from them.
    pub fn open(dir: &Path) -> Result<(Agents, Vec<Conversation>)> {
        let path = dir.join(FILE);
        let mut saved: Saved = match std::fs::read_to_string(&path) {
            Ok(text) => match serde_json::from_str(&text) {
                Ok(saved) => saved,
                Err(e) => {
                    let aside = dir.join(format!("{FILE}.damaged"));
                    let moved = std::fs::rename(&path, &aside);
                    tracing::error!(
                        "{} is damaged ({e}); {}: register the agents again (pad agent add)",
                        path.display(),
                        match moved {
                            Ok(()) => format!("moved aside to {}", aside.display()),
                            Err(e) => format!("and cannot be moved aside ({e})"),
                        }
                    );
                    Saved::default()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Saved::default(),
            Err(e) => {
                return Err(Error::Internal(format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        };
        let old = std::mem::take(&mut saved.deliveries);
        let agents = Agents {
            path,
            state: Mutex::new(saved),
            presence: Arc::default(),
            wake: tokio::sync::Notify::new(),
            replies: Mutex::default(),
            give_ups: tokio::sync::Mutex::default(),
        };
        Ok((agents, old))
    }

    /// Rewrites the file with the registry alone (its old deliveries are
    /// in the store now).
    pub fn forget_file_deliveries(&self) -> Result<()> {
        let s = self.state.lock().expect("agents lock");
        self.save(&s)
    }

    /// Takes in the conversations the store holds (at start).
    pub fn load(&self, conversations: Vec<Conversation>) {
        let mut s = self.state.lock().expect("agents lock");
        s.deliveries = conversations;
    }

    fn save(&self, s: &Saved) -> Result<()> {
        let text = serde_json::to_string_pretty(s).expect("agents serialize");
        crate::paths::write_private(&self.path, &text)
            .map_err(|e| Error::Internal(format!("cannot write {}: {e}", self.path.display())))
    }

    /// Runs `f` on the state and saves the registry; if saving fails the
    /// registry is as it was (so a failed `agent.add` registers nothing,
    /// and a failed removal leaves the agent, on disk and here alike).
    fn change<T>(&self, f: impl FnOnce(&mut Saved) -> Result<T>) -> Result<T> {
        let mut s = self.state.lock().expect("agents lock");
        let before = s.agents.clone();
        let out = f(&mut s)?;
        if let Err(e) = self.save(&s) {
            s.agents = before;
            return Err(e);
        }
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

    /// Forgets the agent and its unfinished conversations here (the store's
    /// go with `Storage::drop_agent_deliveries`); whether it was registered.
    pub fn remove(&self, name: &str) -> Result<bool> {
        self.change(|s| {
            let before = s.agents.len();
            s.agents.retain(|a| a.name != name);
            s.deliveries
                .retain(|c| c.delivery.agent != name || !c.is_live());
            Ok(before != s.agents.len())
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
        let s = self.state.lock().expect("agents lock");
        let by_agent = author == "engine" || s.agents.iter().any(|a| a.name == author);
        if let Some(parent) = reply_to.filter(|_| !by_agent) {
            let parent = parent.trim().to_lowercase();
            for c in &s.deliveries {
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

    /// The conversation of the note `root` with `agent`, if begun.
    pub fn conversation(&self, root: &str, agent: &str) -> Option<Conversation> {
        let s = self.state.lock().expect("agents lock");
        s.deliveries
            .iter()
            .find(|c| c.delivery.entry == root && c.delivery.agent == agent)
            .cloned()
    }

    /// A conversation begun, or changed by a message it took in.
    pub fn begun(&self, c: Conversation) {
        let mut s = self.state.lock().expect("agents lock");
        match s
            .deliveries
            .iter_mut()
            .find(|o| o.delivery.entry == c.delivery.entry && o.delivery.agent == c.delivery.agent)
        {
            Some(old) => *old = c,
            None => s.deliveries.push(c),
        }
        prune(&mut s.deliveries);
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

    /// Keeps a conversation's new state after a look, unless it was
    /// dropped meanwhile (its agent removed). Nothing else changes a
    /// conversation while it is looked at: messages for it wait in the
    /// store until the look ends.
    pub fn put(&self, c: Conversation) {
        let mut s = self.state.lock().expect("agents lock");
        if let Some(old) = s
            .deliveries
            .iter_mut()
            .find(|o| o.delivery.entry == c.delivery.entry && o.delivery.agent == c.delivery.agent)
        {
            *old = c;
        }
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
    use crate::model::Entry;

    #[test]
    fn an_agent_past_its_replies_a_minute_waits_for_the_minute_to_free_up() {
        let dir = tempfile::tempdir().unwrap();
        let (agents, _) = Agents::open(dir.path()).unwrap();
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
        agents.begun(Conversation::start(&note, "alpha", 0));
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

    fn registered(name: &str) -> Registered {
        Registered {
            name: name.into(),
            url: "http://127.0.0.1:9/".into(),
            token: Some("secret".into()),
            dialect: a2a::Dialect::V03,
            card: None,
            added_at: 0,
            added_by: "user".into(),
            reachable: None,
            error: None,
        }
    }

    #[test]
    fn a_damaged_registry_is_moved_aside_and_a_failed_save_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        let (agents, old) = Agents::open(dir.path()).expect("starts anyway");
        assert!(agents.names().is_empty() && old.is_empty());
        assert!(dir.path().join("agents.json.damaged").exists());
        agents.add(registered("kept"), false).unwrap();
        // A registry that cannot be written: nothing is registered or
        // removed here that the file would not have after a restart.
        let file = dir.path().join(FILE);
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        assert!(agents.add(registered("new"), false).is_err());
        assert!(agents.remove("kept").is_err());
        assert_eq!(agents.names(), ["kept"]);
        // The file holds the registry alone.
        std::fs::remove_dir(&file).unwrap();
        agents.add(registered("new"), false).unwrap();
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(saved.get("deliveries").is_none(), "{saved}");
    }

    #[test]
    fn presence_forgets_the_longest_unseen_past_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let (agents, _) = Agents::open(dir.path()).unwrap();
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
