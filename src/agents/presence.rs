//! Who is connected right now, and when each author last called: for the
//! roster (`agent.list`), never stored.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::lock;

/// Authors the presence list remembers: past it, those not connected go,
/// longest unseen first, down to nine tenths of it. (200,000 names said in
/// `hello` once made the roster 35 MB.) Who wrote is found in the entries.
pub const MAX_PRESENCE: usize = 1000;

/// One author's presence.
#[derive(Default, Clone, Copy)]
pub struct Seen {
    pub connected: usize,
    pub last_seen: i64,
}

#[derive(Default)]
pub struct Presence(Arc<Mutex<HashMap<String, Seen>>>);

/// Held by a connection that said hello as an author; dropping it (the
/// connection closing) says it went.
pub struct Here {
    presence: Arc<Mutex<HashMap<String, Seen>>>,
    author: String,
}

impl Drop for Here {
    fn drop(&mut self) {
        if let Some(e) = lock(&self.presence).get_mut(&self.author) {
            e.connected = e.connected.saturating_sub(1);
        }
    }
}

impl Presence {
    /// Says that a connection speaks as `author`, until the guard drops.
    pub fn here(&self, author: &str, now: i64) -> Here {
        let mut p = lock(&self.0);
        let e = p.entry(author.to_string()).or_default();
        e.connected += 1;
        e.last_seen = now;
        age(&mut p);
        Here {
            presence: self.0.clone(),
            author: author.to_string(),
        }
    }

    /// Notes a call by `author`.
    pub fn seen(&self, author: &str, now: i64) {
        let mut p = lock(&self.0);
        if let Some(e) = p.get_mut(author) {
            e.last_seen = now;
        } else {
            p.insert(
                author.to_string(),
                Seen {
                    connected: 0,
                    last_seen: now,
                },
            );
            age(&mut p);
        }
    }

    pub fn all(&self) -> HashMap<String, Seen> {
        lock(&self.0).clone()
    }
}

fn age(p: &mut HashMap<String, Seen>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presence_forgets_the_longest_unseen_past_its_cap() {
        let presence = Presence::default();
        let _kept = presence.here("connected-early", 0);
        for i in 0..200_000 {
            presence.seen(&format!("author-{i}"), 1 + i);
        }
        let p = presence.all();
        assert!(p.len() <= MAX_PRESENCE, "{}", p.len());
        assert!(
            p.contains_key("connected-early"),
            "a connected author stays"
        );
        assert!(p.contains_key("author-199999") && !p.contains_key("author-0"));
    }
}
