//! History and trash on SQLite (migrations/20261126000001_history.sql):
//! every edit keeps the version it replaces and every deletion the entry
//! whole, in `entry_history`, in the transaction of the change; restoring
//! puts the row back with its id, tags and thread links, and the text and
//! vector indexes pick it up from `changes`.

use rusqlite::params;

use super::in_transaction;
use super::sqlite::ready;
use super::tx::SqliteTx;
use super::Sqlite;
use super::Store;
use crate::error::Result;
use crate::id;
use crate::model::Entry;
use crate::protocol::{Change, Skipped, Version};
use crate::storage::history;
use crate::storage::rules::KEPT_COLUMNS;
use crate::storage::write::{self, RestoreTx};
use crate::storage::Fut;
use crate::storage::Visible;
use crate::storage::{History, TextSearch};
use crate::storage::{HistoryFilter, Purge, Restore};

impl Store {
    /// Whether changes keep what they replace (`pad serve --history-days 0`: not).
    pub fn keep_history(&self, on: bool) {
        self.keeper.turn(on);
    }

    /// `storage::write::restore` on the writer, in one transaction.
    pub fn restore(
        &self,
        which: Restore,
        by: &str,
        now: i64,
        writable: Visible<'_>,
    ) -> Result<(Vec<Entry>, Vec<Skipped>)> {
        let mut w = self.writer();
        in_transaction(&mut w, |w| {
            ready(write::restore(&mut self.tx(w), which, by, now, writable))
        })
    }
}

/// SQLite's statements bringing deleted entries back (`storage::write`).
impl RestoreTx for SqliteTx<'_> {
    /// The text and vector indexes pick the entries up from `changes`.
    async fn bring_back(&mut self, kept: &[(i64, Entry)], by: &str, now: i64) -> Result<()> {
        let conn = &*self.conn;
        let mut insert = conn.prepare_cached(&format!(
            "INSERT INTO entries ({KEPT_COLUMNS}) SELECT {KEPT_COLUMNS} \
             FROM entry_history WHERE n = ?"
        ))?;
        let mut tags = conn.prepare_cached(
            "INSERT OR IGNORE INTO entry_tags (seq, tag) \
             SELECT seq, value FROM entry_history, json_each(tags) WHERE n = ?",
        )?;
        let mut pad = conn.prepare_cached(
            "INSERT INTO pads (name, ttl_seconds, created_at, last_write_at, entries) \
             VALUES (?1, CASE WHEN ?1 = 'inbox' THEN NULL \
                 ELSE (SELECT value FROM settings WHERE key = 'default_ttl_seconds') END, \
                 ?2, ?2, 1) \
             ON CONFLICT (name) DO UPDATE SET last_write_at = max(last_write_at, ?2), \
                 entries = entries + 1, archived_at = NULL",
        )?;
        let mut changed = conn.prepare_cached("INSERT INTO changes (seq) VALUES (?)")?;
        let mut mark = conn.prepare_cached(
            "UPDATE entry_history SET restored_at = ?2, restored_by = ?3 WHERE n = ?1",
        )?;
        for (n, entry) in kept {
            insert.execute([n])?;
            tags.execute([n])?;
            pad.execute(params![entry.pad, now])?;
            changed.execute([id::decode(&entry.id)])?;
            mark.execute(params![n, now, by])?;
        }
        Ok(())
    }
}

impl History for Sqlite {
    fn kept_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(i64, String)>> {
        self.inline(move |s| ready(history::kept_matches(&mut *s.reader()?, id, visible)))
    }

    fn history(&self, seq: i64) -> Fut<'_, (Option<Entry>, Vec<Version>)> {
        self.inline(move |s| ready(history::history(&mut *s.reader()?, seq)))
    }

    fn trash<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, (Vec<Version>, Option<i64>)> {
        self.inline(move |s| ready(history::trash(&mut *s.reader()?, filter, limit, cursor)))
    }

    fn restore<'a>(
        &'a self,
        which: Restore,
        by: &'a str,
        now: i64,
        writable: Visible<'a>,
    ) -> Fut<'a, (Vec<Entry>, Vec<Skipped>)> {
        Box::pin(async move {
            let out = self.store.restore(which, by, now, writable)?;
            // Entries come back with their old ids, below the text index's
            // watermark: index them now so a search finds them at once.
            if !out.0.is_empty() {
                self.index_text().await?;
            }
            Ok(out)
        })
    }

    fn change(&self, batch: i64) -> Fut<'_, Vec<Version>> {
        self.inline(move |s| ready(history::change(&mut *s.reader()?, batch)))
    }

    fn purge<'a>(&'a self, which: &'a Purge) -> Fut<'a, usize> {
        self.inline(move |s| ready(history::purge(&mut s.writer().conn, which)))
    }

    fn changes<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: usize,
        created: bool,
    ) -> Fut<'a, (Vec<Change>, bool)> {
        self.inline(move |s| ready(history::changes(&mut *s.reader()?, filter, limit, created)))
    }

    fn prune_history(&self, cutoff: i64, max_rows: i64) -> Fut<'_, usize> {
        self.blocking(move |s| ready(history::prune(&mut s.writer().conn, cutoff, max_rows)))
    }
}
