//! Entries' statements written once above the stores. Reads, over a
//! store's read connection (`Select`): a page of the entries passing a
//! filter, newest first (`list`, cut by `page`), how many pass one
//! (`count_matching`), the replies under an entry, entries by id and
//! their neighbours in their pads. Writes, on a write's transaction
//! (`storage::write`): an edit rewritten, a parent's reply noted, the
//! entries a pad's window may drop, the links a dependency walk reads.

use std::collections::HashMap;

use super::query::{
    read_entry, read_entry_seq, Arg, Columns, Dialect, Execute, Query, Select, ENTRY_COLUMNS,
};
use super::rules::{Stamp, PAD_NEIGHBOURS};
use super::{EntryFilter, Page};
use crate::error::Result;
use crate::id;
use crate::model::{Category, Entry, Status};

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
/// Reads entries (small rows, the pad index), not their vectors. With a
/// tag, on SQLite, the count walks the first tag's own list and stops at
/// `cap`: the filter's form (`e.seq IN` the tag's list) lists every entry
/// with the tag first — 18 ms for a tag on a tenth of a million notes, where the
/// walk takes 1 ms, and a search by tag counts before it looks.
pub async fn count_matching<S: Select>(
    s: &mut S,
    filter: &EntryFilter,
    cap: usize,
) -> Result<usize> {
    let counted = s
        .rows(&counting(S::DIALECT, filter, cap), |r| r.int(0))
        .await?;
    Ok(counted.first().map_or(0, |n| *n as usize))
}

/// `count_matching`'s statement.
pub fn counting(dialect: Dialect, filter: &EntryFilter, cap: usize) -> Query {
    let mut q = match (dialect, filter.tags.split_first()) {
        (Dialect::Sqlite, Some((tag, others))) => {
            let mut q = Query::new(
                dialect,
                "SELECT count(*) FROM (SELECT 1 FROM entry_tags t0 \
                 JOIN entries e ON e.seq = t0.seq JOIN pads p ON p.name = e.pad WHERE true",
            );
            q.push(" AND t0.tag = $?", Arg::Text(tag.clone()));
            // Any other tag looked up on each entry the walk reaches.
            q.filter_per_entry(&EntryFilter {
                tags: others.to_vec(),
                ..filter.clone()
            });
            q
        }
        _ => {
            let mut q = Query::new(
                dialect,
                "SELECT count(*) FROM (SELECT 1 FROM entries e JOIN pads p ON p.name = e.pad WHERE true",
            );
            q.filter(filter);
            q
        }
    };
    q.push(" LIMIT $?) AS m", Arg::Int(cap as i64));
    q
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

/// The live entries with these seqs, in their order (`None`: gone).
pub async fn by_id<S: Select>(s: &mut S, seqs: &[i64]) -> Result<Vec<Option<Entry>>> {
    let q = Query::prepared(
        S::DIALECT,
        format!(
            "SELECT {ENTRY_COLUMNS} FROM entries e WHERE {}",
            S::DIALECT.any_of("e.seq", "$1")
        ),
        vec![Arg::Ints(seqs.to_vec())],
    );
    let mut found: HashMap<i64, Entry> = s
        .rows(&q, |r| read_entry_seq(r))
        .await?
        .into_iter()
        .collect();
    Ok(seqs.iter().map(|seq| found.remove(seq)).collect())
}

/// For each seq, the live entries just before and just after it in its
/// pad, then the ones two away (`Entries::pad_neighbours`).
pub async fn pad_neighbours<S: Select>(s: &mut S, seqs: &[i64]) -> Result<Vec<[Option<i64>; 4]>> {
    let q = Query::prepared(
        S::DIALECT,
        format!(
            "SELECT e.seq, {PAD_NEIGHBOURS} FROM entries e WHERE {}",
            S::DIALECT.any_of("e.seq", "$1")
        ),
        vec![Arg::Ints(seqs.to_vec())],
    );
    let found: HashMap<i64, [Option<i64>; 4]> = s
        .rows(&q, |r| {
            Ok((
                r.int(0)?,
                [r.opt_int(1)?, r.opt_int(2)?, r.opt_int(3)?, r.opt_int(4)?],
            ))
        })
        .await?
        .into_iter()
        .collect();
    Ok(seqs
        .iter()
        .map(|seq| found.get(seq).copied().unwrap_or([None; 4]))
        .collect())
}

/// The ids the entry `seq` waits on (empty when it is gone).
pub async fn depends_on<S: Select>(s: &mut S, seq: i64) -> Result<Vec<String>> {
    let q = Query::prepared(
        S::DIALECT,
        "SELECT depends_on FROM entries WHERE seq = $1",
        vec![Arg::Int(seq)],
    );
    Ok(s.first(&q, |r| r.texts(0)).await?.unwrap_or_default())
}

/// Writes `after` (`rules::replied`) over the parent `seq` a reply moved.
pub async fn note_reply<C: Execute>(
    c: &mut C,
    seq: i64,
    before: &Entry,
    after: &Entry,
    now: i64,
) -> Result<()> {
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "UPDATE entries SET replies = replies + 1, answer = $2, tags = $3, version = $4, \
             updated_at = {}(updated_at, $5) WHERE seq = $1",
            C::DIALECT.greatest()
        ),
        vec![
            Arg::Int(seq),
            Arg::opt_int(after.answer.as_deref().and_then(id::decode)),
            Arg::Texts(after.tags.clone()),
            Arg::Int(after.version),
            Arg::Int(if after.version == before.version {
                0
            } else {
                now
            }),
        ],
    );
    c.execute(&q).await?;
    Ok(())
}

/// Writes `after` over the entry `seq`, one version on; `remind`: the
/// patch's new reminder (`Some(None)`: cleared), which re-arms it;
/// `stamp`: the task's times its new status sets (`rules::stamp`).
pub async fn rewrite<C: Execute>(
    c: &mut C,
    seq: i64,
    after: &Entry,
    remind: Option<Option<i64>>,
    stamp: Option<Stamp>,
    now: i64,
) -> Result<()> {
    let meta = after
        .meta
        .as_ref()
        .map(|m| serde_json::to_string(m).expect("json serializes"));
    let q = Query::prepared(
        C::DIALECT,
        "UPDATE entries SET content = $1, tags = $2, kind = $3, status = $4, assignee = $5, \
         resume = $6, category = $7, confidence = $8, pinned = $9, depends_on = $10, \
         remind_at = CASE WHEN $11 THEN $12 ELSE remind_at END, \
         reminded_at = CASE WHEN $11 THEN NULL ELSE reminded_at END, \
         meta = $13, updated_at = $14, version = version + 1, supersedes = $16, \
         claimed_at = CASE WHEN $17 THEN $18 ELSE claimed_at END, \
         finished_at = CASE WHEN $19 THEN $20 ELSE finished_at END WHERE seq = $15",
        vec![
            Arg::Text(after.content.clone()),
            Arg::Texts(after.tags.clone()),
            Arg::Text(after.kind.as_str().into()),
            Arg::opt_text(after.status.map(Status::as_str)),
            Arg::opt_text(after.assignee.clone()),
            Arg::opt_text(after.resume.clone()),
            Arg::opt_text(after.category.map(Category::as_str)),
            Arg::opt_real(after.confidence),
            Arg::Bool(after.pinned),
            Arg::Texts(after.depends_on.iter().map(|r| r.to_string()).collect()),
            Arg::Bool(remind.is_some()),
            Arg::opt_int(remind.flatten()),
            Arg::opt_text(meta),
            Arg::Int(now),
            Arg::Int(seq),
            Arg::opt_int(after.supersedes.as_deref().and_then(id::decode)),
            Arg::Bool(stamp.is_some_and(|s| s.claimed_at.is_some())),
            Arg::opt_int(stamp.and_then(|s| s.claimed_at).flatten()),
            Arg::Bool(stamp.is_some()),
            Arg::opt_int(stamp.and_then(|s| s.finished_at)),
        ],
    );
    c.execute(&q).await?;
    Ok(())
}

/// The pad's oldest entries a window may drop (not pinned, not tagged
/// `important`), at most `limit`; with `mine`, only that author's and
/// never that seq.
pub async fn droppable<S: Select>(
    s: &mut S,
    pad: &str,
    mine: Option<(&str, i64)>,
    limit: i64,
) -> Result<Vec<i64>> {
    let d = S::DIALECT;
    let droppable = format!(
        "SELECT seq FROM entries WHERE pad = $1 AND {} AND NOT {}",
        d.is_false("pinned"),
        d.list_has("tags", "'important'")
    );
    let mut args = vec![Arg::Text(pad.into()), Arg::Int(limit)];
    let sql = match mine {
        Some((author, except)) => {
            args.extend([Arg::Text(author.into()), Arg::Int(except)]);
            format!("{droppable} AND author = $3 AND seq != $4 ORDER BY seq LIMIT $2")
        }
        None => format!("{droppable} ORDER BY seq LIMIT $2"),
    };
    s.rows(&Query::prepared(d, sql, args), |r| r.int(0)).await
}
