//! Pads, tags, tokens, the inbox, tasks and reminders on PostgreSQL.

use sqlx::Row;

use super::history::keep_deleting;
use super::tx::PgTx;
use super::{
    bounded, read_entry, read_entry_seq, read_pad, upkeep, Arg, PgStore, Query, ENTRY_COLUMNS,
    PAD_COLUMNS,
};
use crate::error::{Error, Result};
use crate::model::{Entry, Kind, Pad, Status};
use crate::protocol::Action;
use crate::storage::once::{self, Key, Once};
use crate::storage::rules::no_pad;
use crate::storage::write::{self, Ended, TaskTx};
use crate::storage::PadEntries;
use crate::storage::{EntryFilter, Finish, PadSweep, ReportRow, TokenRow, DEFAULT_LEASE_MS};
use crate::storage::{Fut, PlanRow};
use crate::storage::{Pads, Tasks, Tokens, Upkeep};
use std::collections::BTreeMap;

impl PgStore {
    pub async fn pad(&self, name: &str) -> Result<Option<Pad>> {
        let row = sqlx::query(sql!("SELECT {PAD_COLUMNS} FROM pads WHERE name = $1"))
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(read_pad).transpose()
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

    /// Tells every engine to reload its grants (`relay.rs`) once the
    /// change on `conn` commits.
    async fn tokens_changed(conn: &mut sqlx::PgConnection) -> Result<()> {
        sqlx::query("SELECT pg_notify('pad_tokens', '')")
            .execute(conn)
            .await?;
        Ok(())
    }

    pub async fn next_reminder(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT min(remind_at) FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL",
        )
        .fetch_one(self.pool())
        .await?)
    }

    /// Marks due reminders delivered in the statement that takes them: each
    /// is handed out by one engine only.
    pub async fn take_due_reminders(&self, now: i64) -> Result<Vec<Entry>> {
        let rows = sqlx::query(sql!(
            "UPDATE entries e SET reminded_at = $1 WHERE seq IN ( \
               SELECT seq FROM entries WHERE remind_at IS NOT NULL AND reminded_at IS NULL \
               AND remind_at <= $1 FOR UPDATE SKIP LOCKED) \
             RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        let mut due = rows.iter().map(read_entry).collect::<Result<Vec<_>>>()?;
        due.sort_by(|a, b| a.remind_at.cmp(&b.remind_at).then(a.id.cmp(&b.id)));
        Ok(due)
    }
}

/// The dependencies in `depends_on` not met yet: tasks not done, and
/// entries with a status other than done. Deleted ones count as met.
async fn unmet(conn: &mut sqlx::PgConnection, depends_on: &[String]) -> Result<Vec<String>> {
    if depends_on.is_empty() {
        return Ok(Vec::new());
    }
    let seqs: Vec<i64> = depends_on
        .iter()
        .filter_map(|d| {
            crate::id::prefix_range(d)
                .filter(|(lo, hi)| lo == hi)
                .map(|r| r.0)
        })
        .collect();
    let waiting: Vec<i64> = sqlx::query_scalar(
        "SELECT seq FROM entries WHERE seq = ANY($1) \
         AND (status IS DISTINCT FROM 'done') AND (kind = 'task' OR status IS NOT NULL)",
    )
    .bind(&seqs)
    .fetch_all(&mut *conn)
    .await?;
    Ok(depends_on
        .iter()
        .filter(|d| {
            crate::id::prefix_range(d)
                .filter(|(lo, hi)| lo == hi)
                .is_some_and(|(s, _)| waiting.contains(&s))
        })
        .cloned()
        .collect())
}

/// PostgreSQL's statements moving a task along (`storage::write`).
impl TaskTx for PgTx<'_> {
    async fn claimable(&mut self, pad: &str, now: i64) -> Result<Vec<(i64, Vec<String>)>> {
        Ok(sqlx::query_as(
            "SELECT seq, depends_on FROM entries WHERE pad = $1 AND kind = 'task' \
             AND (status = 'todo' OR (status = 'doing' AND lease_until <= $2)) ORDER BY seq",
        )
        .bind(pad)
        .bind(now)
        .fetch_all(&mut *self.conn)
        .await?)
    }

    /// The row is locked only if no one holds it, and read again as it is
    /// now: a task another claimant took since `claimable` read it is no
    /// longer `todo`.
    async fn hold_claimable(&mut self, seq: i64, now: i64) -> Result<bool> {
        Ok(sqlx::query(
            "SELECT 1 FROM entries WHERE seq = $1 \
             AND (status = 'todo' OR (status = 'doing' AND lease_until <= $2)) \
             FOR UPDATE SKIP LOCKED",
        )
        .bind(seq)
        .bind(now)
        .fetch_optional(&mut *self.conn)
        .await?
        .is_some())
    }

    async fn unmet(&mut self, depends_on: &[String]) -> Result<Vec<String>> {
        unmet(self.conn, depends_on).await
    }

    async fn take(&mut self, seq: i64, agent: &str, lease_ms: i64, now: i64) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET status = 'doing', assignee = $2, lease_until = $4 + $3, \
             lease_ms = $3, claimed_at = $4, finished_at = NULL, attempts = attempts + 1, \
             updated_at = $4, version = version + 1 WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(agent)
        .bind(lease_ms)
        .bind(now)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }

    async fn extend_lease(
        &mut self,
        seq: i64,
        lease_ms: Option<i64>,
        resume: Option<String>,
        now: i64,
    ) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET lease_ms = coalesce($2, lease_ms, $5), \
             lease_until = $4 + coalesce($2, lease_ms, $5), resume = coalesce($3, resume), \
             updated_at = $4, version = version + 1 WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(lease_ms)
        .bind(resume)
        .bind(now)
        .bind(DEFAULT_LEASE_MS)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }

    async fn end_attempt(&mut self, seq: i64, end: Ended<'_>, now: i64) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET status = $2, error = CASE WHEN $3 THEN $4 ELSE error END, \
             resume = coalesce($5, resume), lease_until = NULL, finished_at = $6, \
             assignee = coalesce(assignee, $7), updated_at = $6, version = version + 1 \
             WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(end.status.as_str())
        .bind(end.error.is_some())
        .bind(end.error)
        .bind(end.resume)
        .bind(now)
        .bind(end.agent)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }

    async fn expired(&mut self, now: i64) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT seq FROM entries WHERE status = 'doing' AND lease_until <= $1 \
             ORDER BY seq FOR UPDATE SKIP LOCKED",
        )
        .bind(now)
        .fetch_all(&mut *self.conn)
        .await?)
    }

    async fn requeue(&mut self, seq: i64, now: i64) -> Result<Entry> {
        let row = sqlx::query(sql!(
            "UPDATE entries e SET status = 'todo', lease_until = NULL, updated_at = $2, \
             version = version + 1 WHERE seq = $1 RETURNING {ENTRY_COLUMNS}"
        ))
        .bind(seq)
        .bind(now)
        .fetch_one(&mut *self.conn)
        .await?;
        read_entry(&row)
    }
}

impl Pads for PgStore {
    fn pads(&self, include_archived: bool) -> Fut<'_, Vec<Pad>> {
        bounded(async move {
            let sql = format!(
                "SELECT {PAD_COLUMNS} FROM pads {} ORDER BY last_write_at DESC, name",
                if include_archived {
                    ""
                } else {
                    "WHERE archived_at IS NULL"
                }
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .fetch_all(self.pool())
                .await?;
            rows.iter().map(read_pad).collect()
        })
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
        bounded(async move {
            let row = sqlx::query(sql!(
                "UPDATE pads SET last_write_at = $2, archived_at = NULL WHERE name = $1 RETURNING {PAD_COLUMNS}"
            ))
            .bind(name)
            .bind(now)
            .fetch_optional(self.pool())
            .await?;
            match row {
                Some(r) => read_pad(&r),
                None => Err(no_pad(name)),
            }
        })
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
        bounded(async move {
            let mut q = Query::new(
                "SELECT t.tag, count(*) AS n FROM entries e JOIN pads p ON p.name = e.pad \
                 CROSS JOIN LATERAL unnest(e.tags) AS t(tag) WHERE true",
            );
            q.filter(filter);
            q.raw(" GROUP BY t.tag ORDER BY n DESC, t.tag");
            let rows = q.build().fetch_all(self.pool()).await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect()
        })
    }
}

impl Tasks for PgStore {
    /// `storage::write::claim`. Only the task taken is locked, and a row
    /// another claimant holds is passed over (`SKIP LOCKED`): claimants on
    /// every engine proceed at once, never take the same task, and find
    /// one while any is ready.
    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
        key: Option<&'a Key>,
    ) -> Fut<'a, Once<Option<(Entry, Entry)>>> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let w = &mut self.tx(&mut tx);
            if let Some(first) = once::taken(w, key, now).await? {
                return Ok(Once::Again(first));
            }
            let Some(claimed) = write::claim(w, pad, agent, lease_ms, now).await? else {
                // Rolled back (dropped): an idle poll keeps no key's row.
                return Ok(Once::Wrote(None));
            };
            once::keep(w, key, &claimed.1.id).await?;
            tx.commit().await?;
            let claimed = Some(claimed);
            Ok(Once::Wrote(claimed))
        })
    }

    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out =
                write::heartbeat(&mut self.tx(&mut tx), id, agent, resume, lease_ms, now).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::finish(&mut self.tx(&mut tx), id, agent, how, now).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    /// `storage::write::release_expired`, each task once across engines
    /// (rows another engine is releasing are skipped).
    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let out = write::release_expired(&mut self.tx(&mut tx), now).await?;
            tx.commit().await?;
            Ok(out)
        })
    }

    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        bounded(async move {
            match self.next_reminder().await? {
                Some(at) if at <= now => self.take_due_reminders(now).await,
                _ => Ok(Vec::new()),
            }
        })
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<PlanRow>> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            let rows = sqlx::query(sql!(
                "SELECT {ENTRY_COLUMNS}, e.claimed_at, e.finished_at FROM entries e \
                 WHERE e.pad = $1 AND e.kind IN ('task', 'plan') ORDER BY e.seq"
            ))
            .bind(pad)
            .fetch_all(&mut *conn)
            .await?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                let entry = read_entry(r)?;
                let deps: Vec<String> = entry.depends_on.iter().map(|r| r.to_string()).collect();
                let waiting = unmet(&mut conn, &deps).await?;
                out.push(PlanRow {
                    entry,
                    waiting,
                    claimed_at: r.try_get("claimed_at")?,
                    finished_at: r.try_get("finished_at")?,
                });
            }
            Ok(out)
        })
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        upkeep(async move {
            let mut q = Query::new(
                "SELECT e.seq, e.pad, e.author, e.kind, \
                 CASE WHEN e.kind = 'task' THEN substr(e.content, 1, 300) ELSE '' END, \
                 e.status, e.assignee, e.attempts, \
                 CASE WHEN e.kind = 'task' THEN e.error END, e.claimed_at, e.finished_at, \
                 CASE WHEN e.meta IS NOT NULL AND e.meta::jsonb ? 'tokens' THEN (e.meta::jsonb -> 'tokens')::text END \
                 FROM entries e JOIN pads p ON p.name = e.pad WHERE true",
            );
            q.filter(filter);
            q.raw(" ORDER BY e.seq");
            let rows = q.build().fetch_all(self.pool()).await?;
            rows.iter()
                .map(|r| {
                    let kind: String = r.try_get(3)?;
                    let status: Option<String> = r.try_get(5)?;
                    let tokens = r
                        .try_get::<Option<String>, _>(11)?
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                        .filter(|v| v.is_number() || v.is_object());
                    Ok(ReportRow {
                        id: crate::id::encode(r.try_get(0)?),
                        pad: r.try_get(1)?,
                        author: r.try_get(2)?,
                        kind: Kind::parse(&kind).unwrap_or_default(),
                        content: r.try_get(4)?,
                        status: status.as_deref().and_then(Status::parse),
                        assignee: r.try_get(6)?,
                        attempts: r.try_get(7)?,
                        error: r.try_get(8)?,
                        claimed_at: r.try_get(9)?,
                        finished_at: r.try_get(10)?,
                        tokens,
                    })
                })
                .collect()
        })
    }
}

impl Tokens for PgStore {
    fn add_token<'a>(&'a self, t: &'a TokenRow) -> Fut<'a, ()> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let added = sqlx::query(
                "INSERT INTO tokens (name, hash, pads, read_only, created_at, agents, others) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(&t.name)
            .bind(&t.hash)
            .bind(serde_json::to_string(&t.pads).expect("strings serialize"))
            .bind(t.read_only)
            .bind(t.created_at)
            .bind(serde_json::to_string(&t.agents).expect("strings serialize"))
            .bind(t.others)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if added == 0 {
                return Err(Error::Conflict {
                    message: format!(
                        "a token named '{}' exists; revoke it first (token.revoke) or pick another name.",
                        t.name
                    ),
                    expected: None,
                    actual: None,
                });
            }
            PgStore::tokens_changed(&mut tx).await?;
            tx.commit().await
        })
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        bounded(async move {
            let rows = sqlx::query(
                "SELECT name, hash, pads, read_only, created_at, agents, others FROM tokens ORDER BY name",
            )
            .fetch_all(self.pool())
            .await?;
            rows.iter()
                .map(|r| {
                    let pads: String = r.try_get(2)?;
                    Ok(TokenRow {
                        name: r.try_get(0)?,
                        hash: r.try_get(1)?,
                        pads: serde_json::from_str(&pads).unwrap_or_default(),
                        read_only: r.try_get(3)?,
                        created_at: r.try_get(4)?,
                        agents: serde_json::from_str(&r.try_get::<String, _>(5)?)
                            .unwrap_or_default(),
                        others: r.try_get(6)?,
                    })
                })
                .collect()
        })
    }

    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let gone = sqlx::query("DELETE FROM tokens WHERE name = $1")
                .bind(name)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                > 0;
            if gone {
                PgStore::tokens_changed(&mut tx).await?;
            }
            tx.commit().await?;
            Ok(gone)
        })
    }
}

impl Upkeep for PgStore {
    /// Archives idle pads and purges old archives, once across engines: the
    /// statements take the rows they change, so a second engine sweeping at
    /// the same moment finds nothing left to do.
    fn sweep(&self, now: i64, retention_ms: i64) -> Fut<'_, PadSweep> {
        upkeep(async move {
            let mut tx = self.begin_write().await?;
            let archived: Vec<String> = sqlx::query_scalar(
                "UPDATE pads SET archived_at = $1 WHERE archived_at IS NULL \
                 AND ttl_seconds IS NOT NULL AND last_write_at + ttl_seconds * 1000 <= $1 \
                 RETURNING name",
            )
            .bind(now)
            .fetch_all(&mut *tx)
            .await?;
            let cutoff = now - retention_ms;
            let expired = "NOT pinned AND pad IN \
                 (SELECT name FROM pads WHERE archived_at IS NOT NULL AND archived_at <= $4)";
            let which = (expired, Arg::Int(cutoff));
            let (_, _, purged) = keep_deleting(
                &mut tx,
                self.keeping(),
                Action::Expire,
                "engine",
                now,
                which,
                false,
            )
            .await?;
            let purged_entries = purged.values().sum();
            let purged_pads = sqlx::query(
                "DELETE FROM pads WHERE archived_at IS NOT NULL AND archived_at <= $1 AND entries = 0",
            )
            .bind(cutoff)
            .execute(&mut *tx)
            .await?
            .rows_affected() as usize;
            sqlx::query("DELETE FROM deliveries WHERE NOT taken AND updated_at < $1")
                .bind(now - crate::storage::rules::UNCLAIMED_DELIVERY_MS)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM idempotency WHERE created_at < $1")
                .bind(crate::storage::once::expired(now))
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(PadSweep {
                archived,
                purged_entries,
                purged_pads,
            })
        })
    }

    fn index_text(&self) -> Fut<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    fn write_epoch(&self) -> Option<u64> {
        None
    }

    fn checkpoint(&self) -> Fut<'_, ()> {
        Box::pin(PgStore::analyze_if_loaded(self))
    }

    fn close(&self) -> Fut<'_, ()> {
        bounded(async move {
            self.pool().close().await;
            Ok(())
        })
    }

    fn scans_block(&self) -> bool {
        false
    }
}
