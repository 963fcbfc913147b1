//! Change events and subscriptions.
//!
//! Writers publish to a broadcast ring and move on: `send` never waits. Each
//! subscriber reads the ring at its own pace; one that falls more than the
//! ring's capacity behind gets a single `lagged` notice with the number of
//! events it missed, and carries on from the oldest event still held.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::model::{Entry, Kind, NEEDS_EYES};
use crate::protocol::Action;

/// How many events a subscriber may fall behind before it lags.
pub const RING: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    Created,
    Updated,
    Deleted,
    NeedsEyes,
    Reminder,
    PadExpired,
    /// An `ask` began waiting for this question's answer (`entry`).
    Waiting,
    /// No `ask` waits for this question any more (it timed out, or its
    /// client went away); an answer still reaches the asker's inbox.
    StoppedWaiting,
    /// One call (`entry.delete`, `pad.clear`) moved entries to the trash:
    /// the event's `trashed` says who, how many, whose, and the change
    /// that `entry.restore` undoes.
    Trashed,
    /// An addressed note's delivery to an agent moved on: the event's
    /// `delivery` says where it stands (sent, working, waiting for you, …).
    Delivery,
}

/// What one call moved to the trash (`trashed` events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Trashed {
    pub change: i64,
    pub by: String,
    pub action: Action,
    pub count: usize,
    /// How many of them each author wrote.
    pub authors: BTreeMap<String, usize>,
}

#[derive(Debug)]
pub struct Event {
    pub kind: EventType,
    pub pad: String,
    pub entry: Option<Entry>,
    /// `trashed` events only.
    pub trashed: Option<Trashed>,
    /// `delivery` events only.
    pub delivery: Option<crate::protocol::Delivery>,
}

/// A queue events also go to, besides this engine's subscribers.
pub type Outbox = tokio::sync::mpsc::UnboundedSender<Arc<Event>>;

pub struct Bus {
    tx: broadcast::Sender<Arc<Event>>,
    next_id: AtomicU64,
    /// Events subscribers missed by lagging, in all.
    lagged: Arc<AtomicU64>,
    /// Where events also go, for the other engines of a team (the
    /// PostgreSQL relay's queue).
    outbox: std::sync::OnceLock<Outbox>,
}

impl Default for Bus {
    fn default() -> Self {
        Bus {
            tx: broadcast::channel(RING).0,
            next_id: AtomicU64::new(1),
            lagged: Arc::new(AtomicU64::new(0)),
            outbox: std::sync::OnceLock::new(),
        }
    }
}

impl Bus {
    pub fn publish(&self, kind: EventType, pad: &str, entry: Option<Entry>) {
        if self.tx.receiver_count() == 0 && self.outbox.get().is_none() {
            return;
        }
        self.send(Event {
            kind,
            pad: pad.to_owned(),
            entry,
            trashed: None,
            delivery: None,
        });
    }

    /// Says that one call moved entries of `pad` to the trash.
    pub fn trashed(&self, pad: &str, trashed: Trashed) {
        if self.tx.receiver_count() == 0 && self.outbox.get().is_none() {
            return;
        }
        self.send(Event {
            kind: EventType::Trashed,
            pad: pad.to_owned(),
            entry: None,
            trashed: Some(trashed),
            delivery: None,
        });
    }

    /// Says where an addressed note's delivery to an agent stands.
    pub fn delivery(&self, pad: &str, delivery: crate::protocol::Delivery) {
        if self.tx.receiver_count() == 0 && self.outbox.get().is_none() {
            return;
        }
        self.send(Event {
            kind: EventType::Delivery,
            pad: pad.to_owned(),
            entry: None,
            trashed: None,
            delivery: Some(delivery),
        });
    }

    fn send(&self, event: Event) {
        let event = Arc::new(event);
        if let Some(outbox) = self.outbox.get() {
            let _ = outbox.send(event.clone());
        }
        let _ = self.tx.send(event);
    }

    /// Publishes an event another engine of the team sent (not sent back).
    pub fn publish_remote(&self, event: Event) {
        let _ = self.tx.send(Arc::new(event));
    }

    /// Sends every event published from now on to `outbox` too (for the
    /// other engines of a team).
    pub fn relay_to(&self, outbox: Outbox) {
        let _ = self.outbox.set(outbox);
    }

    /// Publishes `created` (or `updated`) and, when the entry newly carries the
    /// `needs_eyes` tag, a `needs_eyes` event too.
    pub fn entry_changed(&self, kind: EventType, before: Option<&Entry>, after: &Entry) {
        if self.tx.receiver_count() == 0 && self.outbox.get().is_none() {
            return;
        }
        let newly_needs_eyes =
            after.has_tag(NEEDS_EYES) && !before.is_some_and(|b| b.has_tag(NEEDS_EYES));
        self.publish(kind, &after.pad, Some(after.clone()));
        if newly_needs_eyes {
            self.publish(EventType::NeedsEyes, &after.pad, Some(after.clone()));
        }
    }

    pub fn subscribers(&self) -> u64 {
        self.tx.receiver_count() as u64
    }

    /// Events subscribers have missed by falling behind, since start.
    pub fn lagged(&self) -> u64 {
        self.lagged.load(Ordering::Relaxed)
    }

    pub fn subscribe(&self, filter: Filter) -> Subscription {
        Subscription {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            rx: self.tx.subscribe(),
            filter,
            lagged: self.lagged.clone(),
        }
    }
}

/// Which events a subscriber wants. Empty lists match everything; `pads`
/// entries ending in `*` match by prefix. `needs_eyes` events reach every
/// subscriber whatever its filter: they exist to get attention.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub pads: Vec<String>,
    pub tags: Vec<String>,
    pub kinds: Vec<Kind>,
    /// The pads a token may read: nothing outside them gets through, not
    /// even `needs_eyes`. `None`: every pad.
    pub scope: Option<Vec<String>>,
}

impl Filter {
    fn matches(&self, e: &Event) -> bool {
        if let Some(scope) = &self.scope {
            if !scope
                .iter()
                .any(|p| crate::access::pattern_matches(p, &e.pad))
            {
                return false;
            }
        }
        if e.kind == EventType::NeedsEyes {
            return true;
        }
        let pad_ok = self.pads.is_empty()
            || self.pads.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => e.pad.starts_with(prefix),
                None => *p == e.pad,
            });
        let (tags_ok, kinds_ok) = match &e.entry {
            Some(entry) => (
                self.tags.is_empty() || self.tags.iter().any(|t| entry.has_tag(t)),
                self.kinds.is_empty() || self.kinds.contains(&entry.kind),
            ),
            None => (self.tags.is_empty(), self.kinds.is_empty()),
        };
        pad_ok && tags_ok && kinds_ok
    }
}

pub struct Subscription {
    pub id: u64,
    rx: broadcast::Receiver<Arc<Event>>,
    filter: Filter,
    lagged: Arc<AtomicU64>,
}

impl Subscription {
    /// The next matching event as its `params` object, or `None` when the engine stops.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            match self.rx.recv().await {
                Ok(e) if self.filter.matches(&e) => return Some(self.render(&e)),
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    self.lagged.fetch_add(missed, Ordering::Relaxed);
                    return Some(json!({
                        "subscription": self.id,
                        "type": "lagged",
                        "missed": missed,
                    }));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    fn render(&self, e: &Event) -> Value {
        let mut v = json!({
            "subscription": self.id,
            "type": e.kind,
            "pad": e.pad,
        });
        if let Some(entry) = &e.entry {
            v["entry"] = serde_json::to_value(entry).expect("entries serialize");
        }
        if let Some(t) = &e.trashed {
            v["trashed"] = serde_json::to_value(t).expect("trash notes serialize");
        }
        if let Some(d) = &e.delivery {
            v["delivery"] = serde_json::to_value(d).expect("deliveries serialize");
        }
        v
    }
}
