//! Entry reads and writes on PostgreSQL, and text search.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};

use super::history::{keep, keep_deleting};
use super::{read_entry, read_entry_seq, Arg, PgStore, Query, ENTRY_COLUMNS, NEXT_ID};
use crate::error::Result;
use crate::id;
use crate::model::{Category, Entry, Status};
use crate::protocol::Action;
use crate::storage::rules::{ambiguous, new_entry, no_entry, prefix_range, replied, window_drops};
use crate::storage::write::{self, WriteTx};
use crate::storage::Entries;
use crate::storage::Fut;
use crate::storage::Inbox;
use crate::storage::Visible;
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

/// PostgreSQL's statements for a write sequence (`storage::write`), in
/// one transaction.
struct PgTx<'a> {
    conn: &'a mut PgConnection,
    /// Whether history is kept (`PgStore::keeping`).
    keeping: bool,
}

impl WriteTx for PgTx<'_> {
    async fn resolve(&mut self, field: &'static str, id: &str) -> Result<(i64, String)> {
        resolve(self.conn, field, id).await
    }

    async fn load(&mut self, seq: i64) -> Result<Entry> {
        load_locked(self.conn, seq).await
    }

    async fn depends_on(&mut self, seq: i64) -> Result<Vec<String>> {
        let deps: Option<Vec<String>> =
            sqlx::query_scalar("SELECT depends_on FROM entries WHERE seq = $1")
                .bind(seq)
                .fetch_optional(&mut *self.conn)
                .await?;
        Ok(deps.unwrap_or_default())
    }

    async fn keep_edited(&mut self, seq: i64, by: &str, now: i64) -> Result<()> {
        let which = "seq = $4";
        keep(
            self.conn,
            self.keeping,
            Action::Edit,
            by,
            now,
            which,
            Arg::Int(seq),
        )
        .await?;
        Ok(())
    }

    async fn rewrite(
        &mut self,
        seq: i64,
        after: &Entry,
        remind: Option<Option<i64>>,
        now: i64,
    ) -> Result<()> {
        let meta = after
            .meta
            .as_ref()
            .map(|m| serde_json::to_string(m).expect("json serializes"));
        sqlx::query(
            "UPDATE entries SET content = $1, tags = $2, kind = $3, status = $4, assignee = $5, \
             resume = $6, category = $7, confidence = $8, pinned = $9, depends_on = $10, \
             remind_at = CASE WHEN $11 THEN $12 ELSE remind_at END, \
             reminded_at = CASE WHEN $11 THEN NULL ELSE reminded_at END, \
             meta = $13, updated_at = $14, version = version + 1, supersedes = $16 WHERE seq = $15",
        )
        .bind(&after.content)
        .bind(&after.tags)
        .bind(after.kind.as_str())
        .bind(after.status.map(Status::as_str))
        .bind(&after.assignee)
        .bind(&after.resume)
        .bind(after.category.map(Category::as_str))
        .bind(after.confidence)
        .bind(after.pinned)
        .bind(&after.depends_on)
        .bind(remind.is_some())
        .bind(remind.flatten())
        .bind(meta)
        .bind(now)
        .bind(seq)
        .bind(after.supersedes.as_deref().and_then(id::decode))
        .execute(&mut *self.conn)
        .await?;
        Ok(())
    }

    async fn delete_keeping(&mut self, seq: i64, by: &str, now: i64) -> Result<i64> {
        let which = ("seq = $4", Arg::Int(seq));
        let (change, _, _) = keep_deleting(
            self.conn,
            self.keeping,
            Action::Delete,
            by,
            now,
            which,
            false,
        )
        .await?;
        Ok(change.unwrap_or_default())
    }
}

impl Entries for PgStore {
    /// Inserts an entry, committed before it is acknowledged: its pad row
    /// (created on first write, restored if archived), its parent's reply
    /// count and answer, and its pad's rolling window, in one transaction.
    /// The pad's window is read in the same statement that moves its row (a
    /// window set on another engine applies at once).
    fn add(&self, mut e: NewEntry) -> Fut<'_, Added> {
        Box::pin(async move {
            let mut tx = self.pool().begin().await?;
            let mut depends = Vec::with_capacity(e.depends_on.len());
            for d in &e.depends_on {
                depends.push(resolve(&mut tx, "depends_on", d).await?.1);
            }
            e.depends_on = depends;
            let parent = match &e.reply_to {
                Some(p) => Some(resolve(&mut tx, "reply_to", p).await?),
                None => None,
            };
            e.reply_to = parent.as_ref().map(|p| p.1.clone());
            if let Some(older) = &e.supersedes {
                e.supersedes = Some(resolve(&mut tx, "supersedes", older).await?.1);
            }
            let seq: i64 = sqlx::query_scalar(sql!(
                "INSERT INTO entries (seq, pad, author, kind, content, tags, status, assignee, resume, \
                 category, confidence, depends_on, remind_at, pinned, meta, created_at, updated_at, \
                 reply_to, choices, addressed_to, supersedes) \
                 VALUES ({NEXT_ID}, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $1, $1, $16, $17, $18, $19) \
                 RETURNING seq"
            ))
            .bind(e.now)
            .bind(&e.pad)
            .bind(&e.author)
            .bind(e.kind.as_str())
            .bind(&e.content)
            .bind(&e.tags)
            .bind(e.status.map(Status::as_str))
            .bind(&e.assignee)
            .bind(&e.resume)
            .bind(e.category.map(Category::as_str))
            .bind(e.confidence)
            .bind(&e.depends_on)
            .bind(e.remind_at)
            .bind(e.pinned)
            .bind(&e.meta)
            .bind(e.reply_to.as_deref().and_then(id::decode))
            .bind((!e.choices.is_empty()).then_some(&e.choices))
            .bind((!e.to.is_empty()).then_some(&e.to))
            .bind(e.supersedes.as_deref().and_then(id::decode))
            .fetch_one(&mut *tx)
            .await?;
            for h in &e.handoffs {
                let root = h.root.as_deref().and_then(id::decode).unwrap_or(seq);
                sqlx::query(
                    "INSERT INTO deliveries (entry, agent, root, pad, updated_at) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                )
                .bind(seq)
                .bind(&h.agent)
                .bind(root)
                .bind(&e.pad)
                .bind(e.now)
                .execute(&mut *tx)
                .await?;
            }
            let parent = match parent {
                Some((parent, _)) => {
                    let before = load(&mut tx, parent).await?;
                    let after = replied(&before, seq, &e);
                    sqlx::query(
                        "UPDATE entries SET replies = replies + 1, answer = $2, tags = $3, version = $4, \
                         updated_at = greatest(updated_at, $5) WHERE seq = $1",
                    )
                    .bind(parent)
                    .bind(after.answer.as_deref().and_then(id::decode))
                    .bind(&after.tags)
                    .bind(after.version)
                    .bind(if after.version == before.version { 0 } else { e.now })
                    .execute(&mut *tx)
                    .await?;
                    Some((before, after))
                }
                None => None,
            };
            // The pad's row last: every writer of the pad waits for its lock,
            // which is then held only through the commit.
            let (max_entries, entries): (Option<i64>, i64) = sqlx::query_as(
                "INSERT INTO pads (name, ttl_seconds, created_at, last_write_at, entries) \
                 VALUES ($1, CASE WHEN $1 = 'inbox' THEN NULL ELSE \
                     (SELECT nullif(value, '')::bigint FROM settings WHERE key = 'default_ttl_seconds') END, \
                     $2, $2, 1) \
                 ON CONFLICT (name) DO UPDATE SET \
                     last_write_at = greatest(pads.last_write_at, excluded.last_write_at), \
                     entries = pads.entries + 1, archived_at = NULL \
                 RETURNING max_entries, entries",
            )
            .bind(&e.pad)
            .bind(e.now)
            .fetch_one(&mut *tx)
            .await?;
            let rolled = match max_entries {
                Some(max) if entries > max => {
                    // Past the window: the writer's oldest while it holds most
                    // of it, else the oldest (`window_drops`), kept in the
                    // trash first.
                    let own: Vec<i64> = sqlx::query_scalar(
                        "SELECT seq FROM entries WHERE pad = $1 AND NOT pinned \
                         AND NOT ('important' = ANY(tags)) AND author = $2 AND seq != $3 \
                         ORDER BY seq LIMIT $4",
                    )
                    .bind(&e.pad)
                    .bind(&e.author)
                    .bind(seq)
                    .bind(max)
                    .fetch_all(&mut *tx)
                    .await?;
                    let out = match window_drops(max, entries - max, &own) {
                        Some(out) => out,
                        None => {
                            sqlx::query_scalar(
                                "SELECT seq FROM entries WHERE pad = $1 AND NOT pinned \
                                 AND NOT ('important' = ANY(tags)) ORDER BY seq LIMIT $2",
                            )
                            .bind(&e.pad)
                            .bind(entries - max)
                            .fetch_all(&mut *tx)
                            .await?
                        }
                    };
                    if out.is_empty() {
                        Vec::new()
                    } else {
                        let which = ("seq = ANY($4)", Arg::Ints(out));
                        keep_deleting(
                            &mut tx,
                            self.keeping(),
                            Action::Window,
                            &e.author,
                            e.now,
                            which,
                            true,
                        )
                        .await?
                        .1
                    }
                }
                _ => Vec::new(),
            };
            tx.commit().await?;
            self.loaded.added(1);
            Ok(Added {
                entry: new_entry(seq, e),
                rolled,
                parent,
            })
        })
    }

    /// One entry by id or unique id prefix (archived pads included: an id is explicit).
    fn get<'a>(&'a self, id: &'a str) -> Fut<'a, Entry> {
        Box::pin(async move {
            let mut conn = self.pool().acquire().await?;
            let (seq, _) = resolve(&mut conn, "id", id).await?;
            load(&mut conn, seq).await
        })
    }

    /// Up to two entries whose id starts with `id` in pads `visible`
    /// accepts (`Store::visible_matches`).
    fn visible_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(String, String)>> {
        Box::pin(async move {
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
        Box::pin(async move {
            let mut tx = self.pool().begin().await?;
            let mut on = PgTx {
                conn: &mut tx,
                keeping: self.keeping(),
            };
            let out = write::update(&mut on, id, patch, if_version, now, by).await?;
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
        Box::pin(async move {
            let mut tx = self.pool().begin().await?;
            let mut on = PgTx {
                conn: &mut tx,
                keeping: self.keeping(),
            };
            let out = write::delete(&mut on, id, if_version, now, by).await?;
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
        Box::pin(async move {
            let mut q = Query::new(format!(
                "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad WHERE true"
            ));
            q.filter(filter);
            if let Some(c) = cursor {
                q.push(" AND e.seq < $?", Arg::Int(c));
            }
            q.push(" ORDER BY e.seq DESC LIMIT $?", Arg::Int(limit as i64 + 1));
            let rows = q.build().fetch_all(self.pool()).await?;
            let mut rows = rows
                .iter()
                .map(read_entry_seq)
                .collect::<Result<Vec<_>>>()?;
            let next_cursor = if rows.len() > limit as usize {
                rows.truncate(limit as usize);
                rows.last().map(|r| r.0.to_string())
            } else {
                None
            };
            Ok(Page {
                entries: rows.into_iter().map(|r| r.1).collect(),
                next_cursor,
            })
        })
    }

    /// An entry and every reply under it, at any depth, oldest first.
    fn thread<'a>(&'a self, id: &'a str, limit: usize) -> Fut<'a, (Entry, Vec<Entry>)> {
        Box::pin(async move {
            let mut conn = self.pool().acquire().await?;
            let (seq, _) = resolve(&mut conn, "id", id).await?;
            let root = load(&mut conn, seq).await?;
            let rows = sqlx::query(sql!(
                "WITH RECURSIVE thread(seq) AS ( \
                   SELECT seq FROM entries WHERE reply_to = $1 \
                   UNION SELECT r.seq FROM entries r JOIN thread t ON r.reply_to = t.seq) \
                 SELECT {ENTRY_COLUMNS} FROM thread JOIN entries e ON e.seq = thread.seq \
                 ORDER BY e.seq LIMIT $2"
            ))
            .bind(seq)
            .bind(limit as i64)
            .fetch_all(&mut *conn)
            .await?;
            let replies = rows.iter().map(read_entry).collect::<Result<_>>()?;
            Ok((root, replies))
        })
    }

    /// Entries by seq, in that order; `None` for one gone meanwhile.
    fn entries_by_id<'a>(&'a self, seqs: &'a [i64]) -> Fut<'a, Vec<Option<Entry>>> {
        Box::pin(async move {
            let rows = sqlx::query(sql!(
                "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = ANY($1)"
            ))
            .bind(seqs)
            .fetch_all(self.pool())
            .await?;
            let mut found: std::collections::HashMap<i64, Entry> =
                rows.iter().map(read_entry_seq).collect::<Result<_>>()?;
            Ok(seqs.iter().map(|s| found.remove(s)).collect())
        })
    }

    /// For each seq, the live entries just before and after it in its pad,
    /// then the ones two away.
    fn pad_neighbours<'a>(&'a self, seqs: &'a [i64]) -> Fut<'a, Vec<[Option<i64>; 4]>> {
        Box::pin(async move {
            type Row = (i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>);
            let rows: Vec<Row> = sqlx::query_as(sql!(
                "SELECT e.seq, {} FROM entries e WHERE e.seq = ANY($1)",
                crate::storage::rules::PAD_NEIGHBOURS
            ))
            .bind(seqs)
            .fetch_all(self.pool())
            .await?;
            let found: std::collections::HashMap<i64, [Option<i64>; 4]> = rows
                .into_iter()
                .map(|(s, a, b, c, d)| (s, [a, b, c, d]))
                .collect();
            Ok(seqs
                .iter()
                .map(|s| found.get(s).copied().unwrap_or([None; 4]))
                .collect())
        })
    }

    /// What is new for an author (`Store::inbox`).
    fn inbox<'a>(&'a self, author: &'a str, peek: bool) -> Fut<'a, Inbox> {
        Box::pin(async move {
            let pool = self.pool();
            let newest: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM entries")
                .fetch_one(pool)
                .await?;
            let cursors: Option<(i64, i64)> =
                sqlx::query_as("SELECT seq, reminded FROM inbox_cursors WHERE author = $1")
                    .bind(author)
                    .fetch_optional(pool)
                    .await?;
            // No cursor yet: just before the author's first entry (`Store::inbox`).
            let cursor = match cursors {
                Some(c) => Some(c.0),
                None => {
                    sqlx::query_scalar::<_, Option<i64>>(
                        "SELECT min(seq) - 1 FROM entries WHERE author = $1",
                    )
                    .bind(author)
                    .fetch_one(pool)
                    .await?
                }
            };
            let reminded_cursor = cursors.map_or(0, |c| c.1);
            let rows = sqlx::query(sql!(
                "SELECT {ENTRY_COLUMNS}, e.reminded_at FROM entries e JOIN pads p ON p.name = e.pad \
                 WHERE e.author = $1 AND e.reminded_at > $2 AND p.archived_at IS NULL \
                 ORDER BY e.reminded_at, e.seq"
            ))
            .bind(author)
            .bind(reminded_cursor)
            .fetch_all(pool)
            .await?;
            let mut reminded = reminded_cursor;
            let mut inbox = Inbox {
                needs_eyes: Vec::new(),
                replies: Vec::new(),
                addressed: Vec::new(),
                reminders: Vec::with_capacity(rows.len()),
            };
            for r in &rows {
                reminded = reminded.max(r.try_get::<i64, _>("reminded_at")?);
                inbox.reminders.push(read_entry(r)?);
            }
            let rows = sqlx::query(sql!(
                "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad \
                 WHERE e.addressed_to IS NOT NULL AND e.seq > $1 AND e.seq <= $2 \
                   AND e.author <> $3 AND $3 = ANY(e.addressed_to) AND p.archived_at IS NULL \
                 ORDER BY e.seq"
            ))
            .bind(cursor.unwrap_or(0))
            .bind(newest)
            .bind(author)
            .fetch_all(pool)
            .await?;
            inbox.addressed = rows.iter().map(read_entry).collect::<Result<_>>()?;
            if let Some(cursor) = cursor {
                let rows = sqlx::query(sql!(
                    "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad \
                     WHERE 'needs_eyes' = ANY(e.tags) AND e.seq > $1 AND e.seq <= $2 \
                       AND e.author <> $3 AND p.archived_at IS NULL ORDER BY e.seq"
                ))
                .bind(cursor)
                .bind(newest)
                .bind(author)
                .fetch_all(pool)
                .await?;
                inbox.needs_eyes = rows.iter().map(read_entry).collect::<Result<_>>()?;
                let rows = sqlx::query(sql!(
                    "SELECT {ENTRY_COLUMNS} FROM entries e JOIN entries parent ON parent.seq = e.reply_to \
                     JOIN pads p ON p.name = e.pad \
                     WHERE e.seq > $1 AND e.seq <= $2 AND e.reply_to IS NOT NULL \
                       AND e.author <> $3 AND parent.author = $3 AND p.archived_at IS NULL \
                     ORDER BY e.seq"
                ))
                .bind(cursor)
                .bind(newest)
                .bind(author)
                .fetch_all(pool)
                .await?;
                inbox.replies = rows.iter().map(read_entry).collect::<Result<_>>()?;
            }
            if !peek && (cursors.map(|c| c.0) != Some(newest) || reminded != reminded_cursor) {
                sqlx::query(
                    "INSERT INTO inbox_cursors (author, seq, reminded) VALUES ($1, $2, $3) \
                     ON CONFLICT (author) DO UPDATE SET seq = greatest(inbox_cursors.seq, excluded.seq), \
                       reminded = greatest(inbox_cursors.reminded, excluded.reminded)",
                )
                .bind(author)
                .bind(newest)
                .bind(reminded)
                .execute(pool)
                .await?;
            }
            Ok(inbox)
        })
    }
}
