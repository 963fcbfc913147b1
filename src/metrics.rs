//! Prometheus metrics: `pad serve --metrics 127.0.0.1:9464` serves them as
//! text at `/metrics`, read-only, on loopback unless told otherwise.
//!
//! Two kinds of figures. Events counted as they happen — entries written,
//! requests and their durations, errors, searches, expiry — are recorded by
//! the engine into handles resolved once at start, so the hot path pays a
//! few atomic operations (and nothing when metrics are off). Figures about
//! what is stored — pads, entries per pad, sizes, queues, connections — are
//! read when Prometheus scrapes, so they are always current and cost nothing
//! between scrapes. Per-pad and per-tag series are capped (the busiest 50
//! pads, the 20 most used tags, …; the rest is summed under `(other)`, which
//! no pad or tag can be called), so a store with 10,000 pads still yields a
//! few hundred series.

use std::sync::Mutex;
use std::time::Duration;

use prometheus::{
    Encoder, Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::error::{Error, Result};
use crate::model::Kind;
use crate::protocol::{SearchMode, METHODS};
use crate::storage::PadRow;

/// Series per metric labelled by pad.
pub const TOP_PADS: usize = 50;
/// Series per metric labelled by tag.
pub const TOP_TAGS: usize = 20;
/// The label value that sums everything past the cap.
pub const OTHER: &str = "(other)";
/// The window of `scratchpad_pad_recent_writes`.
pub const RECENT: Duration = Duration::from_secs(300);

pub struct Metrics {
    registry: Registry,
    /// Scrapes refill the stored-state gauges: one at a time.
    scrape: Mutex<Cumulative>,
    written: Vec<IntCounter>,
    /// By method; a series appears with a method's first call.
    requests: HistogramVec,
    errors: IntCounterVec,
    searches: [Histogram; 3],
    expired: IntCounter,
    purged_pads: IntCounter,
    purged_entries: IntCounter,
    lagged: IntCounter,
    embedded: IntCounter,
    embed_seconds: prometheus::Counter,
    http_refused: IntCounterVec,
    /// Read at scrape time.
    stored: Gauges,
}

/// The figures about what is stored, refilled by each scrape.
struct Gauges {
    active_pads: IntGauge,
    archived_pads: IntGauge,
    entries_by_pad: IntGaugeVec,
    stored_entries: IntGauge,
    avg_entry_size: Gauge,
    tag_entries: IntGaugeVec,
    pad_idle: IntGaugeVec,
    pad_recent: IntGaugeVec,
    connections: IntGauge,
    subscribers: IntGauge,
    journal_queue: IntGauge,
    index_queue: IntGauge,
    embed_queue: IntGauge,
    disk_bytes: IntGaugeVec,
    uptime: IntGauge,
}

/// Totals other parts keep, and what the counters already hold of them.
#[derive(Default)]
struct Cumulative {
    lagged: u64,
    embedded: u64,
    embed_seconds: f64,
}

fn kind_index(k: Kind) -> usize {
    Kind::ALL.iter().position(|s| *s == k.as_str()).unwrap_or(0)
}

fn mode_index(m: SearchMode) -> usize {
    match m {
        SearchMode::Hybrid => 0,
        SearchMode::Text => 1,
        SearchMode::Semantic => 2,
    }
}

/// Latency buckets from 100 µs to 2.4 s (×2.5): where local requests and
/// searches fall, in few enough buckets to keep series down.
fn latency_buckets() -> Vec<f64> {
    prometheus::exponential_buckets(0.0001, 2.5, 12).expect("valid buckets")
}

impl Metrics {
    pub fn new() -> Result<Metrics> {
        Self::build().map_err(|e| Error::Internal(format!("metrics registry: {e}")))
    }

    fn build() -> prometheus::Result<Metrics> {
        let r = Registrar(Registry::new());
        let written = r.counters(
            "scratchpad_entries_total",
            "Entries written since the engine started, by kind.",
            "kind",
        )?;
        let searches = r.latencies(
            "scratchpad_search_duration_seconds",
            "Time to answer a search, by the mode that ran.",
            "mode",
        )?;
        Ok(Metrics {
            written: Kind::ALL.iter().map(|k| written.with_label_values(&[*k])).collect(),
            requests: r.latencies(
                "scratchpad_request_duration_seconds",
                "Time to answer a JSON-RPC request, by method.",
                "method",
            )?,
            errors: r.counters(
                "scratchpad_errors_total",
                "Error responses, by JSON-RPC error code.",
                "code",
            )?,
            searches: ["hybrid", "text", "semantic"].map(|m| searches.with_label_values(&[m])),
            expired: r.counter(
                "scratchpad_pads_expired_total",
                "Pads archived because they were idle past their TTL.",
            )?,
            purged_pads: r.counter(
                "scratchpad_pads_purged_total",
                "Archived pads deleted after the retention period.",
            )?,
            purged_entries: r.counter(
                "scratchpad_entries_purged_total",
                "Entries deleted with their pad after the retention period.",
            )?,
            lagged: r.counter(
                "scratchpad_lagged_events_total",
                "Events slow subscribers missed (each got a `lagged` notice).",
            )?,
            embedded: r.counter(
                "scratchpad_embedded_entries_total",
                "Entries embedded for semantic search since the engine started.",
            )?,
            http_refused: r.counters(
                "scratchpad_http_refused_total",
                "HTTP requests and connections refused (no valid token, or over a listener's limit), by listener.",
                "listener",
            )?,
            embed_seconds: r.add(prometheus::Counter::new(
                "scratchpad_embed_seconds_total",
                "Time spent embedding entries (rate / scratchpad_embedded_entries_total rate = seconds per entry).",
            )?)?,
            stored: Gauges::new(&r)?,
            scrape: Mutex::new(Cumulative::default()),
            registry: r.0,
        })
    }

    pub fn entry_written(&self, kind: Kind) {
        self.written[kind_index(kind)].inc();
    }

    /// One answered request; `error` is its error code, if it failed.
    pub fn request(&self, method: &str, took: Duration, error: Option<i64>) {
        // Only known methods get their own series: a client cannot add labels.
        let label = METHODS
            .iter()
            .find(|m| **m == method)
            .copied()
            .unwrap_or(OTHER);
        self.requests
            .with_label_values(&[label])
            .observe(took.as_secs_f64());
        if let Some(code) = error {
            self.error(code);
        }
    }

    /// An error answered outside a method call (a bad line, a bad request).
    /// The counter of refusals by the HTTP listener `listener` ("mcp",
    /// "metrics").
    pub fn http_refused(&self, listener: &str) -> IntCounter {
        self.http_refused.with_label_values(&[listener])
    }

    pub fn error(&self, code: i64) {
        self.errors.with_label_values(&[&code.to_string()]).inc();
    }

    pub fn search(&self, mode: SearchMode, took: Duration) {
        self.searches[mode_index(mode)].observe(took.as_secs_f64());
    }

    pub fn swept(&self, expired: usize, purged_pads: usize, purged_entries: usize) {
        self.expired.inc_by(expired as u64);
        self.purged_pads.inc_by(purged_pads as u64);
        self.purged_entries.inc_by(purged_entries as u64);
    }

    /// The exposition text, with the figures the engine read for this
    /// scrape (`Engine::metrics_text`).
    pub fn render(&self, stored: Stored, live: Live, now: i64) -> Result<String> {
        let snapshot = Snapshot::new(stored, live, now);
        let mut cum = self.scrape.lock().unwrap_or_else(|p| p.into_inner());
        snapshot.apply(self, &mut cum);
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .map_err(|err| Error::Internal(format!("metrics encoding failed: {err}")))?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

impl Gauges {
    fn new(r: &Registrar) -> prometheus::Result<Gauges> {
        Ok(Gauges {
            active_pads: r.gauge("scratchpad_active_pads", "Live (not archived) pads.")?,
            archived_pads: r.gauge(
                "scratchpad_archived_pads",
                "Pads archived after expiring, restorable until purged.",
            )?,
            entries_by_pad: r.gauges(
                "scratchpad_entries",
                "Entries on the busiest live pads; the rest summed under pad=\"(other)\".",
                "pad",
            )?,
            stored_entries: r.gauge("scratchpad_stored_entries", "Entries stored, on all pads.")?,
            avg_entry_size: r.add(Gauge::new(
                "scratchpad_avg_entry_size_bytes",
                "Mean size of an entry's content on live pads, in bytes.",
            )?)?,
            tag_entries: r.gauges(
                "scratchpad_tag_entries",
                "Entries carrying each of the most used tags on live pads.",
                "tag",
            )?,
            pad_idle: r.gauges(
                "scratchpad_pad_idle_seconds",
                "Seconds since the last write, for the stalest live pads.",
                "pad",
            )?,
            pad_recent: r.gauges(
                "scratchpad_pad_recent_writes",
                "Entries written in the last 5 minutes, for the hottest pads.",
                "pad",
            )?,
            connections: r.gauge("scratchpad_connections", "Open client connections.")?,
            subscribers: r.gauge("scratchpad_subscribers", "Open event subscriptions.")?,
            journal_queue: r.gauge(
                "scratchpad_journal_queue",
                "New entries acknowledged but not yet applied to the database.",
            )?,
            index_queue: r.gauge(
                "scratchpad_index_queue",
                "Changes not yet in the text index.",
            )?,
            embed_queue: r.gauge(
                "scratchpad_embed_queue",
                "Entries written or edited but not yet embedded.",
            )?,
            disk_bytes: r.gauges(
                "scratchpad_disk_bytes",
                "Bytes on disk, by file (database and WAL, text index, vectors, vector index).",
                "file",
            )?,
            uptime: r.gauge(
                "scratchpad_uptime_seconds",
                "Seconds since the engine started.",
            )?,
        })
    }
}

/// Makes each metric and registers it.
struct Registrar(Registry);

impl Registrar {
    fn add<T: prometheus::core::Collector + Clone + 'static>(&self, m: T) -> prometheus::Result<T> {
        self.0.register(Box::new(m.clone()))?;
        Ok(m)
    }

    fn counter(&self, name: &str, help: &str) -> prometheus::Result<IntCounter> {
        self.add(IntCounter::new(name, help)?)
    }

    fn counters(&self, name: &str, help: &str, label: &str) -> prometheus::Result<IntCounterVec> {
        self.add(IntCounterVec::new(Opts::new(name, help), &[label])?)
    }

    fn gauge(&self, name: &str, help: &str) -> prometheus::Result<IntGauge> {
        self.add(IntGauge::new(name, help)?)
    }

    fn gauges(&self, name: &str, help: &str, label: &str) -> prometheus::Result<IntGaugeVec> {
        self.add(IntGaugeVec::new(Opts::new(name, help), &[label])?)
    }

    fn latencies(&self, name: &str, help: &str, label: &str) -> prometheus::Result<HistogramVec> {
        let opts = HistogramOpts::new(name, help).buckets(latency_buckets());
        self.add(HistogramVec::new(opts, &[label])?)
    }
}

/// The stored-state figures of one scrape.
struct Snapshot {
    counts: crate::storage::Counts,
    by_pad: Vec<(String, i64)>,
    other_entries: i64,
    avg_size: f64,
    tags: Vec<(String, i64)>,
    stalest: Vec<(String, i64)>,
    recent: Vec<(String, i64)>,
    journal_queue: i64,
    index_queue: i64,
    embed_queue: i64,
    disk: Vec<(&'static str, u64)>,
    connections: u64,
    subscribers: u64,
    lagged: u64,
    embedded: u64,
    embed_seconds: f64,
    uptime: u64,
}

/// What a scrape reads from the store, either one.
pub struct Stored {
    pub counts: crate::storage::Counts,
    pub busiest: Vec<PadRow>,
    pub stalest: Vec<PadRow>,
    pub live_entries: i64,
    pub avg_size: f64,
    pub tags: Vec<(String, i64)>,
    pub recent: Vec<(String, i64)>,
    pub journal_queue: i64,
    pub index_queue: i64,
    pub embed_queue: i64,
    pub disk: Vec<(&'static str, u64)>,
}

/// What a scrape reads from the engine itself.
pub struct Live {
    pub connections: u64,
    pub subscribers: u64,
    pub lagged: u64,
    pub semantic: Option<crate::semantic::SemanticStats>,
    pub uptime: u64,
}

impl Snapshot {
    fn new(stored: Stored, live: Live, now: i64) -> Snapshot {
        let shown: i64 = stored.busiest.iter().map(|p| p.entries).sum();
        let mut tags = stored.tags;
        if tags.len() > TOP_TAGS {
            let rest: i64 = tags[TOP_TAGS..].iter().map(|t| t.1).sum();
            tags.truncate(TOP_TAGS);
            tags.push((OTHER.to_string(), rest));
        }
        let stalest = stored
            .stalest
            .into_iter()
            .map(|p| (p.name, ((now - p.last_write_at) / 1000).max(0)))
            .collect();
        let semantic = live.semantic;
        Snapshot {
            counts: stored.counts,
            by_pad: stored
                .busiest
                .into_iter()
                .map(|p| (p.name, p.entries))
                .collect(),
            other_entries: (stored.live_entries - shown).max(0),
            avg_size: stored.avg_size,
            tags,
            stalest,
            recent: stored.recent,
            journal_queue: stored.journal_queue,
            index_queue: stored.index_queue,
            embed_queue: stored.embed_queue,
            disk: stored.disk,
            connections: live.connections,
            subscribers: live.subscribers,
            lagged: live.lagged,
            embedded: semantic.as_ref().map_or(0, |s| s.embedded),
            embed_seconds: semantic.as_ref().map_or(0.0, |s| s.embed_seconds),
            uptime: live.uptime,
        }
    }

    fn apply(self, m: &Metrics, cum: &mut Cumulative) {
        let g = &m.stored;
        g.active_pads.set(self.counts.live_pads);
        g.archived_pads.set(self.counts.archived_pads);
        g.stored_entries.set(self.counts.entries);
        g.avg_entry_size.set(self.avg_size);
        let fill = |vec: &IntGaugeVec, rows: &[(String, i64)]| {
            vec.reset();
            for (label, v) in rows {
                vec.with_label_values(&[label.as_str()]).set(*v);
            }
        };
        let mut by_pad = self.by_pad;
        if self.other_entries > 0 {
            by_pad.push((OTHER.to_string(), self.other_entries));
        }
        fill(&g.entries_by_pad, &by_pad);
        fill(&g.tag_entries, &self.tags);
        fill(&g.pad_idle, &self.stalest);
        fill(&g.pad_recent, &self.recent);
        g.disk_bytes.reset();
        for (file, bytes) in &self.disk {
            g.disk_bytes.with_label_values(&[file]).set(*bytes as i64);
        }
        g.connections.set(self.connections as i64);
        g.subscribers.set(self.subscribers as i64);
        g.journal_queue.set(self.journal_queue);
        g.index_queue.set(self.index_queue);
        g.embed_queue.set(self.embed_queue);
        g.uptime.set(self.uptime as i64);
        // Totals kept elsewhere: add what is new since the last scrape.
        m.lagged.inc_by(self.lagged.saturating_sub(cum.lagged));
        cum.lagged = cum.lagged.max(self.lagged);
        m.embedded
            .inc_by(self.embedded.saturating_sub(cum.embedded));
        cum.embedded = cum.embedded.max(self.embedded);
        if self.embed_seconds > cum.embed_seconds {
            m.embed_seconds
                .inc_by(self.embed_seconds - cum.embed_seconds);
            cum.embed_seconds = self.embed_seconds;
        }
    }
}

/// Whether `addr` may serve metrics: loopback, or anything when the
/// operator asked for it explicitly.
pub fn check_address(addr: std::net::SocketAddr, allow_remote: bool) -> Result<()> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "--metrics {addr} is not a loopback address; metrics are served on 127.0.0.1 or [::1] unless you add --metrics-allow-remote (they reveal pad names and activity, never content)."
        )))
    }
}

/// The bearer token file for `--metrics-require-token`, in the data directory.
pub const TOKEN_FILE: &str = "metrics.token";

/// The token scrapers must send, created (0600, random) on first use.
pub fn token(data_dir: &std::path::Path) -> std::io::Result<String> {
    crate::access::bearer_secret(&data_dir.join(TOKEN_FILE))
}

/// Serves `GET /metrics` until `shutdown`; with `token`, only to requests
/// that carry it as a bearer token. Anything but GET is refused
/// (405), any other path is a 404 that names the right one. `render` gives
/// the text of a scrape (`None`: metrics are off).
pub async fn serve<F>(
    listener: tokio::net::TcpListener,
    render: impl Fn() -> F + Clone + Send + Sync + 'static,
    token: Option<String>,
    refusals: crate::tcp::Refusals,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    F: std::future::Future<Output = Result<Option<String>>> + Send + 'static,
{
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    use axum::routing::{on, MethodFilter};
    // The Host check the MCP endpoint makes: a web page cannot read the
    // metrics by DNS rebinding.
    // (On a wildcard address, which --metrics-allow-remote allows, any
    // name of the machine may be scraped: no check.)
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    let mut any_host = false;
    if let Ok(a) = listener.local_addr() {
        any_host = a.ip().is_unspecified();
        hosts.push(a.ip().to_string());
    }
    let app = axum::Router::new()
        .route(
            "/metrics",
            on(MethodFilter::GET, move || {
                let scrape = render();
                async move {
                    match scrape.await {
                        Ok(None) => (
                            StatusCode::SERVICE_UNAVAILABLE,
                            "metrics are off\n".to_string(),
                        )
                            .into_response(),
                        Ok(Some(text)) => (
                            [(
                                header::CONTENT_TYPE,
                                "text/plain; version=0.0.4; charset=utf-8",
                            )],
                            text,
                        )
                            .into_response(),
                        Err(e) => {
                            (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response()
                        }
                    }
                }
            }),
        )
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "Scratchpad serves its metrics at GET /metrics\n",
            )
        })
        .layer(axum::middleware::from_fn({
            let refusals = refusals.clone();
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let (hosts, token, refusals) = (hosts.clone(), token.clone(), refusals.clone());
                async move {
                    let host = req
                        .headers()
                        .get(header::HOST)
                        .and_then(|v| v.to_str().ok());
                    let given = crate::access::bearer(
                        req.headers()
                            .get(header::AUTHORIZATION)
                            .and_then(|v| v.to_str().ok()),
                    );
                    if let Some(want) = token.as_deref() {
                        if !crate::access::same_secret(given, want) {
                            refusals.note("no valid bearer token");
                            return (
                                StatusCode::UNAUTHORIZED,
                                [(header::WWW_AUTHENTICATE, "Bearer"), (header::CONNECTION, "close")],
                                "send `Authorization: Bearer <token>` with the token in metrics.token in the engine's data directory (Prometheus: bearer_token_file)\n",
                            )
                                .into_response();
                        }
                    }
                    if any_host || crate::access::host_allowed(host, &hosts) {
                        if let Some(full) = crate::tcp::admit(&req, Some("metrics scraper")).await {
                            return full;
                        }
                        next.run(req).await
                    } else {
                        (
                            StatusCode::FORBIDDEN,
                            "Forbidden: the Host header names no address this endpoint serves\n",
                        )
                            .into_response()
                    }
                }
            }
        }));
    crate::tcp::serve(listener, app, refusals, shutdown).await
}
