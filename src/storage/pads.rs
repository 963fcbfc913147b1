//! Pads' reads written once above the stores, over a store's read
//! connection (`Select`).

use super::query::Select;
use super::rows::{read_pad, PAD_COLUMNS};
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
