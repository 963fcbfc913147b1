//! Pad reads and writes: listing, configuration, clearing, exporting, tags, expiry.

use rusqlite::{params, OptionalExtension};

use super::keep::keep;
use super::sqlite::ready;
use super::sqlite::{read_entry, read_pad};
use super::Sqlite;
use super::Store;
use crate::error::Result;
use crate::model::{Entry, Pad};
use crate::protocol::Action;
use crate::storage::pads;
use crate::storage::query::{ENTRY_COLUMNS, PAD_COLUMNS};
use crate::storage::rules::no_pad;
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::Pads;
use crate::storage::{PadEntries, PadSweep};
use std::collections::BTreeMap;

impl Store {
    pub fn pads(&self, include_archived: bool) -> Result<Vec<Pad>> {
        ready(pads::pads(&mut *self.reader()?, include_archived))
    }

    pub fn pad(&self, name: &str) -> Result<Option<Pad>> {
        ready(pads::pad(&mut *self.reader()?, name))
    }

    /// Pads that have a rolling window, for the engine's cache.
    pub fn windows(&self) -> Result<Vec<(String, i64)>> {
        let conn = self.reader()?;
        let rows = conn
            .prepare("SELECT name, max_entries FROM pads WHERE max_entries IS NOT NULL")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Creates or changes a pad, restoring it if archived and restarting its
    /// idle clock. `None` leaves a setting; `Some(None)` removes it.
    pub fn configure(
        &self,
        name: &str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Result<Pad> {
        let w = self.writer();
        let pad = w
            .conn
            .prepare_cached(&format!(
                "INSERT INTO pads (name, ttl_seconds, max_entries, created_at, last_write_at) \
                 VALUES (?1, CASE WHEN ?2 THEN ?3 WHEN ?1 = 'inbox' THEN NULL \
                         ELSE (SELECT value FROM settings WHERE key = 'default_ttl_seconds') END, \
                         ?5, ?6, ?6) \
                 ON CONFLICT (name) DO UPDATE SET \
                   ttl_seconds = CASE WHEN ?2 THEN ?3 ELSE ttl_seconds END, \
                   max_entries = CASE WHEN ?4 THEN ?5 ELSE max_entries END, \
                   last_write_at = ?6, archived_at = NULL \
                 RETURNING {PAD_COLUMNS}"
            ))?
            .query_row(
                params![
                    name,
                    ttl_seconds.is_some(),
                    ttl_seconds.flatten(),
                    max_entries.is_some(),
                    max_entries.flatten(),
                    now
                ],
                read_pad,
            )?;
        Ok(pad)
    }

    /// Every entry of a pad, oldest first (archived pads included: it is asked for by name).
    /// A pad's entries, oldest first, as long as their text stays within
    /// `max_bytes`: past it, the pinned and `important` ones and then the
    /// newest that fit, with how many were left out and the bytes of all —
    /// so an export never holds more than about `max_bytes` of a pad at once.
    pub fn pad_entries(&self, name: &str, max_bytes: usize) -> Result<(Vec<Entry>, usize, usize)> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS},                length(CAST(e.content AS BLOB)) + coalesce(length(CAST(e.meta AS BLOB)), 0)                + coalesce(length(CAST(e.resume AS BLOB)), 0) + coalesce(length(CAST(e.error AS BLOB)), 0)                + 200              FROM entries e WHERE e.pad = ?              ORDER BY (e.pinned OR e.seq IN (SELECT seq FROM entry_tags WHERE tag = 'important')) DESC,                e.seq DESC"
        ))?;
        let mut rows = stmt.query([name])?;
        let (mut out, mut bytes, mut left_out, mut total) = (Vec::new(), 0usize, 0usize, 0usize);
        while let Some(r) = rows.next()? {
            let size: i64 = r.get(crate::storage::query::ENTRY_COLUMN_COUNT)?;
            total += size as usize;
            if bytes + size as usize > max_bytes {
                left_out += 1;
                continue;
            }
            bytes += size as usize;
            out.push((r.get::<_, i64>(0)?, read_entry(r)?));
        }
        out.sort_by_key(|(seq, _)| *seq);
        Ok((out.into_iter().map(|(_, e)| e).collect(), left_out, total))
    }

    /// Tags in use on the live entries passing `filter`, most used first.
    pub fn tags(&self, filter: &EntryFilter) -> Result<Vec<(String, i64)>> {
        ready(pads::tags(&mut *self.reader()?, filter))
    }

    /// Archives pads idle past their TTL, then purges what stayed archived past
    /// `retention_ms`: unpinned entries first, then pads left empty.
    pub fn sweep(&self, now: i64, retention_ms: i64) -> Result<PadSweep> {
        let mut w = self.writer();
        let tx = w.conn.transaction()?;
        let archived = tx
            .prepare(
                "UPDATE pads SET archived_at = ?1 WHERE archived_at IS NULL \
                 AND ttl_seconds IS NOT NULL AND last_write_at + ttl_seconds * 1000 <= ?1 \
                 RETURNING name",
            )?
            .query_map([now], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        let cutoff = now - retention_ms;
        let expired = "pinned = 0 AND pad IN \
             (SELECT name FROM pads WHERE archived_at IS NOT NULL AND archived_at <= ?5)";
        keep(
            &tx,
            &self.keeper,
            Action::Expire,
            "engine",
            now,
            expired,
            &[&cutoff],
        )?;
        let purged_entries = tx.execute(
            &format!("DELETE FROM entries WHERE {}", expired.replace("?5", "?")),
            [cutoff],
        )?;
        let purged_pads = tx.execute(
            "DELETE FROM pads WHERE archived_at IS NOT NULL AND archived_at <= ? AND entries = 0",
            [cutoff],
        )?;
        tx.execute(
            "DELETE FROM deliveries WHERE taken = 0 AND updated_at < ?",
            [now - crate::storage::rules::UNCLAIMED_DELIVERY_MS],
        )?;
        tx.execute(
            "DELETE FROM idempotency WHERE created_at < ?",
            [crate::storage::once::expired(now)],
        )?;
        tx.commit()?;
        Ok(PadSweep {
            archived,
            purged_entries,
            purged_pads,
        })
    }
}

impl Pads for Sqlite {
    fn pads(&self, include_archived: bool) -> Fut<'_, Vec<Pad>> {
        self.inline(move |s| s.pads(include_archived))
    }

    fn configure<'a>(
        &'a self,
        name: &'a str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Fut<'a, Pad> {
        self.inline(move |s| {
            let pad = s.configure(name, ttl_seconds, max_entries, now)?;
            let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
            match pad.max_entries {
                Some(m) => windows.insert(pad.name.clone(), m),
                None => windows.remove(&pad.name),
            };
            Ok(pad)
        })
    }

    /// Restarts a pad's idle clock (and restores it if archived).
    fn touch<'a>(&'a self, name: &'a str, now: i64) -> Fut<'a, Pad> {
        self.inline(move |s| ready(pads::touch(&mut s.writer().conn, name, now)))
    }

    /// Deletes every entry of a pad (pinned ones too unless `keep_pinned`)
    /// into the trash, as one change; returns how many each author wrote,
    /// and the change.
    fn clear<'a>(
        &'a self,
        name: &'a str,
        keep_pinned: bool,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (BTreeMap<String, usize>, i64)> {
        let (name, by) = (name.to_string(), by.to_string());
        self.blocking(move |s| {
            let mut w = s.writer();
            let tx = w.conn.transaction()?;
            let exists: Option<i64> = tx
                .query_row("SELECT 1 FROM pads WHERE name = ?", [&name], |r| r.get(0))
                .optional()?;
            if exists.is_none() {
                return Err(no_pad(&name));
            }
            let cond = if keep_pinned {
                "pad = ?5 AND pinned = 0"
            } else {
                "pad = ?5"
            };
            let authors = tx
                .prepare(&format!(
                    "SELECT author, count(*) FROM entries WHERE {} GROUP BY author",
                    cond.replace("?5", "?")
                ))?
                .query_map([&name], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?
                .collect::<rusqlite::Result<_>>()?;
            let change = keep(&tx, &s.keeper, Action::Clear, &by, now, cond, &[&name])?;
            tx.execute(
                &format!("DELETE FROM entries WHERE {}", cond.replace("?5", "?")),
                [&name],
            )?;
            tx.commit()?;
            Ok((authors, change))
        })
    }

    /// A pad and its entries (`pad_entries`), for an export.
    fn pad_with_entries<'a>(
        &'a self,
        name: &'a str,
        max_bytes: usize,
    ) -> Fut<'a, (Pad, PadEntries)> {
        let name = name.to_string();
        self.blocking(move |s| {
            let name = &name;
            let pad = s.pad(name)?.ok_or_else(|| no_pad(name))?;
            Ok((pad, s.pad_entries(name, max_bytes)?))
        })
    }

    fn tags<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<(String, i64)>> {
        let filter = filter.clone();
        self.blocking(move |s| s.tags(&filter))
    }
}
