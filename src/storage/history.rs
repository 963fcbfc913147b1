//! History's reads written once above the stores, over a store's read
//! connection (`Select`): an entry's kept versions, a change's, the trash,
//! the kept ids a prefix names, and the audit (`History::changes`) —
//! entries created, edits and deletions, restores, merged newest first;
//! and what a restore reads on its transaction (`storage::write::restore`).

use std::ops::ControlFlow;

use super::query::{
    read_change, read_entry, read_version, Arg, Columns, Execute, Query, Select, ENTRY_COLUMNS,
    VERSION_COLUMNS,
};
use super::rules::{newest_first, prefix_range, IN_TRASH};
use super::{HistoryFilter, Purge, Restore, Visible};
use crate::error::Result;
use crate::model::Entry;
use crate::protocol::{Change, Version};

/// One of the audit's scans: `select` (its `WHERE` open for more `AND`s)
/// narrowed by the filter on the change's `actor` and `at` columns, the
/// newest `cap` by `order`; `what` names the change (`None`: the row's
/// action).
struct ChangeScan<'a> {
    select: String,
    actor: &'a str,
    at: &'a str,
    order: &'a str,
    cap: i64,
    what: Option<&'a str>,
}

/// The rows `scan` selects passing `filter`, as (time, change).
async fn changes_in<S: Select>(
    s: &mut S,
    scan: ChangeScan<'_>,
    filter: &HistoryFilter,
) -> Result<Vec<(i64, Change)>> {
    let mut q = S::query(scan.select);
    q.history_filter(filter, scan.actor, scan.at).push(
        &format!(" ORDER BY {} DESC LIMIT $?", scan.order),
        Arg::Int(scan.cap),
    );
    s.rows(&q, |r| read_change(r, scan.what)).await
}

/// The kept versions `cond` (over `$1`, bound to `key`) selects, oldest
/// first.
async fn versions_where<S: Select>(s: &mut S, cond: &str, key: i64) -> Result<Vec<Version>> {
    let q = Query::bound(
        S::DIALECT,
        format!(
            "SELECT {ENTRY_COLUMNS}, {VERSION_COLUMNS} FROM entry_history e \
             WHERE {cond} ORDER BY e.n"
        ),
        vec![Arg::Int(key)],
    );
    s.rows(&q, |r| read_version(r).map(|v| v.2)).await
}

/// An entry as it is now (`None` while deleted) and its kept versions,
/// oldest first.
pub async fn history<S: Select>(s: &mut S, seq: i64) -> Result<(Option<Entry>, Vec<Version>)> {
    let q = Query::bound(
        S::DIALECT,
        format!("SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = $1"),
        vec![Arg::Int(seq)],
    );
    let live = s.rows(&q, |r| read_entry(r)).await?.pop();
    Ok((live, versions_where(s, "e.seq = $1", seq).await?))
}

/// The versions one change kept.
pub async fn change<S: Select>(s: &mut S, batch: i64) -> Result<Vec<Version>> {
    versions_where(s, "e.batch = $1", batch).await
}

/// Deleted entries in the trash, newest deletion first, `limit` at a
/// time; the cursor is the last row's number.
pub async fn trash<S: Select>(
    s: &mut S,
    filter: &HistoryFilter,
    limit: u32,
    cursor: Option<i64>,
) -> Result<(Vec<Version>, Option<i64>)> {
    let mut q = S::query(format!(
        "SELECT {ENTRY_COLUMNS}, {VERSION_COLUMNS} FROM entry_history e WHERE {IN_TRASH}"
    ));
    q.history_filter(filter, "e.actor", "e.at");
    if let Some(c) = cursor {
        q.push(" AND e.n < $?", Arg::Int(c));
    }
    q.push(" ORDER BY e.n DESC LIMIT $?", Arg::Int(limit as i64 + 1));
    let mut rows = s.rows(&q, |r| read_version(r)).await?;
    let next = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|r| r.0)
    } else {
        None
    };
    Ok((rows.into_iter().map(|r| r.2).collect(), next))
}

/// Erases kept versions for good: one deleted entry's whole history, a
/// pad's trash, or the whole trash (with the versions of those entries).
pub async fn purge<S: Execute>(s: &mut S, which: &Purge) -> Result<usize> {
    let q = match which {
        Purge::Seq(seq) => Query::bound(
            S::DIALECT,
            "DELETE FROM entry_history WHERE seq = $1 \
             AND NOT EXISTS (SELECT 1 FROM entries WHERE seq = $1)",
            vec![Arg::Int(*seq)],
        ),
        Purge::Pad(pad) => Query::bound(
            S::DIALECT,
            format!(
                "DELETE FROM entry_history WHERE seq IN \
                 (SELECT e.seq FROM entry_history e WHERE {IN_TRASH} AND e.pad = $1)"
            ),
            vec![Arg::Text(pad.clone())],
        ),
        Purge::All => S::query(format!(
            "DELETE FROM entry_history WHERE seq IN \
             (SELECT e.seq FROM entry_history e WHERE {IN_TRASH})"
        )),
    };
    Ok(s.execute(&q).await? as usize)
}

/// Drops kept versions older than `cutoff`, then the oldest past
/// `max_rows`; how many went.
pub async fn prune<S: Execute>(s: &mut S, cutoff: i64, max_rows: i64) -> Result<usize> {
    let old = Query::bound(
        S::DIALECT,
        "DELETE FROM entry_history WHERE n < coalesce( \
           (SELECT n FROM entry_history WHERE at >= $1 ORDER BY n LIMIT 1), \
           (SELECT max(n) + 1 FROM entry_history))",
        vec![Arg::Int(cutoff)],
    );
    let over = Query::bound(
        S::DIALECT,
        "DELETE FROM entry_history WHERE n <= \
           (SELECT n FROM entry_history ORDER BY n DESC LIMIT 1 OFFSET $1)",
        vec![Arg::Int(max_rows)],
    );
    Ok((s.execute(&old).await? + s.execute(&over).await?) as usize)
}

/// Up to two (seq, pad) of entries, live or kept, whose id starts with
/// `id`, in pads `visible` accepts.
pub async fn kept_matches<S: Select>(
    s: &mut S,
    id: &str,
    visible: Visible<'_>,
) -> Result<Vec<(i64, String)>> {
    let (lo, hi) = prefix_range("id", &id.trim().to_lowercase())?;
    let q = Query::bound(
        S::DIALECT,
        "SELECT seq, pad FROM entries WHERE seq BETWEEN $1 AND $2 \
         UNION SELECT seq, pad FROM entry_history WHERE seq BETWEEN $1 AND $2 \
         ORDER BY seq",
        vec![Arg::Int(lo), Arg::Int(hi)],
    );
    let mut found: Vec<(i64, String)> = Vec::new();
    s.scan(&q, |r| {
        let (seq, pad) = (r.int(0)?, r.text(1)?);
        if visible(&pad) && found.last().is_none_or(|l| l.0 != seq) {
            found.push((seq, pad));
            if found.len() == 2 {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })
    .await?;
    Ok(found)
}

/// The columns each scan selects, in the order `rows::read_change` reads
/// them: seq, pad, actor, time, content, action, change.
const CREATED: &str = "SELECT e.seq, e.pad, e.author, e.created_at, e.content, \
     CAST(NULL AS text), CAST(NULL AS bigint) FROM";

/// Newest changes first, at most `limit`; `true` when more matched.
/// `created`: entries created count too (live or deleted since, each once).
pub async fn changes<S: Select>(
    s: &mut S,
    filter: &HistoryFilter,
    limit: usize,
    created: bool,
) -> Result<(Vec<Change>, bool)> {
    let cap = (limit + 1) as i64;
    let mut out = Vec::new();
    let creations = [
        ("entries", ""),
        (
            "entry_history",
            "AND e.action <> 'edit' AND e.n = (SELECT min(n) FROM entry_history h \
             WHERE h.seq = e.seq AND h.action <> 'edit') \
             AND NOT EXISTS (SELECT 1 FROM entries l WHERE l.seq = e.seq)",
        ),
    ];
    for (table, extra) in creations.into_iter().take(if created { 2 } else { 0 }) {
        let scan = ChangeScan {
            select: format!("{CREATED} {table} e WHERE true {extra}"),
            actor: "e.author",
            at: "e.created_at",
            order: "e.seq",
            cap,
            what: Some("created"),
        };
        out.extend(changes_in(s, scan, filter).await?);
    }
    // Edits and deletions, then restores.
    for (actor, at, what) in [
        ("e.actor", "e.at", None),
        ("e.restored_by", "e.restored_at", Some("restored")),
    ] {
        let scan = ChangeScan {
            select: format!(
                "SELECT e.seq, e.pad, {actor}, {at}, e.content, e.action, e.batch \
                 FROM entry_history e WHERE {at} IS NOT NULL"
            ),
            actor,
            at,
            order: at,
            cap,
            what,
        };
        out.extend(changes_in(s, scan, filter).await?);
    }
    Ok(newest_first(out, limit))
}

/// `(n, seq, version)` of the latest deletion of each entry `which` names,
/// oldest seq first, held for the transaction (two engines restoring the
/// same change bring each entry back once).
pub async fn last_deletions<S: Select>(
    s: &mut S,
    which: Restore,
) -> Result<Vec<(i64, i64, Version)>> {
    let (cond, key) = match which {
        Restore::Seq(seq) => ("e.seq = $1", seq),
        Restore::Change(batch) => ("e.batch = $1", batch),
    };
    let q = Query::prepared(
        S::DIALECT,
        format!(
            "SELECT {ENTRY_COLUMNS}, {VERSION_COLUMNS} FROM entry_history e \
             WHERE {cond} AND e.action <> 'edit' \
               AND e.n = (SELECT max(n) FROM entry_history h \
                          WHERE h.seq = e.seq AND h.action <> 'edit') \
             ORDER BY e.seq{}",
            S::DIALECT.hold_rows()
        ),
        vec![Arg::Int(key)],
    );
    s.rows(&q, |r| read_version(r)).await
}

/// Which of `seqs` are live.
pub async fn live<S: Select>(s: &mut S, seqs: &[i64]) -> Result<Vec<i64>> {
    let q = Query::prepared(
        S::DIALECT,
        format!(
            "SELECT seq FROM entries WHERE {}",
            S::DIALECT.any_of("seq", "$1")
        ),
        vec![Arg::Ints(seqs.to_vec())],
    );
    s.rows(&q, |r| r.int(0)).await
}
