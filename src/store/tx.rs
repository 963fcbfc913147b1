//! SQLite's statements for the write sequences (`storage::write`): one
//! write's transaction on the writer. The task and restore statements are
//! beside their concern (`tasks.rs`, `history.rs`).

use rusqlite::Connection;
use rusqlite::{params, OptionalExtension};

use super::entries::{insert_rows, load, resolve};
use super::journal::Journal;
use super::keep::{keep, Keeper};
use super::sqlite::read_entry;
use super::{Store, Writer};
use crate::error::{Error, Result};
use crate::model::Entry;
use crate::protocol::Action;
use crate::storage::once::{self, Key, KeyTx};
use crate::storage::query::returning_columns;
use crate::storage::write::WriteTx;
use crate::storage::NewEntry;

/// SQLite's statements for a write sequence (`storage::write`), on the
/// writer inside its transaction.
pub(super) struct SqliteTx<'a> {
    pub(super) conn: &'a mut Connection,
    journal: &'a Journal,
    keeper: &'a Keeper,
    /// The id a new entry takes: handed out under the journal's lock before
    /// the transaction (ids are commit order), taken by `insert`.
    new_id: Option<i64>,
    /// The new entry's pad's window (`Sqlite::windows`).
    window: Option<i64>,
}

impl Store {
    /// One write's transaction on the writer (`storage::write`).
    pub(super) fn tx<'a>(&'a self, w: &'a mut Writer) -> SqliteTx<'a> {
        SqliteTx {
            conn: &mut w.conn,
            journal: &self.journal,
            keeper: &self.keeper,
            new_id: None,
            window: None,
        }
    }

    /// `tx` for adding an entry with the id `seq`, to a pad with `window`.
    pub(super) fn adding_tx<'a>(
        &'a self,
        w: &'a mut Writer,
        seq: i64,
        window: Option<i64>,
    ) -> SqliteTx<'a> {
        SqliteTx {
            new_id: Some(seq),
            window,
            ..self.tx(w)
        }
    }
}

impl WriteTx for SqliteTx<'_> {
    type Conn = Connection;
    fn conn(&mut self) -> &mut Connection {
        self.conn
    }

    async fn resolve(&mut self, field: &'static str, id: &str) -> Result<(i64, String)> {
        resolve(self.conn, self.journal, field, id)
    }

    async fn load(&mut self, seq: i64) -> Result<Entry> {
        load(self.conn, seq)
    }

    async fn insert(&mut self, e: &NewEntry) -> Result<i64> {
        let seq = self.new_id.take().ok_or_else(|| {
            Error::Internal("an entry was inserted on SQLite without an id handed out".into())
        })?;
        insert_rows(self.conn, [(seq, e)])?;
        Ok(seq)
    }

    async fn pad_written(&mut self, pad: &str, _now: i64) -> Result<Option<(i64, i64)>> {
        // `insert` moved the pad's row with the entry's.
        let Some(max) = self.window else {
            return Ok(None);
        };
        let entries: i64 = self
            .conn
            .prepare_cached("SELECT entries FROM pads WHERE name = ?")?
            .query_row([pad], |r| r.get(0))?;
        Ok(Some((max, entries)))
    }

    async fn drop_window(&mut self, seqs: Vec<i64>, by: &str, now: i64) -> Result<Vec<Entry>> {
        let seqs = serde_json::to_string(&seqs).expect("json serializes");
        let cond = "seq IN (SELECT value FROM json_each(?5))";
        keep(
            self.conn,
            self.keeper,
            Action::Window,
            by,
            now,
            cond,
            &[&seqs],
        )?;
        Ok(self
            .conn
            .prepare_cached(&format!(
                "DELETE FROM entries WHERE seq IN (SELECT value FROM json_each(?)) RETURNING {}",
                returning_columns()
            ))?
            .query_map([&seqs], read_entry)?
            .collect::<rusqlite::Result<Vec<_>>>()?)
    }

    async fn keep_edited(&mut self, seq: i64, by: &str, now: i64) -> Result<()> {
        keep(
            self.conn,
            self.keeper,
            Action::Edit,
            by,
            now,
            "seq = ?5",
            &[&seq],
        )?;
        Ok(())
    }

    async fn delete_keeping(&mut self, seq: i64, by: &str, now: i64) -> Result<i64> {
        let change = keep(
            self.conn,
            self.keeper,
            Action::Delete,
            by,
            now,
            "seq = ?5",
            &[&seq],
        )?;
        self.conn
            .prepare_cached("DELETE FROM entries WHERE seq = ?")?
            .execute([seq])?;
        Ok(change)
    }
}

impl KeyTx for SqliteTx<'_> {
    async fn take_key(&mut self, key: &Key, now: i64) -> Result<Option<(String, String)>> {
        // The writer runs one transaction at a time: a row is either
        // committed with its entry id, or not there.
        let new = self.conn.prepare_cached(once::sql::TAKE)?.exists(params![
            key.caller,
            key.key,
            key.fingerprint,
            now,
            once::expired(now)
        ])?;
        if new {
            return Ok(None);
        }
        Ok(self
            .conn
            .prepare_cached(once::sql::FIRST)?
            .query_row(params![key.caller, key.key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    async fn keep_entry(&mut self, key: &Key, id: &str) -> Result<()> {
        self.conn
            .prepare_cached(once::sql::KEEP)?
            .execute(params![id, key.caller, key.key])?;
        Ok(())
    }
}
