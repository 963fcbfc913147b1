//! `stats`: the engine's figures, and their activity view — what has been
//! happening lately.

use std::sync::atomic::Ordering;

use super::{scoped, Engine};
use crate::access::Grant;
use crate::error::Result;
use crate::model::fmt_time;
use crate::protocol::{Activity, PadActivity, SemanticInfo, StatsParams, StatsResult, TagCount};
use crate::semantic;
use crate::store::{Durability, EntryFilter, PadRow};

impl Engine {
    /// Write rate over the last hour, top tags, busiest and stalest pads.
    /// Runs on a blocking thread (it reads the last hour's rows).
    /// To a token, only its pads: their tags and their places in the lists.
    pub(super) fn activity(&self, now: i64, grant: Option<&Grant>) -> Result<Activity> {
        let store = self.store();
        let entries_per_minute =
            store.writes_per_minute(now, 60, |pad| grant.is_none_or(|g| g.covers(pad)))?;
        let mut top_tags = store.tags(&scoped(Default::default(), grant)?)?;
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

    /// The engine's figures. To a token, counts and activity cover only the
    /// pads it may read: no other pad's name, tag or size shows.
    pub async fn stats(&self, p: StatsParams, grant: Option<&Grant>) -> Result<StatsResult> {
        let now = self.now();
        // Before anything reads the store: reading applies the journal.
        let journal_queue = self.sqlite("stats")?.journal_queue();
        let grant = grant.cloned();
        let (counts, index_queue, embed_queue, activity) = self
            .scan(move |e| {
                let s = e.store();
                let activity = p
                    .activity
                    .then(|| e.activity(now, grant.as_ref()))
                    .transpose()?;
                let mut counts = s.counts()?;
                if let Some(g) = &grant {
                    let pads: Vec<_> = s
                        .pads(true)?
                        .into_iter()
                        .filter(|p| g.covers(&p.name))
                        .collect();
                    counts.entries = pads.iter().map(|p| p.entries).sum();
                    counts.live_pads = pads.iter().filter(|p| !p.archived).count() as i64;
                    counts.archived_pads = pads.iter().filter(|p| p.archived).count() as i64;
                    counts.tags = s.tags(&scoped(EntryFilter::default(), Some(g))?)?.len() as i64;
                }
                Ok((counts, s.index_queue()?, s.embed_queue()?, activity))
            })
            .await?;
        let store = self.store();
        Ok(StatsResult {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            uptime_seconds: self.0.started.elapsed().as_secs(),
            entries: counts.entries,
            pads: counts.live_pads,
            archived_pads: counts.archived_pads,
            tags: counts.tags,
            db_bytes: store.disk_bytes(),
            connections: self.0.connections.load(Ordering::Relaxed),
            subscribers: self.0.bus.subscribers(),
            waiting_asks: self.waiting_asks() as u64,
            journal_queue,
            index_queue,
            embed_queue,
            semantic: self.semantic_info(),
            data_dir: self.0.config.data_dir.display().to_string(),
            durability: match self.0.config.durability {
                Durability::Normal => "normal".into(),
                Durability::Full => "full".into(),
            },
            activity,
            metrics: self.0.metrics_address.get().cloned(),
        })
    }

    fn semantic_info(&self) -> SemanticInfo {
        let Some(s) = self.semantic() else {
            return SemanticInfo {
                status: "off".into(),
                model: None,
                runtime: None,
                reason: Some("the engine was started without semantic search (--no-semantic or PAD_NO_SEMANTIC=1)".into()),
                vectors: 0,
                index_bytes: 0,
                embedded: 0,
                embed_per_second: 0.0,
            };
        };
        let st = s.stats();
        let (status, model, runtime, reason) = match st.status {
            semantic::Status::Loading => ("loading", None, None, None),
            semantic::Status::Ready { model, runtime } => (
                "ready",
                Some(model),
                Some(runtime.display().to_string()),
                None,
            ),
            semantic::Status::Unavailable(why) => ("unavailable", None, None, Some(why)),
        };
        SemanticInfo {
            status: status.into(),
            model,
            runtime,
            reason,
            vectors: st.vectors as u64,
            index_bytes: st.index_bytes as u64,
            embedded: st.embedded,
            embed_per_second: (st.embed_per_second * 10.0).round() / 10.0,
        }
    }
}
