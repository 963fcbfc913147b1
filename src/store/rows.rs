//! Rows as SQLite returns them, and their conversion to the wire model.

use serde_json::Value;

use crate::model::{fmt_time, Category, Entry, Kind, Pad, Status};

/// Columns of `entries` in the order every entry query selects them.
pub const ENTRY_COLUMNS: &str =
    "e.seq, e.id, e.pad, e.author, e.kind, e.content, e.tags, e.status, \
     e.assignee, e.resume, e.lease_until, e.category, e.confidence, e.depends_on, e.remind_at, \
     e.pinned, e.meta, e.created_at, e.updated_at, e.version";

#[derive(sqlx::FromRow, Debug)]
pub struct EntryRow {
    pub seq: i64,
    pub id: String,
    pub pad: String,
    pub author: String,
    pub kind: String,
    pub content: String,
    pub tags: String,
    pub status: Option<String>,
    pub assignee: Option<String>,
    pub resume: Option<String>,
    pub lease_until: Option<i64>,
    pub category: Option<String>,
    pub confidence: Option<f64>,
    pub depends_on: String,
    pub remind_at: Option<i64>,
    pub pinned: bool,
    pub meta: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub version: i64,
}

impl EntryRow {
    pub fn into_entry(self) -> Entry {
        Entry {
            id: self.id,
            pad: self.pad,
            author: self.author,
            kind: Kind::parse(&self.kind).unwrap_or_default(),
            content: self.content,
            tags: serde_json::from_str(&self.tags).unwrap_or_default(),
            status: self.status.as_deref().and_then(Status::parse),
            assignee: self.assignee,
            resume: self.resume,
            lease_until: self.lease_until.map(fmt_time),
            category: self.category.as_deref().and_then(Category::parse),
            confidence: self.confidence,
            depends_on: serde_json::from_str(&self.depends_on).unwrap_or_default(),
            remind_at: self.remind_at.map(fmt_time),
            pinned: self.pinned,
            meta: self
                .meta
                .as_deref()
                .and_then(|m| match serde_json::from_str(m) {
                    Ok(Value::Object(o)) => Some(o),
                    _ => None,
                }),
            created_at: fmt_time(self.created_at),
            updated_at: fmt_time(self.updated_at),
            version: self.version,
        }
    }
}

#[derive(sqlx::FromRow, Debug)]
pub struct PadRow {
    pub name: String,
    pub ttl_seconds: Option<i64>,
    pub max_entries: Option<i64>,
    pub last_write_at: i64,
    pub entries: i64,
    pub archived_at: Option<i64>,
}

pub const PAD_COLUMNS: &str = "name, ttl_seconds, max_entries, last_write_at, entries, archived_at";

impl PadRow {
    pub fn expires_at_ms(&self) -> Option<i64> {
        match (self.archived_at, self.ttl_seconds) {
            (None, Some(ttl)) => Some(self.last_write_at + ttl * 1000),
            _ => None,
        }
    }

    pub fn into_pad(self) -> Pad {
        Pad {
            expires_at: self.expires_at_ms().map(fmt_time),
            name: self.name,
            entries: self.entries,
            last_write_at: fmt_time(self.last_write_at),
            ttl_seconds: self.ttl_seconds,
            max_entries: self.max_entries,
            archived: self.archived_at.is_some(),
            archived_at: self.archived_at.map(fmt_time),
        }
    }
}
