//! History and trash on PostgreSQL: the same operations as
//! `store::history`, on the table of migrations/postgres/20261201000004.

use super::tx::PgTx;
use super::{bounded, upkeep, PgStore};
use crate::error::Result;
use crate::id;
use crate::model::Entry;
use crate::protocol::{Change, Skipped, Version};
use crate::storage::history;
use crate::storage::rules::KEPT_COLUMNS;
use crate::storage::write::{self, RestoreTx};
use crate::storage::Fut;
use crate::storage::History;
use crate::storage::Visible;
use crate::storage::{HistoryFilter, Purge, Restore};

impl PgStore {
    /// Whether changes keep what they replace (`pad serve --history-days 0`: not).
    pub fn keep_history(&self, on: bool) {
        self.keep_history
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn keeping(&self) -> bool {
        self.keep_history.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// PostgreSQL's statements bringing deleted entries back (`storage::write`).
impl RestoreTx for PgTx<'_> {
    async fn bring_back(&mut self, kept: &[(i64, Entry)], by: &str, now: i64) -> Result<()> {
        let ns: Vec<i64> = kept.iter().map(|k| k.0).collect();
        let back: Vec<i64> = kept.iter().filter_map(|k| id::decode(&k.1.id)).collect();
        // The deletions' tombstones (version ∞, which no vector of the entry
        // would replace) go, once no embedding worker is between reading
        // these entries and writing their vectors: a worker holds its queue
        // rows locked until it commits.
        sqlx::query("SELECT id FROM embed_queue WHERE seq = ANY($1) FOR UPDATE")
            .bind(&back)
            .fetch_all(&mut *self.conn)
            .await?;
        sqlx::query("DELETE FROM vectors WHERE seq = ANY($1) AND vec IS NULL")
            .bind(&back)
            .execute(&mut *self.conn)
            .await?;
        sqlx::query(sql!(
            "INSERT INTO entries ({KEPT_COLUMNS}) SELECT {KEPT_COLUMNS} \
             FROM entry_history WHERE n = ANY($1)"
        ))
        .bind(&ns)
        .execute(&mut *self.conn)
        .await?;
        sqlx::query(
            "INSERT INTO pads (name, ttl_seconds, created_at, last_write_at, entries) \
             SELECT pad, CASE WHEN pad = 'inbox' THEN NULL ELSE \
                 (SELECT nullif(value, '')::bigint FROM settings WHERE key = 'default_ttl_seconds') END, \
                 $2, $2, count(*) FROM entry_history WHERE n = ANY($1) GROUP BY pad \
             ON CONFLICT (name) DO UPDATE SET \
                 last_write_at = greatest(pads.last_write_at, excluded.last_write_at), \
                 entries = pads.entries + excluded.entries, archived_at = NULL",
        )
        .bind(&ns)
        .bind(now)
        .execute(&mut *self.conn)
        .await?;
        sqlx::query(
            "UPDATE entry_history SET restored_at = $2, restored_by = $3 WHERE n = ANY($1)",
        )
        .bind(&ns)
        .bind(now)
        .bind(by)
        .execute(&mut *self.conn)
        .await?;
        Ok(())
    }
}

impl History for PgStore {
    fn kept_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(i64, String)>> {
        bounded(async move {
            history::kept_matches(&mut *self.pool().acquire().await?, id, visible).await
        })
    }

    fn history(&self, seq: i64) -> Fut<'_, (Option<Entry>, Vec<Version>)> {
        bounded(async move { history::history(&mut *self.pool().acquire().await?, seq).await })
    }

    fn trash<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, (Vec<Version>, Option<i64>)> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            history::trash(&mut *conn, filter, limit, cursor).await
        })
    }

    /// `storage::write::restore` in one transaction; the kept rows are
    /// locked, so two engines restoring the same change bring each entry
    /// back once.
    fn restore<'a>(
        &'a self,
        which: Restore,
        by: &'a str,
        now: i64,
        writable: Visible<'a>,
    ) -> Fut<'a, (Vec<Entry>, Vec<Skipped>)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::restore(&mut self.tx(&mut tx), which, by, now, writable).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    fn change(&self, batch: i64) -> Fut<'_, Vec<Version>> {
        bounded(async move { history::change(&mut *self.pool().acquire().await?, batch).await })
    }

    fn purge<'a>(&'a self, which: &'a Purge) -> Fut<'a, usize> {
        upkeep(async move { history::purge(&mut *self.pool().acquire().await?, which).await })
    }

    fn changes<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: usize,
        created: bool,
    ) -> Fut<'a, (Vec<Change>, bool)> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            history::changes(&mut *conn, filter, limit, created).await
        })
    }

    fn prune_history(&self, cutoff: i64, max_rows: i64) -> Fut<'_, usize> {
        upkeep(async move {
            let mut conn = self.pool().acquire().await?;
            history::prune(&mut *conn, cutoff, max_rows).await
        })
    }
}
