//! The roster (`agent.list`): the registered agents, and every author seen
//! lately with what each is doing — as far as the caller's guard lets it
//! see.

use super::Engine;
use crate::error::Result;
use crate::guard::Guard;
use crate::model::{self, Kind};
use crate::protocol::*;

impl Engine {
    /// The roster: registered agents, and every author seen within
    /// `seen_within` (default a day) with what it is doing.
    pub async fn agent_list(&self, p: AgentListParams, guard: &Guard) -> Result<AgentListResult> {
        let within = p.seen_within.unwrap_or(86_400).min(365 * 86_400) as i64;
        let now = self.now();
        let since = model::fmt_time(now - within * 1000);
        let recent = self
            .listed(
                ListParams {
                    since: Some(since),
                    limit: Some(MAX_LIST_LIMIT),
                    ..Default::default()
                },
                guard,
            )
            .await?;
        let doing = ListParams {
            status: Some(model::Status::Doing),
            limit: Some(500),
            ..Default::default()
        };
        let doing = self.listed(doing, guard).await?;
        let questions = ListParams {
            kind: Some(Kind::Question),
            limit: Some(500),
            ..Default::default()
        };
        let questions = self.listed(questions, guard).await?;
        // To a token, the roster holds what its pads show: the agents its
        // grant names (their last error, which may quote any pad, left
        // out), and the authors who wrote in its pads — not who else is
        // connected.
        let scoped = guard.grant().is_some();
        let mut registered = self.0.agents.registry.names();
        registered.retain(|a| guard.may_hand_to(a));
        let mut presence = self.0.agents.presence.all();
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

    /// The entries `p` lists, as the caller may see them.
    async fn listed(&self, p: ListParams, guard: &Guard) -> Result<Vec<model::Entry>> {
        Ok(self.list(p, guard).await?.entries)
    }
}
