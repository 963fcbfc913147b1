//! What a change keeps on PostgreSQL (`store/keep.rs` on SQLite): the
//! entries an edit, a deletion or a clear replaces, copied into
//! `entry_history` as one change in the transaction that then changes them
//! (`history.rs` reads them back, restores and prunes).

use std::collections::BTreeMap;

use sqlx::{PgConnection, Row};

use super::{read_entry_seq, Arg, Query, Run, ENTRY_COLUMNS};
use crate::error::Result;
use crate::model::Entry;
use crate::protocol::Action;
use crate::storage::query::{Dialect, ENTRY_COLUMN_COUNT};
use crate::storage::rules::KEPT_COLUMNS;

/// Copies the entries `cond` selects (a condition on `entries` over `$4`,
/// bound to `arg`) into the history as one change; returns the change.
pub(crate) async fn keep(
    conn: &mut PgConnection,
    on: bool,
    action: Action,
    by: &str,
    now: i64,
    cond: &str,
    arg: Arg,
) -> Result<i64> {
    if !on {
        return Ok(0);
    }
    let q = Query::bound(
        Dialect::Postgres,
        format!(
            "WITH b AS (SELECT nextval('history_batches') AS batch), \
             kept AS (INSERT INTO entry_history (batch, action, actor, at, {KEPT_COLUMNS}) \
               SELECT b.batch, $1, $2, $3, {KEPT_COLUMNS} FROM b, entries WHERE {cond}) \
             SELECT batch FROM b"
        ),
        vec![
            Arg::Text(action.as_str().into()),
            Arg::Text(by.into()),
            Arg::Int(now),
            arg,
        ],
    );
    Ok(q.build().fetch_one(&mut *conn).await?.try_get(0)?)
}

/// Deletes the entries `cond` selects (over `$4`, bound to `arg`) and keeps
/// them in the trash as one change, in one statement: an engine deleting
/// the same rows at once waits on their locks and then finds them gone, so
/// nothing is kept twice. Returns the change (`None`: nothing matched or
/// nothing kept), the entries when `rows`, and how many each author wrote.
pub(crate) async fn keep_deleting(
    conn: &mut PgConnection,
    on: bool,
    action: Action,
    by: &str,
    now: i64,
    (cond, arg): (&str, Arg),
    rows: bool,
) -> Result<(Option<i64>, Vec<Entry>, BTreeMap<String, usize>)> {
    let select = if rows {
        format!("{ENTRY_COLUMNS}, (SELECT batch FROM b) FROM gone e")
    } else {
        "e.author, count(*), (SELECT batch FROM b) FROM gone e GROUP BY e.author".to_owned()
    };
    let q = Query::bound(
        Dialect::Postgres,
        format!(
            "WITH b AS (SELECT nextval('history_batches') AS batch), \
             gone AS (DELETE FROM entries WHERE {cond} RETURNING *), \
             kept AS (INSERT INTO entry_history (batch, action, actor, at, {KEPT_COLUMNS}) \
               SELECT b.batch, $1, $2, $3, {KEPT_COLUMNS} FROM b, gone WHERE $5) \
             SELECT {select}"
        ),
        vec![
            Arg::Text(action.as_str().into()),
            Arg::Text(by.into()),
            Arg::Int(now),
            arg,
            Arg::Bool(on),
        ],
    );
    let found = q.build().fetch_all(&mut *conn).await?;
    if !rows {
        let mut authors = BTreeMap::new();
        for r in &found {
            authors.insert(r.try_get(0)?, r.try_get::<i64, _>(1)? as usize);
        }
        let change = found
            .first()
            .filter(|_| on)
            .map(|r| r.try_get(2))
            .transpose()?;
        return Ok((change, Vec::new(), authors));
    }
    let change = found
        .first()
        .filter(|_| on)
        .map(|r| r.try_get(ENTRY_COLUMN_COUNT))
        .transpose()?;
    let entries = found
        .iter()
        .map(|r| read_entry_seq(r).map(|e| e.1))
        .collect::<Result<Vec<_>>>()?;
    let mut authors = BTreeMap::new();
    for e in &entries {
        *authors.entry(e.author.clone()).or_insert(0) += 1;
    }
    Ok((change, entries, authors))
}
