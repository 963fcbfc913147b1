//! The engine: one cheap, cloneable handle over the store, the event bus, the
//! clock and the background work (text indexing, expiry).
//!
//! Every transport (socket, desktop app, MCP, CLI) reaches the engine through
//! `rpc::call`, which turns wire params into calls of the methods here. The
//! methods validate and normalise input, write through the store, and publish
//! events after the write is committed — so a subscriber never hears of a
//! change that did not happen.

mod activity;
mod export;
pub mod lock;
mod threads;
mod tokens;
mod work;

pub use work::{DEFAULT_LEASE_SECONDS, MAX_LEASE_SECONDS};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::access::Grant;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::events::{Bus, EventType, Filter, Subscription};
use crate::model::{self, Entry, Pad};
use crate::protocol::*;
use crate::semantic::{self, ModelSource, Semantic, SemanticConfig};
use crate::store::{Durability, EntryFilter, NewEntry, PadSweep, Patch, Store};

/// How an engine is set up. `Config::new(dir)` gives the defaults of DESIGN.md.
#[derive(Clone, Debug)]
pub struct Config {
    pub data_dir: PathBuf,
    pub durability: Durability,
    pub max_content_chars: usize,
    /// Idle time after which pads that agents create expire (`None`: never).
    pub default_ttl_seconds: Option<i64>,
    /// How long an archived pad is kept before it is purged.
    pub retention: Duration,
    /// How often the expiry sweep runs.
    pub sweep_every: Duration,
    /// How often the text indexer looks for new changes.
    pub index_every: Duration,
    /// WAL size (4 KiB pages) past which a checkpoint empties the WAL while
    /// holding the writer (a short pause, as it only copies the tail).
    pub wal_restart_pages: i64,
    /// Semantic search (`None`: text search only, no model is loaded).
    pub semantic: Option<SemanticConfig>,
    /// Refuse connections that do not say `hello` with a token (the owner
    /// uses the owner token in `<data>/owner.token`).
    pub require_tokens: bool,
    /// How often due reminders and run-out task leases are looked for.
    pub work_every: Duration,
    /// Record Prometheus metrics (`pad serve --metrics` serves them).
    pub metrics: bool,
    pub clock: Clock,
    /// How long a begun request line may sit unfinished before its
    /// connection is closed (and its buffer freed).
    pub partial_idle: Duration,
    /// The most client connections served at once; `None`: the open-files
    /// limit less a reserve for the engine's own files and listeners.
    pub max_connections: Option<usize>,
    /// The most entry text one export loads (`MAX_EXPORT_BYTES`).
    pub max_export_bytes: usize,
}

impl Config {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Config {
            data_dir: data_dir.into(),
            durability: Durability::Normal,
            max_content_chars: model::DEFAULT_MAX_CONTENT_CHARS,
            default_ttl_seconds: Some(2 * 3600),
            retention: Duration::from_secs(7 * 24 * 3600),
            sweep_every: Duration::from_secs(30),
            index_every: Duration::from_millis(100),
            wal_restart_pages: 8192,
            semantic: Some(SemanticConfig::new(ModelSource::Download)),
            require_tokens: false,
            work_every: Duration::from_secs(1),
            metrics: false,
            clock: Clock::system(),
            partial_idle: Duration::from_secs(30),
            max_connections: None,
            max_export_bytes: MAX_EXPORT_BYTES,
        }
    }
}

#[derive(Clone)]
pub struct Engine(Arc<Inner>);

struct Inner {
    config: Config,
    store: Arc<Store>,
    /// Dropped before `_lock` (fields drop in order): dropping it stops the
    /// embedding worker, which saves the index while the data dir is still ours.
    semantic: Option<Semantic>,
    bus: Bus,
    /// `ask` calls waiting for their answer.
    waiters: threads::Waiters,
    /// Pads with a rolling window (`max_entries`): the only pads whose writes
    /// need a second statement, so the hot path checks this map, not the database.
    windows: Mutex<HashMap<String, i64>>,
    /// Grants of the stored tokens, by secret hash.
    grants: std::sync::RwLock<crate::access::Grants>,
    /// Hash of the owner token (`<data>/owner.token`).
    owner_hash: String,
    metrics: Option<crate::metrics::Metrics>,
    metrics_address: std::sync::OnceLock<String>,
    started: Instant,
    connections: AtomicU64,
    /// Turns for requests that scan (see `scan`).
    scans: tokio::sync::Semaphore,
    stop: watch::Sender<bool>,
    _lock: lock::DirLock,
}

impl Engine {
    pub async fn open(config: Config) -> Result<Engine> {
        // Past a file-size limit (`ulimit -f`) a write must fail with an
        // error the store handles — the entry waits in the journal, the
        // client is told `unavailable` — instead of SIGXFSZ killing the
        // engine (and any app it runs in).
        // SAFETY: setting a signal's disposition to "ignore" has no handler to race.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
        // Every file the engine writes (the database, its WAL and shm, the
        // derived databases, the vector index, the journal) is the owner's
        // alone, whatever the umask or the directory's mode.
        // SAFETY: umask only sets this process's file-creation mask.
        unsafe { libc::umask(0o077) };
        crate::paths::raise_fd_limit();
        return_large_blocks();
        crate::paths::create_private_dir(&config.data_dir).map_err(|e| {
            Error::Internal(format!(
                "cannot create data directory {}: {e}",
                config.data_dir.display()
            ))
        })?;
        crate::paths::seal_files(&config.data_dir);
        let dir_lock = lock::DirLock::acquire(&config.data_dir.join("engine.lock")).map_err(
            |held| {
                Error::Unavailable(format!(
                    "data directory {} is in use by another engine{}; stop it first or set PAD_HOME to another directory",
                    config.data_dir.display(),
                    held.pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
                ))
            },
        )?;
        let store = Store::open(
            &config.data_dir,
            config.durability,
            config.default_ttl_seconds,
            config.wal_restart_pages,
            config.clock.now_ms(),
            config.semantic.is_some(),
        )?;
        let store = Arc::new(store);
        store.start_applier();
        let windows = store.windows()?.into_iter().collect();
        let grants = tokens::load_grants(store.tokens()?);
        let owner_hash = crate::access::hash(&crate::access::owner_token(&config.data_dir)?);
        let semantic = config
            .semantic
            .clone()
            .map(|c| Semantic::start(c, store.clone(), config.data_dir.clone()));
        Ok(Engine(Arc::new(Inner {
            store,
            semantic,
            bus: Bus::default(),
            waiters: threads::Waiters::default(),
            windows: Mutex::new(windows),
            grants: std::sync::RwLock::new(grants),
            owner_hash,
            metrics: if config.metrics {
                Some(crate::metrics::Metrics::new()?)
            } else {
                None
            },
            metrics_address: std::sync::OnceLock::new(),
            started: Instant::now(),
            connections: AtomicU64::new(0),
            scans: tokio::sync::Semaphore::new(SCAN_TURNS),
            stop: watch::channel(false).0,
            config,
            _lock: dir_lock,
        })))
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn clock(&self) -> &Clock {
        &self.0.config.clock
    }

    pub fn store(&self) -> &Store {
        &self.0.store
    }

    /// Semantic search, when configured (it may still be loading, or unavailable).
    pub fn semantic(&self) -> Option<&Semantic> {
        self.0.semantic.as_ref()
    }

    fn now(&self) -> i64 {
        self.0.config.clock.now_ms()
    }

    /// A client's scan (search, export, report, tags, a thread, a plan,
    /// stats): at most `SCAN_TURNS` at once, the rest waiting their turn in
    /// arrival order without holding a thread. So clients running heavy
    /// reads together cannot multiply their memory, nor take every core
    /// from the point reads and writes of the others.
    pub(crate) async fn scan<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let _turn = self
            .0
            .scans
            .acquire()
            .await
            .map_err(|_| Error::Unavailable("the engine is stopping".into()))?;
        self.blocking(f).await
    }

    /// Runs a scan (search, export, sweep, indexing) on a blocking thread so it
    /// never stalls the connections sharing this runtime. Point reads and
    /// writes take microseconds and run inline instead: a thread hop would cost
    /// more than the work.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let engine = self.clone();
        tokio::task::spawn_blocking(move || f(&engine))
            .await
            .map_err(|e| Error::Internal(format!("background task failed: {e}")))?
    }

    /// Starts the background indexer and expiry sweep; they end on `shutdown`.
    pub fn spawn_background(&self) -> tokio::task::JoinHandle<()> {
        let engine = self.clone();
        let mut stop = self.0.stop.subscribe();
        tokio::spawn(async move {
            let mut checkpoint_tick = tokio::time::interval(Duration::from_secs(1));
            checkpoint_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut checkpointed_epoch = None;
            let mut index_tick = tokio::time::interval(engine.0.config.index_every);
            // The first sweep comes one period after start, not at once: pads
            // expire on a 30 s grain anyway, and an immediate sweep, scheduled
            // late on a busy machine, could run after a test's manual clock
            // has moved on and take the expiry the test itself sweeps for.
            let every = engine.0.config.sweep_every;
            let mut sweep_tick =
                tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            index_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let work_every = engine.0.config.work_every;
            let mut work_tick =
                tokio::time::interval_at(tokio::time::Instant::now() + work_every, work_every);
            work_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            sweep_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Indexing runs only after writes: an idle engine stays idle.
            let mut indexed_epoch = None;
            let mut faults = crate::faults::Faults::default();
            loop {
                tokio::select! {
                    _ = stop.changed() => break,
                    _ = index_tick.tick() => {
                        let epoch = engine.store().write_epoch();
                        if indexed_epoch == Some(epoch) {
                            continue;
                        }
                        let r = engine.index_now().await;
                        if faults.note("text indexing", r) {
                            indexed_epoch = Some(epoch);
                        }
                    }
                    _ = checkpoint_tick.tick() => {
                        trim_if_wanted();
                        let epoch = engine.store().write_epoch();
                        if checkpointed_epoch == Some(epoch) {
                            continue;
                        }
                        let r = engine.blocking(|e| e.store().checkpoint_passive()).await;
                        if faults.note("checkpoint", r.map(drop)) {
                            checkpointed_epoch = Some(epoch);
                        }
                    }
                    _ = work_tick.tick() => {
                        let r = engine.deliver_reminders().await;
                        faults.note("delivering reminders", r.map(drop));
                        let r = engine.release_leases().await;
                        faults.note("releasing task leases", r.map(drop));
                    }
                    _ = sweep_tick.tick() => {
                        let r = engine.sweep().await;
                        faults.note("the expiry sweep", r.map(drop));
                    }
                }
            }
        })
    }

    /// Brings the text index up to date and drops deleted entries from it.
    pub async fn index_now(&self) -> Result<()> {
        self.blocking(|e| e.store().catch_up_text()).await
    }

    /// Runs one expiry sweep now: archives idle pads, purges old archives.
    pub async fn sweep(&self) -> Result<PadSweep> {
        let retention = self.0.config.retention.as_millis() as i64;
        let now = self.now();
        let done = self
            .blocking(move |e| e.store().sweep(now, retention))
            .await?;
        if let Some(m) = self.metrics() {
            m.swept(done.archived.len(), done.purged_pads, done.purged_entries);
        }
        for pad in &done.archived {
            tracing::info!("pad '{pad}' expired and was archived");
            self.0.bus.publish(EventType::PadExpired, pad, None);
        }
        if done.purged_entries > 0 || done.purged_pads > 0 {
            tracing::info!(
                "purged {} entries and {} pads archived past retention",
                done.purged_entries,
                done.purged_pads
            );
            self.index_now().await?;
            self.blocking(|e| e.store().prune_changes()).await?;
        }
        Ok(done)
    }

    /// Stops background work and closes the store cleanly.
    pub async fn shutdown(&self) {
        let _ = self.0.stop.send(true);
        // The embedding worker applies what it has and saves the index.
        let _ = self
            .blocking(|e| {
                if let Some(s) = e.semantic() {
                    s.stop();
                }
                Ok(())
            })
            .await;
        if let Err(e) = self.index_now().await {
            tracing::warn!("final text indexing failed: {e}");
        }
        let _ = self
            .blocking(|e| {
                e.store().checkpoint();
                Ok(())
            })
            .await;
    }

    /// The metrics registry, when metrics are on.
    pub fn metrics(&self) -> Option<&crate::metrics::Metrics> {
        self.0.metrics.as_ref()
    }

    /// Says where the metrics endpoint listens (for `stats`).
    pub fn set_metrics_address(&self, addr: String) {
        let _ = self.0.metrics_address.set(addr);
    }

    pub fn connection_count(&self) -> u64 {
        self.0.connections.load(Ordering::Relaxed)
    }

    pub fn subscriber_count(&self) -> u64 {
        self.0.bus.subscribers()
    }

    pub fn lagged_events(&self) -> u64 {
        self.0.bus.lagged()
    }

    pub fn uptime(&self) -> Duration {
        self.0.started.elapsed()
    }

    pub fn connection_opened(&self) {
        self.0.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_closed(&self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn subscribe(&self, p: SubscribeParams, grant: Option<&Grant>) -> Result<Subscription> {
        let pads: Vec<String> = p
            .pads
            .iter()
            .map(|raw| match raw.strip_suffix('*') {
                Some("") => Ok("*".to_string()),
                Some(prefix) => model::pad_name("pads", prefix).map(|n| format!("{n}*")),
                None => model::pad_name("pads", raw),
            })
            .collect::<Result<Vec<_>>>()?;
        if let Some(g) = grant {
            if let Some(outside) = pads.iter().find(|p| !g.covers_pattern(p)) {
                return Err(Error::Forbidden(format!(
                    "token '{}' may not watch '{outside}': it allows {}. Subscribe to pads it covers, or leave 'pads' out to watch all of them.",
                    g.name,
                    g.describe()
                )));
            }
        }
        let tags = model::tags("tags", &p.tags)?;
        Ok(self.0.bus.subscribe(Filter {
            pads,
            tags,
            kinds: p.kinds,
            scope: grant.map(|g| g.pads.clone()),
        }))
    }

    pub fn hello(&self, author: Option<String>, access: &crate::access::Access) -> HelloResult {
        HelloResult {
            server: "scratchpad".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: PROTOCOL_VERSION,
            pid: std::process::id(),
            author,
            access: self.describe_access(access),
            token: match access {
                crate::access::Access::Token { name, .. } => Some(name.clone()),
                _ => None,
            },
        }
    }

    pub async fn add(&self, p: AddParams, default_author: Option<&str>) -> Result<Entry> {
        let now = self.now();
        let pad = model::pad_name("pad", &p.pad)?;
        let max = self.0.config.max_content_chars;
        model::content("content", &p.content, max)?;
        let tags = model::tags("tags", &p.tags)?;
        let author = match p.author.as_deref().or(default_author) {
            Some(a) => model::author("author", a)?,
            None => "anonymous".to_string(),
        };
        let choices = model::choices("choices", &p.choices)?;
        let kind = match (p.kind, choices.is_empty()) {
            (None, false) => model::Kind::Question,
            (Some(k), false) if k != model::Kind::Question => {
                return Err(Error::invalid(
                    "choices",
                    format!("choices belong to questions, and this entry's kind is '{k}'; drop 'choices', or make it kind 'question'."),
                ))
            }
            (k, _) => k.unwrap_or_default(),
        };
        let status = match (p.status, kind) {
            (None, model::Kind::Task) => Some(model::Status::Todo),
            (s, _) => s,
        };
        let remind_at = match (p.remind_in, p.remind_at.as_deref()) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "remind_at",
                    "give either remind_in (seconds from now) or remind_at (an RFC 3339 time), not both.",
                ))
            }
            (Some(secs), None) => {
                if secs > model::MAX_FUTURE_SECONDS as u64 {
                    return Err(Error::over_limit(
                        "remind_in",
                        format!(
                            "remind_in is {secs} seconds; give 0 to {} (ten years), e.g. 1800 for half an hour.",
                            model::MAX_FUTURE_SECONDS
                        ),
                        model::MAX_FUTURE_SECONDS,
                        secs,
                    ));
                }
                Some(now + secs as i64 * 1000)
            }
            (None, Some(t)) => Some(model::parse_time("remind_at", t)?),
            (None, None) => None,
        };
        let entry = NewEntry {
            pad,
            author,
            kind,
            content: p.content,
            tags,
            status,
            assignee: p
                .assignee
                .as_deref()
                .map(|a| model::author("assignee", a))
                .transpose()?,
            resume: p.resume.map(|r| text_field("resume", r, max)).transpose()?,
            category: p.category,
            confidence: p.confidence.map(model::confidence).transpose()?,
            depends_on: p.depends_on,
            reply_to: p.reply_to,
            choices,
            remind_at,
            pinned: p.pinned,
            meta: p.meta.as_ref().map(meta_text).transpose()?,
            now,
        };
        self.insert(entry).await
    }

    /// Inserts a validated entry (applying its pad's window) and tells subscribers.
    async fn insert(&self, entry: NewEntry) -> Result<Entry> {
        let window = self.window(&entry.pad);
        let added = self.store().add(entry, window)?;
        let entry = added.entry;
        if let Some(m) = self.metrics() {
            m.entry_written(entry.kind);
        }
        self.0.bus.entry_changed(EventType::Created, None, &entry);
        if let Some((before, after)) = added.parent {
            if after.answer.as_deref() == Some(&entry.id) {
                self.0.waiters.answer(&after.id, &entry);
            }
            self.0
                .bus
                .entry_changed(EventType::Updated, Some(&before), &after);
        }
        for gone in added.rolled {
            let pad = gone.pad.clone();
            self.0.bus.publish(EventType::Deleted, &pad, Some(gone));
        }
        Ok(entry)
    }

    fn window(&self, pad: &str) -> Option<i64> {
        let windows = self.0.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.is_empty() {
            None
        } else {
            windows.get(pad).copied()
        }
    }

    pub async fn get(&self, id: &str) -> Result<Entry> {
        self.store().get(id)
    }

    pub async fn update(&self, p: UpdateParams) -> Result<Entry> {
        let max = self.0.config.max_content_chars;
        if let Some(c) = &p.content {
            model::content("content", c, max)?;
        }
        let patch = Patch {
            content: p.content,
            tags: p
                .tags
                .as_deref()
                .map(|t| model::tags("tags", t))
                .transpose()?,
            kind: p.kind,
            status: p.status,
            assignee: p
                .assignee
                .map(|a| a.map(|a| model::author("assignee", &a)).transpose())
                .transpose()?,
            resume: p
                .resume
                .map(|r| r.map(|r| text_field("resume", r, max)).transpose())
                .transpose()?,
            category: p.category,
            confidence: p
                .confidence
                .map(|c| c.map(model::confidence).transpose())
                .transpose()?,
            pinned: p.pinned,
            depends_on: p.depends_on,
            remind_at: p
                .remind_at
                .map(|r| r.map(|t| model::parse_time("remind_at", &t)).transpose())
                .transpose()?,
            meta: p
                .meta
                .map(|m| m.as_ref().map(meta_text).transpose())
                .transpose()?,
        };
        let (before, after) = self
            .store()
            .update(&p.id, patch, p.if_version, self.now())?;
        self.0
            .bus
            .entry_changed(EventType::Updated, Some(&before), &after);
        Ok(after)
    }

    pub async fn delete(&self, p: DeleteParams) -> Result<Entry> {
        let gone = self.store().delete(&p.id, p.if_version)?;
        self.0
            .bus
            .publish(EventType::Deleted, &gone.pad, Some(gone.clone()));
        Ok(gone)
    }

    pub async fn list(&self, p: ListParams, grant: Option<&Grant>) -> Result<ListResult> {
        let limit = limit("limit", p.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT)?;
        let cursor = p
            .cursor
            .as_deref()
            .map(|c| {
                c.parse::<i64>().map_err(|_| {
                    Error::invalid(
                        "cursor",
                        format!("cursor '{c}' is not one this engine gave out; pass next_cursor from the previous page unchanged, or omit it to start over."),
                    )
                })
            })
            .transpose()?;
        let filter = EntryFilter {
            pad: p
                .pad
                .as_deref()
                .map(|n| model::pad_name("pad", n))
                .transpose()?,
            tags: model::tags("tags", &p.tags)?,
            author: p
                .author
                .as_deref()
                .map(|a| model::author("author", a))
                .transpose()?,
            kind: p.kind,
            status: p.status,
            since: p
                .since
                .as_deref()
                .map(|s| model::parse_time("since", s))
                .transpose()?,
            category: p.category,
            min_confidence: p.min_confidence.map(model::confidence).transpose()?,
            scope: None,
        };
        let filter = scoped(filter, grant)?;
        // A long page (up to 1,000 entries of up to 4,000 characters) is a
        // scan: off the runtime's threads and in turn, so it cannot hold up
        // the point reads of other clients.
        let page = if limit <= INLINE_LIST_LIMIT {
            self.store().list(&filter, limit, cursor)?
        } else {
            self.scan(move |e| e.store().list(&filter, limit, cursor))
                .await?
        };
        Ok(ListResult {
            entries: page.entries,
            next_cursor: page.next_cursor,
        })
    }

    pub async fn search(&self, p: SearchParams, grant: Option<&Grant>) -> Result<SearchResult> {
        let started = Instant::now();
        let result = self.search_inner(p, grant).await;
        if let (Some(m), Ok(r)) = (self.metrics(), &result) {
            m.search(r.mode, started.elapsed());
        }
        result
    }

    async fn search_inner(&self, p: SearchParams, grant: Option<&Grant>) -> Result<SearchResult> {
        let query = p.query.trim();
        if query.is_empty() {
            return Err(Error::invalid(
                "query",
                "query is empty; give words to look for, e.g. 'docker login'.",
            ));
        }
        let qlen = query.chars().count();
        if qlen > 1000 {
            return Err(Error::over_limit(
                "query",
                format!(
                    "query is {qlen} characters; the limit is 1000. Search for the key phrase."
                ),
                1000,
                qlen,
            ));
        }
        let limit = limit("limit", p.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT)?;
        let filter = EntryFilter {
            pad: p
                .pad
                .as_deref()
                .map(|n| model::pad_name("pad", n))
                .transpose()?,
            tags: model::tags("tags", &p.tags)?,
            author: p
                .author
                .as_deref()
                .map(|a| model::author("author", a))
                .transpose()?,
            kind: p.kind,
            category: p.category,
            min_confidence: p.min_confidence.map(model::confidence).transpose()?,
            ..EntryFilter::default()
        };
        let filter = scoped(filter, grant)?;
        let ready = self.semantic().filter(|s| s.is_ready());
        let mode = match (p.mode, ready) {
            (SearchMode::Text, _) | (SearchMode::Hybrid, None) => SearchMode::Text,
            (SearchMode::Semantic, None) => {
                return Err(match self.semantic().and_then(Semantic::not_ready) {
                    Some(why) => why,
                    None => Error::Unavailable(
                        "semantic search is off in this engine (started without a model); use mode 'text', or restart `pad serve` without --no-semantic.".into(),
                    ),
                })
            }
            (mode, Some(_)) => mode,
        };
        // Hybrid fuses more than it shows, so each side can lift the other.
        let k = if mode == SearchMode::Hybrid {
            fused_depth(limit)
        } else {
            limit
        };
        // The meaning side (query embedding on the worker, then the index)
        // runs as its own task, alongside the text side.
        let meaning = match mode {
            SearchMode::Text => None,
            _ => {
                let (query, filter, this) = (query.to_string(), filter.clone(), self.clone());
                Some(tokio::spawn(async move {
                    this.nearest_entries(&query, filter, k).await
                }))
            }
        };
        let text_hits = match mode {
            SearchMode::Semantic => Vec::new(),
            _ => {
                let (query, filter) = (query.to_string(), filter.clone());
                // Substrings (the slowest tier) only for one-word queries in
                // hybrid, such as an identifier fragment; longer queries are
                // what meaning search is for.
                let substrings =
                    mode != SearchMode::Hybrid || query.split_whitespace().count() == 1;
                self.scan(move |e| e.store().search_text(&query, &filter, k, substrings))
                    .await?
            }
        };
        let Some(meaning) = meaning else {
            return Ok(SearchResult {
                hits: text_hits
                    .into_iter()
                    .map(|(entry, score)| SearchHit {
                        entry,
                        score,
                        found_by: vec!["text".into()],
                    })
                    .collect(),
                mode: SearchMode::Text,
                not_embedded: 0,
            });
        };
        let (near, not_embedded) = meaning
            .await
            .map_err(|e| Error::Internal(format!("semantic search task failed: {e}")))??;
        if mode == SearchMode::Semantic {
            return Ok(SearchResult {
                hits: near
                    .into_iter()
                    .map(|(entry, score)| SearchHit {
                        entry,
                        score,
                        found_by: vec!["semantic".into()],
                    })
                    .collect(),
                mode,
                not_embedded,
            });
        }
        // Hybrid: weak meaning matches are noise next to word matches.
        let near: Vec<(Entry, f64)> = near
            .into_iter()
            .filter(|(_, score)| *score >= HYBRID_MIN_SIMILARITY)
            .collect();
        let ids =
            |hits: &[(Entry, f64)]| hits.iter().map(|(e, _)| e.id.clone()).collect::<Vec<_>>();
        let text_ids = ids(&text_hits);
        let near_ids = ids(&near);
        let mut by_id: HashMap<String, Entry> = text_hits
            .into_iter()
            .chain(near)
            .map(|(e, _)| (e.id.clone(), e))
            .collect();
        let refs = [
            text_ids.iter().map(String::as_str).collect::<Vec<_>>(),
            near_ids.iter().map(String::as_str).collect::<Vec<_>>(),
        ];
        let hits = semantic::fuse(&refs)
            .into_iter()
            .take(limit as usize)
            .filter_map(|(id, score, lists)| {
                Some(SearchHit {
                    entry: by_id.remove(id)?,
                    score,
                    found_by: lists
                        .iter()
                        .map(|l| if *l == 0 { "text" } else { "semantic" }.to_string())
                        .collect(),
                })
            })
            .collect();
        Ok(SearchResult {
            hits,
            mode,
            not_embedded,
        })
    }

    /// The `k` live entries nearest in meaning to `query` that pass `filter`,
    /// with their cosine similarity, after waiting (briefly) for every
    /// acknowledged write to be embedded; also how many were not (a flood).
    async fn nearest_entries(
        &self,
        query: &str,
        filter: EntryFilter,
        k: u32,
    ) -> Result<(Vec<(Entry, f64)>, u64)> {
        let semantic = self
            .semantic()
            .expect("called only when semantic search is ready");
        let (vector, not_embedded) =
            tokio::try_join!(semantic.query_vector(query), semantic.settle(&self.0.store))?;
        let near = self
            .scan(move |e| {
                let s = e.semantic().expect("configured");
                let near = s.nearest(e.store(), &vector, &filter, k as usize)?;
                let ids: Vec<i64> = near.iter().map(|(id, _)| *id).collect();
                let entries = e.store().entries_by_id(&ids)?;
                Ok(near
                    .into_iter()
                    .zip(entries)
                    .filter_map(|((_, score), entry)| Some((entry?, score as f64)))
                    .collect())
            })
            .await?;
        Ok((near, not_embedded))
    }

    pub async fn tags(&self, p: TagsParams, grant: Option<&Grant>) -> Result<TagsResult> {
        let filter = pad_scoped(p.pad.as_deref(), grant)?;
        let tags = self.scan(move |e| e.store().tags(&filter)).await?;
        Ok(TagsResult {
            tags: tags
                .into_iter()
                .map(|(tag, count)| TagCount { tag, count })
                .collect(),
        })
    }

    pub async fn pads(&self, p: PadListParams, grant: Option<&Grant>) -> Result<Vec<Pad>> {
        let mut pads = self.store().pads(p.include_archived)?;
        if let Some(g) = grant {
            pads.retain(|pad| g.covers(&pad.name));
        }
        Ok(pads)
    }

    pub async fn configure(&self, p: ConfigureParams) -> Result<Pad> {
        let name = model::pad_name("name", &p.name)?;
        if let Some(Some(ttl)) = p.ttl_seconds {
            if !(1..=model::MAX_FUTURE_SECONDS).contains(&ttl) {
                return Err(Error::over_limit(
                    "ttl_seconds",
                    format!("ttl_seconds is {ttl}; give 1 to {} seconds (7200 = 2 hours; the most is ten years), or null to never expire.", model::MAX_FUTURE_SECONDS),
                    model::MAX_FUTURE_SECONDS,
                    ttl,
                ));
            }
        }
        if let Some(Some(max)) = p.max_entries {
            if !(1..=model::MAX_WINDOW_ENTRIES).contains(&max) {
                return Err(Error::over_limit(
                    "max_entries",
                    format!(
                        "max_entries is {max}; give 1 to {}, or null for no limit.",
                        model::MAX_WINDOW_ENTRIES
                    ),
                    model::MAX_WINDOW_ENTRIES,
                    max,
                ));
            }
        }
        let pad = self
            .store()
            .configure(&name, p.ttl_seconds, p.max_entries, self.now())?;
        let mut windows = self.0.windows.lock().unwrap_or_else(|p| p.into_inner());
        match pad.max_entries {
            Some(m) => windows.insert(name, m),
            None => windows.remove(&name),
        };
        Ok(pad)
    }

    pub async fn touch(&self, p: PadNameParams) -> Result<Pad> {
        let name = model::pad_name("name", &p.name)?;
        self.store().touch(&name, self.now())
    }

    pub async fn clear(&self, p: ClearParams) -> Result<usize> {
        let name = model::pad_name("name", &p.name)?;
        let n = {
            let name = name.clone();
            self.blocking(move |e| e.store().clear(&name, p.keep_pinned))
                .await?
        };
        self.0.bus.publish(EventType::Deleted, &name, None);
        Ok(n)
    }

    pub async fn export(&self, p: ExportParams) -> Result<ExportResult> {
        let name = model::pad_name("name", &p.name)?;
        match (p.format, p.budget) {
            (ExportFormat::Json, Some(_)) => {
                return Err(Error::invalid(
                    "budget",
                    "a budget applies to markdown exports only; drop 'budget' or use format 'markdown'.",
                ))
            }
            (_, Some(b)) if !(export::MIN_BUDGET..=model::MAX_BUDGET).contains(&b) => {
                return Err(Error::over_limit(
                    "budget",
                    format!(
                        "budget is {b} characters; give {} to {} (at least room for the header and the note on what was left out), or leave it out for the whole pad.",
                        export::MIN_BUDGET,
                        model::MAX_BUDGET
                    ),
                    export::MIN_BUDGET,
                    b,
                ))
            }
            _ => {}
        }
        let max_bytes = self.0.config.max_export_bytes;
        self.scan(move |e| {
            let pad = e
                .store()
                .pad(&name)?
                .ok_or_else(|| crate::store::no_pad(&name))?;
            let (entries, unloaded, bytes) = e.store().pad_entries(&name, max_bytes)?;
            if unloaded > 0 && p.budget.is_none() {
                return Err(Error::TooLarge {
                    field: Some("name".into()),
                    message: format!(
                        "pad '{name}' holds {} MiB of text, more than one export may answer ({} MiB). Give a 'budget' (markdown: pinned and important entries first, then the newest that fit), or page through it with entry.list (limit 1000, next_cursor).",
                        bytes >> 20,
                        max_bytes >> 20
                    ),
                    limit: max_bytes as u64,
                    got: bytes as u64,
                });
            }
            Ok(match p.format {
                ExportFormat::Json => ExportResult {
                    // Straight from the entries, not through a `Value` tree
                    // (which costs several times the text).
                    text: serde_json::to_string_pretty(&JsonExport {
                        pad: &pad,
                        entries: &entries,
                    })
                    .expect("json serializes"),
                    entries: entries.len(),
                    left_out: 0,
                },
                ExportFormat::Markdown => {
                    let md = export::markdown(&pad, &entries, p.budget, unloaded);
                    ExportResult {
                        text: md.text,
                        entries: md.included,
                        left_out: md.left_out,
                    }
                }
            })
        })
        .await
    }
}

/// Has glibc's malloc give blocks of 1 MiB and more straight back to the
/// system when they are freed. By default it raises that threshold as large
/// blocks are freed, up to 32 MiB, and then keeps them in its per-thread
/// arenas: after a few large answers (an export, a batch) the engine would
/// keep their memory for good.
fn return_large_blocks() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes malloc's tuning; any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Set when a connection ends: its buffers (128 KiB and more each) went
/// back to malloc, which keeps freed memory below the mmap threshold.
static TRIM_WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a connection's buffers were freed; within a second the
/// background task hands free memory back to the system.
pub(crate) fn memory_freed() {
    TRIM_WANTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Gives freed heap memory back to the system, if connections ended since
/// the last call (so 2,000 closed connections do not keep their ~600 MB),
/// on a blocking thread: a trim walks every arena.
fn trim_if_wanted() {
    if TRIM_WANTED.swap(false, std::sync::atomic::Ordering::Relaxed) {
        #[cfg(target_env = "gnu")]
        tokio::task::spawn_blocking(|| {
            // SAFETY: malloc_trim only returns free memory to the system.
            unsafe { libc::malloc_trim(0) };
        });
    }
}

#[derive(serde::Serialize)]
struct JsonExport<'a> {
    pad: &'a crate::model::Pad,
    entries: &'a [Entry],
}

/// `entry.list` pages up to this long are read inline; longer ones are scans.
const INLINE_LIST_LIMIT: u32 = 100;

/// Client scans that run at once (`Engine::scan`).
const SCAN_TURNS: usize = 2;

/// The most entry text (bytes, with some room for each entry's fields) an
/// export loads at once: a pad holding more is exported only with a budget.
pub const MAX_EXPORT_BYTES: usize = 32 << 20;

/// Hybrid search fuses this many hits from each side, so a hit low on one
/// list but present on both can still rise into the page.
fn fused_depth(limit: u32) -> u32 {
    (limit * 2).clamp(20, MAX_SEARCH_LIMIT)
}

/// In hybrid search, meaning matches below this cosine similarity are left
/// out, as they only push word matches down: all-MiniLM-L6-v2 puts clearly
/// unrelated sentences near 0–0.1, while paraphrases in our retrieval test
/// score 0.20–0.62 ("tests are flaky" / "the integration suite fails randomly
/// about one run in five" is 0.20).
const HYBRID_MIN_SIMILARITY: f64 = 0.15;

impl Engine {
    /// What is new for an author: `needs_eyes` entries and replies by
    /// others since its last read (which this read moves past, unless `peek`).
    pub async fn inbox(
        &self,
        p: InboxParams,
        default_author: Option<&str>,
        grant: Option<&Grant>,
    ) -> Result<InboxResult> {
        let author = named(
            "author",
            p.author.as_deref().or(default_author),
            "whose inbox? Give author, or say hello with an author first.",
        )?;
        let who = author.clone();
        let mut inbox = self.scan(move |e| e.store().inbox(&who, p.peek)).await?;
        if let Some(g) = grant {
            for list in [
                &mut inbox.needs_eyes,
                &mut inbox.replies,
                &mut inbox.reminders,
            ] {
                list.retain(|e| g.covers(&e.pad));
            }
        }
        Ok(InboxResult {
            author,
            needs_eyes: inbox.needs_eyes,
            replies: inbox.replies,
            reminders: inbox.reminders,
        })
    }

    /// Forgets every stored vector and embeds every entry again.
    pub async fn reindex(&self) -> Result<ReindexResult> {
        let Some(s) = self.semantic() else {
            return Err(Error::Unavailable(
                "semantic search is off in this engine, so there is nothing to reindex; restart `pad serve` without --no-semantic.".into(),
            ));
        };
        s.reindex().await?;
        let queued = self.blocking(|e| e.store().embed_queue()).await?;
        Ok(ReindexResult { queued })
    }
}

/// The author or agent a call names, else the connection's `hello` author;
/// `missing` says what to do when there is neither.
fn named(field: &str, given: Option<&str>, missing: &str) -> Result<String> {
    match given {
        Some(a) => model::author(field, a),
        None => Err(Error::invalid(field, missing)),
    }
}

/// Narrows a filter to what a token may read: its pad must be covered, and
/// without a pad the search spans the token's pads only.
fn scoped(mut filter: EntryFilter, grant: Option<&Grant>) -> Result<EntryFilter> {
    if let Some(g) = grant {
        if let Some(pad) = &filter.pad {
            g.check_read(pad)?;
        }
        filter.scope = Some(g.pads.clone());
    }
    Ok(filter)
}

/// Everything a token may read, in one pad or (without one) in all of them.
pub(crate) fn pad_scoped(pad: Option<&str>, grant: Option<&Grant>) -> Result<EntryFilter> {
    let filter = EntryFilter {
        pad: pad.map(|n| model::pad_name("pad", n)).transpose()?,
        ..EntryFilter::default()
    };
    scoped(filter, grant)
}

fn limit(field: &str, got: Option<u32>, default: u32, max: u32) -> Result<u32> {
    match got {
        None => Ok(default),
        Some(0) => Err(Error::over_limit(
            field,
            format!("{field} is 0; ask for at least 1 (default {default}, max {max})."),
            max,
            0,
        )),
        Some(n) if n > max => Err(Error::over_limit(
            field,
            format!("{field} is {n}; the maximum is {max}. Page through with next_cursor, or narrow the filter."),
            max,
            n,
        )),
        Some(n) => Ok(n),
    }
}

fn text_field(field: &str, text: String, max: usize) -> Result<String> {
    let len = text.chars().count();
    if len > max {
        return Err(Error::TooLarge {
            field: Some(field.into()),
            message: format!("{field} is {len} characters; the limit is {max}. Keep it short and point to files for detail."),
            limit: max as u64,
            got: len as u64,
        });
    }
    Ok(text)
}

fn meta_text(m: &serde_json::Map<String, serde_json::Value>) -> Result<String> {
    model::meta(m)?;
    Ok(serde_json::to_string(m).expect("json serializes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::{handle_line, Session};
    use serde_json::{json, Value};

    async fn call(engine: &Engine, session: &mut Session, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let reply = handle_line(engine, session, line.to_string().as_bytes())
            .await
            .expect("a request with an id gets an answer");
        let reply: Value = serde_json::from_slice(&reply).unwrap();
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    /// A cached statement whose plan looked at a bound value is expired
    /// whenever a new value is bound, and SQLite then parses and plans it
    /// again on every call (a one-entry `entry.list` cost ~50 µs instead of
    /// ~6). Every method, called twice with different values, must reuse its
    /// statements as prepared.
    #[tokio::test]
    async fn statements_stay_prepared_across_calls_with_new_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path().join("data"));
        config.semantic = None;
        let engine = Engine::open(config).await.unwrap();
        let mut s = Session::new(None);
        for (round, pad) in ["proj-a", "proj-b", "proj-a"].into_iter().enumerate() {
            let (limit, agent, tag) = (5 + round, format!("agent-{round}"), format!("t{round}"));
            let mut ids = Vec::new();
            for i in 0..3 {
                let params = json!({"pad": pad, "content": format!("login retry {i} in {pad}"), "tags": [tag], "author": agent});
                let r = call(&engine, &mut s, "entry.add", params).await;
                ids.push(r["entry"]["id"].as_str().unwrap().to_string());
            }
            let page = call(
                &engine,
                &mut s,
                "entry.list",
                json!({"pad": pad, "limit": 1}),
            )
            .await;
            let calls = [
                (
                    "entry.add",
                    json!({"pad": pad, "kind": "task", "content": format!("migrate {round}"), "depends_on": [ids[0]]}),
                ),
                ("entry.get", json!({"id": ids[1]})),
                (
                    "entry.update",
                    json!({"id": ids[1], "content": format!("edited {round}"), "if_version": 1}),
                ),
                ("entry.delete", json!({"id": ids[2]})),
                ("entry.list", json!({"pad": pad, "limit": limit})),
                (
                    "entry.list",
                    json!({"pad": pad, "limit": limit, "cursor": page["next_cursor"]}),
                ),
                (
                    "entry.list",
                    json!({"pad": pad, "tags": [tag], "author": agent, "kind": "note", "limit": limit}),
                ),
                (
                    "entry.list",
                    json!({"status": "todo", "since": "2020-01-01T00:00:00Z", "min_confidence": 0.1 * round as f64, "limit": limit}),
                ),
                (
                    "search",
                    json!({"query": format!("login {round}"), "pad": pad, "limit": limit}),
                ),
                (
                    "search",
                    json!({"query": format!("ogi{}", ["n", "n r", "n retry"][round]), "limit": limit}),
                ),
                ("tags.list", json!({"pad": pad})),
                ("pad.list", json!({})),
                (
                    "pad.configure",
                    json!({"name": pad, "ttl_seconds": 3600 + round}),
                ),
                ("pad.touch", json!({"name": pad})),
                ("pad.export", json!({"name": pad, "budget": 600 + round})),
                ("plan.order", json!({"pad": pad})),
                (
                    "task.claim",
                    json!({"pad": pad, "agent": agent, "lease_seconds": 60 + round}),
                ),
                (
                    "entry.share",
                    json!({"id": ids[0], "to": [format!("share-{round}")]}),
                ),
                ("report", json!({"pad": pad})),
                ("inbox", json!({"author": agent})),
                ("stats", json!({})),
            ];
            for (method, params) in calls {
                call(&engine, &mut s, method, params).await;
            }
        }
        let reprepared = engine.store().reprepared();
        assert!(
            reprepared.is_empty(),
            "statements re-planned on every call (every connection must plan without looking at bound values: store::open_connection):\n{}",
            reprepared
                .iter()
                .map(|(sql, n)| format!("{n}× {sql}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
