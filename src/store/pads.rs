//! Pad reads and writes: listing, configuration, clearing, expiry.

use sqlx::{Connection, QueryBuilder, Sqlite};

use super::rows::{EntryRow, PadRow, ENTRY_COLUMNS, PAD_COLUMNS};
use super::Store;
use crate::error::{Error, Result};
use crate::model::{Entry, Pad};

/// What one expiry sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PadSweep {
    /// Pads archived by this sweep (their idle time passed their TTL).
    pub archived: Vec<String>,
    /// Entries deleted because their pad stayed archived past retention.
    pub purged_entries: u64,
    /// Pads removed entirely (archived past retention, nothing pinned left).
    pub purged_pads: u64,
}

impl Store {
    pub async fn pads(&self, include_archived: bool) -> Result<Vec<Pad>> {
        let sql = format!(
            "SELECT {PAD_COLUMNS} FROM pads {} ORDER BY last_write_at DESC, name",
            if include_archived {
                ""
            } else {
                "WHERE archived_at IS NULL"
            }
        );
        let rows: Vec<PadRow> = sqlx::query_as(&sql).fetch_all(self.readers()).await?;
        Ok(rows.into_iter().map(PadRow::into_pad).collect())
    }

    pub async fn pad(&self, name: &str) -> Result<Option<Pad>> {
        let row: Option<PadRow> =
            sqlx::query_as(&format!("SELECT {PAD_COLUMNS} FROM pads WHERE name = ?"))
                .bind(name)
                .fetch_optional(self.readers())
                .await?;
        Ok(row.map(PadRow::into_pad))
    }

    /// Pads that have a rolling window, for the engine's cache.
    pub async fn windows(&self) -> Result<Vec<(String, i64)>> {
        Ok(
            sqlx::query_as("SELECT name, max_entries FROM pads WHERE max_entries IS NOT NULL")
                .fetch_all(self.readers())
                .await?,
        )
    }

    /// Creates or changes a pad, restoring it if archived and restarting its
    /// idle clock. `None` leaves a setting; `Some(None)` removes it.
    pub async fn configure(
        &self,
        name: &str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Result<Pad> {
        let mut w = self.writer().await;
        let row: PadRow = sqlx::query_as(&format!(
            "INSERT INTO pads (name, ttl_seconds, max_entries, created_at, last_write_at) \
             VALUES (?1, CASE WHEN ?2 THEN ?3 WHEN ?1 = 'inbox' THEN NULL \
                     ELSE (SELECT value FROM settings WHERE key = 'default_ttl_seconds') END, \
                     ?5, ?6, ?6) \
             ON CONFLICT (name) DO UPDATE SET \
               ttl_seconds = CASE WHEN ?2 THEN ?3 ELSE ttl_seconds END, \
               max_entries = CASE WHEN ?4 THEN ?5 ELSE max_entries END, \
               last_write_at = ?6, archived_at = NULL \
             RETURNING {PAD_COLUMNS}"
        ))
        .bind(name)
        .bind(ttl_seconds.is_some())
        .bind(ttl_seconds.flatten())
        .bind(max_entries.is_some())
        .bind(max_entries.flatten())
        .bind(now)
        .fetch_one(&mut w.conn)
        .await?;
        Ok(row.into_pad())
    }

    /// Restarts a pad's idle clock (and restores it if archived).
    pub async fn touch(&self, name: &str, now: i64) -> Result<Pad> {
        let mut w = self.writer().await;
        let row: Option<PadRow> = sqlx::query_as(&format!(
            "UPDATE pads SET last_write_at = ?2, archived_at = NULL WHERE name = ?1 RETURNING {PAD_COLUMNS}"
        ))
        .bind(name)
        .bind(now)
        .fetch_optional(&mut w.conn)
        .await?;
        row.map(PadRow::into_pad).ok_or_else(|| no_pad(name))
    }

    /// Deletes every entry of a pad (pinned ones too unless `keep_pinned`).
    pub async fn clear(&self, name: &str, keep_pinned: bool) -> Result<u64> {
        let mut w = self.writer().await;
        let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM pads WHERE name = ?")
            .bind(name)
            .fetch_optional(&mut w.conn)
            .await?;
        if exists.is_none() {
            return Err(no_pad(name));
        }
        let done = sqlx::query(if keep_pinned {
            "DELETE FROM entries WHERE pad = ? AND pinned = 0"
        } else {
            "DELETE FROM entries WHERE pad = ?"
        })
        .bind(name)
        .execute(&mut w.conn)
        .await?;
        Ok(done.rows_affected())
    }

    /// Every entry of a pad, oldest first (archived pads included: it is asked for by name).
    pub async fn pad_entries(&self, name: &str) -> Result<Vec<Entry>> {
        let rows: Vec<EntryRow> = sqlx::query_as(&format!(
            "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.pad = ? ORDER BY e.seq"
        ))
        .bind(name)
        .fetch_all(self.readers())
        .await?;
        Ok(rows.into_iter().map(EntryRow::into_entry).collect())
    }

    /// Tags in use on live pads (or one pad), most used first.
    pub async fn tags(&self, pad: Option<&str>) -> Result<Vec<(String, i64)>> {
        let mut q = QueryBuilder::<Sqlite>::new(
            "SELECT t.tag, count(*) AS n FROM entry_tags t JOIN entries e ON e.seq = t.seq \
             JOIN pads p ON p.name = e.pad WHERE p.archived_at IS NULL",
        );
        if let Some(p) = pad {
            q.push(" AND e.pad = ").push_bind(p);
        }
        q.push(" GROUP BY t.tag ORDER BY n DESC, t.tag");
        Ok(q.build_query_as().fetch_all(self.readers()).await?)
    }

    /// Archives pads idle past their TTL, then purges what stayed archived past
    /// `retention_ms`: unpinned entries first, then pads left empty.
    pub async fn sweep(&self, now: i64, retention_ms: i64) -> Result<PadSweep> {
        let mut w = self.writer().await;
        let mut tx = w.conn.begin().await?;
        let archived: Vec<String> = sqlx::query_scalar(
            "UPDATE pads SET archived_at = ?1 WHERE archived_at IS NULL \
             AND ttl_seconds IS NOT NULL AND last_write_at + ttl_seconds * 1000 <= ?1 \
             RETURNING name",
        )
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let cutoff = now - retention_ms;
        let purged_entries = sqlx::query(
            "DELETE FROM entries WHERE pinned = 0 AND pad IN \
             (SELECT name FROM pads WHERE archived_at IS NOT NULL AND archived_at <= ?)",
        )
        .bind(cutoff)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let purged_pads = sqlx::query(
            "DELETE FROM pads WHERE archived_at IS NOT NULL AND archived_at <= ? AND entries = 0",
        )
        .bind(cutoff)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(PadSweep {
            archived,
            purged_entries,
            purged_pads,
        })
    }

    /// Counts for `stats`.
    pub async fn counts(&self) -> Result<Counts> {
        let (entries, live_pads, archived_pads): (i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT coalesce(sum(entries), 0) FROM pads), \
                    (SELECT count(*) FROM pads WHERE archived_at IS NULL), \
                    (SELECT count(*) FROM pads WHERE archived_at IS NOT NULL)",
        )
        .fetch_one(self.readers())
        .await?;
        let tags: i64 = sqlx::query_scalar("SELECT count(DISTINCT tag) FROM entry_tags")
            .fetch_one(self.readers())
            .await?;
        Ok(Counts {
            entries,
            live_pads,
            archived_pads,
            tags,
        })
    }
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Counts {
    pub entries: i64,
    pub live_pads: i64,
    pub archived_pads: i64,
    pub tags: i64,
}

pub(crate) fn no_pad(name: &str) -> Error {
    Error::NotFound {
        field: "name",
        message: format!("no pad named '{name}'. List pads with pad.list (add include_archived to see archived ones)."),
    }
}
