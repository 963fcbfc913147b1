//! The engine: one cheap, cloneable handle over the store, the event bus, the
//! clock and the background work (text indexing, expiry).
//!
//! Every transport (socket, desktop app, MCP, CLI) reaches the engine through
//! `rpc::handle_line`, which parses each request into its method's typed
//! params (`rpc/methods.rs`) and calls the methods here. The
//! methods validate and normalise input, write through the store, and publish
//! events after the write is committed — so a subscriber never hears of a
//! change that did not happen.

mod activity;
mod agents;
mod background;
mod centre;
mod dispatch;
mod duplicates;
mod explain;
pub(crate) mod export;
mod fusion;
mod history;
pub mod lock;
mod meaning;
mod pads;
mod roster;
mod search;
mod sparse;
mod supersede;
mod team;
mod threads;
mod tokens;
mod work;

pub use crate::settings::defaults::MAX_EXPORT_BYTES;
pub use crate::settings::Config;
pub(crate) use background::memory_freed;
pub use work::{DEFAULT_LEASE_SECONDS, MAX_LEASE_SECONDS};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::events::{Bus, EventType, Filter, Subscription};
use crate::guard::Guard;
use crate::model::{self, Entry};
use crate::pg::PgStore;
use crate::protocol::*;
use crate::semantic::Semantic;
use crate::storage::once::{Key, Once};
use crate::storage::{Added, EntryFilter, NewEntry, Patch, Storage};

/// Opens the store `config` names: PostgreSQL when it gives a database
/// URL, else SQLite files in its data directory. The one place a store is
/// chosen; beside the contract it gives what only that store has: SQLite's
/// files (for tests), a team's database (its engines relay events through
/// it).
async fn open_store(
    config: &Config,
) -> Result<(
    Arc<dyn Storage>,
    Option<Arc<crate::store::Store>>,
    Option<PgStore>,
)> {
    match &config.database {
        None => {
            let store = crate::store::Store::open(
                &config.data_dir,
                config.durability,
                config.default_ttl_seconds,
                config.wal_restart_pages,
                config.clock.now_ms(),
                config.semantic.is_some(),
            )?;
            store.keep_history(!config.history.is_zero());
            let sqlite = crate::store::Sqlite::new(store)?;
            let files = sqlite.store().clone();
            Ok((Arc::new(sqlite), Some(files), None))
        }
        Some(url) => {
            let store = PgStore::open(url, config.default_ttl_seconds).await?;
            store.keep_history(!config.history.is_zero());
            tracing::info!("keeping everything in PostgreSQL at {}", store.describe());
            Ok((Arc::new(store.clone()), None, Some(store)))
        }
    }
}

#[derive(Clone)]
pub struct Engine(Arc<Inner>);

struct Inner {
    config: Config,
    /// Where the entries are (`open_store` chose it).
    store: Arc<dyn Storage>,
    /// The same store's files when it is SQLite, for tests that look at them.
    sqlite: Option<Arc<crate::store::Store>>,
    /// Dropped before `lock` (fields drop in order): dropping it stops the
    /// embedding worker, which saves the index while the data dir is still ours.
    semantic: Option<Arc<Semantic>>,
    /// The entries of archived pads, kept for meaning search's walks.
    archived: meaning::Archived,
    /// The mean vectors hybrid searches centre their cosines on.
    means: centre::Means,
    bus: Bus,
    /// Registered A2A agents, deliveries of addressed notes, presence.
    agents: Arc<crate::agents::Agents>,
    /// Who a token speaks for (`engine/tokens.rs`).
    tokens: tokens::Tokens,
    metrics: Option<crate::metrics::Metrics>,
    metrics_address: std::sync::OnceLock<String>,
    started: Instant,
    connections: AtomicU64,
    /// Turns for requests that scan (see `turn`).
    scans: tokio::sync::Semaphore,
    stop: watch::Sender<bool>,
    /// The data directory's lock: let go by `shutdown` once everything is
    /// saved, so a new engine can open the directory at once even while a
    /// handle to this one is still being dropped (a relay callback, a
    /// finishing task); else when the last handle goes.
    lock: Mutex<Option<lock::DirLock>>,
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
        background::return_large_blocks();
        crate::paths::create_private_dir(&config.data_dir).map_err(|e| {
            Error::Internal(format!(
                "cannot create data directory {}: {e}",
                config.data_dir.display()
            ))
        })?;
        crate::paths::seal_files(&config.data_dir);
        let lock_file = config.data_dir.join("engine.lock");
        let dir_lock = lock::DirLock::acquire(&lock_file).map_err(|not| match not {
            lock::NotLocked::Held { pid } => Error::Unavailable(format!(
                "data directory {} is in use by another engine{}; stop it first or set PAD_HOME to another directory",
                config.data_dir.display(),
                pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
            )),
            lock::NotLocked::Io(e) => Error::Unavailable(format!(
                "cannot write in data directory {} ({}: {e}); is its file system read-only, full or failing, or the directory not yours? Fix that, or set PAD_HOME to a writable directory",
                config.data_dir.display(),
                lock_file.display()
            )),
        })?;
        let (store, sqlite, team) = open_store(&config).await?;
        let semantic = match config.semantic.clone() {
            Some(c) => Some(Arc::new(Semantic::start(
                c,
                store.vectors()?,
                config.data_dir.clone(),
            ))),
            None => None,
        };
        let tokens = tokens::Tokens::new(
            crate::access::hash(&crate::access::owner_token(&config.data_dir)?),
            config.require_tokens,
            store.tokens().await?,
        );
        let agents = Arc::new(agents::open(&config, &*store).await?);
        let engine = Engine(Arc::new(Inner {
            store,
            sqlite,
            semantic,
            archived: Default::default(),
            means: Default::default(),
            bus: Bus::default(),
            agents,
            tokens,
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
            lock: Mutex::new(Some(dir_lock)),
        }));
        if let Some(team) = team {
            engine.relay_events(team).await;
        }
        Ok(engine)
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn clock(&self) -> &Clock {
        &self.0.config.clock
    }

    /// The store: every read and write of entries goes through it.
    pub(crate) fn db(&self) -> &dyn Storage {
        &*self.0.store
    }

    /// The SQLite store, when the engine keeps its entries in SQLite (for
    /// tests and benchmarks that look at its files).
    pub fn sqlite_store(&self) -> Option<&Arc<crate::store::Store>> {
        self.0.sqlite.as_ref()
    }

    /// Semantic search, when configured (it may still be loading, or unavailable).
    pub fn semantic(&self) -> Option<&Arc<Semantic>> {
        self.0.semantic.as_ref()
    }

    pub(crate) fn now(&self) -> i64 {
        self.0.config.clock.now_ms()
    }

    /// A turn for a client's scan (search, export, report, tags, a thread,
    /// a plan, stats), held until dropped: at most `SCAN_TURNS` at once, the
    /// rest waiting their turn in arrival order without holding a thread. So
    /// clients running heavy reads together cannot multiply their memory,
    /// nor take every core from the point reads and writes of the others.
    pub(crate) async fn turn(&self) -> Result<tokio::sync::SemaphorePermit<'_>> {
        self.0
            .scans
            .acquire()
            .await
            .map_err(|_| Error::Unavailable("the engine is stopping".into()))
    }

    /// How many handles to this engine exist: its data directory stays
    /// locked until the last is dropped (tests wait for theirs to be it).
    pub fn handles(&self) -> usize {
        Arc::strong_count(&self.0)
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

    pub fn subscribe(&self, p: SubscribeParams, guard: &Guard) -> Result<Subscription> {
        let pads: Vec<String> = p
            .pads
            .iter()
            .map(|raw| match raw.strip_suffix('*') {
                Some("") => Ok("*".to_string()),
                Some(prefix) => model::pad_name("pads", prefix).map(|n| format!("{n}*")),
                None => model::pad_name("pads", raw),
            })
            .collect::<Result<Vec<_>>>()?;
        for pattern in &pads {
            guard.may_watch(pattern)?;
        }
        let tags = model::tags("tags", &p.tags)?;
        Ok(self.0.bus.subscribe(Filter {
            pads,
            tags,
            kinds: p.kinds,
            scope: guard.scope_pads(),
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

    /// Writes an entry. `guard` decides what it may set in motion: a reply
    /// in a thread handed to an agent reaches the agent only if the caller
    /// may hand work to it. With `key` taken by an earlier call, writes
    /// nothing and answers with that call's entry.
    pub async fn add(
        &self,
        p: AddParams,
        default_author: Option<&str>,
        guard: &Guard,
        key: Option<Key>,
    ) -> Result<Entry> {
        let mut entry = self.validated(p, default_author, guard)?;
        entry.key = key;
        self.insert(entry).await
    }

    /// A new entry's params checked and made the entry to insert. Apart
    /// from `add`, so that what is left of the params is dropped here and
    /// not carried across the insert by every write's future.
    fn validated(
        &self,
        p: AddParams,
        default_author: Option<&str>,
        guard: &Guard,
    ) -> Result<NewEntry> {
        let now = self.now();
        let pad = model::pad_name("pad", &p.pad)?;
        let max = self.0.config.max_content_chars;
        model::content("content", &p.content, max)?;
        let tags = model::tags("tags", &p.tags)?;
        let author = model::entry_author(p.author.as_deref(), default_author)?;
        let choices = model::choices("choices", &p.choices)?;
        let to = model::recipients("to", &p.to)?;
        let handoffs = self
            .0
            .agents
            .handoffs(&author, &to, p.reply_to.as_deref(), &|a| {
                guard.may_hand_to(a)
            });
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
            to,
            supersedes: p.supersedes,
            remind_at,
            pinned: p.pinned,
            meta: p.meta.as_ref().map(meta_text).transpose()?,
            now,
            handoffs,
            by_token: guard.grant().is_some(),
            key: None,
        };
        Ok(entry)
    }

    /// Inserts a validated entry (applying its pad's window, with the
    /// deliveries it brings) and tells subscribers and the dispatcher.
    async fn insert(&self, entry: NewEntry) -> Result<Entry> {
        let handed = !entry.handoffs.is_empty();
        let Added {
            entry,
            rolled,
            parent,
        } = match self.db().add(entry).await? {
            Once::Wrote(added) => added,
            Once::Again(id) => return self.replayed(&id).await,
        };
        if let Some(m) = self.metrics() {
            m.entry_written(entry.kind);
        }
        self.0.bus.entry_changed(EventType::Created, None, &entry);
        if handed {
            // Its deliveries' rows committed with it: the dispatcher takes them.
            self.0.agents.wake.notify_one();
        }
        if let Some((before, after)) = parent {
            if after.answer.as_deref() == Some(&entry.id) {
                self.0.bus.waiters.answer(&after.id, &entry);
            }
            self.0
                .bus
                .entry_changed(EventType::Updated, Some(&before), &after);
        }
        for gone in rolled {
            let pad = gone.pad.clone();
            self.0.bus.publish(EventType::Deleted, &pad, Some(gone));
        }
        if entry.supersedes.is_some() {
            // Boxed, and after the rest: every write's future (boxed, and
            // copied there, per call) carried this rare path's state.
            Box::pin(self.superseded_changed(vec![entry.supersedes.clone()])).await;
        }
        Ok(entry)
    }

    pub async fn get(&self, id: &str) -> Result<Entry> {
        self.db().get(id).await
    }

    /// Up to two (full id, pad) of entries whose id starts with `id`, among
    /// pads `visible` accepts: a scoped caller's prefix resolution.
    pub async fn visible_matches(
        &self,
        id: &str,
        visible: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<(String, String)>> {
        self.db().visible_matches(id, visible).await
    }

    /// Applies an edit; `by` is who made it (kept with the replaced version).
    pub async fn update(&self, p: UpdateParams, by: &str) -> Result<Entry> {
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
            supersedes: p.supersedes.clone(),
        };
        if let Some(Some(older)) = &p.supersedes {
            self.refuse_supersede_loop(&p.id, older).await?;
        }
        let now = self.now();
        let (before, after) = self
            .db()
            .update(&p.id, patch, p.if_version, now, by)
            .await?;
        self.0
            .bus
            .entry_changed(EventType::Updated, Some(&before), &after);
        if before.supersedes != after.supersedes {
            self.superseded_changed(vec![before.supersedes, after.supersedes.clone()])
                .await;
        }
        Ok(after)
    }

    pub async fn list(&self, p: ListParams, guard: &Guard) -> Result<ListResult> {
        let limit = limit("limit", p.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT)?;
        let cursor = cursor(p.cursor.as_deref())?;
        let asked = Asked {
            pad: p.pad.as_deref(),
            tags: &p.tags,
            author: p.author.as_deref(),
            kind: p.kind,
            category: p.category,
            min_confidence: p.min_confidence,
        }
        .filter()?;
        let filter = EntryFilter {
            status: p.status,
            since: p
                .since
                .as_deref()
                .map(|s| model::parse_time("since", s))
                .transpose()?,
            current_only: !p.include_superseded,
            ..asked
        };
        let filter = guard.scope(filter)?;
        // A long page (up to 1,000 entries of up to 4,000 characters) is a
        // scan: in turn, so it cannot hold up the point reads of other clients.
        let _turn = if limit > LONG_PAGE {
            Some(self.turn().await?)
        } else {
            None
        };
        let page = self.db().list(&filter, limit, cursor).await?;
        Ok(ListResult {
            entries: page.entries,
            next_cursor: page.next_cursor,
        })
    }
}

/// A page cursor as this engine gave it out (`next_cursor`).
fn cursor(raw: Option<&str>) -> Result<Option<i64>> {
    raw.map(|c| {
        c.parse::<i64>().map_err(|_| {
            Error::invalid(
                "cursor",
                format!("cursor '{c}' is not one this engine gave out; pass next_cursor from the previous page unchanged, or omit it to start over."),
            )
        })
    })
    .transpose()
}

/// `entry.list` pages longer than this are scans (they wait their turn).
const LONG_PAGE: u32 = 100;

/// Client scans that run at once (`Engine::turn`).
const SCAN_TURNS: usize = 2;

impl Engine {
    /// What is new for an author: `needs_eyes` entries and replies by
    /// others since its last read (which this read moves past, unless `peek`).
    pub async fn inbox(
        &self,
        p: InboxParams,
        default_author: Option<&str>,
        guard: &Guard,
    ) -> Result<InboxResult> {
        let author = named(
            "author",
            p.author.as_deref().or(default_author),
            "whose inbox? Give author, or say hello with an author first.",
        )?;
        let mut inbox = {
            let _turn = self.turn().await?;
            self.db().inbox(&author, p.peek).await?
        };
        for list in [
            &mut inbox.needs_eyes,
            &mut inbox.replies,
            &mut inbox.addressed,
            &mut inbox.reminders,
        ] {
            list.retain(|e| guard.covers(&e.pad));
        }
        Ok(InboxResult {
            author,
            needs_eyes: inbox.needs_eyes,
            replies: inbox.replies,
            addressed: inbox.addressed,
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
        let queued = self.db().embed_queue().await?;
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

/// The conditions `search` and `entry.list` both take, as a caller
/// gives them.
pub(crate) struct Asked<'a> {
    pub pad: Option<&'a str>,
    pub tags: &'a [String],
    pub author: Option<&'a str>,
    pub kind: Option<crate::model::Kind>,
    pub category: Option<crate::model::Category>,
    pub min_confidence: Option<f64>,
}

impl Asked<'_> {
    /// The filter they make, each checked in the order named (the guard
    /// then narrows it to what the caller may read).
    pub(crate) fn filter(self) -> Result<EntryFilter> {
        Ok(EntryFilter {
            pad: self.pad.map(|n| model::pad_name("pad", n)).transpose()?,
            tags: model::tags("tags", self.tags)?,
            author: self
                .author
                .map(|a| model::author("author", a))
                .transpose()?,
            kind: self.kind,
            category: self.category,
            min_confidence: self.min_confidence.map(model::confidence).transpose()?,
            ..EntryFilter::default()
        })
    }
}

#[cfg(test)]
mod tests;
