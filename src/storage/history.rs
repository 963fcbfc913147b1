//! History's reads written once above the stores: the audit
//! (`History::changes`) — entries created, edits and deletions, restores,
//! merged newest first — over the one read each store supplies
//! (`HistoryRead`: a select run with the caller's filter, its rows read by
//! `rows::read_change`).

use super::rules::newest_first;
use super::HistoryFilter;
use crate::error::Result;
use crate::protocol::Change;

/// One of the audit's scans: `select` (its `WHERE` open for more `AND`s)
/// narrowed by the filter on the change's `actor` and `at` columns, the
/// newest `cap` by `order`; `what` names the change (`None`: the row's
/// action).
pub struct ChangeScan<'a> {
    pub select: String,
    pub actor: &'a str,
    pub at: &'a str,
    pub order: &'a str,
    pub cap: i64,
    pub what: Option<&'a str>,
}

/// The read the audit makes on a store.
#[allow(async_fn_in_trait)]
pub trait HistoryRead {
    /// The rows `scan` selects passing `filter`, as (time, change).
    async fn changes_in(
        &mut self,
        scan: ChangeScan<'_>,
        filter: &HistoryFilter,
    ) -> Result<Vec<(i64, Change)>>;
}

/// The columns each scan selects, in the order `rows::read_change` reads
/// them: seq, pad, actor, time, content, action, change.
const CREATED: &str = "SELECT e.seq, e.pad, e.author, e.created_at, e.content, \
     CAST(NULL AS text), CAST(NULL AS bigint) FROM";

/// Newest changes first, at most `limit`; `true` when more matched.
/// `created`: entries created count too (live or deleted since, each once).
pub async fn changes(
    r: &mut impl HistoryRead,
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
        out.extend(r.changes_in(scan, filter).await?);
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
        out.extend(r.changes_in(scan, filter).await?);
    }
    Ok(newest_first(out, limit))
}
