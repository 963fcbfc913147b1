//! The inbox, written once: what is new for an author since its last read
//! — entries by others that carry `needs_eyes`, reply to one of its
//! entries or are addressed to it, and its own reminders delivered — over
//! the reads each store supplies (`InboxRead`: its statements, nothing
//! else), and its statements, written once (`sql`).
//!
//! Live pads only. Reading moves the author's cursors past what it read
//! unless it peeks. An author with no cursor yet starts just before its
//! first entry, so the answer to its first question (and any reply to what
//! it wrote) reaches it even if it never read its inbox before; an author
//! that has written nothing starts empty, at the newest entry. Reminders
//! are the author's own: even a first read shows them.

use super::Inbox;
use crate::error::Result;
use crate::model::Entry;

/// The reads (and the one write) the inbox makes on a store.
#[allow(async_fn_in_trait)]
pub trait InboxRead {
    /// The newest entry's seq (0 when there is none).
    async fn newest(&mut self) -> Result<i64>;
    /// The author's cursors: the last seq and reminder time it read.
    async fn cursors(&mut self, author: &str) -> Result<Option<(i64, i64)>>;
    /// Just before the author's first entry (`None`: it wrote none).
    async fn before_first(&mut self, author: &str) -> Result<Option<i64>>;
    /// The author's reminders delivered after `reminded`, with the time
    /// each was delivered, in that order (`sql::REMINDERS`).
    async fn reminders(&mut self, author: &str, reminded: i64) -> Result<Vec<(Entry, i64)>>;
    /// Entries by others in `(after, upto]` addressed to the author.
    async fn addressed(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>>;
    /// Entries by others in `(after, upto]` tagged `needs_eyes`.
    async fn needs_eyes(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>>;
    /// Replies by others in `(after, upto]` to the author's entries
    /// (`sql::REPLIES`).
    async fn replies(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>>;
    /// Moves the author's cursors on to `seq` and `reminded` (never back).
    async fn move_cursors(&mut self, author: &str, seq: i64, reminded: i64) -> Result<()>;
}

/// What is new for `author` since its last read; moves past it unless
/// `peek`.
pub async fn inbox(r: &mut impl InboxRead, author: &str, peek: bool) -> Result<Inbox> {
    let newest = r.newest().await?;
    let cursors = r.cursors(author).await?;
    let cursor = match cursors {
        Some((seq, _)) => Some(seq),
        None => r.before_first(author).await?,
    };
    let reminded_cursor = cursors.map_or(0, |c| c.1);
    let reminders = r.reminders(author, reminded_cursor).await?;
    let reminded = reminders
        .iter()
        .map(|r| r.1)
        .max()
        .unwrap_or(reminded_cursor);
    let mut inbox = Inbox {
        needs_eyes: Vec::new(),
        replies: Vec::new(),
        addressed: r.addressed(author, cursor.unwrap_or(0), newest).await?,
        reminders: reminders.into_iter().map(|r| r.0).collect(),
    };
    if let Some(cursor) = cursor {
        inbox.needs_eyes = r.needs_eyes(author, cursor, newest).await?;
        inbox.replies = r.replies(author, cursor, newest).await?;
    }
    if !peek && (cursors.map(|c| c.0) != Some(newest) || reminded != reminded_cursor) {
        r.move_cursors(author, newest, reminded).await?;
    }
    Ok(inbox)
}

/// The inbox's statements that read the same on both stores, `$n`
/// numbered in the order they first appear (SQLite numbers `$n` so too).
pub mod sql {
    use crate::storage::dialect::Dialect;

    /// Binds the author and the reminder cursor; `ENTRY_COLUMNS` and then
    /// the time each was delivered.
    pub fn reminders() -> String {
        format!(
            "SELECT {}, e.reminded_at FROM entries e JOIN pads p ON p.name = e.pad \
             WHERE e.author = $1 AND e.reminded_at > $2 AND p.archived_at IS NULL \
             ORDER BY e.reminded_at, e.seq",
            crate::storage::rows::ENTRY_COLUMNS
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
            crate::storage::rows::ENTRY_COLUMNS
        )
    }

    /// Binds the cursor, the newest seq and the author.
    pub fn addressed(d: Dialect) -> String {
        format!(
            "SELECT {} FROM entries e JOIN pads p ON p.name = e.pad \
             WHERE e.addressed_to IS NOT NULL AND e.seq > $1 AND e.seq <= $2 \
               AND e.author <> $3 AND p.archived_at IS NULL AND {} \
             ORDER BY e.seq",
            crate::storage::rows::ENTRY_COLUMNS,
            d.list_has("e.addressed_to", "$3")
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
