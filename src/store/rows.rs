//! Rows as SQLite returns them, and their conversion to the wire model.

use rusqlite::Row;
use serde_json::Value;

use crate::model::{fmt_time, Category, Entry, Kind, Pad, Status};

/// Columns of `entries` in the order `EntryRow::read` expects them.
pub const ENTRY_COLUMNS: &str =
    "e.seq, e.id, e.pad, e.author, e.kind, e.content, e.tags, e.status, \
     e.assignee, e.resume, e.lease_until, e.category, e.confidence, e.depends_on, e.remind_at, \
     e.pinned, e.meta, e.created_at, e.updated_at, e.version";

#[derive(Debug)]
pub struct EntryRow {
    pub seq: i64,
    pub entry: Entry,
}

impl EntryRow {
    /// Reads the `ENTRY_COLUMNS` at the start of `row`.
    pub fn read(row: &Row<'_>) -> rusqlite::Result<EntryRow> {
        let text = |i: usize| row.get::<_, Option<String>>(i);
        let kind: String = row.get(4)?;
        let tags: String = row.get(6)?;
        let depends: String = row.get(13)?;
        Ok(EntryRow {
            seq: row.get(0)?,
            entry: Entry {
                id: row.get(1)?,
                pad: row.get(2)?,
                author: row.get(3)?,
                kind: Kind::parse(&kind).unwrap_or_default(),
                content: row.get(5)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                status: text(7)?.as_deref().and_then(Status::parse),
                assignee: text(8)?,
                resume: text(9)?,
                lease_until: row.get::<_, Option<i64>>(10)?.map(fmt_time),
                category: text(11)?.as_deref().and_then(Category::parse),
                confidence: row.get(12)?,
                depends_on: serde_json::from_str(&depends).unwrap_or_default(),
                remind_at: row.get::<_, Option<i64>>(14)?.map(fmt_time),
                pinned: row.get(15)?,
                meta: text(16)?
                    .as_deref()
                    .and_then(|m| match serde_json::from_str(m) {
                        Ok(Value::Object(o)) => Some(o),
                        _ => None,
                    }),
                created_at: fmt_time(row.get(17)?),
                updated_at: fmt_time(row.get(18)?),
                version: row.get(19)?,
            },
        })
    }
}

pub fn read_entry(row: &Row<'_>) -> rusqlite::Result<Entry> {
    EntryRow::read(row).map(|r| r.entry)
}

pub const PAD_COLUMNS: &str = "name, ttl_seconds, max_entries, last_write_at, entries, archived_at";

pub fn read_pad(row: &Row<'_>) -> rusqlite::Result<Pad> {
    let ttl: Option<i64> = row.get(1)?;
    let last_write: i64 = row.get(3)?;
    let archived_at: Option<i64> = row.get(5)?;
    let expires = match (archived_at, ttl) {
        (None, Some(ttl)) => Some(fmt_time(last_write + ttl * 1000)),
        _ => None,
    };
    Ok(Pad {
        name: row.get(0)?,
        ttl_seconds: ttl,
        max_entries: row.get(2)?,
        last_write_at: fmt_time(last_write),
        entries: row.get(4)?,
        expires_at: expires,
        archived: archived_at.is_some(),
        archived_at: archived_at.map(fmt_time),
    })
}
