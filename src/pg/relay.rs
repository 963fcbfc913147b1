//! Events across engines: each engine sends what it publishes to the others
//! through PostgreSQL's NOTIFY, and publishes what the others send as if it
//! had happened here (subscribers, the desktop app's notifications, `ask`).
//!
//! A notification is delivered after its transaction commits, in commit
//! order, to every listening connection. Its payload is the event itself
//! when it fits in NOTIFY's 8,000 bytes; a larger one is stored in `events`
//! and the notification names its row. Events are live, not a log: an
//! engine whose listening connection drops misses what was sent meanwhile.
//! Listening again is the first thing it restores (a connection of its own,
//! tried every `RETRY`), and then it says what it may have missed
//! (`Incoming::Reconnected`): its subscribers are told they lagged, its
//! waiting `ask`s look for their answers, its grants are read again.

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
/// How often a lost listening connection is tried again.
const RETRY: Duration = Duration::from_millis(200);

/// What another engine said.
pub enum Incoming {
    Event(Box<Event>),
    /// Tokens were added or revoked: reload the grants.
    TokensChanged,
    /// Listening again after the link dropped: whatever the other engines
    /// sent meanwhile was missed — `changed` entries were written since a
    /// moment before it dropped (this engine's own among them), and tokens
    /// may have changed.
    Reconnected {
        changed: u64,
    },
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

/// A listening connection of its own (not one of the store's pool, whose
/// calls have other limits), given up on after a second so the retries
/// stay `RETRY` apart however the database fails.
async fn connect(store: &PgStore) -> sqlx::Result<PgListener> {
    let options: sqlx::postgres::PgConnectOptions = store.url().parse()?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(1))
        .connect_lazy_with(
            options
                .application_name("scratchpad-events")
                .options(super::PLANNER_SETTINGS),
        );
    let mut listener = PgListener::connect_with(&pool).await?;
    listener.ignore_pool_close_event(true);
    listener.listen_all([EVENTS, TOKENS]).await?;
    Ok(listener)
}

/// Entries written since `since` (ms), for what a link that dropped may
/// have missed; 1 when the database cannot say.
async fn changed_since(store: &PgStore, since: i64) -> u64 {
    let counted =
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM entries WHERE updated_at >= $1")
            .bind(since)
            .fetch_one(store.pool());
    match tokio::time::timeout(Duration::from_secs(3), counted).await {
        Ok(Ok(n)) => n.max(1) as u64,
        _ => 1,
    }
}

async fn listen(
    store: PgStore,
    origin: String,
    mut first: Option<PgListener>,
    on: impl Fn(Incoming),
) {
    // When the link dropped (ms), a moment early: a notification in flight
    // then was missed too.
    let mut dropped_at: Option<i64> = first
        .is_none()
        .then(|| crate::clock::system_now_ms() - 2_000);
    let mut failing = first.is_none();
    loop {
        let mut listener = match first.take() {
            Some(l) => l,
            None => match connect(&store).await {
                Ok(l) => l,
                Err(e) => {
                    if !std::mem::replace(&mut failing, true) {
                        tracing::error!(
                            "cannot listen for the other engines' events ({e}); retrying"
                        );
                    }
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            },
        };
        if let Some(since) = dropped_at.take() {
            failing = false;
            let changed = changed_since(&store, since).await;
            tracing::warn!("listening for the other engines' events again; subscribers are told they may have missed up to {changed}");
            on(Incoming::Reconnected { changed });
        }
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) if n.channel() == TOKENS => on(Incoming::TokensChanged),
                Ok(Some(n)) => {
                    if let Some(event) = receive(&store, &origin, n.payload()).await {
                        on(Incoming::Event(Box::new(event)));
                    }
                }
                // The connection dropped: listen on a new one.
                Ok(None) => {
                    tracing::warn!("the link to the other engines' events dropped; reconnecting");
                    dropped_at = Some(crate::clock::system_now_ms() - 2_000);
                    break;
                }
                Err(e) => {
                    tracing::error!("lost the other engines' events ({e}); reconnecting");
                    dropped_at = Some(crate::clock::system_now_ms() - 2_000);
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
