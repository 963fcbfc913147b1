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
//!
//! Here: the handle (`PgStore`), PostgreSQL's side of what is written once
//! above the stores — statements bound and run (`Run`, `Select`,
//! `Execute`), rows read (`Columns`); `store/sqlite.rs` is the same for
//! SQLite — and the deliveries' operations, each a sequence written once
//! (`storage::deliveries`) run on a pooled connection.

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
mod entries;
mod history;
mod keep;
mod pads;
mod relay;
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

use std::ops::ControlFlow;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgRow};
use sqlx::{PgConnection, PgPool, Row};

use crate::error::{Error, Result};
use crate::storage::query::{Columns, Dialect, Execute, Select};
use crate::storage::{deliveries, Deliveries, DeliveryRow, Fut, Scans};

pub(crate) use crate::storage::query::{
    read_entry, read_entry_seq, read_pad, Arg, Query, ENTRY_COLUMNS, PAD_COLUMNS,
};

/// A new id: the write time in its high bits as on SQLite (`src/id.rs`),
/// and low bits from a sequence every engine shares, so two engines writing
/// in the same millisecond never collide.
const NEXT_ID: &str = "((($1::bigint - 1577836800000) << 18) | (nextval('entry_ids') & 262143))";

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// Set on every session of the engine: no JIT compilation. PostgreSQL
/// compiles a statement whose estimated cost passes `jit_above_cost`, and at
/// a million notes a question's word counts pass it (each word an index
/// probe of ~0.03 ms, estimated as if it read a share of the table): 35–40
/// ms compiling for 1 ms of work (`EXPLAIN ANALYZE`), and a question took
/// 104 ms at p50 (`cargo bench --bench scale`). The engine's statements are
/// short, planned per call; none runs long enough to repay a compile.
///
/// And pages costed as read from memory: PostgreSQL's default
/// `random_page_cost` (4) prices an index walk as if each row were a disk
/// seek, so for a word in a pad it walks the whole store newest first
/// (perfectly ordered by `seq`) over the pad's own index: 44,000 rows read
/// for the 200 newest matches of a word in 5% of a million notes, 40 ms,
/// where the pad's index reads 4,300 rows, 9 ms (`EXPLAIN ANALYZE`). 1.1
/// is the usual setting for a store on SSD or in the page cache, as an
/// engine's working set is.
pub(crate) const PLANNER_SETTINGS: [(&str, &str); 2] =
    [("jit", "off"), ("random_page_cost", "1.1")];

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
    /// Write transactions this engine began: what its embedding worker
    /// yields to (`PgVectors::own_writes`).
    writes: std::sync::Arc<std::sync::atomic::AtomicU64>,
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
        let options = options.options(PLANNER_SETTINGS);
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
            writes: Default::default(),
        })
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The URL to connect with, for the relay's own listening connection.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The count of write transactions this engine began, shared.
    pub(crate) fn writes(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        self.writes.clone()
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

// PostgreSQL's side of the statements and the row reader written above the
// stores (`storage::query`; `store/sqlite.rs` on SQLite): a statement bound
// and run (`Run`), a connection running one (`Select`, `Execute`), and the
// typed reads of a row as sqlx returns it (`Columns`).

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

/// A query is awaited on the pool: no scan blocks a thread.
impl Scans for PgStore {
    fn on_one_thread(&self) -> Option<std::sync::Arc<dyn crate::storage::Storage>> {
        None
    }
}

/// Deliveries to A2A agents: the sequences written once
/// (`storage::deliveries`); every engine of a team sees the same rows.
impl Deliveries for PgStore {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(
            async move { deliveries::waiting(&mut *self.pool().acquire().await?, agents).await },
        )
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        bounded(async move { deliveries::conversations(&mut *self.pool().acquire().await?).await })
    }

    fn save_conversation<'a>(
        &'a self,
        c: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            deliveries::save(&mut *tx, c, taken, now).await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn drop_delivery<'a>(&'a self, d: &'a DeliveryRow) -> Fut<'a, ()> {
        bounded(async move { deliveries::drop_one(&mut *self.pool().acquire().await?, d).await })
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let n = deliveries::drop_agent(&mut *tx, agent).await?;
            tx.commit().await?;
            Ok(n)
        })
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        bounded(async move { deliveries::of(&mut *self.pool().acquire().await?, pad, entry).await })
    }
}
