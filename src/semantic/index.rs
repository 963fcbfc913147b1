//! The in-memory vector index (an i8 matrix scanned exhaustively, see
//! `flat`), derived from `vectors.db` and saved beside it as `vectors.index`
//! (`file.rs`). A search scores its rows (`scan.rs`: every row, or a first
//! pass on signs) and walks them best first (`walk.rs`), asking a filter.
//!
//! It follows the vectors table by `n` (see `store::vectors`): every row up to
//! `applied` is in the index, a tombstone having removed its key. The saved
//! file starts with a header naming the table generation it was built from,
//! how far it had applied, and a checksum of the rest; a file that is
//! missing, corrupt (checksum), or from another generation is ignored and the
//! index is rebuilt from the table. One that is merely behind is loaded and
//! brought forward from the table — nothing is embedded again either way.

mod file;
mod scan;
mod walk;

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::flat::Flat;
use super::VectorSource;
pub use file::FILE;
use file::{load, OLD_FILE};
use scan::FIRST_PASS_FROM;

/// Rows read from the table at a time while rebuilding or catching up.
const PAGE: i64 = 2000;

pub struct VectorIndex {
    flat: Flat,
    /// Every row of the vectors table up to this `n` is applied.
    applied: i64,
    generation: String,
    /// Applied rows not yet in the saved file. Atomic so that saving needs
    /// only shared access: searches go on while the index is written out.
    unsaved: AtomicBool,
    /// `FIRST_PASS_FROM` (lower in tests).
    first_pass_from: usize,
}

/// Candidates, best first, as (key, estimate), and how many rows the walk
/// offered (looked at, not hidden).
type Candidates = (Vec<(i64, f32)>, usize);

/// A filter's check of a chunk of the walk: the keys of the chunk that pass.
pub type ChunkCheck<'a> = dyn FnMut(&[i64]) -> crate::error::Result<HashSet<i64>> + 'a;

impl VectorIndex {
    /// The saved index if it is sound and from the table's generation, else
    /// a rebuild from the table; brought up to date either way.
    pub fn open(dir: &Path, vectors: &dyn VectorSource) -> Result<VectorIndex, String> {
        let generation = vectors.generation().map_err(|e| e.to_string())?;
        let last_n = vectors.last_n().map_err(|e| e.to_string())?;
        let floor = vectors.floor().map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(dir.join(OLD_FILE));
        let path = dir.join(FILE);
        let mut index = match load(&path, &generation, last_n, floor) {
            Ok(Some(index)) => index,
            Ok(None) => VectorIndex::rebuild(vectors)?,
            Err(why) => {
                tracing::warn!(
                    "vector index {} not used ({why}); rebuilding it",
                    path.display()
                );
                VectorIndex::rebuild(vectors)?
            }
        };
        index.catch_up(vectors)?;
        Ok(index)
    }

    /// A fresh index holding every live vector of the table.
    pub fn rebuild(vectors: &dyn VectorSource) -> Result<VectorIndex, String> {
        let generation = vectors.generation().map_err(|e| e.to_string())?;
        // Everything up to the current `n` is about to be read; rows written
        // meanwhile (only the worker writes, and it is the caller) come after.
        let applied = vectors.last_n().map_err(|e| e.to_string())?;
        let total = vectors.count().map_err(|e| e.to_string())?;
        let mut flat = Flat::with_capacity(total as usize);
        let started = std::time::Instant::now();
        let mut after = 0;
        loop {
            let page = vectors.live_after(after, PAGE).map_err(|e| e.to_string())?;
            let Some((last, _)) = page.last() else { break };
            after = *last;
            for (seq, vec) in &page {
                flat.put(*seq, vec);
            }
        }
        if total > 0 {
            tracing::info!(
                "vector index rebuilt: {} vectors in {:.1}s",
                flat.len(),
                started.elapsed().as_secs_f64()
            );
        }
        Ok(VectorIndex {
            flat,
            applied,
            generation,
            unsaved: AtomicBool::new(true),
            first_pass_from: FIRST_PASS_FROM,
        })
    }

    /// Applies every row of the table written after `applied`; returns how many.
    pub fn catch_up(&mut self, vectors: &dyn VectorSource) -> Result<usize, String> {
        let mut done = 0;
        loop {
            let rows = vectors
                .since(self.applied, PAGE)
                .map_err(|e| e.to_string())?;
            let Some(last) = rows.last() else { break };
            let last_n = last.n;
            for row in &rows {
                match &row.vec {
                    Some(v) => self.flat.put(row.seq, v),
                    None => {
                        self.flat.remove(row.seq);
                    }
                }
            }
            self.applied = last_n;
            self.unsaved.store(true, Ordering::Relaxed);
            done += rows.len();
        }
        Ok(done)
    }

    pub fn applied(&self) -> i64 {
        self.applied
    }

    /// The contents of the stored vectors it was built from.
    pub fn generation(&self) -> &str {
        &self.generation
    }

    pub fn unsaved(&self) -> bool {
        self.unsaved.load(Ordering::Relaxed)
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.flat.len()
    }

    /// How many vectors the index holds under `key` (0 or 1).
    pub fn count(&self, key: i64) -> usize {
        usize::from(self.flat.contains(key))
    }

    pub fn memory_bytes(&self) -> usize {
        self.flat.memory_bytes()
    }

    /// An index of these (key, vector) pairs alone, not backed by a store
    /// (for benchmarks).
    pub fn from_vectors<'a>(vectors: impl IntoIterator<Item = (i64, &'a [f32])>) -> VectorIndex {
        let mut flat = Flat::default();
        for (key, v) in vectors {
            flat.put(key, v);
        }
        VectorIndex {
            flat,
            applied: 0,
            generation: String::new(),
            unsaved: AtomicBool::new(false),
            first_pass_from: FIRST_PASS_FROM,
        }
    }
}
