//! Deliveries to A2A agents as both stores keep them (the `deliveries`
//! table; rows are written with their entry), written once: the statements
//! (the same SQL on both, but for which agents' messages wait: a bound list
//! is JSON text on SQLite and an array on PostgreSQL) and reading a row
//! back. A flag is compared as `= TRUE`/`= FALSE`, never bare: SQLite's
//! planner uses an index on an equality only (tests in `store/deliveries.rs`). Each store runs them (`store/deliveries.rs`, `pg/deliveries.rs`).

use super::dialect::Dialect;
use super::rows::Columns;
use super::DeliveryRow;
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
