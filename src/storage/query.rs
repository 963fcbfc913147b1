//! A statement built at run time for either database, the filters
//! written into it once — an entry filter (`Query::filter`), a history
//! filter (`Query::history_filter`), a token's pads (`Query::scope`) — and
//! what runs it on a store (`Select`: a read connection of each), so a
//! read whose SQL differs only by dialect is written once above both
//! (`storage::history`, `storage::entries`).
//!
//! Values are always bound, never formatted in. A piece of text takes its
//! value's placeholder as `$?`, written as the dialect numbers them
//! (`Dialect::placeholder`). Where the two databases test a condition
//! differently — a token's pad patterns (GLOB on SQLite, `ANY` and
//! `starts_with` on PostgreSQL), a note's tags (the `entry_tags` table on
//! SQLite, the tags array on PostgreSQL) — the builder asks its dialect.

use std::ops::ControlFlow;

use super::dialect::Dialect;
use super::rows::Columns;
use super::rules::{CURRENT_ONLY, CURRENT_ONLY_OPEN};
use super::{EntryFilter, HistoryFilter};
use crate::error::Result;

/// A store's read connection running built statements, each row read by
/// the shared row reader (`storage::rows`): all a read written above the
/// stores asks of one (`store/query.rs`, `pg/query.rs`).
#[allow(async_fn_in_trait)]
pub trait Select {
    /// The SQL the database speaks.
    const DIALECT: Dialect;
    /// A row as the database returns it.
    type Row<'r>: Columns<Error = Self::Error>;
    type Error: Into<crate::error::Error>;

    /// Reads `q`'s rows in order until `read` breaks.
    async fn scan(
        &mut self,
        q: &Query,
        read: impl FnMut(&Self::Row<'_>) -> Result<ControlFlow<()>, Self::Error>,
    ) -> Result<()>;

    /// The first row `q` selects, read by `read` (`None`: none).
    async fn first<T>(
        &mut self,
        q: &Query,
        mut read: impl FnMut(&Self::Row<'_>) -> Result<T, Self::Error>,
    ) -> Result<Option<T>> {
        let mut out = None;
        self.scan(q, |row| {
            out = Some(read(row)?);
            Ok(ControlFlow::Break(()))
        })
        .await?;
        Ok(out)
    }

    /// Every row `q` selects, each read by `read`.
    async fn rows<T>(
        &mut self,
        q: &Query,
        mut read: impl FnMut(&Self::Row<'_>) -> Result<T, Self::Error>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.scan(q, |row| {
            out.push(read(row)?);
            Ok(ControlFlow::Continue(()))
        })
        .await?;
        Ok(out)
    }

    /// A statement for this database.
    fn query(sql: impl Into<String>) -> Query {
        Query::new(Self::DIALECT, sql)
    }
}

/// One bound value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A `NULL` integer.
    Null,
    /// A `NULL` text (PostgreSQL types every value it is sent).
    NullText,
    /// A `NULL` real.
    NullReal,
    Text(String),
    Int(i64),
    Real(f64),
    Bool(bool),
    /// A list: a PostgreSQL array; JSON text on SQLite, as SQLite keeps
    /// its lists (`json_each` reads it).
    Texts(Vec<String>),
    Ints(Vec<i64>),
    Reals(Vec<f64>),
}

impl Arg {
    pub fn opt_text(v: Option<impl Into<String>>) -> Arg {
        v.map_or(Arg::NullText, |t| Arg::Text(t.into()))
    }
    pub fn opt_int(v: Option<i64>) -> Arg {
        v.map_or(Arg::Null, Arg::Int)
    }
    pub fn opt_real(v: Option<f64>) -> Arg {
        v.map_or(Arg::NullReal, Arg::Real)
    }
}

/// A statement and its values, in the order its placeholders take them.
#[derive(Debug, Clone)]
pub struct Query {
    dialect: Dialect,
    pub sql: String,
    args: Vec<Arg>,
    /// Whether the database may keep it prepared (`Query::prepared`).
    pub prepared: bool,
}

/// A store's connection running a built statement that changes rows
/// (SQLite's writer, a PostgreSQL connection).
#[allow(async_fn_in_trait)]
pub trait Execute: Select {
    /// Runs `q`; how many rows it changed.
    async fn execute(&mut self, q: &Query) -> Result<u64>;
}

impl Query {
    pub fn new(dialect: Dialect, sql: impl Into<String>) -> Query {
        Query {
            dialect,
            sql: sql.into(),
            args: Vec::new(),
            prepared: false,
        }
    }

    /// A statement written whole, its placeholders numbered by hand, and
    /// its values.
    pub fn bound(dialect: Dialect, sql: impl Into<String>, args: Vec<Arg>) -> Query {
        Query {
            dialect,
            sql: dialect.numbered(sql.into()),
            args,
            prepared: false,
        }
    }

    /// `bound` for a statement whose text is the same every time (its
    /// values aside) and whose plan does not hang on them — a write's
    /// point statement: PostgreSQL keeps it prepared on the connection
    /// (a built read is planned with its values each time: `pg::Run`).
    pub fn prepared(dialect: Dialect, sql: impl Into<String>, args: Vec<Arg>) -> Query {
        Query {
            prepared: true,
            ..Query::bound(dialect, sql, args)
        }
    }

    /// Appends `text`, each `$?` in it the placeholder of `v`.
    pub fn push(&mut self, text: &str, v: Arg) -> &mut Self {
        self.args.push(v);
        let placeholder = self.dialect.placeholder(self.args.len());
        self.sql.push_str(&text.replace("$?", &placeholder));
        self
    }

    pub fn raw(&mut self, text: &str) -> &mut Self {
        self.sql.push_str(text);
        self
    }

    /// The values, in order.
    pub fn args(&self) -> &[Arg] {
        &self.args
    }

    /// The statement's text and its values.
    pub fn into_parts(self) -> (String, Vec<Arg>) {
        (self.sql, self.args)
    }

    /// ` AND` the conditions of `filter` (`e` is entries, `p` its pad),
    /// for a query that lists what passes: a tag is found through the
    /// tag's list on SQLite.
    pub fn filter(&mut self, filter: &EntryFilter) -> &mut Self {
        self.entry_filter(filter, false)
    }

    /// `filter` for a query that visits candidates one by one (a text
    /// index's matches, an index's walk): a tag is checked on each
    /// candidate's own tags rather than by listing every entry with the
    /// tag first.
    pub fn filter_per_entry(&mut self, filter: &EntryFilter) -> &mut Self {
        self.entry_filter(filter, true)
    }

    fn entry_filter(&mut self, filter: &EntryFilter, per_entry: bool) -> &mut Self {
        self.raw(" AND p.archived_at IS NULL");
        if let Some(pad) = &filter.pad {
            self.push(" AND e.pad = $?", Arg::Text(pad.clone()));
        }
        if let Some(a) = &filter.author {
            self.push(" AND e.author = $?", Arg::Text(a.clone()));
        }
        if let Some(k) = filter.kind {
            self.push(" AND e.kind = $?", Arg::Text(k.as_str().into()));
        }
        if let Some(s) = filter.status {
            self.push(" AND e.status = $?", Arg::Text(s.as_str().into()));
        }
        if let Some(t) = filter.since {
            self.push(" AND e.created_at >= $?", Arg::Int(t));
        }
        if let Some(c) = filter.category {
            self.push(" AND e.category = $?", Arg::Text(c.as_str().into()));
        }
        if let Some(c) = filter.min_confidence {
            self.push(" AND e.confidence >= $?", Arg::Real(c));
        }
        if let Some(scope) = &filter.scope {
            self.scope(scope);
        }
        if filter.current_only {
            match filter.scope.as_deref() {
                None => self.raw(CURRENT_ONLY),
                // To a token, a note is superseded only by one it may read:
                // a newer note elsewhere does not hide it.
                Some(scope) => self.raw(CURRENT_ONLY_OPEN).scope_of("s", scope).raw(")"),
            };
        }
        self.tags(&filter.tags, per_entry)
    }

    /// ` AND` the note `e` carries every one of `tags`.
    fn tags(&mut self, tags: &[String], per_entry: bool) -> &mut Self {
        match self.dialect {
            Dialect::Sqlite => {
                let test = if per_entry {
                    " AND EXISTS (SELECT 1 FROM entry_tags t WHERE t.seq = e.seq AND t.tag = $?)"
                } else {
                    " AND e.seq IN (SELECT seq FROM entry_tags WHERE tag = $?)"
                };
                for tag in tags {
                    self.push(test, Arg::Text(tag.clone()));
                }
            }
            Dialect::Postgres if !tags.is_empty() => {
                self.push(" AND e.tags @> $?", Arg::Texts(tags.to_vec()));
            }
            Dialect::Postgres => {}
        }
        self
    }

    /// ` AND` the conditions of a history filter, over a table aliased `e`
    /// with `pad`, the change's actor and time in the columns `actor` and
    /// `at`.
    pub fn history_filter(&mut self, f: &HistoryFilter, actor: &str, at: &str) -> &mut Self {
        if let Some(pad) = &f.pad {
            self.push(" AND e.pad = $?", Arg::Text(pad.clone()));
        }
        if let Some(by) = &f.by {
            self.push(&format!(" AND {actor} = $?"), Arg::Text(by.clone()));
        }
        if let Some(t) = f.since {
            self.push(&format!(" AND {at} >= $?"), Arg::Int(t));
        }
        if let Some(t) = f.until {
            self.push(&format!(" AND {at} < $?"), Arg::Int(t));
        }
        if let Some(scope) = &f.scope {
            self.scope(scope);
        }
        self
    }

    /// ` AND` `e.pad` is one of a token's pads (names and `prefix*`
    /// patterns).
    pub fn scope(&mut self, scope: &[String]) -> &mut Self {
        self.scope_of("e", scope)
    }

    /// `scope` on the entries aliased `alias`.
    pub fn scope_of(&mut self, alias: &str, scope: &[String]) -> &mut Self {
        match self.dialect {
            Dialect::Sqlite => {
                self.raw(" AND (0");
                for pattern in scope {
                    // Pad names hold no GLOB metacharacters, so only the
                    // `*` of a pattern is one.
                    self.push(
                        &format!(" OR {alias}.pad GLOB $?"),
                        Arg::Text(pattern.clone()),
                    );
                }
                self.raw(")")
            }
            Dialect::Postgres => {
                let (prefixes, names): (Vec<&String>, Vec<&String>) =
                    scope.iter().partition(|p| p.ends_with('*'));
                let names = names.into_iter().cloned().collect();
                let prefixes = prefixes
                    .into_iter()
                    .map(|p| p.trim_end_matches('*').to_string())
                    .collect();
                self.push(&format!(" AND ({alias}.pad = ANY($?)"), Arg::Texts(names));
                self.push(
                    &format!(
                        " OR EXISTS (SELECT 1 FROM unnest($?::text[]) AS sp(prefix) \
                         WHERE starts_with({alias}.pad, sp.prefix)))"
                    ),
                    Arg::Texts(prefixes),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter() -> EntryFilter {
        EntryFilter {
            pad: Some("p".into()),
            tags: vec!["a".into(), "b".into()],
            scope: Some(vec!["team".into(), "ops*".into()]),
            ..Default::default()
        }
    }

    #[test]
    fn each_value_takes_the_placeholder_its_dialect_numbers() {
        let mut q = Query::new(Dialect::Postgres, "SELECT 1 WHERE true");
        q.filter(&filter()).push(" LIMIT $?", Arg::Int(5));
        assert_eq!(
            q.sql,
            "SELECT 1 WHERE true AND p.archived_at IS NULL AND e.pad = $1 \
             AND (e.pad = ANY($2) OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS sp(prefix) \
             WHERE starts_with(e.pad, sp.prefix))) AND e.tags @> $4 LIMIT $5"
        );
        assert_eq!(q.args().len(), 5);
        assert_eq!(q.args()[1], Arg::Texts(vec!["team".into()]));
        assert_eq!(q.args()[2], Arg::Texts(vec!["ops".into()]));

        let mut q = Query::new(Dialect::Sqlite, "SELECT 1 WHERE 1");
        q.filter(&filter()).push(" LIMIT $?", Arg::Int(5));
        assert_eq!(
            q.sql,
            "SELECT 1 WHERE 1 AND p.archived_at IS NULL AND e.pad = ? \
             AND (0 OR e.pad GLOB ? OR e.pad GLOB ?) \
             AND e.seq IN (SELECT seq FROM entry_tags WHERE tag = ?) \
             AND e.seq IN (SELECT seq FROM entry_tags WHERE tag = ?) LIMIT ?"
        );
        assert_eq!(
            q.args(),
            [
                Arg::Text("p".into()),
                Arg::Text("team".into()),
                Arg::Text("ops*".into()),
                Arg::Text("a".into()),
                Arg::Text("b".into()),
                Arg::Int(5)
            ]
        );
    }

    #[test]
    fn per_entry_checks_each_candidates_own_tags_on_sqlite() {
        let f = EntryFilter {
            tags: vec!["a".into()],
            ..Default::default()
        };
        let mut q = Query::new(Dialect::Sqlite, "");
        q.filter_per_entry(&f);
        assert!(q.sql.contains("t.seq = e.seq AND t.tag = ?"), "{}", q.sql);
    }
}
