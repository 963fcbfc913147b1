//! What the embedding worker and the in-memory index need from a store: one
//! boundary, two implementations (`vectors.db` beside SQLite, below; the
//! `vectors` table of the shared PostgreSQL database, `src/pg/vectors.rs`).
//!
//! Either way the stored vectors are the truth and the index follows them:
//! every write of a vector or a tombstone takes the next `n`, rows become
//! visible in `n` order, and an index that has applied every row up to `n`
//! catches up by reading the rows after it.

use std::sync::Arc;

use crate::error::Result;
use crate::store::vectors::VectorRow;
use crate::store::Store;

/// Embeds a batch of texts: one vector per text, in order (`None`: this
/// text cannot be embedded and is left out of meaning search).
pub type Embed<'a> = dyn FnMut(&[&str]) -> Vec<Option<Vec<f32>>> + 'a;

pub trait VectorSource: Send + Sync + 'static {
    /// Makes sure the stored vectors come from `model`; if they do not (or
    /// there are none yet), forgets them so everything is embedded again.
    /// Returns whether it did.
    fn use_model(&self, model: &str) -> Result<bool>;
    /// Forgets every vector and queues every entry to be embedded again.
    fn clear(&self) -> Result<()>;
    /// Names the current contents; a new one after every clear.
    fn generation(&self) -> Result<String>;
    /// The highest `n` of a visible row (0 when empty): every row up to it
    /// can be read.
    fn last_n(&self) -> Result<i64>;
    /// A saved index that applied less than this cannot catch up (the
    /// tombstones it lacks are gone) and is rebuilt.
    fn floor(&self) -> Result<i64>;
    /// Rows written after `n` (vectors and tombstones), oldest first.
    fn since(&self, n: i64, limit: i64) -> Result<Vec<VectorRow>>;
    /// Live vectors with ids past `after`, in id order: a rebuild's pages.
    fn live_after(&self, after: i64, limit: i64) -> Result<Vec<(i64, Vec<f32>)>>;
    /// Live vectors.
    fn count(&self) -> Result<i64>;
    /// Drops tombstones up to `n`, which a saved index has applied.
    fn prune_tombstones(&self, upto_n: i64) -> Result<usize>;
    /// Takes the next batch of new, edited or deleted entries (at most
    /// `limit`), embeds the texts with `embed` and stores the vectors and
    /// tombstones. `None`: nothing to do. `Some(n)`: `n` texts embedded.
    fn embed_next(&self, limit: usize, embed: &mut Embed<'_>) -> Result<Option<usize>>;
    /// Changes whenever there may be something new to embed; `None` when the
    /// store cannot tell (other engines write too), so the worker looks on
    /// every poll.
    fn write_epoch(&self) -> Option<u64>;
    /// What the index reflects once it has applied every row up to
    /// `applied`, as read-your-writes waits for it.
    fn marks(&self, applied: i64) -> (i64, i64);
}

/// `vectors.db` beside the SQLite store.
pub struct SqliteVectors(pub Arc<Store>);

impl SqliteVectors {
    fn v(&self) -> &crate::store::VectorStore {
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
        let texts: Vec<&str> = work
            .items
            .iter()
            .filter_map(|(_, c)| c.as_deref())
            .collect();
        let mut computed = if texts.is_empty() {
            Vec::new()
        } else {
            embed(&texts)
        }
        .into_iter();
        let out: Vec<Option<Vec<f32>>> = work
            .items
            .iter()
            .map(|(_, c)| c.as_ref().and_then(|_| computed.next().flatten()))
            .collect();
        let embedded = texts.len();
        v.commit(work, out)?;
        Ok(Some(embedded))
    }

    fn write_epoch(&self) -> Option<u64> {
        Some(self.0.write_epoch())
    }

    fn marks(&self, _applied: i64) -> (i64, i64) {
        // Only the worker commits vectors, and it applies what it commits.
        let v = self.v();
        (v.watermark(), v.change_watermark())
    }
}
