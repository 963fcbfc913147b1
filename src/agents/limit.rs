//! How many replies an agent may post a minute.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use super::lock;

/// Replies one agent may have posted in a minute: past it, its tasks are not
/// looked at again until the minute frees up, so nothing it says is lost and
/// no agent floods a pad.
pub const MAX_REPLIES_PER_MINUTE: usize = 30;
const MINUTE: i64 = 60_000;

/// When each agent's replies of the last minute were posted (ms).
#[derive(Default)]
pub struct ReplyLimit(Mutex<HashMap<String, VecDeque<i64>>>);

impl ReplyLimit {
    /// Notes a reply of `agent` posted at `now`.
    pub fn replied(&self, agent: &str, now: i64) {
        lock(&self.0)
            .entry(agent.to_string())
            .or_default()
            .push_back(now);
    }

    /// When `agent` may be looked at again, if it has posted its minute's
    /// worth of replies (`MAX_REPLIES_PER_MINUTE`); `None`: now.
    pub fn room(&self, agent: &str, now: i64) -> Option<i64> {
        let mut r = lock(&self.0);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_past_its_replies_a_minute_waits_for_the_minute_to_free_up() {
        let limit = ReplyLimit::default();
        assert_eq!(limit.room("helper", 0), None);
        for i in 0..MAX_REPLIES_PER_MINUTE as i64 {
            assert_eq!(limit.room("helper", 1_000 + i), None);
            limit.replied("helper", 1_000 + i);
        }
        assert_eq!(limit.room("helper", 5_000), Some(61_000));
        assert_eq!(limit.room("other", 5_000), None, "per agent");
        assert_eq!(limit.room("helper", 61_000), None, "the first aged out");
        assert_eq!(limit.room("helper", 200_000), None);
        assert!(lock(&limit.0).is_empty(), "forgotten");
    }
}
