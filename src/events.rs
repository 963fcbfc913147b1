//! Change events and subscriptions, and the `ask` calls waiting for one
//! change: a question's answer.
//!
//! Writers publish to a broadcast ring and move on: `send` never waits. Each
//! subscriber reads the ring at its own pace; one that falls more than the
//! ring's capacity behind gets a single `lagged` notice with the number of
//! events it missed, and carries on from the oldest event still held. A
//! token's subscription is told how many of its own pads' events it missed:
//! while one is open, each event is numbered and its pad kept among the
//! last `RECENT`, and the missed numbers are counted there.
//!
//! An engine of a team whose link to the other engines dropped missed what
//! they sent meanwhile: once it listens again it says so (`Bus::missed`),
//! and every subscriber gets a `lagged` notice as if it had fallen behind.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, oneshot};

use crate::model::{Entry, Kind, NEEDS_EYES};
use crate::protocol::Action;

/// How many events a subscriber may fall behind before it lags.
pub const RING: usize = 4096;
/// How many recent events' pads are kept, while a token subscribes, to
/// count what it missed in its own pads.
pub const RECENT: usize = 16 * RING;

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
    /// Its number among the events while a token subscribes (`Recent`);
    /// 0 otherwise.
    pub seq: u64,
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
    recent: Arc<Recent>,
    /// Events missed from the other engines of a team, in all
    /// (`Bus::missed`): each rise is a `lagged` notice to every subscriber.
    gap: tokio::sync::watch::Sender<u64>,
    /// The `ask` calls waiting for a question's answer: told of that one
    /// change, not of every event (`engine/threads.rs`).
    pub(crate) waiters: Waiters,
}

/// The `ask` calls waiting, by question id.
#[derive(Default)]
pub(crate) struct Waiters(Mutex<HashMap<String, Vec<oneshot::Sender<Entry>>>>);

impl Waiters {
    /// A waiter for `question`'s answer, and whether it is the first.
    pub(crate) fn register(&self, question: &str) -> (oneshot::Receiver<Entry>, bool) {
        let (tx, rx) = oneshot::channel();
        let mut map = self.lock();
        let list = map.entry(question.to_string()).or_default();
        list.push(tx);
        (rx, list.len() == 1)
    }

    /// The questions an `ask` waits for now.
    pub(crate) fn questions(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Hands `answer` to everyone waiting on `question`.
    pub(crate) fn answer(&self, question: &str, answer: &Entry) {
        let waiting = self.lock().remove(question);
        for tx in waiting.into_iter().flatten() {
            let _ = tx.send(answer.clone());
        }
    }

    /// Whether an `ask` here waits for `question`'s answer.
    pub(crate) fn is_waiting(&self, question: &str) -> bool {
        self.lock().contains_key(question)
    }

    /// Forgets waiters that gave up (timed out, or their client went
    /// away); whether that left nobody waiting for `question` (an answered
    /// question's waiters are gone already: that is not giving up).
    pub(crate) fn forget_gone(&self, question: &str) -> bool {
        let mut map = self.lock();
        if let Some(list) = map.get_mut(question) {
            list.retain(|tx| !tx.is_closed());
            if list.is_empty() {
                map.remove(question);
                return true;
            }
        }
        false
    }

    pub(crate) fn count(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<oneshot::Sender<Entry>>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pads of the last `RECENT` events, numbered, kept while a scoped
/// subscription (a token's) is open.
#[derive(Default)]
struct Recent {
    /// Scoped subscriptions open.
    scoped: AtomicUsize,
    log: Mutex<RecentLog>,
}

#[derive(Default)]
struct RecentLog {
    /// The last event's number.
    last: u64,
    pads: VecDeque<(u64, Box<str>)>,
}

impl Default for Bus {
    fn default() -> Self {
        Bus {
            tx: broadcast::channel(RING).0,
            next_id: AtomicU64::new(1),
            lagged: Arc::new(AtomicU64::new(0)),
            outbox: std::sync::OnceLock::new(),
            recent: Arc::default(),
            gap: tokio::sync::watch::Sender::new(0),
            waiters: Waiters::default(),
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
            seq: 0,
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
            seq: 0,
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
            seq: 0,
        });
    }

    fn send(&self, event: Event) {
        self.ring(event, true);
    }

    /// Publishes an event another engine of the team sent (not sent back).
    pub fn publish_remote(&self, event: Event) {
        self.ring(event, false);
    }

    /// Puts `event` in the ring (and, `relay`, the team's outbox). While a
    /// token subscribes, numbered and its pad kept, under one lock so the
    /// numbers run in the ring's order.
    fn ring(&self, mut event: Event, relay: bool) {
        let mut log = (self.recent.scoped.load(Ordering::Acquire) > 0)
            .then(|| self.recent.log.lock().unwrap_or_else(|p| p.into_inner()));
        if let Some(log) = &mut log {
            log.last += 1;
            event.seq = log.last;
            let kept = (log.last, Box::from(event.pad.as_str()));
            log.pads.push_back(kept);
            if log.pads.len() > RECENT {
                log.pads.pop_front();
            }
        }
        let event = Arc::new(event);
        if relay {
            if let Some(outbox) = self.outbox.get() {
                let _ = outbox.send(event.clone());
            }
        }
        let _ = self.tx.send(event);
    }

    /// Tells every subscriber it missed about `n` events (at least one):
    /// the other engines' events sent while this engine could not hear
    /// them. Each catches up with `entry.list`.
    pub fn missed(&self, n: u64) {
        self.gap.send_modify(|g| *g += n.max(1));
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
        // A token's is counted, and its receiver made, under the lock: every
        // event it receives is numbered, from the one after `last`.
        let log = filter
            .scope
            .is_some()
            .then(|| self.recent.log.lock().unwrap_or_else(|p| p.into_inner()));
        if log.is_some() {
            self.recent.scoped.fetch_add(1, Ordering::AcqRel);
        }
        let rx = self.tx.subscribe();
        let gap = self.gap.subscribe();
        let gap_seen = *gap.borrow();
        let last = log.as_ref().map_or(0, |l| l.last);
        drop(log);
        Subscription {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            rx,
            recent: filter.scope.is_some().then(|| self.recent.clone()),
            filter,
            lagged: self.lagged.clone(),
            last,
            gap_seen,
            gap,
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
    /// Whether an event of `pad` could pass (its tags and kinds aside).
    fn shows_pad(&self, pad: &str) -> bool {
        self.in_scope(pad) && self.asks_for(pad)
    }

    /// Whether the caller may read `pad`.
    fn in_scope(&self, pad: &str) -> bool {
        self.scope
            .as_ref()
            .is_none_or(|s| s.iter().any(|p| crate::access::pattern_matches(p, pad)))
    }

    /// Whether the subscription asked for `pad`'s events.
    fn asks_for(&self, pad: &str) -> bool {
        self.pads.is_empty()
            || self.pads.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => pad.starts_with(prefix),
                None => p == pad,
            })
    }

    fn matches(&self, e: &Event) -> bool {
        if !self.in_scope(&e.pad) {
            return false;
        }
        if e.kind == EventType::NeedsEyes {
            return true;
        }
        let pad_ok = self.asks_for(&e.pad);
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
    /// A scoped subscription's view of the recent events' pads, and the
    /// number of the last event it received.
    recent: Option<Arc<Recent>>,
    last: u64,
    /// The bus's count of events missed from the other engines; a rise
    /// since this subscription last looked is a `lagged` notice.
    gap: tokio::sync::watch::Receiver<u64>,
    gap_seen: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(r) = &self.recent {
            r.scoped.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Subscription {
    /// The next matching event, or what was missed; `None` when the engine
    /// stops.
    pub async fn next(&mut self) -> Option<Notice> {
        loop {
            let received = tokio::select! {
                biased;
                Ok(()) = self.gap.changed() => None,
                r = self.rx.recv() => Some(r),
            };
            let Some(received) = received else {
                let now = *self.gap.borrow_and_update();
                let missed = now - std::mem::replace(&mut self.gap_seen, now);
                self.lagged.fetch_add(missed, Ordering::Relaxed);
                return Some(Notice::Lagged(missed));
            };
            match received {
                Ok(e) => {
                    self.last = self.last.max(e.seq);
                    if self.filter.matches(&e) {
                        return Some(Notice::Event(e));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    self.lagged.fetch_add(missed, Ordering::Relaxed);
                    return Some(Notice::Lagged(self.missed(missed)));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// Of the `n` events just missed, those it would have been shown: all
    /// of them to an unscoped subscription; to a token's, the ones of its
    /// pads (and of the pads it asked for) among the recent events kept.
    fn missed(&mut self, n: u64) -> u64 {
        let Some(recent) = &self.recent else {
            return n;
        };
        let (from, to) = (self.last + 1, self.last + n);
        self.last = to;
        let log = recent.log.lock().unwrap_or_else(|p| p.into_inner());
        log.pads
            .iter()
            .filter(|(seq, pad)| (from..=to).contains(seq) && self.filter.shows_pad(pad))
            .count() as u64
    }

    /// `n` as its notification's `params`, to be serialized (through the
    /// seal, for a token: `seal::to_value`).
    pub fn params<'a>(&self, n: &'a Notice) -> Params<'a> {
        match n {
            Notice::Event(e) => Params::Event {
                subscription: self.id,
                kind: e.kind,
                pad: &e.pad,
                entry: e.entry.as_ref(),
                trashed: e.trashed.as_ref(),
                delivery: e.delivery.as_ref(),
            },
            Notice::Lagged(missed) => Params::Lagged {
                subscription: self.id,
                kind: "lagged",
                missed: *missed,
            },
        }
    }
}

/// What a subscription has next for its subscriber.
pub enum Notice {
    Event(Arc<Event>),
    /// It fell behind: this many events of its pads were missed.
    Lagged(u64),
}

/// A notification's `params`: an event, or `lagged`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Params<'a> {
    Event {
        subscription: u64,
        #[serde(rename = "type")]
        kind: EventType,
        pad: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        entry: Option<&'a Entry>,
        #[serde(skip_serializing_if = "Option::is_none")]
        trashed: Option<&'a Trashed>,
        #[serde(skip_serializing_if = "Option::is_none")]
        delivery: Option<&'a crate::protocol::Delivery>,
    },
    Lagged {
        subscription: u64,
        #[serde(rename = "type")]
        kind: &'static str,
        missed: u64,
    },
}
