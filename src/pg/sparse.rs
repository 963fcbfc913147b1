//! The sparse list on PostgreSQL: each entry's learned sparse terms
//! (`semantic::splade`) in `sparse_terms`, written by the engine that
//! embeds the entry in the transaction that stores its vector
//! (`vectors.rs`), and how many entries hold each term (`sparse_counts`),
//! kept in the same transaction (migrations/postgres/…_sparse_terms.sql).
//! Writers hold the vectors' advisory lock, so the counts' rows are never
//! updated by two engines at once.

use sqlx::{Postgres, Transaction};

use super::{bounded, PgStore};
use crate::error::Result;
use crate::storage::sparse;
use crate::storage::{EntryFilter, Fut, SparseSearch};

/// Replaces the terms of `seqs` by `terms` (an entry's, in the same order;
/// none for an entry that is gone), with the counts kept.
pub(super) async fn replace_terms(
    tx: &mut Transaction<'_, Postgres>,
    seqs: &[i64],
    terms: &[&[(u32, f32)]],
) -> Result<()> {
    if seqs.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "WITH gone AS (DELETE FROM sparse_terms WHERE seq = ANY($1) RETURNING term), \
         counted AS (SELECT term, count(*) AS k FROM gone GROUP BY term) \
         UPDATE sparse_counts c SET n = c.n - counted.k FROM counted \
         WHERE c.term = counted.term",
    )
    .bind(seqs)
    .execute(&mut **tx)
    .await?;
    let (mut ts, mut ss, mut ws) = (Vec::new(), Vec::new(), Vec::new());
    for (seq, held) in seqs.iter().zip(terms) {
        for &(term, weight) in held.iter() {
            ts.push(term as i32);
            ss.push(*seq);
            ws.push(weight);
        }
    }
    if ts.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "WITH added AS (INSERT INTO sparse_terms (term, seq, weight) \
             SELECT * FROM unnest($1::int[], $2::bigint[], $3::real[]) RETURNING term) \
         INSERT INTO sparse_counts (term, n) \
         SELECT term, count(*) FROM added GROUP BY term ORDER BY term \
         ON CONFLICT (term) DO UPDATE SET n = sparse_counts.n + excluded.n",
    )
    .bind(&ts)
    .bind(&ss)
    .bind(&ws)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl SparseSearch for PgStore {
    fn term_counts<'a>(&'a self, terms: &'a [u32]) -> Fut<'a, Vec<(u32, u64)>> {
        bounded(async move {
            let asked: Vec<i32> = terms.iter().map(|&t| t as i32).collect();
            let rows: Vec<(i32, i64)> =
                sqlx::query_as("SELECT term, n FROM sparse_counts WHERE term = ANY($1)")
                    .bind(&asked)
                    .fetch_all(self.pool())
                    .await?;
            let count = |term: u32| {
                rows.iter()
                    .find(|(t, _)| *t == term as i32)
                    .map_or(0, |(_, n)| (*n).max(0) as u64)
            };
            Ok(terms.iter().map(|&t| (t, count(t))).collect())
        })
    }

    fn sparse_postings<'a>(
        &'a self,
        terms: &'a [u32],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(u32, i64, f32)>> {
        bounded(async move {
            let mut conn = self.pool().acquire().await?;
            sparse::postings(&mut *conn, terms, filter).await
        })
    }
}
