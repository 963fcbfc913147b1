//! Deliveries to A2A agents as both stores keep them (the `deliveries`
//! table; rows are written with their entry), written once: the statements
//! (the same SQL on both, but for which agents' messages wait: a bound list
//! is JSON text on SQLite and an array on PostgreSQL), the sequences that
//! run them (over `Select` and `Execute`; a store supplies the connection
//! and, for a sequence of several, the transaction) and reading a row
//! back. A flag is compared as `= TRUE`/`= FALSE`, never bare: SQLite's
//! planner uses an index on an equality only (tests in `store/sqlite.rs`).

use super::query::{Arg, Columns, Dialect, Execute, Query, Select};
use super::DeliveryRow;
use crate::error::Result;
use crate::id;

/// Finished conversations kept (`rules::KEEP_FINISHED_CONVERSATIONS`), as
/// bound.
pub const KEEP_FINISHED: i64 = super::rules::KEEP_FINISHED_CONVERSATIONS as i64;

/// A delivery's columns, in the order `read_delivery` reads them.
pub const COLUMNS: &str = "entry, agent, root, pad, state, live";

/// Conversations begun: every live one and the newest finished. Binds
/// how many finished ones are kept.
pub const CONVERSATIONS: &str = "SELECT entry, agent, root, pad, state, live FROM deliveries \
     WHERE entry = root AND state IS NOT NULL AND (live = TRUE OR entry IN \
       (SELECT entry FROM deliveries WHERE entry = root AND live = FALSE \
        ORDER BY updated_at DESC LIMIT $1)) ORDER BY entry";

/// Stores a conversation's state in its root row. Binds entry, agent,
/// root, pad, state, live, now.
pub const SAVE: &str =
    "INSERT INTO deliveries (entry, agent, root, pad, state, taken, live, updated_at) \
     VALUES ($1, $2, $3, $4, $5, TRUE, $6, $7) ON CONFLICT (root, agent, entry) DO UPDATE SET \
     state = excluded.state, taken = TRUE, live = excluded.live, \
     updated_at = excluded.updated_at";

/// Forgets one message. Binds root, agent, entry.
pub const DROP_ONE: &str = "DELETE FROM deliveries WHERE root = $1 AND agent = $2 AND entry = $3";

/// Keeps the newest finished conversations only. Binds how many.
pub const TRIM_FINISHED: &str = "DELETE FROM deliveries WHERE entry = root AND live = FALSE \
     AND entry NOT IN (SELECT entry FROM deliveries WHERE entry = root AND live = FALSE \
      ORDER BY updated_at DESC LIMIT $1)";

/// An agent's live conversations. Binds the agent.
pub const DROP_LIVE: &str =
    "DELETE FROM deliveries WHERE agent = $1 AND entry = root AND live = TRUE";

/// An agent's messages not taken. Binds the agent. (SQLite's index of
/// them is partial on `taken = 0`, which only that very term matches.)
pub fn drop_waiting(d: Dialect) -> String {
    format!(
        "DELETE FROM deliveries WHERE agent = $1 AND {}",
        d.is_false("taken")
    )
}

/// The conversations of a pad, or of one note. Binds the pad and the
/// note's seq, either `NULL`.
pub const OF: &str = "SELECT entry, agent, root, pad, state, live FROM deliveries \
     WHERE entry = root AND (CAST($1 AS text) IS NULL OR pad = $1) \
       AND (CAST($2 AS bigint) IS NULL OR entry = $2) ORDER BY entry";

/// Reads a row of `COLUMNS`.
pub fn read_delivery<R: Columns>(row: &R) -> Result<DeliveryRow, R::Error> {
    Ok(DeliveryRow {
        entry: id::encode(row.int(0)?),
        agent: row.text(1)?,
        root: id::encode(row.int(2)?),
        pad: row.text(3)?,
        state: row.opt_text(4)?,
        live: row.flag(5)?,
    })
}

/// Messages for `agents` no conversation has taken yet, oldest first.
pub async fn waiting<S: Select>(s: &mut S, agents: &[String]) -> Result<Vec<DeliveryRow>> {
    let d = S::DIALECT;
    let q = Query::prepared(
        d,
        format!(
            "SELECT {COLUMNS} FROM deliveries WHERE {} AND {} ORDER BY entry",
            d.is_false("taken"),
            d.any_of("agent", "$1")
        ),
        vec![Arg::Texts(agents.to_vec())],
    );
    s.rows(&q, |r| read_delivery(r)).await
}

/// Conversations begun: every live one and the newest finished.
pub async fn conversations<S: Select>(s: &mut S) -> Result<Vec<DeliveryRow>> {
    let q = Query::prepared(S::DIALECT, CONVERSATIONS, vec![Arg::Int(KEEP_FINISHED)]);
    s.rows(&q, |r| read_delivery(r)).await
}

/// The conversations of a pad, or of one note (a full id).
pub async fn of<S: Select>(
    s: &mut S,
    pad: Option<&str>,
    entry: Option<&str>,
) -> Result<Vec<DeliveryRow>> {
    let entry = entry.map(|e| id::decode(e).unwrap_or(-1));
    let q = Query::prepared(
        S::DIALECT,
        OF,
        vec![Arg::opt_text(pad), Arg::opt_int(entry)],
    );
    s.rows(&q, |r| read_delivery(r)).await
}

/// Stores a conversation's state in its root row; `taken`: the waiting
/// message it took in, waiting no more; the oldest finished ones past
/// those kept go. Run in one transaction.
pub async fn save<C: Execute>(
    c: &mut C,
    row: &DeliveryRow,
    taken: Option<&str>,
    now: i64,
) -> Result<()> {
    let d = C::DIALECT;
    let (Some(entry), Some(root)) = (id::decode(&row.entry), id::decode(&row.root)) else {
        return Ok(());
    };
    let args = vec![
        Arg::Int(entry),
        Arg::Text(row.agent.clone()),
        Arg::Int(root),
        Arg::Text(row.pad.clone()),
        Arg::opt_text(row.state.clone()),
        Arg::Bool(row.live),
        Arg::Int(now),
    ];
    c.execute(&Query::prepared(d, SAVE, args)).await?;
    if let Some(t) = taken.and_then(id::decode).filter(|t| *t != entry) {
        let args = vec![Arg::Int(root), Arg::Text(row.agent.clone()), Arg::Int(t)];
        c.execute(&Query::prepared(d, DROP_ONE, args)).await?;
    }
    if !row.live {
        let args = vec![Arg::Int(KEEP_FINISHED)];
        c.execute(&Query::prepared(d, TRIM_FINISHED, args)).await?;
    }
    Ok(())
}

/// Forgets a waiting message (its entry is gone).
pub async fn drop_one<C: Execute>(c: &mut C, row: &DeliveryRow) -> Result<()> {
    let (Some(entry), Some(root)) = (id::decode(&row.entry), id::decode(&row.root)) else {
        return Ok(());
    };
    let args = vec![
        Arg::Int(root),
        Arg::Text(row.agent.clone()),
        Arg::Int(entry),
    ];
    c.execute(&Query::prepared(C::DIALECT, DROP_ONE, args))
        .await?;
    Ok(())
}

/// Forgets what `agent` has not finished: how many conversations. Run in
/// one transaction.
pub async fn drop_agent<C: Execute>(c: &mut C, agent: &str) -> Result<usize> {
    let d = C::DIALECT;
    let agent = || vec![Arg::Text(agent.into())];
    let n = c.execute(&Query::prepared(d, DROP_LIVE, agent())).await?;
    c.execute(&Query::prepared(d, drop_waiting(d), agent()))
        .await?;
    Ok(n as usize)
}
