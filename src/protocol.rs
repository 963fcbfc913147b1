//! The wire contract: every method's params and result, in one place.
//!
//! Params structs refuse unknown fields, so a misspelt parameter is an error
//! that names it rather than a silently ignored value. Nullable fields that an
//! update may clear are `Option<Option<T>>`: absent leaves the value, `null`
//! clears it. docs/protocol.md documents each of these types.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::model::{Category, Entry, Kind, Pad, Status};
pub use crate::seal::NoteRef;

mod agents;
mod explain;
mod history;
pub mod method;
mod tokens;
mod work;
pub use agents::*;
pub use explain::*;
pub use history::*;
pub use tokens::*;
pub use work::*;

pub const PROTOCOL_VERSION: u32 = 1;
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
pub const DEFAULT_LIST_LIMIT: u32 = 50;
pub const MAX_LIST_LIMIT: u32 = 1000;
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;
pub const MAX_SEARCH_LIMIT: u32 = 200;

/// Every method the engine answers, for `method not found` hints and docs.
pub const METHODS: &[&str] = &[
    "hello",
    "entry.add",
    "entry.get",
    "entry.update",
    "entry.delete",
    "entry.history",
    "entry.trash",
    "entry.restore",
    "entry.purge",
    "entry.changes",
    "entry.list",
    "search",
    "tags.list",
    "pad.list",
    "pad.configure",
    "pad.touch",
    "pad.clear",
    "pad.export",
    "subscribe",
    "unsubscribe",
    "stats",
    "reindex",
    "inbox",
    "plan.order",
    "task.claim",
    "task.heartbeat",
    "task.complete",
    "task.fail",
    "entry.share",
    "entry.thread",
    "ask",
    "report",
    "token.create",
    "token.list",
    "token.revoke",
    "agent.add",
    "agent.list",
    "agent.remove",
    "agent.deliveries",
];

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct HelloParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct HelloResult {
    pub server: String,
    pub version: String,
    pub protocol: u32,
    pub pid: u32,
    pub author: Option<String>,
    /// What this connection may do: `owner`, or the token's name and pads.
    #[serde(default)]
    pub access: String,
    /// The name of the access token this connection presented, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct AddParams {
    pub pad: String,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub depends_on: Vec<String>,
    /// The id (or unique prefix) of the entry this one answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Questions: the answers offered (implies kind `question`).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub choices: Vec<String>,
    /// The authors (agents) this note is addressed to: it reaches their
    /// inbox, and agents registered with an A2A endpoint are sent it.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub to: Vec<String>,
    /// The id (or unique prefix) of an older note this one replaces: the
    /// older one is kept, and left out of lists and searches unless they
    /// ask for `include_superseded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remind_in: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remind_at: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub pinned: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional, type = "Record<string, unknown>"))]
    pub meta: Option<Map<String, Value>>,
    /// Say in the answer (`looks_like`) when a live note of the pad has the
    /// same text, nearly the same words, or nearly the same meaning. The
    /// note is stored either way. Costs a search (~1 ms), so off by default.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub check_duplicates: bool,
    /// A key naming this write, e.g. a fresh UUID, sent again only when
    /// retrying it: the same key from the same caller within a day writes
    /// once and answers as the first call did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct IdParams {
    pub id: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct UpdateParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Option<Status>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Option<Category>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<Vec<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remind_at: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional, type = "Record<string, unknown> | null"))]
    pub meta: Option<Option<Map<String, Value>>>,
    /// The older note this one replaces (`null`: none).
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_version: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct DeleteParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_version: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct EntryResult {
    pub entry: Entry,
    /// Only for `entry.add` with `check_duplicates`: the live note of the
    /// same pad this one repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looks_like: Option<LooksLike>,
}

impl EntryResult {
    pub fn of(entry: Entry) -> EntryResult {
        EntryResult {
            entry,
            looks_like: None,
        }
    }
}

/// A note a new one repeats (`entry.add` with `check_duplicates`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LooksLike {
    pub id: NoteRef,
    /// Its first 120 characters.
    pub preview: String,
    /// `text` (the same), `words` (nearly the same words) or `meaning`
    /// (nearly the same meaning).
    pub same: String,
    /// 1 for the same text; the words' overlap (Jaccard) or the cosine.
    pub similarity: f64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct DeleteResult {
    pub deleted: bool,
    pub id: String,
    /// The change that moved it to the trash: `entry.restore {change}` undoes it.
    #[serde(default)]
    pub change: Option<i64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ListParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Also list notes a newer note supersedes (each says which).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub include_superseded: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ListResult {
    pub entries: Vec<Entry>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    #[default]
    Hybrid,
    Text,
    Semantic,
}

impl SearchMode {
    /// The modes as they are written.
    pub const ALL: &'static [&'static str] = &["hybrid", "text", "semantic"];
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct SearchParams {
    pub query: String,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<SearchMode>", optional))]
    pub mode: SearchMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Also find notes a newer note supersedes (each says which).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub include_superseded: bool,
    /// Say why: the query's words, weights and filter (`explain` on the
    /// result) and each hit's place in each ranking (`explain` on the hit).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub explain: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SearchHit {
    pub entry: Entry,
    pub score: f64,
    /// Which lists found it: `text`, `semantic`, and in hybrid with the
    /// sparse model `sparse` (the related words), in that order.
    pub found_by: Vec<String>,
    /// Other live entries with exactly this text, shown once as this hit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(serialize_with = "crate::seal::list")]
    #[cfg_attr(test, ts(as = "Option<Vec<NoteRef>>", optional))]
    pub copies: Vec<NoteRef>,
    /// With `explain`: why it ranked here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub explain: Option<HitExplain>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SearchResult {
    pub hits: Vec<SearchHit>,
    /// The mode that actually ran (`hybrid` answers as `text` without embeddings).
    pub mode: SearchMode,
    /// Entries (and edits) written before this search that meaning search
    /// could not see yet: the embedding backlog was a flood, so the search
    /// did not wait for it. Text search sees them. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_embedded: u64,
    /// With `explain`: what the query became and what narrowed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub explain: Option<QueryExplain>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct TagsParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TagCount {
    pub tag: String,
    pub count: i64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TagsResult {
    pub tags: Vec<TagCount>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct PadListParams {
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub include_archived: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PadListResult {
    pub pads: Vec<Pad>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ConfigureParams {
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<Option<i64>>,
    #[serde(default, deserialize_with = "nullable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_entries: Option<Option<i64>>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PadResult {
    pub pad: Pad,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct PadNameParams {
    pub name: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ClearParams {
    pub name: String,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub keep_pinned: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ClearResult {
    pub deleted: usize,
    /// The change that moved them to the trash: `entry.restore {change}`
    /// brings them all back.
    #[serde(default)]
    pub change: Option<i64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    #[default]
    Markdown,
    Json,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ExportParams {
    pub name: String,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<ExportFormat>", optional))]
    pub format: ExportFormat,
    /// Markdown only: the most characters the text may have; pinned and
    /// `important` entries go in first, then the newest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// Also export notes a newer note supersedes (each marked).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub include_superseded: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ExportResult {
    pub text: String,
    /// Entries in the text.
    pub entries: usize,
    /// Entries a budget left out.
    #[serde(default)]
    pub left_out: usize,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct SubscribeParams {
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub pads: Vec<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub tags: Vec<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<Kind>>", optional))]
    pub kinds: Vec<Kind>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SubscribeResult {
    pub subscription: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct UnsubscribeParams {
    pub subscription: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct OkResult {
    pub ok: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct StatsParams {
    /// Also report `activity`: write rate, top tags, busiest and stalest pads.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub activity: bool,
}

/// What has been happening, for the activity view and `pad stats`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Activity {
    /// Entries written in each minute of the last hour, oldest first (60
    /// numbers; entries deleted since are not counted).
    pub entries_per_minute: Vec<u64>,
    /// Entries written in the last hour.
    pub entries_last_hour: u64,
    /// The 10 most used tags on live pads.
    pub top_tags: Vec<TagCount>,
    /// The 5 live pads with the most entries.
    pub busiest_pads: Vec<PadActivity>,
    /// The 5 live pads idle the longest.
    pub stalest_pads: Vec<PadActivity>,
    /// Mean size of an entry's content on live pads, in bytes.
    pub avg_entry_bytes: f64,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PadActivity {
    pub name: String,
    pub entries: i64,
    pub last_write_at: String,
    pub idle_seconds: i64,
    /// When it expires if nobody writes (`null`: never).
    pub expires_at: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct StatsResult {
    pub version: String,
    pub pid: u32,
    pub uptime_seconds: u64,
    pub entries: i64,
    pub pads: i64,
    pub archived_pads: i64,
    pub tags: i64,
    pub db_bytes: u64,
    pub connections: u64,
    pub subscribers: u64,
    /// `ask` calls waiting for an answer.
    #[serde(default)]
    pub waiting_asks: u64,
    /// The questions those calls wait for (ids).
    #[serde(default, serialize_with = "crate::seal::list")]
    pub waiting_questions: Vec<NoteRef>,
    /// New entries acknowledged but still only in the insert journal.
    pub journal_queue: i64,
    /// Changes written but not yet in the text index.
    pub index_queue: i64,
    /// Entries written or edited but not yet embedded (0 without semantic search).
    pub embed_queue: i64,
    pub semantic: SemanticInfo,
    pub data_dir: String,
    pub durability: String,
    /// With `activity: true`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub activity: Option<Activity>,
    /// Where the metrics endpoint listens, when it does.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub metrics: Option<String>,
}

/// The state of semantic search, in `stats`.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SemanticInfo {
    /// `ready`, `loading`, `unavailable` or `off`.
    pub status: String,
    /// The model in use, e.g. `all-MiniLM-L6-v2/int8`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// The learned sparse model giving hybrid search its related words
    /// (`splade-tiny`), once loaded; absent without one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sparse_model: Option<String>,
    /// The ONNX Runtime library loaded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub runtime: Option<String>,
    /// When unavailable or off: what is missing and how to fix it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// Vectors in the index.
    pub vectors: u64,
    /// Memory the vector index uses.
    pub index_bytes: u64,
    /// Entries embedded since the engine started, and how fast.
    pub embedded: u64,
    pub embed_per_second: f64,
    /// The batches they were encoded in: a burst of notes is gathered
    /// into one, not a batch per note.
    #[serde(default)]
    pub runs: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ReindexParams {}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ReindexResult {
    /// Entries queued to be embedded again.
    pub queued: i64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct InboxParams {
    /// Whose inbox; defaults to the connection's `hello` author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Look without moving the cursor.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub peek: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct InboxResult {
    pub author: String,
    /// New entries by others tagged `needs_eyes`, oldest first.
    pub needs_eyes: Vec<Entry>,
    /// New entries by others that reply to one of this author's entries.
    pub replies: Vec<Entry>,
    /// New notes by others addressed to this author (`to`).
    #[serde(default)]
    pub addressed: Vec<Entry>,
    /// This author's entries whose reminder came due since the last read.
    #[serde(default)]
    pub reminders: Vec<Entry>,
}

/// How long `ask` waits for an answer by default, and at most: under Agent
/// Zero's 120 s tool timeout, so a waiting call never outlives its client.
pub const DEFAULT_ASK_WAIT_SECONDS: u64 = 60;
pub const MAX_ASK_WAIT_SECONDS: u64 = 110;
/// Replies `entry.thread` returns at most.
pub const MAX_THREAD_REPLIES: usize = 1000;

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ThreadResult {
    pub entry: Entry,
    /// Every reply under the entry, at any depth, oldest first; each names
    /// its parent in `reply_to`.
    pub replies: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct AskParams {
    /// The question. Leave it out and give `id` to wait for the answer to a
    /// question asked before.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// An existing question (an id or unique prefix) to wait on instead of
    /// asking a new one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where the question goes; default `inbox`, the person's own pad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub choices: Vec<String>,
    /// How long to wait for the answer: 0 to not wait, at most 110.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Who besides the person may answer: agents' names, or `*` for anyone.
    /// By default a reply written with an access token is a reply in the
    /// thread, not the answer (the question keeps `needs_eyes`).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub answer_from: Vec<String>,
    /// A key naming this question, sent again only when retrying it: the
    /// same key from the same caller within a day asks once (a retry waits
    /// for that question's answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AskResult {
    /// The question entry (kind `question`, tagged `needs_eyes`).
    pub question: Entry,
    /// The first reply by someone other than the asker, or `null` when the
    /// wait ran out: the question stays open, and a later answer reaches the
    /// asker's inbox.
    pub answer: Option<Entry>,
    /// How long the call waited, in seconds.
    pub waited_seconds: f64,
}
