//! PostgreSQL's statements for the write sequences (`storage::write`), in
//! one transaction. The task and restore statements are beside their
//! concern (`tasks.rs`, `history.rs`).

use sqlx::PgConnection;

use super::entries::{load_locked, resolve};
use super::keep::{keep, keep_deleting};
use super::{Arg, PgStore, NEXT_ID};
use crate::error::Result;
use crate::id;
use crate::model::{Category, Entry, Status};
use crate::protocol::Action;
use crate::storage::once::{self, Key, KeyTx};
use crate::storage::rules::stamp;
use crate::storage::write::WriteTx;
use crate::storage::NewEntry;

/// PostgreSQL's statements for a write sequence (`storage::write`), in
/// one transaction.
pub(super) struct PgTx<'a> {
    pub(super) conn: &'a mut PgConnection,
    /// Whether history is kept (`PgStore::keeping`).
    pub(super) keeping: bool,
}

impl PgStore {
    /// A write sequence's statements on the transaction `conn`.
    pub(super) fn tx<'a>(&self, conn: &'a mut PgConnection) -> PgTx<'a> {
        PgTx {
            conn,
            keeping: self.keeping(),
        }
    }
}

impl WriteTx for PgTx<'_> {
    type Conn = PgConnection;
    fn conn(&mut self) -> &mut PgConnection {
        self.conn
    }

    async fn resolve(&mut self, field: &'static str, id: &str) -> Result<(i64, String)> {
        resolve(self.conn, field, id).await
    }

    async fn load(&mut self, seq: i64) -> Result<Entry> {
        load_locked(self.conn, seq).await
    }

    async fn insert(&mut self, e: &NewEntry) -> Result<i64> {
        let stamped = stamp(None, e.status, e.now);
        let seq: i64 = sqlx::query_scalar(sql!(
            "INSERT INTO entries (seq, pad, author, kind, content, tags, status, assignee, resume, \
             category, confidence, depends_on, remind_at, pinned, meta, created_at, updated_at, \
             reply_to, choices, addressed_to, supersedes, claimed_at, finished_at) \
             VALUES ({NEXT_ID}, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $1, $1, $16, $17, $18, $19, $20, $21) \
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
        .bind(stamped.and_then(|s| s.claimed_at).flatten())
        .bind(stamped.and_then(|s| s.finished_at))
        .fetch_one(&mut *self.conn)
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
            .execute(&mut *self.conn)
            .await?;
        }
        Ok(seq)
    }

    /// The pad's row comes last in an add: every writer of the pad waits
    /// for its lock, which is then held only through the commit. Its
    /// window is read in the statement that moves it (a window set on
    /// another engine applies at once).
    async fn pad_written(&mut self, pad: &str, now: i64) -> Result<Option<(i64, i64)>> {
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
        .bind(pad)
        .bind(now)
        .fetch_one(&mut *self.conn)
        .await?;
        Ok(max_entries.map(|max| (max, entries)))
    }

    async fn drop_window(&mut self, seqs: Vec<i64>, by: &str, now: i64) -> Result<Vec<Entry>> {
        let which = ("seq = ANY($4)", Arg::Ints(seqs));
        let (_, dropped, _) = keep_deleting(
            self.conn,
            self.keeping,
            Action::Window,
            by,
            now,
            which,
            true,
        )
        .await?;
        Ok(dropped)
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

impl KeyTx for PgTx<'_> {
    async fn take_key(&mut self, key: &Key, now: i64) -> Result<Option<(String, String)>> {
        // A transaction that took the key and is still committing holds
        // its row: this insert waits for it (at most `lock_timeout`, then
        // `-32005`), and finds its row once it committed.
        let new = sqlx::query(once::sql::TAKE)
            .bind(&key.caller)
            .bind(&key.key)
            .bind(&key.fingerprint)
            .bind(now)
            .bind(once::expired(now))
            .fetch_optional(&mut *self.conn)
            .await?
            .is_some();
        if new {
            return Ok(None);
        }
        Ok(sqlx::query_as(once::sql::FIRST)
            .bind(&key.caller)
            .bind(&key.key)
            .fetch_optional(&mut *self.conn)
            .await?)
    }

    async fn keep_entry(&mut self, key: &Key, id: &str) -> Result<()> {
        sqlx::query(once::sql::KEEP)
            .bind(id)
            .bind(&key.caller)
            .bind(&key.key)
            .execute(&mut *self.conn)
            .await?;
        Ok(())
    }
}
