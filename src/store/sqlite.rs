//! The SQLite store under the store contract (`storage::Storage`): the
//! handle the engine holds, where an operation runs, and SQLite's side of
//! what is written once above the stores — its sequences run to completion
//! (`ready`), its statements bound and run (`Select`, `Execute`) and its
//! rows read (`Columns`); `pg.rs` is the same for PostgreSQL.
//!
//! The store itself is synchronous. Each operation (implemented beside its
//! statements: `impl Entries for Sqlite` in `entries.rs`, …) chooses where
//! it runs: point operations inline (a thread hop would cost more than the
//! work), scans and upkeep on a blocking thread (`Sqlite::blocking`) so they
//! never stall the connections sharing the runtime — or, on the handle
//! `Scans::on_one_thread` gives a scan run on a blocking thread of its own,
//! on that thread. The engine takes a
//! scan's turn before calling; this only decides the thread. The
//! deliveries' operations are here too: each is a sequence written once
//! (`storage::deliveries`), and all SQLite adds is where it runs.

use std::collections::HashMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{params_from_iter, Connection, Row};

use super::{in_transaction, Store};
use crate::error::{Error, Result};
use crate::model::{Entry, Pad};
use crate::storage::query::{self as rows, Arg, Columns, Dialect, Execute, Query, Select};
use crate::storage::{deliveries, Deliveries, DeliveryRow, Fut, Scans, Storage};

pub struct Sqlite {
    pub(super) store: Arc<Store>,
    /// Pads with a rolling window (`max_entries`): the only pads whose
    /// writes need a second statement, so an add checks this map, not the
    /// database. Only this engine writes these files, so it stays true.
    /// Shared with the handle `Scans::on_one_thread` gives.
    pub(super) windows: Arc<Mutex<HashMap<String, i64>>>,
    /// Where a scan's work runs (`blocking`).
    scans: ScanThread,
}

/// Where `Sqlite::blocking` runs a scan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScanThread {
    /// On one of the runtime's blocking threads, so it never stalls the
    /// connections sharing the runtime: the engine's handle.
    Spare,
    /// On the calling thread, itself a blocking thread running a whole
    /// scan (`Scans::on_one_thread`).
    Caller,
}

impl Sqlite {
    /// The contract's side of an opened store: starts applying its journal.
    pub fn new(store: Store) -> Result<Sqlite> {
        let store = Arc::new(store);
        // Detached: the thread ends with the store.
        store.start_applier();
        let windows = store.windows()?.into_iter().collect();
        Ok(Sqlite {
            store,
            windows: Arc::new(Mutex::new(windows)),
            scans: ScanThread::Spare,
        })
    }

    /// The store's files, for tests and benchmarks that look at them.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(super) fn window(&self, pad: &str) -> Option<i64> {
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.is_empty() {
            None
        } else {
            windows.get(pad).copied()
        }
    }

    /// Runs `f` when the future is polled, on the polling thread.
    pub(super) fn inline<'a, T: Send + 'a>(
        &'a self,
        f: impl FnOnce(&Store) -> Result<T> + Send + 'a,
    ) -> Fut<'a, T> {
        Box::pin(async move { f(&self.store) })
    }

    /// Runs `f` on a blocking thread: the caller's, on the handle
    /// `Scans::on_one_thread` gives, else one of the runtime's.
    pub(super) fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T> + Send + 'static,
    ) -> Fut<'static, T> {
        let store = self.store.clone();
        if self.scans == ScanThread::Caller {
            return Box::pin(async move { f(&store) });
        }
        Box::pin(async move {
            tokio::task::spawn_blocking(move || f(&store))
                .await
                .map_err(|e| Error::Internal(format!("background task failed: {e}")))?
        })
    }
}

/// SQLite's statements are synchronous: a scan blocks its thread, so a
/// whole scan runs on one, each operation there.
impl Scans for Sqlite {
    fn on_one_thread(&self) -> Option<Arc<dyn Storage>> {
        Some(Arc::new(Sqlite {
            store: self.store.clone(),
            windows: self.windows.clone(),
            scans: ScanThread::Caller,
        }))
    }
}

/// A sequence written once above the stores (`storage::write`,
/// `storage::inbox`) run on SQLite's synchronous statements: its futures
/// never wait, so it is done when first polled.
pub(super) fn ready<T>(sequence: impl Future<Output = Result<T>>) -> Result<T> {
    sequence.now_or_never().unwrap_or_else(|| {
        Err(Error::Internal(
            "a sequence on SQLite waited on something; its statements never wait".into(),
        ))
    })
}

// SQLite's side of the statements and the row reader written above the
// stores (`storage::query`): values as rusqlite binds them, a connection
// running a statement, the typed reads of a row, and the readers typed for
// rusqlite's callbacks.

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        /// SQLite keeps a list as JSON text.
        fn json<T: serde::Serialize>(v: &T) -> rusqlite::Result<ToSqlOutput<'static>> {
            serde_json::to_string(v)
                .map(|t| ToSqlOutput::Owned(Value::Text(t)))
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
        }
        Ok(match self {
            Arg::Null | Arg::NullText | Arg::NullReal => ToSqlOutput::Owned(Value::Null),
            Arg::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Arg::Int(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            Arg::Real(f) => ToSqlOutput::Owned(Value::Real(*f)),
            Arg::Bool(b) => ToSqlOutput::Owned(Value::Integer(i64::from(*b))),
            Arg::Texts(v) => return json(v),
            Arg::Ints(v) => return json(v),
            Arg::Reals(v) => return json(v),
        })
    }
}

/// A statement built at run time for SQLite.
pub(crate) fn query(sql: impl Into<String>) -> Query {
    Query::new(Dialect::Sqlite, sql)
}

/// Appends what `build` writes (`storage::query`: a filter, a token's
/// pads) to SQLite text whose own values, `?` each, are `args`.
pub(crate) fn append(
    sql: &mut String,
    args: &mut Vec<Arg>,
    build: impl FnOnce(&mut Query) -> &mut Query,
) {
    let mut q = query(std::mem::take(sql));
    build(&mut q);
    let (text, more) = q.into_parts();
    *sql = text;
    args.extend(more);
}

impl Select for Connection {
    const DIALECT: Dialect = Dialect::Sqlite;
    type Row<'r> = Row<'r>;
    type Error = rusqlite::Error;

    /// Reads rows as SQLite steps to them: a scan that breaks early reads
    /// no further.
    async fn scan(
        &mut self,
        q: &Query,
        mut read: impl FnMut(&Row<'_>) -> rusqlite::Result<ControlFlow<()>>,
    ) -> Result<()> {
        let mut stmt = self.prepare_cached(&q.sql)?;
        let mut rows = stmt.query(params_from_iter(q.args()))?;
        while let Some(row) = rows.next()? {
            if read(row)?.is_break() {
                break;
            }
        }
        Ok(())
    }
}

impl Execute for Connection {
    async fn execute(&mut self, q: &Query) -> Result<u64> {
        let n = self
            .prepare_cached(&q.sql)?
            .execute(params_from_iter(q.args()))?;
        Ok(n as u64)
    }
}

impl Columns for Row<'_> {
    type Error = rusqlite::Error;
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn opt_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.get(i)
    }
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn opt_real(&self, i: usize) -> rusqlite::Result<Option<f64>> {
        self.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.get(i)
    }
    /// SQLite keeps a list as JSON text; one that does not parse reads as
    /// empty.
    fn texts(&self, i: usize) -> rusqlite::Result<Vec<String>> {
        Ok(self
            .get::<_, Option<String>>(i)?
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default())
    }
}

/// `storage::query::read_entry` typed for rusqlite's callbacks.
pub fn read_entry(row: &Row<'_>) -> rusqlite::Result<Entry> {
    rows::read_entry(row)
}

/// `storage::query::read_pad` typed for rusqlite's callbacks.
pub fn read_pad(row: &Row<'_>) -> rusqlite::Result<Pad> {
    rows::read_pad(row)
}

/// Deliveries to A2A agents: the sequences written once
/// (`storage::deliveries`), on the writer and a reader; rows are written
/// with their entry, in `entries::insert_rows`.
impl Deliveries for Sqlite {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| ready(deliveries::waiting(&mut *s.reader()?, agents)))
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        self.inline(|s| ready(deliveries::conversations(&mut *s.reader()?)))
    }

    fn save_conversation<'a>(
        &'a self,
        c: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        self.inline(move |s| {
            in_transaction(&mut s.writer(), |w| {
                ready(deliveries::save(&mut w.conn, c, taken, now))
            })
        })
    }

    fn drop_delivery<'a>(&'a self, d: &'a DeliveryRow) -> Fut<'a, ()> {
        self.inline(move |s| ready(deliveries::drop_one(&mut s.writer().conn, d)))
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        self.inline(move |s| {
            in_transaction(&mut s.writer(), |w| {
                ready(deliveries::drop_agent(&mut w.conn, agent))
            })
        })
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| ready(deliveries::of(&mut *s.reader()?, pad, entry)))
    }
}

#[cfg(test)]
mod tests {
    use crate::storage::deliveries::{self as stmt, KEEP_FINISHED};
    use crate::storage::query::Dialect;
    use crate::store::{Durability, Store};

    /// SQLite runs the shared statements on the deliveries' indexes: a
    /// bare flag (`NOT live`, `NOT taken`) is read as no equality, and
    /// the planner scanned the table for it.
    #[test]
    fn the_shared_statements_use_sqlites_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal, None, 8192, 0, true).unwrap();
        let conn = store.reader().unwrap();
        let plan = |sql: &str, bound: &dyn rusqlite::ToSql| -> String {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let steps: Vec<String> = stmt
                .query_map([bound], |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            steps.join("; ")
        };
        for sql in [stmt::CONVERSATIONS, stmt::TRIM_FINISHED] {
            let p = plan(sql, &KEEP_FINISHED);
            assert!(
                p.contains("USING INDEX deliveries_conversations (live=?)"),
                "{sql}: {p}"
            );
        }
        let waiting = stmt::drop_waiting(Dialect::Sqlite);
        let p = plan(&waiting, &"agent");
        assert!(p.contains("USING INDEX deliveries_waiting"), "{p}");
    }
}
