//! The inbox, written once: what is new for an author since its last read
//! — entries by others that carry `needs_eyes`, reply to one of its
//! entries or are addressed to it, and its own reminders delivered — over
//! a store's read connection (`Select`), and its statements, written once
//! (`sql`). Moving the author's cursors is a write: the sequence answers
//! with its statement, which each store runs where it writes (SQLite on
//! its writer, once the read connection is let go).
//!
//! Live pads only. Reading moves the author's cursors past what it read
//! unless it peeks. An author with no cursor yet starts just before its
//! first entry, so the answer to its first question (and any reply to what
//! it wrote) reaches it even if it never read its inbox before; an author
//! that has written nothing starts empty, at the newest entry. Reminders
//! are the author's own: even a first read shows them.

use super::query::{read_entry, Arg, Columns, Query, Select, ENTRY_COLUMN_COUNT};
use super::Inbox;
use crate::error::Result;
use crate::model::Entry;

/// What is new for `author` since its last read, and, unless `peek` (or
/// nothing moved), the statement that moves its cursors past it.
pub async fn inbox<S: Select>(
    s: &mut S,
    author: &str,
    peek: bool,
) -> Result<(Inbox, Option<Query>)> {
    let one = |sql: &str| Query::bound(S::DIALECT, sql, vec![Arg::Text(author.into())]);
    let newest = s.rows(&S::query(sql::NEWEST), |r| r.int(0)).await?;
    let newest = newest.first().copied().unwrap_or(0);
    let cursors = s
        .rows(&one(sql::CURSORS), |r| Ok((r.int(0)?, r.int(1)?)))
        .await?
        .pop();
    let cursor = match cursors {
        Some((seq, _)) => Some(seq),
        None => s
            .rows(&one(sql::BEFORE_FIRST), |r| r.opt_int(0))
            .await?
            .pop()
            .flatten(),
    };
    let reminded_cursor = cursors.map_or(0, |c| c.1);
    let q = Query::bound(
        S::DIALECT,
        sql::reminders(),
        vec![Arg::Text(author.into()), Arg::Int(reminded_cursor)],
    );
    let reminders: Vec<(Entry, i64)> = s
        .rows(&q, |r| Ok((read_entry(r)?, r.int(ENTRY_COLUMN_COUNT)?)))
        .await?;
    let reminded = reminders
        .iter()
        .map(|r| r.1)
        .max()
        .unwrap_or(reminded_cursor);
    let mut inbox = Inbox {
        needs_eyes: Vec::new(),
        replies: Vec::new(),
        addressed: since(
            s,
            sql::addressed(S::DIALECT),
            author,
            cursor.unwrap_or(0),
            newest,
        )
        .await?,
        reminders: reminders.into_iter().map(|r| r.0).collect(),
    };
    if let Some(cursor) = cursor {
        inbox.needs_eyes = since(s, sql::needs_eyes(), author, cursor, newest).await?;
        inbox.replies = since(s, sql::replies(), author, cursor, newest).await?;
    }
    let moved = !peek && (cursors.map(|c| c.0) != Some(newest) || reminded != reminded_cursor);
    let move_cursors = moved.then(|| {
        Query::bound(
            S::DIALECT,
            sql::move_cursors(S::DIALECT),
            vec![
                Arg::Text(author.into()),
                Arg::Int(newest),
                Arg::Int(reminded),
            ],
        )
    });
    Ok((inbox, move_cursors))
}

/// The entries `sql` selects by others in `(after, upto]` for `author`.
async fn since<S: Select>(
    s: &mut S,
    sql: String,
    author: &str,
    after: i64,
    upto: i64,
) -> Result<Vec<Entry>> {
    let q = Query::bound(
        S::DIALECT,
        sql,
        vec![Arg::Int(after), Arg::Int(upto), Arg::Text(author.into())],
    );
    s.rows(&q, |r| read_entry(r)).await
}

/// The inbox's statements that read the same on both stores, `$n`
/// numbered in the order they first appear (SQLite numbers `$n` so too).
pub mod sql {
    use crate::storage::query::Dialect;

    /// Binds the author and the reminder cursor; `ENTRY_COLUMNS` and then
    /// the time each was delivered.
    pub fn reminders() -> String {
        format!(
            "SELECT {}, e.reminded_at FROM entries e JOIN pads p ON p.name = e.pad \
             WHERE e.author = $1 AND e.reminded_at > $2 AND p.archived_at IS NULL \
             ORDER BY e.reminded_at, e.seq",
            crate::storage::query::ENTRY_COLUMNS
        )
    }

    /// Binds the cursor, the newest seq and the author.
    pub fn replies() -> String {
        format!(
            "SELECT {} FROM entries e JOIN entries parent ON parent.seq = e.reply_to \
             JOIN pads p ON p.name = e.pad \
             WHERE e.seq > $1 AND e.seq <= $2 AND e.reply_to IS NOT NULL \
               AND e.author <> $3 AND parent.author = $3 AND p.archived_at IS NULL \
             ORDER BY e.seq",
            crate::storage::query::ENTRY_COLUMNS
        )
    }

    /// Binds the cursor, the newest seq and the author.
    pub fn addressed(d: Dialect) -> String {
        format!(
            "SELECT {} FROM entries e JOIN pads p ON p.name = e.pad \
             WHERE e.addressed_to IS NOT NULL AND e.seq > $1 AND e.seq <= $2 \
               AND e.author <> $3 AND p.archived_at IS NULL AND {} \
             ORDER BY e.seq",
            crate::storage::query::ENTRY_COLUMNS,
            d.list_has("e.addressed_to", "$3")
        )
    }

    /// Binds the cursor, the newest seq and the author: entries tagged
    /// `needs_eyes`, through the tag's index (`entry_tags`).
    pub fn needs_eyes() -> String {
        let columns = crate::storage::query::ENTRY_COLUMNS;
        format!(
            "SELECT {columns} FROM entry_tags t JOIN entries e ON e.seq = t.seq \
             JOIN pads p ON p.name = e.pad \
             WHERE t.tag = 'needs_eyes' AND t.seq > $1 AND t.seq <= $2 \
               AND e.author <> $3 AND p.archived_at IS NULL \
             ORDER BY t.seq"
        )
    }

    /// Binds the author, the newest seq and the reminder time read.
    pub fn move_cursors(d: Dialect) -> String {
        let greatest = d.greatest();
        format!(
            "INSERT INTO inbox_cursors (author, seq, reminded) VALUES ($1, $2, $3) \
             ON CONFLICT (author) DO UPDATE SET \
               seq = {greatest}(inbox_cursors.seq, excluded.seq), \
               reminded = {greatest}(inbox_cursors.reminded, excluded.reminded)"
        )
    }

    /// Binds the author: its cursors' row.
    pub const CURSORS: &str = "SELECT seq, reminded FROM inbox_cursors WHERE author = $1";

    /// Binds the author.
    pub const BEFORE_FIRST: &str = "SELECT min(seq) - 1 FROM entries WHERE author = $1";

    pub const NEWEST: &str = "SELECT coalesce(max(seq), 0) FROM entries";
}
