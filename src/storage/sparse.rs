//! The sparse list's read, written once above both stores: the postings of
//! a query's word pieces on the live entries that pass a filter, from the
//! `sparse_terms` table each store keeps beside its vectors
//! (`store/sparse.rs`, `pg/sparse.rs`). `engine::sparse` ranks them.

use super::query::{Arg, Columns, Select};
use super::EntryFilter;
use crate::error::Result;

/// The postings of `terms` on the live entries passing `filter`: (term,
/// entry id, the entry's weight for it), in no order. The terms drive:
/// each term's entries are read by the table's key, then each entry once,
/// with the filter checked on it.
pub async fn postings<S: Select>(
    s: &mut S,
    terms: &[u32],
    filter: &EntryFilter,
) -> Result<Vec<(u32, i64, f32)>> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let dialect = S::DIALECT;
    // Cast: PostgreSQL keeps a term as an integer and a weight as a real,
    // and the rows read 64-bit values.
    let mut q =
        S::query("SELECT CAST(t.term AS BIGINT), t.seq, CAST(t.weight AS DOUBLE PRECISION) FROM ");
    q.push(
        &dialect.rows_of("$?", "q"),
        Arg::Ints(terms.iter().map(|&t| t as i64).collect()),
    );
    let join = dialect.join_in_order();
    q.raw(&format!(
        " {join} sparse_terms t ON t.term = q.value \
         {join} entries e ON e.seq = t.seq JOIN pads p ON p.name = e.pad WHERE true"
    ));
    q.filter_per_entry(filter);
    s.rows(&q, |r| {
        Ok((
            r.int(0)? as u32,
            r.int(1)?,
            r.opt_real(2)?.unwrap_or(0.0) as f32,
        ))
    })
    .await
}
