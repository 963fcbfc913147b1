//! `vectors.db` as the embedding worker and the index see it
//! (`semantic::VectorSource`).

use std::sync::Arc;

use super::Store;
use crate::error::Result;
use crate::semantic::vector::VectorRow;
use crate::semantic::{Embed, Encoded, Note, VectorSource};

/// `vectors.db` beside the SQLite store.
pub struct SqliteVectors(pub Arc<Store>);

impl SqliteVectors {
    fn v(&self) -> &super::VectorStore {
        self.0
            .vectors()
            .expect("the store opens vectors.db when semantic search is on")
    }
}

impl VectorSource for SqliteVectors {
    fn use_model(&self, model: &str) -> Result<bool> {
        self.v().use_model(model)
    }

    fn clear(&self) -> Result<()> {
        self.v().clear()
    }

    fn generation(&self) -> Result<String> {
        self.v().generation()
    }

    fn last_n(&self) -> Result<i64> {
        self.v().last_n()
    }

    fn floor(&self) -> Result<i64> {
        // Tombstones go only once this engine's own index is saved past them.
        Ok(0)
    }

    fn since(&self, n: i64, limit: i64) -> Result<Vec<VectorRow>> {
        self.v().since(n, limit)
    }

    fn live_after(&self, after: i64, limit: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        self.v().live_after(after, limit)
    }

    fn count(&self) -> Result<i64> {
        self.v().count()
    }

    fn prune_tombstones(&self, upto_n: i64) -> Result<usize> {
        self.v().prune_tombstones(upto_n)
    }

    fn embed_next(&self, limit: usize, embed: &mut Embed<'_>) -> Result<Option<usize>> {
        let v = self.v();
        let work = v.next_work(limit as i64)?;
        if work.is_empty() {
            return Ok(None);
        }
        let notes: Vec<Note> = work
            .items
            .iter()
            .filter_map(|(_, n)| n.as_ref())
            .map(|(author, content)| Note { author, content })
            .collect();
        let mut computed = if notes.is_empty() {
            Vec::new()
        } else {
            embed(&notes)
        }
        .into_iter();
        let out: Vec<Option<Encoded>> = work
            .items
            .iter()
            .map(|(_, n)| n.as_ref().and_then(|_| computed.next().flatten()))
            .collect();
        let embedded = notes.len();
        v.commit(work, out)?;
        Ok(Some(embedded))
    }

    fn write_epoch(&self) -> Option<u64> {
        Some(self.0.write_epoch())
    }

    fn own_writes(&self) -> u64 {
        // The one engine writing this file: every write is its own.
        self.0.write_epoch()
    }

    fn backlog(&self) -> Option<i64> {
        // Without settling the journal (that would take the writer in the
        // middle of the stream the worker yields to): its pending notes,
        // and what waits among those applied, counted only as far as the
        // worker's bound needs.
        let applied = self
            .v()
            .waiting(crate::semantic::SETTLE_MAX_BACKLOG + 1)
            .ok()?;
        Some(self.0.journal_queue() + applied)
    }

    fn marks(&self, _applied: i64) -> (i64, i64) {
        // Only the worker commits vectors, and it applies what it commits.
        let v = self.v();
        (v.watermark(), v.change_watermark())
    }
}
