//! The inbox's reads on SQLite (`storage::inbox` runs the sequence;
//! `pg/inbox.rs` on PostgreSQL): one read connection for the reads, the
//! writer for the cursors once it is let go.

use rusqlite::{params, OptionalExtension};

use super::rows::{read_entry, ENTRY_COLUMNS, ENTRY_COLUMN_COUNT};
use super::{Reader, Store};
use crate::error::Result;
use crate::model::Entry;
use crate::storage::dialect::Dialect;
use crate::storage::inbox::{sql, InboxRead};

pub(super) struct SqliteInbox<'a> {
    store: &'a Store,
    conn: Option<Reader<'a>>,
}

impl<'a> SqliteInbox<'a> {
    pub(super) fn new(store: &'a Store) -> SqliteInbox<'a> {
        SqliteInbox { store, conn: None }
    }

    fn conn(&mut self) -> Result<&Reader<'a>> {
        let conn = match self.conn.take() {
            Some(c) => c,
            None => self.store.reader()?,
        };
        Ok(self.conn.insert(conn))
    }

    /// The entries `sql` selects, binding the cursor, the newest seq and
    /// the author.
    fn entries(&mut self, sql: &str, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        Ok(self
            .conn()?
            .prepare_cached(sql)?
            .query_map(params![after, upto, author], read_entry)?
            .collect::<rusqlite::Result<_>>()?)
    }
}

impl InboxRead for SqliteInbox<'_> {
    async fn newest(&mut self) -> Result<i64> {
        Ok(self.conn()?.query_row(sql::NEWEST, [], |r| r.get(0))?)
    }

    async fn cursors(&mut self, author: &str) -> Result<Option<(i64, i64)>> {
        Ok(self
            .conn()?
            .query_row(sql::CURSORS, [author], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    async fn before_first(&mut self, author: &str) -> Result<Option<i64>> {
        Ok(self
            .conn()?
            .query_row(sql::BEFORE_FIRST, [author], |r| r.get(0))
            .optional()?
            .flatten())
    }

    async fn reminders(&mut self, author: &str, reminded: i64) -> Result<Vec<(Entry, i64)>> {
        Ok(self
            .conn()?
            .prepare_cached(&sql::reminders())?
            .query_map(params![author, reminded], |r| {
                Ok((read_entry(r)?, r.get(ENTRY_COLUMN_COUNT)?))
            })?
            .collect::<rusqlite::Result<_>>()?)
    }

    async fn addressed(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        self.entries(&sql::addressed(Dialect::Sqlite), author, after, upto)
    }

    /// Through `entry_tags`, the tag's index.
    async fn needs_eyes(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM entry_tags t JOIN entries e ON e.seq = t.seq \
             JOIN pads p ON p.name = e.pad \
             WHERE t.tag = 'needs_eyes' AND t.seq > ?1 AND t.seq <= ?2 \
               AND e.author <> ?3 AND p.archived_at IS NULL \
             ORDER BY t.seq"
        );
        self.entries(&sql, author, after, upto)
    }

    async fn replies(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        self.entries(&sql::replies(), author, after, upto)
    }

    async fn move_cursors(&mut self, author: &str, seq: i64, reminded: i64) -> Result<()> {
        // The read connection goes back before the writer is taken.
        self.conn = None;
        self.store.writer().conn.execute(
            &sql::move_cursors(Dialect::Sqlite),
            params![author, seq, reminded],
        )?;
        Ok(())
    }
}
