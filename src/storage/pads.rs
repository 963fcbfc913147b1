//! Pads' reads written once above the stores, over a store's read
//! connection (`Select`): the pads, the tags in use.

use super::query::Select;
use super::rows::{read_pad, Columns, PAD_COLUMNS};
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
    let mut q = S::query(format!(
        "SELECT t.tag, count(*) AS n FROM {} WHERE true",
        S::DIALECT.tagged_entries()
    ));
    q.filter(filter)
        .raw(" GROUP BY t.tag ORDER BY n DESC, t.tag");
    s.rows(&q, |r| Ok((r.text(0)?, r.int(1)?))).await
}
