//! History, trash and undo: the params and results of `entry.history`,
//! `entry.trash`, `entry.restore`, `entry.purge` and `entry.changes`
//! (docs/protocol.md, "History, trash and undo").

use serde::{Deserialize, Serialize};

use crate::model::Entry;

/// Why a version was kept: the change that replaced or removed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum Action {
    /// `entry.update` (or a revert): the version before the edit.
    Edit,
    /// `entry.delete`.
    Delete,
    /// `pad.clear`.
    Clear,
    /// A pad's rolling window (`max_entries`) pushed it out.
    Window,
    /// Retention purged it from a pad archived too long.
    Expire,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Edit => "edit",
            Action::Delete => "delete",
            Action::Clear => "clear",
            Action::Window => "window",
            Action::Expire => "expire",
        }
    }

    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "edit" => Action::Edit,
            "delete" => Action::Delete,
            "clear" => Action::Clear,
            "window" => Action::Window,
            "expire" => Action::Expire,
            _ => return None,
        })
    }
}

/// An entry as it was before a change, with who changed it and when.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Version {
    /// The change this version belongs to: every entry one call removed or
    /// edited shares it; `entry.restore {change}` undoes them together.
    pub change: i64,
    pub action: Action,
    /// Who made the change (an author, a token's name, or `engine` for
    /// retention).
    pub by: String,
    pub at: String,
    /// Deletions only: when and by whom the entry was brought back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_by: Option<String>,
    /// The entry as it was (for an edit: the version the edit replaced).
    pub entry: Entry,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct HistoryParams {
    pub id: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct HistoryResult {
    pub id: String,
    /// The entry now; `null` while it is deleted.
    pub entry: Option<Entry>,
    /// Kept versions, oldest first.
    pub versions: Vec<Version>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct TrashParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    /// Only what this author (or token) deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TrashResult {
    /// Deleted entries not brought back, newest deletion first.
    pub entries: Vec<Version>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct RestoreParams {
    /// A deleted entry to bring back, or (with `version`) a live one to take
    /// back to an earlier version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// Undo one change: bring back every entry it deleted, or take every
    /// entry it edited back to before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Skipped {
    pub id: String,
    pub reason: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RestoreResult {
    pub restored: Vec<Entry>,
    /// What could not be undone, and why (already back, edited since, a pad
    /// the caller cannot write).
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct PurgeParams {
    /// One deleted entry (its whole history goes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Everything in this pad's trash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    /// The whole trash.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub all: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PurgeResult {
    /// Kept versions erased for good.
    pub purged: usize,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct ChangesParams {
    /// Whose changes (an author or a token's name); all when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// List entries created too (default); `false`: only edits, deletions
    /// and restores.
    #[serde(default = "yes")]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub include_created: bool,
}

fn yes() -> bool {
    true
}

/// One thing an author did to an entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Change {
    pub at: String,
    pub by: String,
    /// `created`, `restored`, or the kept version's action (`edit`,
    /// `delete`, `clear`, `window`, `expire`).
    pub what: String,
    pub id: String,
    pub pad: String,
    /// The change to pass to `entry.restore` to undo it (edits and deletions).
    pub change: Option<i64>,
    /// The entry's first line, shortened (for an edit: as it was before).
    pub preview: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ChangesResult {
    /// Newest first.
    pub changes: Vec<Change>,
    /// More changes matched than `limit`.
    pub truncated: bool,
}
