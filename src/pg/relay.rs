//! Events across engines: each engine sends what it publishes to the others
//! through PostgreSQL's NOTIFY, and publishes what the others send as if it
//! had happened here (subscribers, the desktop app's notifications, `ask`).
//!
//! A notification is delivered after its transaction commits, in commit
//! order, to every listening connection. Its payload is the event itself
//! when it fits in NOTIFY's 8,000 bytes; a larger one is stored in `events`
//! and the notification names its row. Events are live, not a log: an
//! engine whose listening connection drops misses what was sent meanwhile
//! (its subscribers get one `lagged` notice) and then carries on.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::PgListener;
use tokio::sync::mpsc;

use super::PgStore;
use crate::events::{Event, EventType};
use crate::model::Entry;

const EVENTS: &str = "pad_events";
const TOKENS: &str = "pad_tokens";
/// Payloads up to this size go in the notification itself.
const INLINE_PAYLOAD: usize = 7_900;
/// Stored payloads are dropped after this long.
const KEEP_STORED: &str = "10 minutes";

/// What another engine said.
pub enum Incoming {
    Event(Box<Event>),
    /// Tokens were added or revoked (or, after the link dropped, may have
    /// been): reload the grants.
    TokensChanged,
}

#[derive(Serialize, Deserialize)]
struct Wire {
    /// The engine that sent it (its own are not published twice).
    origin: String,
    kind: Option<EventType>,
    pad: Option<String>,
    entry: Option<Entry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trashed: Option<crate::events::Trashed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delivery: Option<crate::protocol::Delivery>,
    /// The `events` row holding the event, when it was too large to inline.
    stored: Option<i64>,
}

/// The sending half; the receiving half is a task `start` spawns.
pub struct Relay {
    tx: mpsc::UnboundedSender<Arc<Event>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Relay")
    }
}

impl Relay {
    /// Starts listening (calling `on` for what other engines send) and
    /// sending; both end when `stop` fires. Returns once this engine
    /// listens, so nothing written after the engine opened is missed.
    pub async fn start(
        store: PgStore,
        on: impl Fn(Incoming) + Send + Sync + 'static,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> Relay {
        let origin = format!("{:016x}", fastrand::u64(..));
        let (tx, mut rx) = mpsc::unbounded_channel::<Arc<Event>>();
        let sender = {
            let (store, origin) = (store.clone(), origin.clone());
            async move {
                let mut failing = false;
                while let Some(first) = rx.recv().await {
                    let mut batch = vec![first];
                    while let Ok(more) = rx.try_recv() {
                        batch.push(more);
                    }
                    let r = send(&store, &origin, &batch).await;
                    match (&r, failing) {
                        (Err(e), false) => tracing::error!(
                            "events cannot reach the other engines ({e}); they will again once the database answers"
                        ),
                        (Ok(()), true) => tracing::info!("events reach the other engines again"),
                        _ => {}
                    }
                    failing = r.is_err();
                }
            }
        };
        tokio::spawn(sender);
        let first = connect(&store).await;
        if let Err(e) = &first {
            tracing::error!("cannot listen for the other engines' events ({e}); retrying");
        }
        tokio::spawn(async move {
            tokio::select! {
                _ = stop.wait_for(|s| *s) => {}
                _ = listen(store, origin, first.ok(), on) => {}
            }
        });
        Relay { tx }
    }

    /// Sends an event this engine published to the other engines.
    /// Where to put events for the other engines (`Bus::relay_to`).
    pub fn outbox(&self) -> crate::events::Outbox {
        self.tx.clone()
    }
}

async fn send(store: &PgStore, origin: &str, batch: &[Arc<Event>]) -> sqlx::Result<()> {
    let mut payloads = Vec::with_capacity(batch.len());
    for e in batch {
        let wire = Wire {
            origin: origin.to_string(),
            kind: Some(e.kind),
            pad: Some(e.pad.clone()),
            entry: e.entry.clone(),
            trashed: e.trashed.clone(),
            delivery: e.delivery.clone(),
            stored: None,
        };
        let text = serde_json::to_string(&wire).expect("events serialize");
        if text.len() <= INLINE_PAYLOAD {
            payloads.push(text);
            continue;
        }
        let n: i64 = sqlx::query_scalar("INSERT INTO events (body) VALUES ($1) RETURNING n")
            .bind(&text)
            .fetch_one(store.pool())
            .await?;
        let stub = Wire {
            origin: origin.to_string(),
            kind: None,
            pad: None,
            entry: None,
            trashed: None,
            delivery: None,
            stored: Some(n),
        };
        payloads.push(serde_json::to_string(&stub).expect("events serialize"));
    }
    sqlx::query(
        "SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS t(p, i) ORDER BY i",
    )
    .bind(EVENTS)
    .bind(&payloads)
    .execute(store.pool())
    .await?;
    if fastrand::u8(..) == 0 {
        sqlx::query(sql!(
            "DELETE FROM events WHERE at < now() - interval '{KEEP_STORED}'"
        ))
        .execute(store.pool())
        .await?;
    }
    Ok(())
}

async fn connect(store: &PgStore) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect(store.url()).await?;
    listener.listen_all([EVENTS, TOKENS]).await?;
    Ok(listener)
}

async fn listen(
    store: PgStore,
    origin: String,
    mut first: Option<PgListener>,
    on: impl Fn(Incoming),
) {
    let mut failing = first.is_none();
    loop {
        let mut listener = match first.take() {
            Some(l) => l,
            None => match connect(&store).await {
                Ok(l) => l,
                Err(e) => {
                    if !failing {
                        tracing::error!(
                            "cannot listen for the other engines' events ({e}); retrying"
                        );
                        failing = true;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
        };
        if std::mem::take(&mut failing) {
            tracing::info!("listening for the other engines' events again");
            // Events sent while we were away are gone (the log says so);
            // tokens are read again.
            on(Incoming::TokensChanged);
        }
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) if n.channel() == TOKENS => on(Incoming::TokensChanged),
                Ok(Some(n)) => {
                    if let Some(event) = receive(&store, &origin, n.payload()).await {
                        on(Incoming::Event(Box::new(event)));
                    }
                }
                // The connection dropped: try_recv reconnects on the next call.
                Ok(None) => {
                    tracing::warn!("the link to the other engines' events dropped; events sent meanwhile are missed");
                    on(Incoming::TokensChanged);
                }
                Err(e) => {
                    tracing::error!("lost the other engines' events ({e}); reconnecting");
                    failing = true;
                    break;
                }
            }
        }
    }
}

async fn receive(store: &PgStore, origin: &str, payload: &str) -> Option<Event> {
    let mut wire: Wire = match serde_json::from_str(payload) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(
                "an event from another engine could not be read ({e}); is it a different version?"
            );
            return None;
        }
    };
    if wire.origin == origin {
        return None;
    }
    if let Some(n) = wire.stored {
        let body: String = sqlx::query_scalar("SELECT body FROM events WHERE n = $1")
            .bind(n)
            .fetch_optional(store.pool())
            .await
            .ok()??;
        wire = match serde_json::from_str(&body) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("an event from another engine could not be read ({e}); is it a different version?");
                return None;
            }
        };
    }
    Some(Event {
        kind: wire.kind?,
        pad: wire.pad?,
        entry: wire.entry,
        trashed: wire.trashed,
        delivery: wire.delivery,
        seq: 0,
    })
}
