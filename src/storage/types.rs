//! What the engine and every store pass each other: the shapes of the store
//! contract's arguments and answers, apart from any store.

use crate::model::{fmt_time, Category, Entry, Kind, Status};

/// A validated entry ready to insert (and, as is, a journal record's body).
/// A record names only the fields a note has: the rest read back as none,
/// empty or false (so a record of an older build, with every field, reads
/// the same). A plain note's record is six fields, not twenty-two.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct NewEntry {
    pub pad: String,
    pub author: String,
    pub kind: Kind,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// The entry answered: an id or unique prefix, resolved to the full id
    /// when the reply is committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// Authors the note is addressed to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<String>,
    /// The older note this one replaces: an id or unique prefix, resolved
    /// to the full id when the entry is committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remind_at: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub pinned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<String>,
    pub now: i64,
    /// Agents this entry goes to, written with it (a `deliveries` row each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handoffs: Vec<Handoff>,
    /// Written with an access token: as a reply to a question it is the
    /// answer only where the question lets it (`rules::replied`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub by_token: bool,
    /// Its idempotency key: a keyed entry is committed with its key's row,
    /// never journaled (so it is never in a record).
    #[serde(skip)]
    pub key: Option<super::once::Key>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// An entry handed to an A2A agent: the note that starts a conversation
/// (`root` none), or a reply passed on in the conversation of the note
/// `root` (a full id).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Handoff {
    pub agent: String,
    pub root: Option<String>,
}

/// A delivery as stored: one message (`entry`) for one agent, in the
/// conversation of the note `root`; a root row carries the conversation's
/// `state` (JSON, none until begun) and whether it goes on (`live`).
#[derive(Clone, Debug, PartialEq)]
pub struct DeliveryRow {
    pub entry: String,
    pub agent: String,
    pub root: String,
    pub pad: String,
    pub state: Option<String>,
    pub live: bool,
}

/// A validated change to an entry. `None` leaves a field as it is; for nullable
/// fields `Some(None)` clears it.
#[derive(Debug, Default)]
pub struct Patch {
    pub content: Option<String>,
    pub tags: Option<Vec<String>>,
    pub kind: Option<Kind>,
    pub status: Option<Option<Status>>,
    pub assignee: Option<Option<String>>,
    pub resume: Option<Option<String>>,
    pub category: Option<Option<Category>>,
    pub confidence: Option<Option<f64>>,
    pub pinned: Option<bool>,
    pub depends_on: Option<Vec<String>>,
    pub remind_at: Option<Option<i64>>,
    pub meta: Option<Option<String>>,
    /// The older note this one replaces (resolved by the store, which sets
    /// it), or `Some(None)`: it replaces none.
    pub supersedes: Option<Option<String>>,
}

impl Patch {
    /// The entry as this patch leaves it (`depends_on` is resolved by the
    /// caller, which sets it): version and `updated_at` move on.
    pub(crate) fn apply(self, after: &mut Entry, now: i64) {
        let patch = self;
        if let Some(c) = patch.content {
            after.content = c;
        }
        if let Some(t) = patch.tags {
            after.tags = t;
        }
        if let Some(k) = patch.kind {
            after.kind = k;
        }
        if let Some(s) = patch.status {
            after.status = s;
        }
        if let Some(a) = patch.assignee {
            after.assignee = a;
        }
        if let Some(r) = patch.resume {
            after.resume = r;
        }
        if let Some(c) = patch.category {
            after.category = c;
        }
        if let Some(c) = patch.confidence {
            after.confidence = c;
        }
        if let Some(p) = patch.pinned {
            after.pinned = p;
        }
        if let Some(r) = patch.remind_at {
            after.remind_at = r.map(fmt_time);
        }
        if let Some(m) = &patch.meta {
            after.meta = m.as_deref().and_then(|m| serde_json::from_str(m).ok());
        }
        after.version += 1;
        after.updated_at = fmt_time(now);
    }
}

pub struct Page {
    pub entries: Vec<Entry>,
    pub next_cursor: Option<String>,
}

/// What one insert did.
#[derive(Debug)]
pub struct Added {
    pub entry: Entry,
    /// What the pad's rolling window pushed out.
    pub rolled: Vec<Entry>,
    /// A reply's parent, before and after its reply count (and, when this
    /// reply answers it, its answer) moved.
    pub parent: Option<(Entry, Entry)>,
}

/// Filters shared by `entry.list` and `search`.
#[derive(Debug, Default, Clone)]
pub struct EntryFilter {
    pub pad: Option<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub kind: Option<Kind>,
    pub status: Option<Status>,
    pub since: Option<i64>,
    pub category: Option<Category>,
    pub min_confidence: Option<f64>,
    /// The pads a scoped token may read (names and `prefix*` patterns);
    /// `None`: every pad.
    pub scope: Option<Vec<String>>,
    /// Leave out notes a live note supersedes.
    pub current_only: bool,
}

impl EntryFilter {
    /// Whether the filter names no condition of its own (it still hides
    /// archived pads).
    pub fn is_unfiltered(&self) -> bool {
        self.pad.is_none()
            && self.tags.is_empty()
            && self.author.is_none()
            && self.kind.is_none()
            && self.status.is_none()
            && self.since.is_none()
            && self.category.is_none()
            && self.min_confidence.is_none()
            && self.scope.is_none()
            && !self.current_only
    }
}

/// What `entry.trash` and `entry.changes` narrow to.
#[derive(Debug, Default, Clone)]
pub struct HistoryFilter {
    pub pad: Option<String>,
    pub by: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// A token's pads (names and `prefix*` patterns); `None`: every pad.
    pub scope: Option<Vec<String>>,
}

/// What `Store::restore` brings back.
#[derive(Debug, Clone, Copy)]
pub enum Restore {
    /// The entry with this seq, from its latest deletion.
    Seq(i64),
    /// Every entry one change deleted.
    Change(i64),
}

/// What `Store::purge` erases for good.
#[derive(Debug, Clone)]
pub enum Purge {
    Seq(i64),
    Pad(String),
    All,
}

/// What one expiry sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PadSweep {
    /// Pads archived by this sweep (their idle time passed their TTL).
    pub archived: Vec<String>,
    /// Entries deleted because their pad stayed archived past retention.
    pub purged_entries: usize,
    /// Pads removed entirely (archived past retention, nothing pinned left).
    pub purged_pads: usize,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Counts {
    pub entries: i64,
    pub live_pads: i64,
    pub archived_pads: i64,
    pub tags: i64,
}

/// A pad's entries as an export loads them: the entries, how many were
/// left out, and the bytes of all (`Store::pad_entries`).
pub type PadEntries = (Vec<Entry>, usize, usize);

/// What is new for an author since its inbox was last read.
pub struct Inbox {
    pub needs_eyes: Vec<Entry>,
    pub replies: Vec<Entry>,
    /// Notes by others addressed to the author (`to`). An author that has
    /// never read its inbox gets every one ever addressed to it.
    pub addressed: Vec<Entry>,
    /// The author's own entries whose reminder came due.
    pub reminders: Vec<Entry>,
}

/// The lease a claim gets when its claimant names none.
pub const DEFAULT_LEASE_MS: i64 = 300_000;

/// How a task attempt ends.
#[derive(Debug, Clone)]
pub enum Finish {
    Done {
        resume: Option<String>,
    },
    /// With `retry`, the task goes back to `todo` for the next claimant.
    Failed {
        error: String,
        resume: Option<String>,
        retry: bool,
    },
}

/// One row of `plan.order`: a task or plan, the dependencies still holding
/// it up, and when it was last claimed and finished (ms).
#[derive(Debug)]
pub struct PlanRow {
    pub entry: Entry,
    pub waiting: Vec<String>,
    pub claimed_at: Option<i64>,
    pub finished_at: Option<i64>,
}

/// One row of `report`: what it needs of an entry.
#[derive(Debug)]
pub struct ReportRow {
    pub id: String,
    pub pad: String,
    pub author: String,
    pub kind: Kind,
    pub content: String,
    pub status: Option<Status>,
    pub assignee: Option<String>,
    pub attempts: i64,
    pub error: Option<String>,
    pub claimed_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// `meta.tokens`, when the writer recorded its token use.
    pub tokens: Option<serde_json::Value>,
}

#[derive(Debug, Clone)]
pub struct TokenRow {
    pub name: String,
    pub hash: String,
    pub pads: Vec<String>,
    pub read_only: bool,
    /// Registered agents it may hand work to (`*`: any).
    pub agents: Vec<String>,
    pub created_at: i64,
    /// It may also remove, clear, hide or reword notes others wrote in its pads.
    pub others: bool,
}

/// A live pad with its size and idleness.
#[derive(Debug, Clone)]
pub struct PadRow {
    pub name: String,
    pub entries: i64,
    pub last_write_at: i64,
    pub ttl_seconds: Option<i64>,
}

/// What read-your-writes by meaning waits for (`Storage::embed_goal`): a
/// store's own mark of the writes acknowledged when it was read.
#[derive(Debug, Clone, Copy)]
pub struct EmbedGoal {
    /// The store's mark: on SQLite the last entry and edit, which the
    /// index's own mark reaches once it holds them; on PostgreSQL the
    /// newest queued entry (0: none) and the vectors' newest row then.
    pub upto: (i64, i64),
    /// Entries and edits waiting to be embedded when the goal was read.
    pub backlog: i64,
}

/// The archived pads as a mark that changes whenever the entries in them
/// may have: how many pads, the sum of their archive times and of their
/// entry counts. A pad archived or brought back moves it; equal marks hold
/// the same entries (an entry only enters an archived pad by its pad's
/// archiving).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveMark {
    pub pads: i64,
    pub archived_at: i64,
    pub entries: i64,
}
