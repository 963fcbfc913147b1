//! Entry reads and writes on PostgreSQL (`store/entries.rs` on SQLite).

use sqlx::postgres::PgRow;
use sqlx::PgConnection;

use super::{bounded, read_entry, PgStore, Run, ENTRY_COLUMNS};
use crate::error::Result;
use crate::id;
use crate::model::Entry;
use crate::storage::once::{self, Key, Once};
use crate::storage::rules::{ambiguous, no_entry, prefix_range};
use crate::storage::Entries;
use crate::storage::Fut;
use crate::storage::Inbox;
use crate::storage::Visible;
use crate::storage::{entries, inbox, write};
use crate::storage::{Added, EntryFilter, NewEntry, Page, Patch};

/// Resolves an id or unique id prefix to `(seq, full id)`.
pub(crate) async fn resolve(
    conn: &mut PgConnection,
    field: &'static str,
    id: &str,
) -> Result<(i64, String)> {
    let id = id.trim().to_lowercase();
    let (lo, hi) = prefix_range(field, &id)?;
    let seqs: Vec<i64> = sqlx::query_scalar(
        "SELECT seq FROM entries WHERE seq BETWEEN $1 AND $2 ORDER BY seq LIMIT 2",
    )
    .bind(lo)
    .bind(hi)
    .fetch_all(&mut *conn)
    .await?;
    match seqs.as_slice() {
        [] => Err(no_entry(field, &id)),
        [seq] => Ok((*seq, id::encode(*seq))),
        _ => Err(ambiguous(field, &id)),
    }
}

pub(crate) async fn load(conn: &mut PgConnection, seq: i64) -> Result<Entry> {
    let row = sqlx::query(sql!(
        "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = $1"
    ))
    .bind(seq)
    .fetch_optional(&mut *conn)
    .await?;
    row_or_gone(row, seq)
}

/// `load`, locking the row until the transaction ends.
pub(crate) async fn load_locked(conn: &mut PgConnection, seq: i64) -> Result<Entry> {
    let row = sqlx::query(sql!(
        "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = $1 FOR UPDATE"
    ))
    .bind(seq)
    .fetch_optional(&mut *conn)
    .await?;
    row_or_gone(row, seq)
}

/// An entry resolved a moment ago may have been deleted by another engine since.
fn row_or_gone(row: Option<PgRow>, seq: i64) -> Result<Entry> {
    match row {
        Some(r) => read_entry(&r),
        None => Err(no_entry("id", &id::encode(seq))),
    }
}

impl Entries for PgStore {
    /// Inserts an entry, committed before it is acknowledged: its pad row
    /// (created on first write, restored if archived), its parent's reply
    /// count and answer, and its pad's rolling window, in one transaction.
    /// The pad's window is read in the same statement that moves its row (a
    /// window set on another engine applies at once).
    fn add(&self, e: NewEntry) -> Fut<'_, Once<Added>> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let added = write::add(&mut self.tx(&mut tx), e).await?;
            // A retry wrote nothing: rolled back (dropped).
            if let Once::Wrote(_) = added {
                tx.commit().await?;
                self.loaded.added(1);
            }
            Ok(added)
        })
    }

    /// One entry by id or unique id prefix (archived pads included: an id is explicit).
    fn get<'a>(&'a self, id: &'a str) -> Fut<'a, Entry> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            let (seq, _) = resolve(&mut conn, "id", id).await?;
            load(&mut conn, seq).await
        })
    }

    fn kept<'a>(&'a self, key: &'a Key, now: i64) -> Fut<'a, bool> {
        bounded(async move { once::kept(&mut *self.pool().acquire().await?, key, now).await })
    }

    /// Up to two entries whose id starts with `id` in pads `visible`
    /// accepts (`Store::visible_matches`).
    fn visible_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(String, String)>> {
        bounded(async move {
            use futures_util::TryStreamExt;
            let id = id.trim().to_lowercase();
            let (lo, hi) = prefix_range("id", &id)?;
            let mut rows = sqlx::query_as::<_, (i64, String)>(
                "SELECT seq, pad FROM entries WHERE seq BETWEEN $1 AND $2 ORDER BY seq",
            )
            .bind(lo)
            .bind(hi)
            .fetch(self.pool());
            let mut found = Vec::new();
            while let Some((seq, pad)) = rows.try_next().await? {
                if visible(&pad) {
                    found.push((id::encode(seq), pad));
                    if found.len() == 2 {
                        break;
                    }
                }
            }
            Ok(found)
        })
    }

    /// Applies `patch`; with `if_version`, only if the entry is still at that
    /// version — checked on the row locked for the update, so two engines
    /// racing with the same version get one success and one conflict.
    fn update<'a>(
        &'a self,
        id: &'a str,
        patch: Patch,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, Entry)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::update(&mut self.tx(&mut tx), id, patch, if_version, now, by).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    /// Deletes one entry; with `if_version`, only if it is still at that version.
    /// Returns the entry and the change that kept it in the trash.
    fn delete<'a>(
        &'a self,
        id: &'a str,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, i64)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::delete(&mut self.tx(&mut tx), id, if_version, now, by).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    /// Entries matching `filter`, newest first, `limit` at a time.
    fn list<'a>(
        &'a self,
        filter: &'a EntryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, Page> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            let rows = entries::list(&mut *conn, filter, limit, cursor).await?;
            Ok(entries::page(rows, limit))
        })
    }

    /// An entry and every reply under it, at any depth, oldest first.
    fn thread<'a>(&'a self, id: &'a str, limit: usize) -> Fut<'a, (Entry, Vec<Entry>)> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            let (seq, _) = resolve(&mut conn, "id", id).await?;
            let root = load(&mut conn, seq).await?;
            Ok((root, entries::replies(&mut *conn, seq, limit).await?))
        })
    }

    fn entries_by_id<'a>(&'a self, seqs: &'a [i64]) -> Fut<'a, Vec<Option<Entry>>> {
        bounded(async move { entries::by_id(&mut *self.pool().acquire().await?, seqs).await })
    }

    fn pad_neighbours<'a>(&'a self, seqs: &'a [i64]) -> Fut<'a, Vec<[Option<i64>; 4]>> {
        bounded(
            async move { entries::pad_neighbours(&mut *self.pool().acquire().await?, seqs).await },
        )
    }

    fn inbox<'a>(&'a self, author: &'a str, peek: bool) -> Fut<'a, Inbox> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            let (inbox, moved) = inbox::inbox(&mut *conn, author, peek).await?;
            if let Some(q) = moved {
                q.build().execute(&mut *conn).await?;
            }
            Ok(inbox)
        })
    }
}
