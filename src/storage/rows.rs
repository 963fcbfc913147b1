//! One row reader for both stores: the columns an entry, a pad, a kept
//! version, a report line and an audit line are selected as, and how each is read back,
//! written once over `Columns` — the few typed reads each database's row
//! supplies (`store/rows.rs` for rusqlite's, `pg/rows.rs` for sqlx's).
//!
//! Where the two databases keep a value differently the row says how to
//! read it, not the reader: a list of texts (tags, `depends_on`, choices,
//! addressees) is JSON text on SQLite and a `text[]` on PostgreSQL
//! (`Columns::texts`). The column lists are the same text on both.

use serde_json::Value;

use crate::model::{fmt_time, Category, Entry, Kind, Pad, Status};
use crate::protocol::{Action, Change, Version};
use crate::storage::rules::preview;
use crate::storage::ReportRow;

/// Columns of `entries` (aliased `e`) in the order `read_entry` expects
/// them; the last tells what supersedes the entry.
pub const ENTRY_COLUMNS: &str = "e.seq, e.pad, e.author, e.kind, e.content, e.tags, e.status, \
     e.assignee, e.resume, e.lease_until, e.category, e.confidence, e.depends_on, e.remind_at, \
     e.pinned, e.meta, e.created_at, e.updated_at, e.version, e.attempts, e.error, e.reply_to, \
     e.choices, e.replies, e.answer, e.addressed_to, e.supersedes, \
     (SELECT MAX(s.seq) FROM entries s WHERE s.supersedes = e.seq)";

/// How many columns `ENTRY_COLUMNS` selects; a query's extra columns follow.
pub const ENTRY_COLUMN_COUNT: usize = 28;

/// `ENTRY_COLUMNS` without the `e.` alias, for `RETURNING` (which cannot
/// name one on SQLite).
pub fn returning_columns() -> String {
    ENTRY_COLUMNS
        .replace("= e.seq", "= entries.seq")
        .replace("e.", "")
}

/// Columns of `pads` in the order `read_pad` expects them.
pub const PAD_COLUMNS: &str = "name, ttl_seconds, max_entries, last_write_at, entries, archived_at";

/// Columns of `entry_history` (aliased `e`) after its `ENTRY_COLUMNS`, in
/// the order `read_version` expects them.
pub const VERSION_COLUMNS: &str =
    "e.batch, e.action, e.actor, e.at, e.restored_at, e.restored_by, e.n";

/// The columns of a report line, but its token count (`read_report`):
/// a task's title is its first line, so 300 characters are plenty, and a
/// report over a million entries must not hold their text.
pub const REPORT_COLUMNS: &str = "e.seq, e.pad, e.author, e.kind, \
     CASE WHEN e.kind = 'task' THEN substr(e.content, 1, 300) ELSE '' END, \
     e.status, e.assignee, e.attempts, \
     CASE WHEN e.kind = 'task' THEN e.error END, e.claimed_at, e.finished_at";

/// The typed reads of one row, by column position, as a database returns
/// them.
pub trait Columns {
    type Error;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn opt_real(&self, i: usize) -> Result<Option<f64>, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
    /// A list of texts (`NULL`: empty).
    fn texts(&self, i: usize) -> Result<Vec<String>, Self::Error>;
}

/// Reads the `ENTRY_COLUMNS` at the start of `row`, with its seq.
pub fn read_entry_seq<R: Columns>(row: &R) -> Result<(i64, Entry), R::Error> {
    let seq = row.int(0)?;
    let id_of = |i: usize| {
        row.opt_int(i)
            .map(|s| s.map(|n| crate::seal::NoteRef(crate::id::encode(n))))
    };
    let entry = Entry {
        id: crate::id::encode(seq),
        pad: row.text(1)?,
        author: row.text(2)?,
        kind: Kind::parse(&row.text(3)?).unwrap_or_default(),
        content: row.text(4)?,
        tags: row.texts(5)?,
        status: row.opt_text(6)?.as_deref().and_then(Status::parse),
        assignee: row.opt_text(7)?,
        resume: row.opt_text(8)?,
        lease_until: row.opt_int(9)?.map(fmt_time),
        category: row.opt_text(10)?.as_deref().and_then(Category::parse),
        confidence: row.opt_real(11)?,
        depends_on: crate::seal::refs(row.texts(12)?),
        remind_at: row.opt_int(13)?.map(fmt_time),
        pinned: row.flag(14)?,
        meta: row
            .opt_text(15)?
            .as_deref()
            .and_then(|m| match serde_json::from_str(m) {
                Ok(Value::Object(o)) => Some(o),
                _ => None,
            }),
        created_at: fmt_time(row.int(16)?),
        updated_at: fmt_time(row.int(17)?),
        version: row.int(18)?,
        attempts: row.int(19)?,
        error: row.opt_text(20)?,
        reply_to: id_of(21)?,
        choices: row.texts(22)?,
        replies: row.int(23)?,
        answer: id_of(24)?,
        to: row.texts(25)?,
        supersedes: id_of(26)?,
        superseded_by: id_of(27)?,
    };
    Ok((seq, entry))
}

/// Reads the `ENTRY_COLUMNS` at the start of `row`.
pub fn read_entry<R: Columns>(row: &R) -> Result<Entry, R::Error> {
    read_entry_seq(row).map(|(_, e)| e)
}

/// Reads the `PAD_COLUMNS` of `row`.
pub fn read_pad<R: Columns>(row: &R) -> Result<Pad, R::Error> {
    let ttl = row.opt_int(1)?;
    let last_write = row.int(3)?;
    let archived_at = row.opt_int(5)?;
    Ok(Pad {
        name: row.text(0)?,
        ttl_seconds: ttl,
        max_entries: row.opt_int(2)?,
        last_write_at: fmt_time(last_write),
        entries: row.int(4)?,
        expires_at: match (archived_at, ttl) {
            (None, Some(ttl)) => Some(fmt_time(last_write + ttl * 1000)),
            _ => None,
        },
        archived: archived_at.is_some(),
        archived_at: archived_at.map(fmt_time),
    })
}

/// Reads a history row selected as `ENTRY_COLUMNS, VERSION_COLUMNS`:
/// (n, seq, version).
pub fn read_version<R: Columns>(row: &R) -> Result<(i64, i64, Version), R::Error> {
    let (seq, entry) = read_entry_seq(row)?;
    let c = ENTRY_COLUMN_COUNT;
    Ok((
        row.int(c + 6)?,
        seq,
        Version {
            change: row.int(c)?,
            action: Action::parse(&row.text(c + 1)?).unwrap_or(Action::Delete),
            by: row.text(c + 2)?,
            at: fmt_time(row.int(c + 3)?),
            restored_at: row.opt_int(c + 4)?.map(fmt_time),
            restored_by: row.opt_text(c + 5)?,
            entry,
        },
    ))
}

/// Reads a report line selected as `REPORT_COLUMNS`, with its token count
/// (`tokens`: each database reads the JSON its own way).
pub fn read_report<R: Columns>(row: &R, tokens: Option<Value>) -> Result<ReportRow, R::Error> {
    Ok(ReportRow {
        id: crate::id::encode(row.int(0)?),
        pad: row.text(1)?,
        author: row.text(2)?,
        kind: Kind::parse(&row.text(3)?).unwrap_or_default(),
        content: row.text(4)?,
        status: row.opt_text(5)?.as_deref().and_then(Status::parse),
        assignee: row.opt_text(6)?,
        attempts: row.int(7)?,
        error: row.opt_text(8)?,
        claimed_at: row.opt_int(9)?,
        finished_at: row.opt_int(10)?,
        tokens,
    })
}

/// Reads a line of the audit (`storage::history`'s scans): (time,
/// change); `what` names the change, else the row's action does.
pub fn read_change<R: Columns>(row: &R, what: Option<&str>) -> Result<(i64, Change), R::Error> {
    let at = row.int(3)?;
    Ok((
        at,
        Change {
            at: fmt_time(at),
            by: row.text(2)?,
            what: match what {
                Some(w) => w.to_owned(),
                None => row.opt_text(5)?.unwrap_or_default(),
            },
            id: crate::id::encode(row.int(0)?),
            pad: row.text(1)?,
            change: match what {
                Some(_) => None,
                None => row.opt_int(6)?,
            },
            preview: preview(&row.text(4)?),
        },
    ))
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
