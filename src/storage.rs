//! The store contract: every operation the engine needs from where it keeps
//! its entries, declared once, in one trait per concern (`Entries`,
//! `TextSearch`, `SparseSearch`, `Pads`, `Tasks`, `History`, `Tokens`,
//! `Deliveries`, `Upkeep`, `Scans`, `Figures`, `Meaning`); `Storage` is all of them. Each store
//! implements each concern where its statements are, with no layer between.
//!
//! Two stores implement it: SQLite files in the data directory
//! (`store::Sqlite`, one machine, the default) and a PostgreSQL database
//! shared by the engines of a team (`pg::PgStore`). The engine holds an
//! `Arc<dyn Storage>` chosen once, when it starts (`engine::open_store`), and
//! calls nothing else: a store that lacks an operation, or offers it with
//! another signature, does not compile (the examples on `Storage` show it).
//! What only a team has (relaying events between engines) the engine keeps
//! beside it, typed, from the same choice.
//!
//! The shapes passed across (`types`) and the rules both stores apply the
//! same way (`rules`: a new entry, a stale version, an unknown id, a task in
//! the wrong state) live here, in neither store.
//!
//! Each operation answers the same on both stores, with the same errors.
//! How it runs is the store's business: SQLite answers a point operation in
//! microseconds and runs it inline, and sends scans (search, export, sweeps)
//! to a blocking thread; PostgreSQL awaits its pool. Where a store has
//! nothing to do (PostgreSQL indexes text as it writes) the operation says
//! so in its documented answer, never by panicking.
//!
//! A future is boxed (`Fut`) so the contract can be a trait object: one
//! allocation per call, against microseconds of work at the least.

pub(crate) mod activity;
mod cycle;
pub(crate) mod deliveries;
pub(crate) mod entries;
pub(crate) mod history;
pub(crate) mod inbox;
pub mod once;
pub(crate) mod pads;
pub(crate) mod query;
pub mod rules;
pub(crate) mod sparse;
pub(crate) mod tasks;
pub(crate) mod tokens;
mod types;
pub mod write;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::Result;
use crate::model::{Entry, Pad};
use crate::protocol::{Change, Skipped, Version};
use crate::semantic::VectorSource;
pub(crate) use cycle::{CycleSearch, Step};
use once::{Key, Once};
pub use types::*;

/// What every store operation returns: a boxed future of a result.
pub type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// Which pads a caller may see or change, by name.
pub type Visible<'a> = &'a (dyn Fn(&str) -> bool + Sync);

/// Everything the engine asks of a store.
///
/// Any store is one the engine can hold:
/// ```
/// use scratchpad::storage::Storage;
/// fn held(_: std::sync::Arc<dyn Storage>) {}
/// fn sqlite(s: scratchpad::store::Sqlite) { held(std::sync::Arc::new(s)) }
/// fn postgres(s: scratchpad::pg::PgStore) { held(std::sync::Arc::new(s)) }
/// ```
/// and a store that lacks an operation does not compile:
/// ```compile_fail,E0046
/// use scratchpad::storage::Entries;
/// struct OnlyHalf;
/// impl Entries for OnlyHalf {}
/// ```
/// Each concern is a trait of its own, implemented by each store beside its
/// statements; `Storage` is every one of them.
pub trait Storage:
    Entries
    + TextSearch
    + SparseSearch
    + Pads
    + Tasks
    + History
    + Tokens
    + Deliveries
    + Upkeep
    + Scans
    + Figures
    + Meaning
{
}

impl<
        T: Entries
            + TextSearch
            + SparseSearch
            + Pads
            + Tasks
            + History
            + Tokens
            + Deliveries
            + Upkeep
            + Scans
            + Figures
            + Meaning,
    > Storage for T
{
}

/// Entries: writing, reading by id, listing, threads, the inbox.
pub trait Entries: Send + Sync + 'static {
    /// Inserts an entry, applying its pad's rolling window (`max_entries`);
    /// says which entries the window pushed out and the parent it replied to.
    /// With an idempotency key (`NewEntry::key`) already taken, writes
    /// nothing and answers as the first call did (`Once::Again`).
    fn add(&self, entry: NewEntry) -> Fut<'_, Once<Added>>;
    /// The live entry with this id or unique id prefix.
    fn get<'a>(&'a self, id: &'a str) -> Fut<'a, Entry>;
    /// Whether `key` names a write stored already: its caller's, the same
    /// call, within the day (`storage::once`).
    fn kept<'a>(&'a self, key: &'a Key, now: i64) -> Fut<'a, bool>;
    /// Up to two (full id, pad) of live entries whose id starts with `id`,
    /// in pads `visible` accepts: a scoped caller's prefix resolution.
    fn visible_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(String, String)>>;
    /// Applies an edit (refused if `if_version` is not the live version);
    /// returns the entry before and after. `by` is kept with the old version.
    fn update<'a>(
        &'a self,
        id: &'a str,
        patch: Patch,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, Entry)>;
    /// Deletes an entry (kept in history); returns it and the change number.
    fn delete<'a>(
        &'a self,
        id: &'a str,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, i64)>;
    /// Newest first, `limit` at most, after `cursor` (a previous page's).
    fn list<'a>(
        &'a self,
        filter: &'a EntryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, Page>;
    /// An entry and up to `limit` of its replies, oldest first.
    fn thread<'a>(&'a self, id: &'a str, limit: usize) -> Fut<'a, (Entry, Vec<Entry>)>;
    /// The live entries with these ids, in their order (`None`: gone).
    fn entries_by_id<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<Option<Entry>>>;
    /// For each id, the live entries just before and just after it in its
    /// pad (by id: the order written), then the ones two away — `[before,
    /// after, two before, two after]` — in the ids' order.
    fn pad_neighbours<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<[Option<i64>; 4]>>;
    /// What is new for `author` since its last read (moved past unless `peek`).
    fn inbox<'a>(&'a self, author: &'a str, peek: bool) -> Fut<'a, Inbox>;
}

/// Text search's tiers (`engine::search` runs them).
pub trait TextSearch: Send + Sync + 'static {
    /// Text search's tiers 1 and 2 (`engine::search` runs them): entries
    /// holding every word whole or, with `prefix`, by its beginning, case
    /// and accents aside, best first. `readable`: how many entries a
    /// scoped caller may read (`EntryFilter::scope`); a score weighed by
    /// how common a word is counts over those, never the store.
    fn word_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
        prefix: bool,
        readable: Option<u64>,
    ) -> Fut<'a, Vec<(Entry, f64)>>;
    /// Tier 3: entries holding every word anywhere (inside words too),
    /// newest first.
    fn substring_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
    ) -> Fut<'a, Vec<(Entry, f64)>>;
    /// For tier 4: how many entries hold each (lower-cased) word, words in
    /// none left out, at most the filtered pad's size; a count may stop just
    /// past `postings_budget`.
    fn word_counts<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(String, u64)>>;
    /// Tier 4: entries holding any of `words` (with their counts), by BM25
    /// over `readable` entries (as `word_hits`) or the store's, best first;
    /// `newest_only` ranks only the newest matches
    /// (`terms::newest_candidates`).
    fn any_word_hits<'a>(
        &'a self,
        words: &'a [(String, u64)],
        readable: Option<u64>,
        filter: &'a EntryFilter,
        limit: u32,
        newest_only: bool,
    ) -> Fut<'a, Vec<(Entry, f64)>>;
    /// How many postings tier 4 may rank on this store (`terms`).
    fn postings_budget(&self) -> u64;
    /// Brings the text index up to every committed write, before a search
    /// reads it (PostgreSQL indexes in the write's transaction: nothing to
    /// do).
    fn index_text(&self) -> Fut<'_, ()>;
}

/// The sparse list (`engine::sparse`): the learned sparse terms the
/// embedding worker stores beside each vector (`Encoded`), searched by term.
pub trait SparseSearch: Send + Sync + 'static {
    /// How many entries hold each of `terms`, in the order asked.
    fn term_counts<'a>(&'a self, terms: &'a [u32]) -> Fut<'a, Vec<(u32, u64)>>;
    /// The postings of `terms` on the live entries passing `filter`:
    /// (term, entry id, the entry's weight for it), in no order.
    fn sparse_postings<'a>(
        &'a self,
        terms: &'a [u32],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(u32, i64, f32)>>;
}

/// Pads: their settings, clearing, exporting, their tags.
pub trait Pads: Send + Sync + 'static {
    fn pads(&self, include_archived: bool) -> Fut<'_, Vec<Pad>>;
    /// Creates or changes a pad (`Some(None)` clears a setting).
    fn configure<'a>(
        &'a self,
        name: &'a str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Fut<'a, Pad>;
    /// Marks a pad used now (restoring it if archived).
    fn touch<'a>(&'a self, name: &'a str, now: i64) -> Fut<'a, Pad>;
    /// Deletes a pad's entries (kept in history as one change): how many of
    /// each author's, and the change number.
    fn clear<'a>(
        &'a self,
        name: &'a str,
        keep_pinned: bool,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (std::collections::BTreeMap<String, usize>, i64)>;
    /// A pad and its entries, up to `max_bytes` of text (for an export).
    fn pad_with_entries<'a>(
        &'a self,
        name: &'a str,
        max_bytes: usize,
    ) -> Fut<'a, (Pad, PadEntries)>;
    /// Tags in use among entries passing `filter`, with their counts.
    fn tags<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<(String, i64)>>;
}

/// Tasks, reminders, plans and the report.
pub trait Tasks: Send + Sync + 'static {
    /// The next open task of `pad` for `agent`, leased: (before, after).
    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
        key: Option<&'a Key>,
    ) -> Fut<'a, Once<Option<(Entry, Entry)>>>;
    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)>;
    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)>;
    /// Tasks whose lease ran out, back to todo: (before, after) each.
    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>>;
    /// Reminders due by `now`, each taken once (also across engines).
    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>>;
    /// A pad's tasks and plans, oldest first: the ids each waits on, and
    /// when it was last claimed and finished.
    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<PlanRow>>;
    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>>;
}

/// History, trash and undo.
pub trait History: Send + Sync + 'static {
    /// Up to two (seq, pad) of kept (deleted or live) entries with this id
    /// prefix, in pads `visible` accepts.
    fn kept_matches<'a>(&'a self, id: &'a str, visible: Visible<'a>)
        -> Fut<'a, Vec<(i64, String)>>;
    /// An entry (`None` once deleted) and its earlier versions.
    fn history(&self, seq: i64) -> Fut<'_, (Option<Entry>, Vec<Version>)>;
    fn trash<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, (Vec<Version>, Option<i64>)>;
    /// Brings back a deleted entry or a change's entries, in pads `writable`
    /// accepts (the rest come back as `Skipped`).
    fn restore<'a>(
        &'a self,
        which: Restore,
        by: &'a str,
        now: i64,
        writable: Visible<'a>,
    ) -> Fut<'a, (Vec<Entry>, Vec<Skipped>)>;
    /// The versions one change kept.
    fn change(&self, batch: i64) -> Fut<'_, Vec<Version>>;
    fn purge<'a>(&'a self, which: &'a Purge) -> Fut<'a, usize>;
    /// Newest changes first; `true` when more than `limit` exist.
    fn changes<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: usize,
        created: bool,
    ) -> Fut<'a, (Vec<Change>, bool)>;
    /// Drops kept versions older than `cutoff` or past `max_rows`.
    fn prune_history(&self, cutoff: i64, max_rows: i64) -> Fut<'_, usize>;
}

/// Access tokens (their hashes).
pub trait Tokens: Send + Sync + 'static {
    fn add_token<'a>(&'a self, token: &'a TokenRow) -> Fut<'a, ()>;
    fn tokens(&self) -> Fut<'_, Vec<TokenRow>>;
    /// `false` when no token has this name.
    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool>;
}

/// Deliveries to A2A agents (rows written with their entries).
pub trait Deliveries: Send + Sync + 'static {
    /// Messages for `agents` no conversation has taken yet, oldest first.
    /// (Messages for names no engine takes are dropped by the sweep after
    /// a day.)
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>>;
    /// Conversations begun: every live one and the newest 500 finished.
    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>>;
    /// Stores a conversation's state (its root row); `taken`: the waiting
    /// message it took in, waiting no more. One transaction.
    fn save_conversation<'a>(
        &'a self,
        row: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()>;
    /// Forgets a waiting message (its entry is gone).
    fn drop_delivery<'a>(&'a self, row: &'a DeliveryRow) -> Fut<'a, ()>;
    /// Forgets what `agent` has not finished; how many conversations.
    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize>;
    /// Conversations of a pad, or of one note (a full id).
    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>>;
}

/// Upkeep: idle pads swept, the write-ahead log checkpointed, the store
/// closed.
pub trait Upkeep: Send + Sync + 'static {
    /// Archives idle pads and purges archives past `retention_ms`, with
    /// whatever the store's indexes need after a purge.
    fn sweep(&self, now: i64, retention_ms: i64) -> Fut<'_, PadSweep>;
    /// A number that changes whenever anything may have been written, so
    /// idle upkeep can be skipped; `None` when the store cannot tell (other
    /// engines write too) or has no such upkeep.
    fn write_epoch(&self) -> Option<u64>;
    /// The store's upkeep after writes, every second while it has any:
    /// SQLite moves what the write-ahead log holds into the database
    /// without waiting for readers; PostgreSQL refreshes the planner's
    /// statistics after a large load (src/pg/statistics.rs).
    fn checkpoint(&self) -> Fut<'_, ()>;
    /// Saves and lets go of everything: the last call before the engine stops.
    fn close(&self) -> Fut<'_, ()>;
}

/// How the store's operations run, said where they are run (each store's
/// handle: `store/sqlite.rs`, `pg.rs`).
pub trait Scans: Send + Sync + 'static {
    /// For a store whose scans block a thread (SQLite's: synchronous), the
    /// same store with every operation run on the calling thread: a scan of
    /// several operations then runs on one blocking thread of its own
    /// (`Engine::as_one_scan`) instead of moving to another for each
    /// operation. `None` when no scan blocks a thread (PostgreSQL's are
    /// awaited on its pool).
    fn on_one_thread(&self) -> Option<Arc<dyn Storage>>;
}

/// Figures (stats, metrics).
pub trait Figures: Send + Sync + 'static {
    fn counts(&self) -> Fut<'_, Counts>;
    /// The pads written most recently (or, `stalest`, least), `limit` at most.
    fn pads_by(&self, stalest: bool, limit: usize) -> Fut<'_, Vec<PadRow>>;
    /// Live entries and their average content size in bytes.
    fn content_size(&self) -> Fut<'_, (i64, f64)>;
    /// Writes per minute for the last `minutes`, in pads `keep` accepts.
    fn writes_per_minute<'a>(
        &'a self,
        now: i64,
        minutes: usize,
        keep: Visible<'a>,
    ) -> Fut<'a, Vec<u64>>;
    /// Entries written per pad since `since`, the busiest `limit`.
    fn recent_writes_by_pad(&self, since: i64, limit: usize) -> Fut<'_, Vec<(String, i64)>>;
    /// Acknowledged writes waiting to be applied, and to be text-indexed
    /// (both 0 on PostgreSQL: a write is applied and indexed in its commit).
    /// Read before anything else reads the store, which applies them first.
    fn queues(&self) -> Fut<'_, (i64, i64)>;
    /// Entries and edits not yet embedded (0 without semantic search; on
    /// PostgreSQL the team's whole queue).
    fn embed_queue(&self) -> Fut<'_, i64>;
    /// Bytes the store takes, in all.
    fn disk_bytes(&self) -> Fut<'_, u64>;
    /// Bytes the store takes, per file (or database).
    fn disk_usage(&self) -> Fut<'_, Vec<(&'static str, u64)>>;
}

/// A check of the index's candidates against a filter: those of the
/// chunk that pass (`Meaning::candidate_check`).
pub type CandidateCheck = dyn FnMut(&[i64]) -> Result<std::collections::HashSet<i64>> + Send;

/// What meaning search asks of the store.
pub trait Meaning: Send + Sync + 'static {
    /// Where the embedding worker reads texts and writes vectors.
    fn vectors(&self) -> Result<Arc<dyn VectorSource>>;
    /// Live entries in live pads (the pads' counters: no scan).
    fn live_entries(&self) -> Fut<'_, usize>;
    /// How many live entries pass `filter`, counting no further than `cap`
    /// (a store may answer `cap` for a filter its statistics put on ten
    /// times as many, without counting).
    fn count_matching(&self, filter: EntryFilter, cap: usize) -> Fut<'_, usize>;
    /// The archived pads' mark (their entries stay in the index but must
    /// not be found); `pads == 0` when none is.
    fn archived(&self) -> Fut<'_, ArchiveMark>;
    /// The entries of archived pads, sorted.
    fn archived_entries(&self) -> Fut<'_, Vec<i64>>;
    /// The `k` entries passing `filter` nearest `query`, every stored vector
    /// among them scored exactly, as (id, cosine), best first.
    fn nearest_exact(
        &self,
        query: Arc<[f32]>,
        filter: EntryFilter,
        k: usize,
    ) -> Fut<'_, Vec<(i64, f32)>>;
    /// The cosine of `query` with each of these entries' stored vectors
    /// (an entry without one is left out), in no order.
    fn similarities(&self, query: Arc<[f32]>, ids: Vec<i64>) -> Fut<'_, Vec<(i64, f32)>>;
    /// The sum of the stored vectors of at most `cap` live entries passing
    /// `filter` (the newest: all of them when they are fewer), and how many
    /// were summed: what a hybrid search centres its cosines on
    /// (`engine::centre`).
    fn vector_sum(&self, filter: EntryFilter, cap: usize) -> Fut<'_, (Vec<f64>, usize)>;
    /// What the index's walk asks of the store (`Semantic::candidates`):
    /// which of a chunk of its candidates pass `filter`. Called on the
    /// thread the walk runs on, a blocking one. How a filter meets the
    /// index is the store's: SQLite checks candidates in process as the
    /// index walks them best first; PostgreSQL checks a chunk in one query
    /// (each within the upkeep deadline), and the walk asks for more until
    /// enough pass.
    fn candidate_check(&self, filter: EntryFilter) -> Box<CandidateCheck>;
    /// Read-your-writes by meaning, first step: what every write
    /// acknowledged until now needs embedded, and how many wait.
    fn embed_goal(&self) -> Fut<'_, EmbedGoal>;
    /// The mark this engine's index reaches once it holds every vector
    /// `goal` needs; `None` while some are not embedded yet (by whichever
    /// engine takes them).
    fn embedded_mark(&self, goal: EmbedGoal) -> Fut<'_, Option<(i64, i64)>>;
    /// How many of `goal`'s entries and edits are not embedded yet: in
    /// the pads `scope` names (names and `prefix*` patterns, a token's),
    /// or in all (`None`).
    fn embed_left(&self, goal: EmbedGoal, scope: Option<Vec<String>>) -> Fut<'_, u64>;
}
