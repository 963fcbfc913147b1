//! The inbox's reads on PostgreSQL (`storage::inbox` runs the sequence;
//! `store/inbox.rs` on SQLite), each on the pool.

use sqlx::{PgPool, Row};

use super::{read_entry, ENTRY_COLUMNS};
use crate::error::Result;
use crate::model::Entry;
use crate::storage::dialect::Dialect;
use crate::storage::inbox::{sql, InboxRead};
use crate::storage::rows::ENTRY_COLUMN_COUNT;

pub(super) struct PgInbox<'a>(pub(super) &'a PgPool);

impl PgInbox<'_> {
    /// The entries `sql` selects, binding the cursor, the newest seq and
    /// the author.
    async fn entries(
        &self,
        sql: String,
        author: &str,
        after: i64,
        upto: i64,
    ) -> Result<Vec<Entry>> {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(after)
            .bind(upto)
            .bind(author)
            .fetch_all(self.0)
            .await?
            .iter()
            .map(read_entry)
            .collect()
    }
}

impl InboxRead for PgInbox<'_> {
    async fn newest(&mut self) -> Result<i64> {
        Ok(sqlx::query_scalar(sql::NEWEST).fetch_one(self.0).await?)
    }

    async fn cursors(&mut self, author: &str) -> Result<Option<(i64, i64)>> {
        Ok(sqlx::query_as(sql::CURSORS)
            .bind(author)
            .fetch_optional(self.0)
            .await?)
    }

    async fn before_first(&mut self, author: &str) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(sql::BEFORE_FIRST)
            .bind(author)
            .fetch_one(self.0)
            .await?)
    }

    async fn reminders(&mut self, author: &str, reminded: i64) -> Result<Vec<(Entry, i64)>> {
        sqlx::query(sqlx::AssertSqlSafe(sql::reminders()))
            .bind(author)
            .bind(reminded)
            .fetch_all(self.0)
            .await?
            .iter()
            .map(|r| Ok((read_entry(r)?, r.try_get(ENTRY_COLUMN_COUNT)?)))
            .collect()
    }

    async fn addressed(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        self.entries(sql::addressed(Dialect::Postgres), author, after, upto)
            .await
    }

    /// Through the tags' array index.
    async fn needs_eyes(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad \
             WHERE 'needs_eyes' = ANY(e.tags) AND e.seq > $1 AND e.seq <= $2 \
               AND e.author <> $3 AND p.archived_at IS NULL ORDER BY e.seq"
        );
        self.entries(sql, author, after, upto).await
    }

    async fn replies(&mut self, author: &str, after: i64, upto: i64) -> Result<Vec<Entry>> {
        self.entries(sql::replies(), author, after, upto).await
    }

    async fn move_cursors(&mut self, author: &str, seq: i64, reminded: i64) -> Result<()> {
        sqlx::query(sqlx::AssertSqlSafe(sql::move_cursors(Dialect::Postgres)))
            .bind(author)
            .bind(seq)
            .bind(reminded)
            .execute(self.0)
            .await?;
        Ok(())
    }
}
