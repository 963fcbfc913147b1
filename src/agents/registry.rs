//! The registry of A2A agents, in `<data>/agents.json` (0600, written whole
//! and renamed into place when an agent is added, removed or its state
//! changes), because it holds secrets (tokens, Agent Zero's token in its
//! URL) that must not travel to a shared database, and because an endpoint
//! such as `http://localhost:50001` is reachable from one machine: each
//! engine reaches the agents registered with it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{a2a, lock, Conversation};
use crate::error::{Error, Result};
use crate::protocol::AgentCard;

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

/// The file: the registry, and the conversations it held before the store
/// kept them (read once, to move them there; never written).
#[derive(Default, Deserialize)]
struct Saved {
    agents: Vec<Registered>,
    #[serde(default)]
    deliveries: Vec<Conversation>,
}

#[derive(Serialize)]
struct Saving<'a> {
    agents: &'a [Registered],
}

pub struct Registry {
    path: PathBuf,
    agents: Mutex<Vec<Registered>>,
    /// Held across a change and its write, so changes reach the file in
    /// the order they were made; readers of the registry never wait on the
    /// disk.
    writing: Mutex<()>,
}

impl Registry {
    /// The registry of `dir`, and the conversations its file still held
    /// from before the store kept them (for the engine to move there, then
    /// `rewrite`). A damaged file is moved aside, said in the log, and the
    /// engine starts with no registered agents: a broken file must not keep
    /// the person's notes from them.
    pub fn open(dir: &Path) -> Result<(Registry, Vec<Conversation>)> {
        let path = dir.join(FILE);
        let saved: Saved = match std::fs::read_to_string(&path) {
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
        let registry = Registry {
            path,
            agents: Mutex::new(saved.agents),
            writing: Mutex::new(()),
        };
        Ok((registry, saved.deliveries))
    }

    /// Writes the file anew: the registry alone.
    pub fn rewrite(&self) -> Result<()> {
        self.change(|_| Ok(()))
    }

    fn write(&self, agents: &[Registered]) -> Result<()> {
        let text = serde_json::to_string_pretty(&Saving { agents }).expect("agents serialize");
        crate::paths::write_private(&self.path, &text)
            .map_err(|e| Error::Internal(format!("cannot write {}: {e}", self.path.display())))
    }

    /// Runs `f` on a copy of the registry, writes the copy, and only then
    /// makes it the registry: a failed write changes nothing (a failed
    /// `agent.add` registers nothing, a failed removal leaves the agent, on
    /// disk and here alike).
    fn change<T>(&self, f: impl FnOnce(&mut Vec<Registered>) -> Result<T>) -> Result<T> {
        let _writing = lock(&self.writing);
        let mut next = lock(&self.agents).clone();
        let out = f(&mut next)?;
        self.write(&next)?;
        *lock(&self.agents) = next;
        Ok(out)
    }

    pub fn get(&self, name: &str) -> Option<Registered> {
        lock(&self.agents).iter().find(|a| a.name == name).cloned()
    }

    pub fn all(&self) -> Vec<Registered> {
        lock(&self.agents).clone()
    }

    pub fn names(&self) -> Vec<String> {
        lock(&self.agents).iter().map(|a| a.name.clone()).collect()
    }

    pub fn contains(&self, name: &str) -> bool {
        lock(&self.agents).iter().any(|a| a.name == name)
    }

    /// Registers `agent`, in place of one of its name when `replace`;
    /// whether one was replaced.
    pub fn add(&self, agent: Registered, replace: bool) -> Result<bool> {
        self.change(|agents| match agents.iter().position(|a| a.name == agent.name) {
            Some(_) if !replace => Err(Error::Conflict {
                message: format!(
                    "an agent named '{}' is registered already; remove it first (`pad agent rm {}`) or give replace: true",
                    agent.name, agent.name
                ),
                expected: None,
                actual: None,
            }),
            Some(i) => {
                agents[i] = agent;
                Ok(true)
            }
            None => {
                agents.push(agent);
                Ok(false)
            }
        })
    }

    /// Forgets the agent; whether it was registered.
    pub fn remove(&self, name: &str) -> Result<bool> {
        self.change(|agents| {
            let before = agents.len();
            agents.retain(|a| a.name != name);
            Ok(before != agents.len())
        })
    }

    /// Notes whether the last call to `name` got through (written only
    /// when that changed).
    pub fn reached(&self, name: &str, error: Option<String>) -> Result<()> {
        let reachable = Some(error.is_none());
        let same = |a: &Registered| a.reachable == reachable && a.error == error;
        if lock(&self.agents)
            .iter()
            .find(|a| a.name == name)
            .is_none_or(same)
        {
            return Ok(());
        }
        self.change(|agents| {
            if let Some(a) = agents.iter_mut().find(|a| a.name == name) {
                a.reachable = reachable;
                a.error = error.clone();
            }
            Ok(())
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn registered(name: &str) -> Registered {
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
        let (registry, old) = Registry::open(dir.path()).expect("starts anyway");
        assert!(registry.names().is_empty() && old.is_empty());
        assert!(dir.path().join("agents.json.damaged").exists());
        registry.add(registered("kept"), false).unwrap();
        // A registry that cannot be written: nothing is registered or
        // removed here that the file would not have after a restart.
        let file = dir.path().join(FILE);
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        assert!(registry.add(registered("new"), false).is_err());
        assert!(registry.remove("kept").is_err());
        assert!(registry.reached("kept", Some("down".into())).is_err());
        assert_eq!(registry.names(), ["kept"]);
        assert_eq!(registry.get("kept").unwrap().reachable, None);
        // The file holds the registry alone.
        std::fs::remove_dir(&file).unwrap();
        registry.add(registered("new"), false).unwrap();
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(saved.get("deliveries").is_none(), "{saved}");
        assert_eq!(
            Registry::open(dir.path()).unwrap().0.names(),
            ["kept", "new"]
        );
    }

    /// Changes made at once from many threads all reach the file, in the
    /// order they were made: the last write holds every agent.
    #[test]
    fn concurrent_changes_all_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (registry, _) = Registry::open(dir.path()).unwrap();
        std::thread::scope(|s| {
            for i in 0..8 {
                let registry = &registry;
                s.spawn(move || registry.add(registered(&format!("a{i}")), false).unwrap());
            }
        });
        let mut names = Registry::open(dir.path()).unwrap().0.names();
        names.sort();
        assert_eq!(names, (0..8).map(|i| format!("a{i}")).collect::<Vec<_>>());
    }
}
