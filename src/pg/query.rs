//! PostgreSQL's side of the statements and the row reader written above
//! the stores (`storage::query`, `storage::rows`; `store/query.rs` on
//! SQLite): a statement bound and run (`Run`), a connection running one
//! (`Select`, `Execute`), and the typed reads of a row as sqlx returns it
//! (`Columns`).

use std::ops::ControlFlow;

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};

use crate::error::{Error, Result};
use crate::storage::dialect::Dialect;
use crate::storage::query::{Arg, Execute, Query, Select};
use crate::storage::rows::Columns;

/// A statement built at run time (`storage::query`), run on PostgreSQL.
pub(crate) trait Run {
    /// The query, planned with its values each time it runs (an unnamed
    /// statement, not kept prepared): a filter's or a word's selectivity
    /// decides the plan. A kept statement falls to PostgreSQL's generic
    /// plan after five runs, one plan for any values: two common words
    /// then gathered every match from the words index and sorted them
    /// (p50 21 ms at 100k entries) where their plan reads the newest rows
    /// (2 ms). A statement written whole for its values
    /// (`Query::prepared`) is kept.
    fn build(&self) -> sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>;
}

impl Run for Query {
    fn build(&self) -> sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments> {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(self.sql.as_str())).persistent(self.prepared);
        for a in self.args() {
            q = match a {
                Arg::Null => q.bind(None::<i64>),
                Arg::NullText => q.bind(None::<String>),
                Arg::NullReal => q.bind(None::<f64>),
                Arg::Text(s) => q.bind(s),
                Arg::Int(i) => q.bind(i),
                Arg::Real(f) => q.bind(f),
                Arg::Bool(b) => q.bind(b),
                Arg::Texts(v) => q.bind(v),
                Arg::Ints(v) => q.bind(v),
                Arg::Reals(v) => q.bind(v),
            };
        }
        q
    }
}

/// A statement built at run time for PostgreSQL.
pub(crate) fn statement(sql: impl Into<String>) -> Query {
    Query::new(Dialect::Postgres, sql)
}

impl Select for PgConnection {
    const DIALECT: Dialect = Dialect::Postgres;
    type Row<'r> = PgRow;
    type Error = Error;

    async fn scan(
        &mut self,
        q: &Query,
        mut read: impl FnMut(&PgRow) -> Result<ControlFlow<()>>,
    ) -> Result<()> {
        for row in q.build().fetch_all(&mut *self).await? {
            if read(&row)?.is_break() {
                break;
            }
        }
        Ok(())
    }
}

impl Execute for PgConnection {
    async fn execute(&mut self, q: &Query) -> Result<u64> {
        Ok(q.build().execute(&mut *self).await?.rows_affected())
    }
}

impl Columns for PgRow {
    type Error = Error;
    fn int(&self, i: usize) -> Result<i64, Error> {
        Ok(self.try_get(i)?)
    }
    fn opt_int(&self, i: usize) -> Result<Option<i64>, Error> {
        Ok(self.try_get(i)?)
    }
    fn text(&self, i: usize) -> Result<String, Error> {
        Ok(self.try_get(i)?)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>, Error> {
        Ok(self.try_get(i)?)
    }
    fn opt_real(&self, i: usize) -> Result<Option<f64>, Error> {
        Ok(self.try_get(i)?)
    }
    fn flag(&self, i: usize) -> Result<bool, Error> {
        Ok(self.try_get(i)?)
    }
    /// PostgreSQL keeps a list as `text[]`.
    fn texts(&self, i: usize) -> Result<Vec<String>, Error> {
        Ok(self
            .try_get::<Option<Vec<String>>, _>(i)?
            .unwrap_or_default())
    }
}
