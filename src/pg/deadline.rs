//! Every wait on PostgreSQL bounded, and a write's outcome told truly.
//!
//! A database that stops answering — frozen (`SIGSTOP`, a paused VM), cut
//! off by the network, restarting — must not hold a call longer than a
//! client waits. Each operation of the store runs within a deadline
//! (`bounded`: `CALL_DEADLINE`; upkeep and whole-store scans `upkeep`:
//! `UPKEEP_DEADLINE`), past which it is answered `-32005`. The server ends
//! what the engine left behind on its own (`SESSION_SETTINGS`: a lock waited
//! on, a transaction left idle, a statement run too long), so a frozen
//! engine releases the rows it holds within seconds, and its writes are
//! rolled back, never half-applied.
//!
//! A write is one transaction (`Txn`), which knows its transaction id. Its
//! commit is the one moment whose outcome can be lost: the commit reached
//! the server but the answer did not (the server restarted, the link
//! dropped, the deadline passed). Then the engine asks the server what
//! became of that transaction (`pg_xact_status`) before it answers: it
//! acknowledges a write that committed, refuses one that surely did not,
//! and when it cannot tell within `RESOLVE_WAIT`, says so with its own
//! error (`Error::OutcomeUnknown`, `-32006`) — never "refused" for a write
//! that may be stored.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use sqlx::postgres::PgPoolOptions;
use sqlx::{PgConnection, PgPool, Postgres};

use super::PgStore;
use crate::error::{Error, Result};
use crate::storage::Fut;

/// How long one call's database work may take, a write's commit included:
/// well under every client's timeout.
pub const CALL_DEADLINE: Duration = Duration::from_secs(3);
/// How long upkeep (sweeps, retention, the embedding queue) and scans of
/// the whole store (`stats`) may take: longer, and still bounded.
pub const UPKEEP_DEADLINE: Duration = Duration::from_secs(30);
/// How long a write whose commit went unanswered may spend finding out
/// whether it committed, past `CALL_DEADLINE`.
pub const RESOLVE_WAIT: Duration = Duration::from_secs(1);
/// How long testing a pooled connection (a ping) may take.
const PING_WAIT: Duration = Duration::from_secs(1);
/// A connection idle longer than this is tested before it is handed out.
const IDLE_UNTESTED: Duration = Duration::from_secs(1);

/// What the server ends by itself, set on every session of the pool: a
/// lock waited on longer than a call may take (another engine, frozen,
/// holds the row), a transaction left idle (an engine frozen between two
/// statements: its locks are released and its write rolled back), and a
/// statement running long after its call was answered.
pub const SESSION_SETTINGS: [(&str, &str); 3] = [
    ("lock_timeout", "2s"),
    ("idle_in_transaction_session_timeout", "3s"),
    ("statement_timeout", "60s"),
];

/// The call running on this task, for its transaction's commit.
struct Call {
    started: Instant,
    limit: Duration,
    /// A commit is under way: it has its own bound and finds out how it ended.
    committing: AtomicBool,
}

tokio::task_local! {
    static CALL: Arc<Call>;
}

/// An interactive operation of the store, within `CALL_DEADLINE`.
pub fn bounded<'a, T: Send + 'a>(f: impl Future<Output = Result<T>> + Send + 'a) -> Fut<'a, T> {
    within(CALL_DEADLINE, f)
}

/// Upkeep or a scan of the whole store, within `UPKEEP_DEADLINE`.
pub fn upkeep<'a, T: Send + 'a>(f: impl Future<Output = Result<T>> + Send + 'a) -> Fut<'a, T> {
    within(UPKEEP_DEADLINE, f)
}

fn within<'a, T: Send + 'a>(
    limit: Duration,
    f: impl Future<Output = Result<T>> + Send + 'a,
) -> Fut<'a, T> {
    Box::pin(async move {
        let call = Arc::new(Call {
            started: Instant::now(),
            limit,
            committing: AtomicBool::new(false),
        });
        let out = CALL
            .scope(call.clone(), async move {
                let mut f = std::pin::pin!(f);
                match tokio::time::timeout(limit, &mut f).await {
                    Ok(r) => r,
                    Err(_) if call.committing.load(Ordering::Acquire) => f.await,
                    Err(_) => Err(Error::Unavailable(format!(
                        "the PostgreSQL database did not answer within {} s (stopped, frozen, overloaded, or cut off by the network?); nothing this call wrote was committed; the engine reconnects by itself: retry in a few seconds",
                        limit.as_secs()
                    ))),
                }
            })
            .await;
        if matches!(out, Err(Error::Unavailable(_) | Error::OutcomeUnknown(_))) {
            link_broke();
        }
        out
    })
}

/// Milliseconds since `EPOCH` when a call last found the database
/// unreachable (0: never): connections idle since then are tested before
/// use, so a restarted server costs no call a dead connection.
static BROKE_AT: AtomicU64 = AtomicU64::new(0);
static EPOCH: OnceLock<Instant> = OnceLock::new();

fn since_epoch(at: Instant) -> u64 {
    at.saturating_duration_since(*EPOCH.get_or_init(Instant::now))
        .as_millis() as u64
        + 1
}

fn link_broke() {
    BROKE_AT.fetch_max(since_epoch(Instant::now()), Ordering::Relaxed);
}

/// The pool's tests: a connection is pinged (within `PING_WAIT`) before it
/// is handed out when it has been idle a while or the link broke since it
/// went idle, and after every use, before it goes back; one that fails
/// either is closed and replaced.
pub fn tested(options: PgPoolOptions) -> PgPoolOptions {
    options
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                let idle_since = Instant::now().checked_sub(meta.idle_for);
                let broke = BROKE_AT.load(Ordering::Relaxed);
                let suspect = meta.idle_for > IDLE_UNTESTED
                    || idle_since.is_none_or(|at| broke >= since_epoch(at));
                Ok(!suspect || ping(conn).await)
            })
        })
        .after_release(|conn, _| Box::pin(async move { Ok(ping(conn).await) }))
}

async fn ping(conn: &mut PgConnection) -> bool {
    use sqlx::Connection;
    matches!(
        tokio::time::timeout(PING_WAIT, conn.ping()).await,
        Ok(Ok(()))
    )
}

/// A write's transaction: statements run on it (it derefs to the
/// connection), and `commit` tells the write's outcome truly.
pub struct Txn {
    tx: sqlx::Transaction<'static, Postgres>,
    /// `pg_current_xact_id()`, to ask about after a lost commit.
    xid: String,
    pool: PgPool,
}

impl std::ops::Deref for Txn {
    type Target = PgConnection;
    fn deref(&self) -> &PgConnection {
        &self.tx
    }
}

impl std::ops::DerefMut for Txn {
    fn deref_mut(&mut self) -> &mut PgConnection {
        &mut self.tx
    }
}

impl PgStore {
    /// Begins a write's transaction.
    pub(super) async fn begin_write(&self) -> Result<Txn> {
        let mut tx = self.pool().begin().await?;
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let xid: String = sqlx::query_scalar("SELECT pg_current_xact_id()::text")
            .fetch_one(&mut *tx)
            .await?;
        Ok(Txn {
            tx,
            xid,
            pool: self.pool().clone(),
        })
    }
}

impl Txn {
    /// Commits. When the commit's answer is lost, asks the server whether
    /// it committed: `Ok` if it did, `-32005` if it surely did not,
    /// `-32006` when that cannot be told within `RESOLVE_WAIT`.
    pub async fn commit(self) -> Result<()> {
        let Txn { tx, xid, pool } = self;
        let by = match CALL.try_with(|c| {
            c.committing.store(true, Ordering::Release);
            c.started + c.limit
        }) {
            Ok(by) => by,
            Err(_) => Instant::now() + CALL_DEADLINE,
        };
        let lost = match tokio::time::timeout_at(by.into(), tx.commit()).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) if !answer_lost(&e) => return Err(e.into()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer in time".to_string(),
        };
        link_broke();
        match tokio::time::timeout(RESOLVE_WAIT, committed(&pool, &xid)).await {
            Ok(Ok(Some(true))) => {
                tracing::info!("a commit's answer was lost ({lost}); the database says it committed: acknowledged");
                Ok(())
            }
            Ok(Ok(Some(false))) => Err(Error::Unavailable(format!(
                "the PostgreSQL database lost this write before it committed ({lost}); nothing was stored; the engine reconnects by itself: retry in a few seconds"
            ))),
            _ => Err(Error::OutcomeUnknown(format!(
                "this write reached the PostgreSQL database but its answer was lost ({lost}), and whether it committed cannot be told now; it may be stored. Retrying with the same idempotency_key is safe: once the database answers, the retry returns this write's answer if it committed, and writes it if not; without a key, look for it (entry.list, entry.get) before writing it again"
            ))),
        }
    }
}

/// Whether the commit of the transaction `xid` lost its answer: the link
/// failed (not a refusal by the database, which is an answer).
fn answer_lost(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(d) => d
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}

/// What became of transaction `xid`: `Some(true)` committed, `Some(false)`
/// aborted (a server that restarted aborts what was in progress), `None`
/// too old to tell; asked again while it is still in progress.
async fn committed(pool: &PgPool, xid: &str) -> Result<Option<bool>> {
    let mut conn = pool.acquire().await?;
    loop {
        let status: Option<String> = sqlx::query_scalar("SELECT pg_xact_status($1::xid8)")
            .bind(xid)
            .fetch_one(&mut *conn)
            .await?;
        match status.as_deref() {
            Some("committed") => return Ok(Some(true)),
            Some("aborted") => return Ok(Some(false)),
            Some(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            None => return Ok(None),
        }
    }
}
