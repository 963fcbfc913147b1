//! The sparse list on SQLite: each entry's learned sparse terms
//! (`semantic::splade`) in `vectors.db`'s `sparse_terms` table, written by the
//! embedding worker in the transaction that stores the entry's vector, and
//! how many entries hold each term (`sparse_counts`), kept in the same
//! transaction. A search reads the postings of the query's terms on the
//! entries that pass its filter (`storage::sparse`; `engine::sparse`
//! ranks them).

use rusqlite::{params, CachedStatement, Connection, Transaction};

use super::sqlite::ready;
use super::Sqlite;
use crate::error::Result;
use crate::storage::sparse;
use crate::storage::{EntryFilter, Fut, SparseSearch};

/// Replaces entries' terms inside the worker's transaction.
pub(super) struct Terms<'t> {
    forget: CachedStatement<'t>,
    add: CachedStatement<'t>,
    count: CachedStatement<'t>,
}

impl<'t> Terms<'t> {
    pub(super) fn new(tx: &'t Transaction<'_>) -> Result<Terms<'t>> {
        Ok(Terms {
            forget: tx.prepare_cached("DELETE FROM sparse_terms WHERE seq = ? RETURNING term")?,
            add: tx
                .prepare_cached("INSERT INTO sparse_terms (term, seq, weight) VALUES (?, ?, ?)")?,
            count: tx.prepare_cached(
                "INSERT INTO sparse_counts (term, n) VALUES (?1, ?2) \
                 ON CONFLICT (term) DO UPDATE SET n = n + ?2",
            )?,
        })
    }

    /// Drops an entry's terms (it is gone, or new terms follow).
    pub(super) fn forget(&mut self, seq: i64) -> Result<()> {
        let gone: Vec<i64> = self
            .forget
            .query_map([seq], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if gone.is_empty() {
            return Ok(());
        }
        for term in gone {
            self.count.execute(params![term, -1])?;
        }
        Ok(())
    }

    /// Stores an entry's terms (none: nothing is stored).
    pub(super) fn add(&mut self, seq: i64, terms: &[(u32, f32)]) -> Result<()> {
        if terms.is_empty() {
            return Ok(());
        }
        for &(term, weight) in terms {
            self.add.execute(params![term, seq, weight])?;
            self.count.execute(params![term, 1])?;
        }
        Ok(())
    }
}

/// One statement, so the counts come from one snapshot.
fn term_counts(conn: &Connection, terms: &[u32]) -> Result<Vec<(u32, u64)>> {
    let asked =
        serde_json::to_string(terms).map_err(|e| crate::error::Error::Internal(e.to_string()))?;
    let counted: std::collections::HashMap<u32, u64> = conn
        .prepare_cached(
            "SELECT c.term, c.n FROM json_each(?) j JOIN vec.sparse_counts c ON c.term = j.value",
        )?
        .query_map([asked], |r| {
            Ok((
                r.get::<_, i64>(0)? as u32,
                r.get::<_, i64>(1)?.max(0) as u64,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(terms
        .iter()
        .map(|t| (*t, counted.get(t).copied().unwrap_or(0)))
        .collect())
}

impl SparseSearch for Sqlite {
    fn term_counts<'a>(&'a self, terms: &'a [u32]) -> Fut<'a, Vec<(u32, u64)>> {
        self.inline(move |s| term_counts(&*s.reader()?, terms))
    }

    fn sparse_postings<'a>(
        &'a self,
        terms: &'a [u32],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(u32, i64, f32)>> {
        let (terms, filter) = (terms.to_vec(), filter.clone());
        self.blocking(move |s| ready(sparse::postings(&mut *s.reader()?, &terms, &filter)))
    }
}
