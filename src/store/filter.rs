//! A statement built for SQLite (`storage::query`): its values as
//! rusqlite binds them; and a filter's check of an entry still only in the
//! journal.

use rusqlite::types::{ToSqlOutput, Value, ValueRef};

use crate::storage::query::Arg;
use crate::storage::{EntryFilter, NewEntry};

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        /// SQLite keeps a list as JSON text.
        fn json<T: serde::Serialize>(v: &T) -> rusqlite::Result<ToSqlOutput<'static>> {
            serde_json::to_string(v)
                .map(|t| ToSqlOutput::Owned(Value::Text(t)))
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
        }
        Ok(match self {
            Arg::Null => ToSqlOutput::Owned(Value::Null),
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

impl EntryFilter {
    /// `Query::filter`'s conditions, for an entry still only in the journal
    /// (never superseded: a note that supersedes commits the journal first).
    pub(crate) fn admits(&self, e: &NewEntry, archived: &dyn Fn(&str) -> bool) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        !archived(&e.pad)
            && is(&self.pad, &e.pad)
            && is(&self.author, &e.author)
            && self.kind.is_none_or(|k| k == e.kind)
            && self.status.is_none_or(|s| Some(s) == e.status)
            && self.since.is_none_or(|t| e.now >= t)
            && self.category.is_none_or(|c| Some(c) == e.category)
            && self
                .min_confidence
                .is_none_or(|c| e.confidence.is_some_and(|have| have >= c))
            && self.scope.as_ref().is_none_or(|scope| {
                scope
                    .iter()
                    .any(|p| crate::access::pattern_matches(p, &e.pad))
            })
            && self.tags.iter().all(|t| e.tags.contains(t))
    }
}

/// A statement built at run time for SQLite.
pub(crate) fn query(sql: impl Into<String>) -> crate::storage::query::Query {
    crate::storage::query::Query::new(crate::storage::dialect::Dialect::Sqlite, sql)
}

/// Appends what `build` writes (`storage::query`: a filter, a token's
/// pads) to SQLite text whose own values, `?` each, are `args`.
pub(crate) fn append(
    sql: &mut String,
    args: &mut Vec<Arg>,
    build: impl FnOnce(&mut crate::storage::query::Query) -> &mut crate::storage::query::Query,
) {
    let mut q = query(std::mem::take(sql));
    build(&mut q);
    let (text, more) = q.into_parts();
    *sql = text;
    args.extend(more);
}
