//! What `stats` and the metrics read, written once above the stores over a
//! store's read connection (`Select`): write rates and the pads busiest
//! or idlest. Time windows are id ranges (an id starts with its write
//! time, `crate::id`), so "the last hour" reads only the last hour's rows.

use super::query::{Arg, Columns, Query, Select};
use super::rules::by_minute;
use super::PadRow;
use crate::error::Result;
use crate::id;

/// Entries written in each of the last `minutes` minutes up to `now`,
/// oldest minute first, counting only pads `keep` accepts (a token's
/// grant); entries deleted since are not counted.
pub async fn writes_per_minute<S: Select>(
    s: &mut S,
    now: i64,
    minutes: usize,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<u64>> {
    let start = now - minutes as i64 * 60_000;
    let q = Query::bound(
        S::DIALECT,
        "SELECT (created_at - $1) / 60000 AS m, pad, count(*) FROM entries \
         WHERE seq >= $2 AND created_at >= $1 AND created_at <= $3 GROUP BY m, pad",
        vec![
            Arg::Int(start),
            Arg::Int(id::first_at(start)),
            Arg::Int(now),
        ],
    );
    let rows = s
        .rows(&q, |r| Ok((r.int(0)?, r.text(1)?, r.int(2)?)))
        .await?;
    Ok(by_minute(rows, minutes, keep))
}

/// Live pads, the `limit` with the most entries or (`stalest`) the
/// longest idle first.
pub async fn pads_by<S: Select>(s: &mut S, stalest: bool, limit: usize) -> Result<Vec<PadRow>> {
    let order = if stalest {
        "last_write_at ASC, name"
    } else {
        "entries DESC, name"
    };
    let q = Query::bound(
        S::DIALECT,
        format!(
            "SELECT name, entries, last_write_at, ttl_seconds FROM pads \
             WHERE archived_at IS NULL ORDER BY {order} LIMIT $1"
        ),
        vec![Arg::Int(limit as i64)],
    );
    s.rows(&q, |r| {
        Ok(PadRow {
            name: r.text(0)?,
            entries: r.int(1)?,
            last_write_at: r.int(2)?,
            ttl_seconds: r.opt_int(3)?,
        })
    })
    .await
}

/// The `limit` pads written to most since `since`, with their counts.
pub async fn recent_writes_by_pad<S: Select>(
    s: &mut S,
    since: i64,
    limit: usize,
) -> Result<Vec<(String, i64)>> {
    let q = Query::bound(
        S::DIALECT,
        "SELECT pad, count(*) AS n FROM entries WHERE seq >= $1 AND created_at >= $2 \
         GROUP BY pad ORDER BY n DESC, pad LIMIT $3",
        vec![
            Arg::Int(id::first_at(since)),
            Arg::Int(since),
            Arg::Int(limit as i64),
        ],
    );
    s.rows(&q, |r| Ok((r.text(0)?, r.int(1)?))).await
}
