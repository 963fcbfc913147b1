//! `stats`: the engine's figures, and their activity view — what has been
//! happening lately.

use std::sync::atomic::Ordering;

use super::Engine;
use crate::error::Result;
use crate::guard::Guard;
use crate::metrics::{Live, Stored, RECENT, TOP_PADS};
use crate::model::{fmt_time, Pad};
use crate::protocol::{Activity, PadActivity, SemanticInfo, StatsParams, StatsResult, TagCount};
use crate::semantic;
use crate::storage::{Counts, EntryFilter, PadRow};
use crate::store::Durability;

/// What the activity view is made of, read from either store.
struct ActivityRows {
    per_minute: Vec<u64>,
    top_tags: Vec<(String, i64)>,
    busiest: Vec<PadRow>,
    stalest: Vec<PadRow>,
    avg_entry_bytes: f64,
}

/// A token sees only its pads in the lists: look past the top 5 for them.
fn depth(guard: &Guard) -> usize {
    if guard.grant().is_some() {
        10_000
    } else {
        5
    }
}

impl ActivityRows {
    /// Write rate over the last hour, top tags, busiest and stalest pads.
    /// To a token, only its pads: their tags and their places in the lists.
    fn into_activity(self, now: i64, guard: &Guard) -> Activity {
        let covered = |p: &PadRow| guard.covers(&p.name);
        let pad = |p: PadRow| PadActivity {
            idle_seconds: ((now - p.last_write_at) / 1000).max(0),
            expires_at: p
                .ttl_seconds
                .map(|ttl| fmt_time(p.last_write_at + ttl * 1000)),
            last_write_at: fmt_time(p.last_write_at),
            name: p.name,
            entries: p.entries,
        };
        let mut top_tags = self.top_tags;
        top_tags.truncate(10);
        Activity {
            entries_last_hour: self.per_minute.iter().sum(),
            entries_per_minute: self.per_minute,
            top_tags: top_tags
                .into_iter()
                .map(|(tag, count)| TagCount { tag, count })
                .collect(),
            busiest_pads: self
                .busiest
                .into_iter()
                .filter(covered)
                .take(5)
                .map(pad)
                .collect(),
            stalest_pads: self
                .stalest
                .into_iter()
                .filter(covered)
                .take(5)
                .map(pad)
                .collect(),
            avg_entry_bytes: (self.avg_entry_bytes * 10.0).round() / 10.0,
        }
    }
}

/// The counts as a token sees them: its pads alone.
fn scope_counts(counts: &mut Counts, pads: Vec<Pad>, guard: &Guard, tags: usize) {
    let pads: Vec<_> = pads.into_iter().filter(|p| guard.covers(&p.name)).collect();
    counts.entries = pads.iter().map(|p| p.entries).sum();
    counts.live_pads = pads.iter().filter(|p| !p.archived).count() as i64;
    counts.archived_pads = pads.iter().filter(|p| p.archived).count() as i64;
    counts.tags = tags as i64;
}

/// What `stats` reads from the store.
struct Figures {
    counts: Counts,
    activity: Option<Activity>,
    journal_queue: i64,
    index_queue: i64,
    embed_queue: i64,
    db_bytes: u64,
}

impl Engine {
    /// What `stats` reads from the store, in one scan's turn.
    async fn figures(&self, now: i64, activity: bool, guard: &Guard) -> Result<Figures> {
        let _turn = self.turn().await?;
        let db = self.db();
        // Before anything reads the store: reading applies the journal.
        let (journal_queue, index_queue) = db.queues().await?;
        let keep = |pad: &str| guard.covers(pad);
        let activity = if activity {
            Some(
                ActivityRows {
                    per_minute: db.writes_per_minute(now, 60, &keep).await?,
                    top_tags: db.tags(&guard.scope(Default::default())?).await?,
                    busiest: db.pads_by(false, depth(guard)).await?,
                    stalest: db.pads_by(true, depth(guard)).await?,
                    avg_entry_bytes: db.content_size().await?.1,
                }
                .into_activity(now, guard),
            )
        } else {
            None
        };
        let mut counts = db.counts().await?;
        if guard.grant().is_some() {
            let tags = db.tags(&guard.scope(EntryFilter::default())?).await?;
            scope_counts(&mut counts, db.pads(true).await?, guard, tags.len());
        }
        Ok(Figures {
            counts,
            activity,
            journal_queue,
            index_queue,
            embed_queue: self.embed_queue().await?,
            db_bytes: db.disk_bytes().await?,
        })
    }

    /// The engine's figures. To a token, counts, activity and the questions
    /// waited on cover only the pads it may read: no other pad's name, tag,
    /// note or size shows, and figures of the whole store (its queues, its
    /// size on disk, its folder, the process, other connections, the
    /// vectors) read 0 or empty.
    pub async fn stats(&self, p: StatsParams, guard: &Guard) -> Result<StatsResult> {
        let now = self.now();
        let f = self.figures(now, p.activity, guard).await?;
        let mut waiting = self.waiting_questions();
        if guard.grant().is_some() {
            let mut theirs = Vec::with_capacity(waiting.len());
            for id in waiting {
                if self.db().get(&id).await.is_ok_and(|q| guard.covers(&q.pad)) {
                    theirs.push(id);
                }
            }
            waiting = theirs;
        }
        let stats = StatsResult {
            version: env!("CARGO_PKG_VERSION").into(),
            pid: std::process::id(),
            uptime_seconds: self.0.started.elapsed().as_secs(),
            entries: f.counts.entries,
            pads: f.counts.live_pads,
            archived_pads: f.counts.archived_pads,
            tags: f.counts.tags,
            db_bytes: f.db_bytes,
            connections: self.0.connections.load(Ordering::Relaxed),
            subscribers: self.0.bus.subscribers(),
            waiting_asks: match guard.grant() {
                None => self.waiting_asks() as u64,
                Some(_) => waiting.len() as u64,
            },
            waiting_questions: crate::seal::refs(waiting),
            journal_queue: f.journal_queue,
            index_queue: f.index_queue,
            embed_queue: f.embed_queue,
            semantic: self.semantic_info(),
            data_dir: self.0.config.data_dir.display().to_string(),
            durability: match self.0.config.durability {
                Durability::Normal => "normal".into(),
                Durability::Full => "full".into(),
            },
            activity: f.activity,
            metrics: self.0.metrics_address.get().cloned(),
        };
        Ok(match guard.grant() {
            None => stats,
            Some(_) => StatsResult {
                pid: 0,
                db_bytes: 0,
                connections: 0,
                subscribers: 0,
                journal_queue: 0,
                index_queue: 0,
                embed_queue: 0,
                data_dir: String::new(),
                metrics: None,
                semantic: SemanticInfo {
                    vectors: 0,
                    index_bytes: 0,
                    embedded: 0,
                    embed_per_second: 0.0,
                    runs: 0,
                    runtime: None,
                    ..stats.semantic
                },
                ..stats
            },
        })
    }

    fn semantic_info(&self) -> SemanticInfo {
        let Some(s) = self.semantic() else {
            return SemanticInfo {
                status: "off".into(),
                model: None,
                sparse_model: None,
                runtime: None,
                reason: Some("the engine was started without semantic search (--no-semantic or PAD_NO_SEMANTIC=1)".into()),
                vectors: 0,
                index_bytes: 0,
                embedded: 0,
                embed_per_second: 0.0,
                runs: 0,
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
            sparse_model: s.pieces().map(|_| semantic::splade::NAME.to_string()),
            runtime,
            reason,
            vectors: st.vectors as u64,
            index_bytes: st.index_bytes as u64,
            embedded: st.embedded,
            embed_per_second: (st.embed_per_second * 10.0).round() / 10.0,
            runs: st.runs,
        }
    }
}

impl Engine {
    /// Entries and edits waiting to be embedded. On PostgreSQL the queue is
    /// the team's; without meaning search here, none of it is this
    /// engine's to report.
    async fn embed_queue(&self) -> Result<i64> {
        match self.semantic() {
            Some(_) => self.db().embed_queue().await,
            None => Ok(0),
        }
    }

    /// The metrics endpoint's text for a scrape now, with the stored state
    /// read in one scan's turn; `None` when metrics are off.
    pub async fn metrics_text(&self) -> Result<Option<String>> {
        let Some(metrics) = self.metrics() else {
            return Ok(None);
        };
        let now = self.clock().now_ms();
        let stored = {
            let _turn = self.turn().await?;
            let db = self.db();
            // Before anything reads the store: reading applies the journal.
            let (journal_queue, index_queue) = db.queues().await?;
            let (live_entries, avg_size) = db.content_size().await?;
            let since = now - RECENT.as_millis() as i64;
            Stored {
                counts: db.counts().await?,
                busiest: db.pads_by(false, TOP_PADS).await?,
                stalest: db.pads_by(true, TOP_PADS).await?,
                live_entries,
                avg_size,
                tags: db.tags(&Default::default()).await?,
                recent: db.recent_writes_by_pad(since, TOP_PADS).await?,
                journal_queue,
                index_queue,
                embed_queue: self.embed_queue().await?,
                disk: db.disk_usage().await?,
            }
        };
        let live = Live {
            connections: self.connection_count(),
            subscribers: self.subscriber_count(),
            lagged: self.lagged_events(),
            semantic: self.semantic().map(|s| s.stats()),
            uptime: self.uptime().as_secs(),
        };
        metrics.render(stored, live, now).map(Some)
    }
}

impl Engine {
    /// Serves this engine's metrics on `listener` until `shutdown`
    /// (`metrics::serve`; with `token`, only to scrapers that send it).
    pub async fn serve_metrics(
        &self,
        listener: tokio::net::TcpListener,
        token: Option<String>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let engine = self.clone();
        let render = move || {
            let engine = engine.clone();
            async move { engine.metrics_text().await }
        };
        let refusals = self.http_refusals("metrics endpoint", "metrics");
        crate::metrics::serve(listener, render, token, refusals, shutdown).await
    }

    /// Where an HTTP listener of this engine counts what it refuses.
    pub fn http_refusals(&self, what: &'static str, listener: &str) -> crate::tcp::Refusals {
        crate::tcp::Refusals::new(what, self.metrics().map(|m| m.http_refused(listener)))
    }
}
