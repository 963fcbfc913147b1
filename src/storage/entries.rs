//! Entries' reads written once above the stores, over a store's read
//! connection (`Select`): a page of the entries passing a filter, newest
//! first (`list`, cut by `page`), how many pass one (`count_matching`),
//! and the replies under an entry.

use super::query::{Arg, Query, Select};
use super::rows::{read_entry, read_entry_seq, Columns, ENTRY_COLUMNS};
use super::{EntryFilter, Page};
use crate::error::Result;
use crate::model::Entry;

/// The entries passing `filter`, newest first, after `cursor` (a previous
/// page's last seq), with their seqs: `limit` and one more, which tells
/// that another page follows (`page`). The cursor is keyed on the
/// insertion order, so pages never repeat or skip an entry even while
/// others write.
pub async fn list<S: Select>(
    s: &mut S,
    filter: &EntryFilter,
    limit: u32,
    cursor: Option<i64>,
) -> Result<Vec<(i64, Entry)>> {
    let mut q = S::query(format!(
        "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad WHERE true"
    ));
    q.filter(filter);
    if let Some(c) = cursor {
        q.push(" AND e.seq < $?", Arg::Int(c));
    }
    q.push(" ORDER BY e.seq DESC LIMIT $?", Arg::Int(limit as i64 + 1));
    s.rows(&q, |r| read_entry_seq(r)).await
}

/// How many live entries pass `filter`, counting no further than `cap`.
/// Reads entries (small rows, the pad index), not their vectors.
pub async fn count_matching<S: Select>(
    s: &mut S,
    filter: &EntryFilter,
    cap: usize,
) -> Result<usize> {
    let mut q = S::query(
        "SELECT count(*) FROM (SELECT 1 FROM entries e JOIN pads p ON p.name = e.pad WHERE true",
    );
    q.filter(filter)
        .push(" LIMIT $?) AS m", Arg::Int(cap as i64));
    let counted = s.rows(&q, |r| r.int(0)).await?;
    Ok(counted.first().map_or(0, |n| *n as usize))
}

/// `list`'s rows as a page of at most `limit`, with the cursor of the
/// next page when there is one.
pub fn page(mut rows: Vec<(i64, Entry)>, limit: u32) -> Page {
    let next_cursor = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|r| r.0.to_string())
    } else {
        None
    };
    Page {
        entries: rows.into_iter().map(|r| r.1).collect(),
        next_cursor,
    }
}

/// Every reply under the entry `seq`, at any depth, oldest first, at most
/// `limit`.
pub async fn replies<S: Select>(s: &mut S, seq: i64, limit: usize) -> Result<Vec<Entry>> {
    let q = Query::bound(
        S::DIALECT,
        format!(
            "WITH RECURSIVE thread(seq) AS ( \
               SELECT seq FROM entries WHERE reply_to = $1 \
               UNION SELECT r.seq FROM entries r JOIN thread t ON r.reply_to = t.seq) \
             SELECT {ENTRY_COLUMNS} FROM thread JOIN entries e ON e.seq = thread.seq \
             ORDER BY e.seq LIMIT $2"
        ),
        vec![Arg::Int(seq), Arg::Int(limit as i64)],
    );
    s.rows(&q, |r| read_entry(r)).await
}
