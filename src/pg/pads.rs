//! Pads on PostgreSQL: listing, configuration, clearing, exporting, tags
//! (`store/pads.rs` on SQLite).

use super::keep::keep_deleting;
use super::{bounded, read_entry_seq, read_pad, Arg, PgStore, ENTRY_COLUMNS, PAD_COLUMNS};
use crate::error::Result;
use crate::model::{Entry, Pad};
use crate::protocol::Action;
use crate::storage::pads;
use crate::storage::rules::no_pad;
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::PadEntries;
use crate::storage::Pads;
use sqlx::Row;
use std::collections::BTreeMap;

impl PgStore {
    pub async fn pad(&self, name: &str) -> Result<Option<Pad>> {
        pads::pad(&mut *self.pool().acquire().await?, name).await
    }

    /// A pad's entries, oldest first, within `max_bytes` (`Store::pad_entries`).
    pub async fn pad_entries(
        &self,
        name: &str,
        max_bytes: usize,
    ) -> Result<(Vec<Entry>, usize, usize)> {
        use futures_util::TryStreamExt;
        let sql = format!(
            "SELECT {ENTRY_COLUMNS}, (octet_length(e.content) + coalesce(octet_length(e.meta), 0) \
               + coalesce(octet_length(e.resume), 0) + coalesce(octet_length(e.error), 0) + 200)::bigint AS size \
             FROM entries e WHERE e.pad = $1 \
             ORDER BY (e.pinned OR 'important' = ANY(e.tags)) DESC, e.seq DESC"
        );
        let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(name)
            .fetch(self.pool());
        let (mut out, mut bytes, mut left_out, mut total) = (Vec::new(), 0usize, 0usize, 0usize);
        while let Some(r) = rows.try_next().await? {
            let size = r.try_get::<i64, _>("size")? as usize;
            total += size;
            if bytes + size > max_bytes {
                left_out += 1;
                continue;
            }
            bytes += size;
            out.push(read_entry_seq(&r)?);
        }
        out.sort_by_key(|(seq, _)| *seq);
        Ok((out.into_iter().map(|(_, e)| e).collect(), left_out, total))
    }
}

impl Pads for PgStore {
    fn pads(&self, include_archived: bool) -> Fut<'_, Vec<Pad>> {
        bounded(
            async move { pads::pads(&mut *self.pool().acquire().await?, include_archived).await },
        )
    }

    fn configure<'a>(
        &'a self,
        name: &'a str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Fut<'a, Pad> {
        bounded(async move {
            let row = sqlx::query(sql!(
                "INSERT INTO pads (name, ttl_seconds, max_entries, created_at, last_write_at) \
                 VALUES ($1, CASE WHEN $2 THEN $3 WHEN $1 = 'inbox' THEN NULL \
                         ELSE (SELECT nullif(value, '')::bigint FROM settings WHERE key = 'default_ttl_seconds') END, \
                         $5, $6, $6) \
                 ON CONFLICT (name) DO UPDATE SET \
                   ttl_seconds = CASE WHEN $2 THEN $3 ELSE pads.ttl_seconds END, \
                   max_entries = CASE WHEN $4 THEN $5 ELSE pads.max_entries END, \
                   last_write_at = $6, archived_at = NULL \
                 RETURNING {PAD_COLUMNS}"
            ))
            .bind(name)
            .bind(ttl_seconds.is_some())
            .bind(ttl_seconds.flatten())
            .bind(max_entries.is_some())
            .bind(max_entries.flatten())
            .bind(now)
            .fetch_one(self.pool())
            .await?;
            read_pad(&row)
        })
    }

    fn touch<'a>(&'a self, name: &'a str, now: i64) -> Fut<'a, Pad> {
        bounded(async move { pads::touch(&mut *self.pool().acquire().await?, name, now).await })
    }

    fn clear<'a>(
        &'a self,
        name: &'a str,
        keep_pinned: bool,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (BTreeMap<String, usize>, i64)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pads WHERE name = $1")
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?;
            if exists.is_none() {
                return Err(no_pad(name));
            }
            let cond = if keep_pinned {
                "pad = $4 AND NOT pinned"
            } else {
                "pad = $4"
            };
            let which = (cond, Arg::Text(name.into()));
            let (change, _, authors) = keep_deleting(
                &mut tx,
                self.keeping(),
                Action::Clear,
                by,
                now,
                which,
                false,
            )
            .await?;
            tx.commit().await?;
            Ok((authors, change.unwrap_or_default()))
        })
    }

    /// A pad and its entries (`pad_entries`), for an export.
    fn pad_with_entries<'a>(
        &'a self,
        name: &'a str,
        max_bytes: usize,
    ) -> Fut<'a, (Pad, PadEntries)> {
        bounded(async move {
            let pad = self.pad(name).await?.ok_or_else(|| no_pad(name))?;
            Ok((pad, self.pad_entries(name, max_bytes).await?))
        })
    }

    fn tags<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<(String, i64)>> {
        bounded(async move { pads::tags(&mut *self.pool().acquire().await?, filter).await })
    }
}
