//! Pads' statements written once above the stores, over a store's
//! connection (`Select`, `Execute`): the pads, one pad, a pad marked used,
//! the tags in use.

use super::query::{read_pad, Arg, Columns, Execute, Query, Select, PAD_COLUMNS};
use super::rules::no_pad;
use super::EntryFilter;
use crate::error::Result;
use crate::model::Pad;

/// Every pad, or the live ones, most recently written first.
pub async fn pads<S: Select>(s: &mut S, include_archived: bool) -> Result<Vec<Pad>> {
    let live = if include_archived {
        ""
    } else {
        "WHERE archived_at IS NULL"
    };
    let q = S::query(format!(
        "SELECT {PAD_COLUMNS} FROM pads {live} ORDER BY last_write_at DESC, name"
    ));
    s.rows(&q, |r| read_pad(r)).await
}

/// Tags in use on the live entries passing `filter`, most used first.
pub async fn tags<S: Select>(s: &mut S, filter: &EntryFilter) -> Result<Vec<(String, i64)>> {
    let mut q = S::query(
        "SELECT t.tag, count(*) AS n FROM entry_tags t JOIN entries e ON e.seq = t.seq \
         JOIN pads p ON p.name = e.pad WHERE true",
    );
    q.filter(filter)
        .raw(" GROUP BY t.tag ORDER BY n DESC, t.tag");
    s.rows(&q, |r| Ok((r.text(0)?, r.int(1)?))).await
}

/// The pad named `name`, if there is one.
pub async fn pad<S: Select>(s: &mut S, name: &str) -> Result<Option<Pad>> {
    let q = Query::prepared(
        S::DIALECT,
        format!("SELECT {PAD_COLUMNS} FROM pads WHERE name = $1"),
        vec![Arg::Text(name.into())],
    );
    s.first(&q, |r| read_pad(r)).await
}

/// Marks a pad used now, restoring it if archived.
pub async fn touch<C: Execute>(c: &mut C, name: &str, now: i64) -> Result<Pad> {
    let q = Query::prepared(
        C::DIALECT,
        format!(
            "UPDATE pads SET last_write_at = $2, archived_at = NULL WHERE name = $1 \
             RETURNING {PAD_COLUMNS}"
        ),
        vec![Arg::Text(name.into()), Arg::Int(now)],
    );
    c.first(&q, |r| read_pad(r))
        .await?
        .ok_or_else(|| no_pad(name))
}
