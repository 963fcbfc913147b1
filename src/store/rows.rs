//! Rows as SQLite returns them, and their conversion to the wire model.

use rusqlite::Row;
use serde_json::Value;

use crate::model::{fmt_time, Category, Entry, Kind, Pad, Status};

/// Columns of `entries` in the order `EntryRow::read` expects them.
pub const ENTRY_COLUMNS: &str = "e.seq, e.pad, e.author, e.kind, e.content, e.tags, e.status, \
     e.assignee, e.resume, e.lease_until, e.category, e.confidence, e.depends_on, e.remind_at, \
     e.pinned, e.meta, e.created_at, e.updated_at, e.version, e.attempts, e.error, e.reply_to, \
     e.choices, e.replies, e.answer, e.addressed_to, e.supersedes, \
     (SELECT MAX(s.seq) FROM entries s WHERE s.supersedes = e.seq)";

/// `ENTRY_COLUMNS` without the `e.` alias, for `RETURNING` (which cannot
/// name one).
pub fn returning_columns() -> String {
    ENTRY_COLUMNS
        .replace("= e.seq", "= entries.seq")
        .replace("e.", "")
}

/// How many columns `ENTRY_COLUMNS` selects; a query's extra columns follow.
pub const ENTRY_COLUMN_COUNT: usize = 28;

#[derive(Debug)]
pub struct EntryRow {
    pub seq: i64,
    pub entry: Entry,
}

impl EntryRow {
    /// Reads the `ENTRY_COLUMNS` at the start of `row`.
    pub fn read(row: &Row<'_>) -> rusqlite::Result<EntryRow> {
        let text = |i: usize| row.get::<_, Option<String>>(i);
        let seq: i64 = row.get(0)?;
        let kind: String = row.get(3)?;
        let tags: String = row.get(5)?;
        let depends: String = row.get(12)?;
        let id_of = |i: usize| {
            row.get::<_, Option<i64>>(i)
                .map(|s| s.map(|n| crate::seal::NoteRef(crate::id::encode(n))))
        };
        Ok(EntryRow {
            seq,
            entry: Entry {
                id: crate::id::encode(seq),
                pad: row.get(1)?,
                author: row.get(2)?,
                kind: Kind::parse(&kind).unwrap_or_default(),
                content: row.get(4)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                status: text(6)?.as_deref().and_then(Status::parse),
                assignee: text(7)?,
                resume: text(8)?,
                lease_until: row.get::<_, Option<i64>>(9)?.map(fmt_time),
                attempts: row.get(19)?,
                error: text(20)?,
                category: text(10)?.as_deref().and_then(Category::parse),
                confidence: row.get(11)?,
                depends_on: serde_json::from_str(&depends).unwrap_or_default(),
                reply_to: id_of(21)?,
                choices: text(22)?
                    .and_then(|c| serde_json::from_str(&c).ok())
                    .unwrap_or_default(),
                replies: row.get(23)?,
                answer: id_of(24)?,
                to: text(25)?
                    .and_then(|c| serde_json::from_str(&c).ok())
                    .unwrap_or_default(),
                supersedes: id_of(26)?,
                superseded_by: id_of(27)?,
                remind_at: row.get::<_, Option<i64>>(13)?.map(fmt_time),
                pinned: row.get(14)?,
                meta: text(15)?
                    .as_deref()
                    .and_then(|m| match serde_json::from_str(m) {
                        Ok(Value::Object(o)) => Some(o),
                        _ => None,
                    }),
                created_at: fmt_time(row.get(16)?),
                updated_at: fmt_time(row.get(17)?),
                version: row.get(18)?,
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_count_is_the_number_of_entry_columns() {
        assert_eq!(
            super::ENTRY_COLUMNS.split(',').count(),
            super::ENTRY_COLUMN_COUNT
        );
    }
}
