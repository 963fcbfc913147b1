//! The activity view of `stats`: what has been happening lately.

use super::Engine;
use crate::access::Grant;
use crate::error::Result;
use crate::model::fmt_time;
use crate::protocol::{Activity, PadActivity, TagCount};
use crate::store::PadRow;

impl Engine {
    /// Write rate over the last hour, top tags, busiest and stalest pads.
    /// Runs on a blocking thread (it reads the last hour's rows).
    /// To a token, only its pads: their tags and their places in the lists.
    pub(super) fn activity(&self, now: i64, grant: Option<&Grant>) -> Result<Activity> {
        let store = self.store();
        let entries_per_minute =
            store.writes_per_minute(now, 60, |pad| grant.is_none_or(|g| g.covers(pad)))?;
        let mut top_tags = store.tags(&super::scoped(Default::default(), grant)?)?;
        top_tags.truncate(10);
        let covered = |p: &PadRow| grant.is_none_or(|g| g.covers(&p.name));
        // A token's pads may be anywhere in the order: look past the top 5.
        let depth = if grant.is_some() { 10_000 } else { 5 };
        let pad = |p: PadRow| PadActivity {
            idle_seconds: ((now - p.last_write_at) / 1000).max(0),
            expires_at: p
                .ttl_seconds
                .map(|ttl| fmt_time(p.last_write_at + ttl * 1000)),
            last_write_at: fmt_time(p.last_write_at),
            name: p.name,
            entries: p.entries,
        };
        Ok(Activity {
            entries_last_hour: entries_per_minute.iter().sum(),
            entries_per_minute,
            top_tags: top_tags
                .into_iter()
                .map(|(tag, count)| TagCount { tag, count })
                .collect(),
            busiest_pads: store
                .pads_by(false, depth)?
                .into_iter()
                .filter(covered)
                .take(5)
                .map(pad)
                .collect(),
            stalest_pads: store
                .pads_by(true, depth)?
                .into_iter()
                .filter(covered)
                .take(5)
                .map(pad)
                .collect(),
            avg_entry_bytes: (store.content_size()?.1 * 10.0).round() / 10.0,
        })
    }
}
