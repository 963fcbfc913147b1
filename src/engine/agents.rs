//! Reaching agents: `agent.add`, `agent.list` (the roster), `agent.remove`,
//! `agent.deliveries` — the front of the agents' parts (`crate::agents`)
//! and of the dispatcher (`engine/dispatch.rs`), which carries addressed
//! notes to A2A agents and writes what they say through `Said`.

use super::dispatch::{stored, wall_ms};
use super::Engine;
use crate::agents::a2a;
use crate::agents::{Agents, Conversation, Registered};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model;
use crate::protocol::*;
use crate::storage::Storage;

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
}
