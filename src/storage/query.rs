//! Statements written once for both databases: built at run time or
//! written whole (`Query`, `Query::prepared`), the filters written into
//! them once — an entry filter (`Query::filter`), a history filter
//! (`Query::history_filter`), a token's pads (`Query::scope`) —, where the
//! two databases' SQL differs (`Dialect`), what runs one on a store
//! (`Select`, `Execute`: a connection of each, `store/sqlite.rs` and
//! `pg.rs`), and the one row reader (`Columns`, `read_entry` and the rest):
//! so a read or write whose SQL differs only by dialect is written once
//! above both stores (`storage::entries`, `storage::history`, …).
//!
//! Values are always bound, never formatted in. A statement written whole
//! numbers its placeholders `$1`, `$2`, … by the value each takes
//! (`Dialect::numbered` makes them SQLite's `?1`, `?2`, …: SQLite numbers
//! a `$1` by where it first appears); a piece of a built statement takes
//! its value's placeholder as `$?` (`Dialect::placeholder`). Where the two
//! databases test a condition differently — a token's pad patterns (GLOB
//! on SQLite, `ANY` and `starts_with` on PostgreSQL), a note's tags as a
//! filter (the `entry_tags` table on SQLite, the tags array's index on
//! PostgreSQL) — the builder asks its dialect.
//!
//! Where the two keep a value differently the row says how to read it, not
//! the reader: a list of texts (tags, `depends_on`, choices, addressees) is
//! JSON text on SQLite and a `text[]` on PostgreSQL (`Columns::texts`). The
//! column lists are the same text on both.

use std::ops::ControlFlow;

use serde_json::Value;

use super::rules::{preview, CURRENT_ONLY, CURRENT_ONLY_OPEN};
use super::{EntryFilter, HistoryFilter, ReportRow};
use crate::error::Result;
use crate::model::{fmt_time, Category, Entry, Kind, Pad, Status};
use crate::protocol::{Action, Change, Version};

/// The database a statement is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The placeholder of a built statement's `n`th value (from 1):
    /// SQLite's `?` takes the values in order, so a built piece fits in
    /// SQLite text whose own values are `?` too.
    pub fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => "?".into(),
            Dialect::Postgres => format!("${n}"),
        }
    }

    /// `sql`, its placeholders `$1`, `$2`, … as this database numbers a
    /// value by its position (SQLite's `?1`; a `$` not before a digit, as
    /// in a JSON path, stays).
    pub fn numbered(self, sql: String) -> String {
        match self {
            Dialect::Postgres => sql,
            Dialect::Sqlite => {
                let mut out = String::with_capacity(sql.len());
                let mut chars = sql.chars().peekable();
                while let Some(c) = chars.next() {
                    let digit_next = chars.peek().is_some_and(char::is_ascii_digit);
                    out.push(if c == '$' && digit_next { '?' } else { c });
                }
                out
            }
        }
    }

    /// The function giving the larger of its arguments (SQLite's `max`
    /// with two arguments; PostgreSQL's `max` is only an aggregate).
    pub fn greatest(self) -> &'static str {
        match self {
            Dialect::Sqlite => "max",
            Dialect::Postgres => "greatest",
        }
    }

    /// The condition that the list column `list` holds `value`: SQLite
    /// keeps a list as JSON text, PostgreSQL as an array.
    pub fn list_has(self, list: &str, value: &str) -> String {
        match self {
            Dialect::Sqlite => {
                format!("EXISTS (SELECT 1 FROM json_each({list}) WHERE value = {value})")
            }
            Dialect::Postgres => format!("{value} = ANY({list})"),
        }
    }

    /// A list bound as `list` as rows of one column, `value`, named `alias`
    /// (SQLite reads its JSON text, PostgreSQL unnests its array).
    pub fn rows_of(self, list: &str, alias: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_each({list}) AS {alias}"),
            Dialect::Postgres => format!("unnest({list}) AS {alias}(value)"),
        }
    }

    /// A join kept in the order written: SQLite's planner takes `CROSS
    /// JOIN` as that order; PostgreSQL's plans a plain join on its own.
    pub fn join_in_order(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CROSS JOIN",
            Dialect::Postgres => "JOIN",
        }
    }

    /// The condition that `column` is one of the list bound as `list`, for
    /// a column with an index: SQLite looks each value up, PostgreSQL
    /// takes the array whole.
    pub fn any_of(self, column: &str, list: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} IN (SELECT value FROM json_each({list}))"),
            Dialect::Postgres => format!("{column} = ANY({list})"),
        }
    }

    /// What ends a `SELECT` whose rows the transaction holds until it ends
    /// (PostgreSQL's `FOR UPDATE`; SQLite's writer is held whole already).
    pub fn hold_rows(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }

    /// `hold_rows`, passing over rows another transaction holds: each is
    /// taken by one engine of a team (SQLite has one writer: none is held).
    pub fn hold_free_rows(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    /// The JSON text of the field `key` of the JSON text column `column`
    /// (`NULL` when it has none).
    pub fn json_field(self, column: &str, key: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} -> '$.{key}'"),
            Dialect::Postgres => format!("({column}::jsonb -> '{key}')::text"),
        }
    }

    /// The condition that the flag `column` is false, as this database's
    /// partial indexes are written (SQLite's `WHERE taken = 0` matches
    /// only `taken = 0`).
    pub fn is_false(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} = 0"),
            Dialect::Postgres => format!("NOT {column}"),
        }
    }
}

/// A store's read connection running built statements, each row read by
/// the row reader below (`Columns`): all a read written above the
/// stores asks of one (`store/sqlite.rs`, `pg.rs`).
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

/// Columns of `entries` (aliased `e`) in the order `read_entry` expects
/// them; the last tells what supersedes the entry.
pub const ENTRY_COLUMNS: &str = "e.seq, e.pad, e.author, e.kind, e.content, e.tags, e.status, \
     e.assignee, e.resume, e.lease_until, e.category, e.confidence, e.depends_on, e.remind_at, \
     e.pinned, e.meta, e.created_at, e.updated_at, e.version, e.attempts, e.error, e.reply_to, \
     e.choices, e.replies, e.answer, e.addressed_to, e.supersedes, \
     (SELECT MAX(s.seq) FROM entries s WHERE s.supersedes = e.seq)";

/// How many columns `ENTRY_COLUMNS` selects; a query's extra columns follow.
pub const ENTRY_COLUMN_COUNT: usize = 28;

/// `ENTRY_COLUMNS` without the `e.` alias, for `RETURNING` (which cannot
/// name one on SQLite).
pub fn returning_columns() -> String {
    ENTRY_COLUMNS
        .replace("= e.seq", "= entries.seq")
        .replace("e.", "")
}

/// Columns of `pads` in the order `read_pad` expects them.
pub const PAD_COLUMNS: &str = "name, ttl_seconds, max_entries, last_write_at, entries, archived_at";

/// Columns of `entry_history` (aliased `e`) after its `ENTRY_COLUMNS`, in
/// the order `read_version` expects them.
pub const VERSION_COLUMNS: &str =
    "e.batch, e.action, e.actor, e.at, e.restored_at, e.restored_by, e.n";

/// The columns of a report line, but its token count (`read_report`):
/// a task's title is its first line, so 300 characters are plenty, and a
/// report over a million entries must not hold their text.
pub const REPORT_COLUMNS: &str = "e.seq, e.pad, e.author, e.kind, \
     CASE WHEN e.kind = 'task' THEN substr(e.content, 1, 300) ELSE '' END, \
     e.status, e.assignee, e.attempts, \
     CASE WHEN e.kind = 'task' THEN e.error END, e.claimed_at, e.finished_at";

/// The typed reads of one row, by column position, as a database returns
/// them.
pub trait Columns {
    type Error;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn opt_real(&self, i: usize) -> Result<Option<f64>, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
    /// A list of texts (`NULL`: empty).
    fn texts(&self, i: usize) -> Result<Vec<String>, Self::Error>;
}

/// Reads the `ENTRY_COLUMNS` at the start of `row`, with its seq.
pub fn read_entry_seq<R: Columns>(row: &R) -> Result<(i64, Entry), R::Error> {
    let seq = row.int(0)?;
    let id_of = |i: usize| {
        row.opt_int(i)
            .map(|s| s.map(|n| crate::seal::NoteRef(crate::id::encode(n))))
    };
    let entry = Entry {
        id: crate::id::encode(seq),
        pad: row.text(1)?,
        author: row.text(2)?,
        kind: Kind::parse(&row.text(3)?).unwrap_or_default(),
        content: row.text(4)?,
        tags: row.texts(5)?,
        status: row.opt_text(6)?.as_deref().and_then(Status::parse),
        assignee: row.opt_text(7)?,
        resume: row.opt_text(8)?,
        lease_until: row.opt_int(9)?.map(fmt_time),
        category: row.opt_text(10)?.as_deref().and_then(Category::parse),
        confidence: row.opt_real(11)?,
        depends_on: crate::seal::refs(row.texts(12)?),
        remind_at: row.opt_int(13)?.map(fmt_time),
        pinned: row.flag(14)?,
        meta: row
            .opt_text(15)?
            .as_deref()
            .and_then(|m| match serde_json::from_str(m) {
                Ok(Value::Object(o)) => Some(o),
                _ => None,
            }),
        created_at: fmt_time(row.int(16)?),
        updated_at: fmt_time(row.int(17)?),
        version: row.int(18)?,
        attempts: row.int(19)?,
        error: row.opt_text(20)?,
        reply_to: id_of(21)?,
        choices: row.texts(22)?,
        replies: row.int(23)?,
        answer: id_of(24)?,
        to: row.texts(25)?,
        supersedes: id_of(26)?,
        superseded_by: id_of(27)?,
    };
    Ok((seq, entry))
}

/// Reads the `ENTRY_COLUMNS` at the start of `row`.
pub fn read_entry<R: Columns>(row: &R) -> Result<Entry, R::Error> {
    read_entry_seq(row).map(|(_, e)| e)
}

/// Reads the `PAD_COLUMNS` of `row`.
pub fn read_pad<R: Columns>(row: &R) -> Result<Pad, R::Error> {
    let ttl = row.opt_int(1)?;
    let last_write = row.int(3)?;
    let archived_at = row.opt_int(5)?;
    Ok(Pad {
        name: row.text(0)?,
        ttl_seconds: ttl,
        max_entries: row.opt_int(2)?,
        last_write_at: fmt_time(last_write),
        entries: row.int(4)?,
        expires_at: match (archived_at, ttl) {
            (None, Some(ttl)) => Some(fmt_time(last_write + ttl * 1000)),
            _ => None,
        },
        archived: archived_at.is_some(),
        archived_at: archived_at.map(fmt_time),
    })
}

/// Reads a history row selected as `ENTRY_COLUMNS, VERSION_COLUMNS`:
/// (n, seq, version).
pub fn read_version<R: Columns>(row: &R) -> Result<(i64, i64, Version), R::Error> {
    let (seq, entry) = read_entry_seq(row)?;
    let c = ENTRY_COLUMN_COUNT;
    Ok((
        row.int(c + 6)?,
        seq,
        Version {
            change: row.int(c)?,
            action: Action::parse(&row.text(c + 1)?).unwrap_or(Action::Delete),
            by: row.text(c + 2)?,
            at: fmt_time(row.int(c + 3)?),
            restored_at: row.opt_int(c + 4)?.map(fmt_time),
            restored_by: row.opt_text(c + 5)?,
            entry,
        },
    ))
}

/// Reads a report line selected as `REPORT_COLUMNS`, with its token count
/// (`tokens`: each database reads the JSON its own way).
pub fn read_report<R: Columns>(row: &R, tokens: Option<Value>) -> Result<ReportRow, R::Error> {
    Ok(ReportRow {
        id: crate::id::encode(row.int(0)?),
        pad: row.text(1)?,
        author: row.text(2)?,
        kind: Kind::parse(&row.text(3)?).unwrap_or_default(),
        content: row.text(4)?,
        status: row.opt_text(5)?.as_deref().and_then(Status::parse),
        assignee: row.opt_text(6)?,
        attempts: row.int(7)?,
        error: row.opt_text(8)?,
        claimed_at: row.opt_int(9)?,
        finished_at: row.opt_int(10)?,
        tokens,
    })
}

/// Reads a line of the audit (`storage::history`'s scans): (time,
/// change); `what` names the change, else the row's action does.
pub fn read_change<R: Columns>(row: &R, what: Option<&str>) -> Result<(i64, Change), R::Error> {
    let at = row.int(3)?;
    Ok((
        at,
        Change {
            at: fmt_time(at),
            by: row.text(2)?,
            what: match what {
                Some(w) => w.to_owned(),
                None => row.opt_text(5)?.unwrap_or_default(),
            },
            id: crate::id::encode(row.int(0)?),
            pad: row.text(1)?,
            change: match what {
                Some(_) => None,
                None => row.opt_int(6)?,
            },
            preview: preview(&row.text(4)?),
        },
    ))
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

    #[test]
    fn sqlite_numbers_a_value_by_its_position_not_where_it_first_appears() {
        let sql = "UPDATE t SET a = $2, j = x -> '$.k' WHERE seq = $1".to_owned();
        assert_eq!(
            Dialect::Sqlite.numbered(sql.clone()),
            "UPDATE t SET a = ?2, j = x -> '$.k' WHERE seq = ?1"
        );
        assert_eq!(Dialect::Postgres.numbered(sql.clone()), sql);
    }

    #[test]
    fn the_count_is_the_number_of_entry_columns() {
        assert_eq!(ENTRY_COLUMNS.split(',').count(), ENTRY_COLUMN_COUNT);
    }
}
