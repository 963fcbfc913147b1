//! An engine in a team: what the other engines on the same PostgreSQL
//! database do reaches this one's subscribers, `ask` waiters and grants.

use std::sync::Arc;

use super::Engine;
use crate::events::EventType;
use crate::pg::{Incoming, PgStore, Relay};

impl Engine {
    /// Sends what this engine publishes to the other engines, and publishes
    /// what they send; ends with the engine.
    pub(super) async fn relay_events(&self, store: PgStore) {
        let weak = Arc::downgrade(&self.0);
        let relay = Relay::start(
            store,
            move |incoming| {
                if let Some(inner) = weak.upgrade() {
                    Engine(inner).received(incoming);
                }
            },
            self.0.stop.subscribe(),
        )
        .await;
        self.0.bus.relay_to(relay.outbox());
    }

    fn received(&self, incoming: Incoming) {
        match incoming {
            Incoming::Event(event) => {
                // An answer written on another engine ends an `ask` here.
                let answered = match (&event.kind, &event.entry) {
                    (EventType::Updated, Some(q)) if self.0.bus.waiters.is_waiting(&q.id) => {
                        q.answer.clone().map(|a| (q.id.clone(), a))
                    }
                    _ => None,
                };
                if let Some((question, answer)) = answered {
                    let engine = self.clone();
                    tokio::spawn(async move {
                        if let Ok(answer) = engine.get(&answer).await {
                            engine.0.bus.waiters.answer(&question, &answer);
                        }
                    });
                }
                self.0.bus.publish_remote(*event);
            }
            Incoming::TokensChanged => {
                let engine = self.clone();
                tokio::spawn(async move { engine.reload_grants().await });
            }
            Incoming::Reconnected { changed } => {
                // What the other engines did while this one could not hear
                // them: subscribers catch up (`entry.list`), grants are
                // read again, and each waiting `ask` looks for its answer.
                self.0.bus.missed(changed);
                let engine = self.clone();
                tokio::spawn(async move {
                    engine.reload_grants().await;
                    engine.recheck_asks().await;
                });
            }
        }
    }

    /// Ends each `ask` here whose question was answered meanwhile.
    async fn recheck_asks(&self) {
        for question in self.0.bus.waiters.questions() {
            let Ok(q) = self.get(&question).await else {
                continue;
            };
            if let Some(answer) = &q.answer {
                if let Ok(answer) = self.get(answer).await {
                    self.0.bus.waiters.answer(&question, &answer);
                }
            }
        }
    }

    /// Reads every token again: another engine created or revoked one. A
    /// token this engine made or revoked while the tokens were being read
    /// may be missing from what was read (a NOTIFY of an earlier change
    /// raced it): then they are read again, so a reload never drops a token
    /// created a moment before.
    async fn reload_grants(&self) {
        loop {
            let seen = self.0.tokens.seen();
            match self.db().tokens().await {
                Ok(rows) => {
                    if self.0.tokens.replace(seen, rows) {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!("cannot reload tokens after another engine changed them: {e}");
                    return;
                }
            }
        }
    }
}
