//! SQLite's side of the statements and the row reader written above the
//! stores (`storage::query`, `storage::rows`; `pg/query.rs` on
//! PostgreSQL): values as rusqlite binds them, a connection running a
//! statement (`Select`, `Execute`), the typed reads of a row (`Columns`),
//! and the readers typed for rusqlite's callbacks.

use std::ops::ControlFlow;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{params_from_iter, Connection, Row};

use crate::error::Result;
use crate::model::{Entry, Pad};
use crate::storage::dialect::Dialect;
use crate::storage::query::{Arg, Execute, Query, Select};
use crate::storage::rows::{self, Columns};
pub use crate::storage::rows::{returning_columns, ENTRY_COLUMNS, ENTRY_COLUMN_COUNT, PAD_COLUMNS};

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

pub fn read_entry(row: &Row<'_>) -> rusqlite::Result<Entry> {
    rows::read_entry(row)
}

pub fn read_pad(row: &Row<'_>) -> rusqlite::Result<Pad> {
    rows::read_pad(row)
}
