//! The store on PostgreSQL, for teams: every engine of a team keeps its
//! entries in one shared database (`pad serve --database postgres://…`).
//!
//! The same operations as the SQLite store (`src/store/`), with the same
//! answers and errors, over sqlx with runtime queries. What differs is where
//! the guarantees come from: an acknowledgement is a PostgreSQL commit (no
//! journal), claims take rows with `FOR UPDATE SKIP LOCKED` so engines never
//! hand out one task twice, reminders and leases are marked in the statement
//! that selects them so only one engine delivers each, and events reach the
//! other engines through NOTIFY (`pg/relay.rs`).

/// A query's text built from constant pieces and numbered placeholders:
/// values are always bound, never formatted in.
macro_rules! sql {
    ($($t:tt)*) => {
        sqlx::AssertSqlSafe(format!($($t)*))
    };
}

mod activity;
mod deadline;
use deadline::{bounded, upkeep};
mod deliveries;
mod entries;
mod history;
mod inbox;
mod keep;
mod pads;
mod relay;
mod rows;
mod sparse;
mod statistics;
mod tasks;
mod text;
mod tokens;
mod tx;
mod upkeep;
mod vectors;

pub use relay::{Incoming, Relay};
pub use vectors::PgVectors;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

use crate::error::{Error, Result};

pub(crate) use crate::storage::rows::{
    read_entry, read_entry_seq, read_pad, ENTRY_COLUMNS, PAD_COLUMNS, REPORT_COLUMNS,
    VERSION_COLUMNS,
};

/// A new id: the write time in its high bits as on SQLite (`src/id.rs`),
/// and low bits from a sequence every engine shares, so two engines writing
/// in the same millisecond never collide.
const NEXT_ID: &str = "((($1::bigint - 1577836800000) << 18) | (nextval('entry_ids') & 262143))";

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// The shared store. Cheap to clone (a pool).
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    url: String,
    /// What ranking by BM25 needs to know of the whole store, refreshed
    /// now and then (src/pg/text.rs).
    word_stats: text::SharedStats,
    /// Whether changes keep what they replace (`keep_history`).
    keep_history: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Notes inserted since the planner's statistics were refreshed
    /// (src/pg/statistics.rs).
    loaded: std::sync::Arc<statistics::Loaded>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &redacted(&self.url))
            .finish()
    }
}

impl PgStore {
    /// Connects, applies migrations, and sets the default TTL new pads get.
    pub async fn open(url: &str, default_ttl_seconds: Option<i64>) -> Result<PgStore> {
        let options: PgConnectOptions = url.parse().map_err(|e| {
            Error::invalid(
                "database",
                format!("'{}' is not a PostgreSQL URL ({e}); give one like postgres://pad@db-host/pad?sslmode=verify-full", redacted(url)),
            )
        })?;
        let unreachable = |e: sqlx::Error| {
            Error::Unavailable(format!(
                "cannot reach the PostgreSQL database at {} ({e}); check that it runs and the URL, user and password are right",
                redacted(url)
            ))
        };
        // Migrations run on a connection of their own, without the
        // sessions' limits (an index built on a large table takes longer
        // than any call may).
        let mut migrating = <sqlx::PgConnection as sqlx::Connection>::connect_with(&options)
            .await
            .map_err(unreachable)?;
        MIGRATOR.run(&mut migrating).await.map_err(|e| {
            Error::Internal(format!(
                "cannot bring the PostgreSQL schema up to date ({e}); the role needs CREATE on the database (and pg_trgm must be installable)"
            ))
        })?;
        let _ = sqlx::Connection::close(migrating).await;
        let pool = deadline::tested(PgPoolOptions::new())
            .max_connections(16)
            .min_connections(1)
            .acquire_timeout(deadline::CALL_DEADLINE)
            .connect_with(
                options
                    .application_name("scratchpad")
                    .options(deadline::SESSION_SETTINGS),
            )
            .await
            .map_err(unreachable)?;
        sqlx::query("UPDATE settings SET value = $1 WHERE key = 'default_ttl_seconds'")
            .bind(default_ttl_seconds.map_or(String::new(), |t| t.to_string()))
            .execute(&pool)
            .await?;
        Ok(PgStore {
            pool,
            url: url.to_string(),
            word_stats: Default::default(),
            keep_history: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
            loaded: Default::default(),
        })
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The URL to connect with, for the relay's own listening connection.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Where the store is, for `stats` and logs (no password).
    pub fn describe(&self) -> String {
        redacted(&self.url)
    }
}

/// A URL without its password.
pub fn redacted(url: &str) -> String {
    match url.parse::<sqlx::postgres::PgConnectOptions>() {
        Ok(o) => format!(
            "postgres://{}@{}:{}/{}",
            o.get_username(),
            o.get_host(),
            o.get_port(),
            o.get_database().unwrap_or("")
        ),
        Err(_) => "(an unreadable URL)".into(),
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_) => Error::Unavailable(format!(
                "the PostgreSQL database cannot be reached ({e}); the engine reconnects by itself: retry in a few seconds"
            )),
            sqlx::Error::Database(d) => match d.code().as_deref() {
                // Serialization failures and deadlocks, and a lock another
                // engine held past `lock_timeout`: retrying is the fix.
                Some("40001" | "40P01" | "55P03") => Error::Unavailable(format!(
                    "the database asked to retry a conflicting write ({e}); retry"
                )),
                // This engine paused mid-write (a frozen process, a sleeping
                // host) past `idle_in_transaction_session_timeout`: the
                // server ended its session and rolled the write back.
                Some("25P03") => Error::Unavailable(format!(
                    "this engine paused in the middle of the write for longer than the database allows, so the database rolled it back ({e}); nothing was stored: retry"
                )),
                // Connections and operators (the server shutting down, out of disk,
                // a read-only replica).
                Some(c) if c.starts_with("08") || c.starts_with("57") || c.starts_with("53") || c == "25006" => {
                    Error::Unavailable(format!(
                        "the PostgreSQL database cannot take this now ({e}); the engine reconnects by itself: retry in a few seconds"
                    ))
                }
                _ => Error::Internal(format!("store: {e}")),
            },
            _ => Error::Internal(format!("store: {e}")),
        }
    }
}

/// One bound value of a query built at run time.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Text(String),
    Int(i64),
    Real(f64),
    Reals(Vec<f64>),
    Texts(Vec<String>),
    Ints(Vec<i64>),
    Bool(bool),
}

/// A query built at run time: its SQL and its values, `$n` numbered as pushed.
#[derive(Debug, Default)]
pub(crate) struct Query {
    pub sql: String,
    args: Vec<Arg>,
}

impl Query {
    pub fn new(sql: impl Into<String>) -> Query {
        Query {
            sql: sql.into(),
            args: Vec::new(),
        }
    }

    /// Appends `text` with each `$?` replaced by the next value's number.
    pub fn push(&mut self, text: &str, v: Arg) -> &mut Self {
        self.args.push(v);
        let n = self.args.len();
        self.sql.push_str(&text.replace("$?", &format!("${n}")));
        self
    }

    pub fn raw(&mut self, text: &str) -> &mut Self {
        self.sql.push_str(text);
        self
    }

    /// The query, planned with its values each time it runs (an unnamed
    /// statement, not kept prepared): a filter's or a word's selectivity
    /// decides the plan. A kept statement falls to PostgreSQL's generic
    /// plan after five runs, one plan for any values: two common words
    /// then gathered every match from the words index and sorted them
    /// (p50 21 ms at 100k entries) where their plan reads the newest rows
    /// (2 ms).
    pub fn build(&self) -> sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments> {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(self.sql.as_str())).persistent(false);
        for a in &self.args {
            q = match a {
                Arg::Text(s) => q.bind(s),
                Arg::Int(i) => q.bind(i),
                Arg::Real(f) => q.bind(f),
                Arg::Reals(v) => q.bind(v),
                Arg::Texts(v) => q.bind(v),
                Arg::Ints(v) => q.bind(v),
                Arg::Bool(b) => q.bind(b),
            };
        }
        q
    }

    /// The conditions of `filter` (`e` is entries, `p` its pad), as
    /// `EntryFilter::push_sql` writes them for SQLite.
    pub fn filter(&mut self, filter: &crate::storage::EntryFilter) -> &mut Self {
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
                None => self.raw(crate::storage::rules::CURRENT_ONLY),
                // To a token, a note is superseded only by one it may read.
                Some(scope) => self
                    .raw(crate::storage::rules::CURRENT_ONLY_OPEN)
                    .scope_of("s", scope)
                    .raw(")"),
            };
        }
        if !filter.tags.is_empty() {
            self.push(" AND e.tags @> $?", Arg::Texts(filter.tags.clone()));
        }
        self
    }

    /// ` AND` `e.pad` is one of a token's pads (names and `prefix*` patterns).
    pub fn scope(&mut self, scope: &[String]) -> &mut Self {
        self.scope_of("e", scope)
    }

    /// `scope` on the entries aliased `alias`.
    pub fn scope_of(&mut self, alias: &str, scope: &[String]) -> &mut Self {
        let (prefixes, names): (Vec<&String>, Vec<&String>) =
            scope.iter().partition(|p| p.ends_with('*'));
        let names: Vec<String> = names.into_iter().cloned().collect();
        let prefixes: Vec<String> = prefixes
            .into_iter()
            .map(|p| p.trim_end_matches('*').to_string())
            .collect();
        self.push(&format!(" AND ({alias}.pad = ANY($?)"), Arg::Texts(names));
        self.push(
            &format!(" OR EXISTS (SELECT 1 FROM unnest($?::text[]) AS sp(prefix) WHERE starts_with({alias}.pad, sp.prefix)))"),
            Arg::Texts(prefixes),
        )
    }
}
