//! The in-memory vector index (usearch HNSW, cosine), derived from
//! `vectors.db` and saved beside it as `vectors.usearch`.
//!
//! It follows the vectors table by `n` (see `store::vectors`): every row up to
//! `applied` is in the index, a tombstone having removed its key. The saved
//! file starts with a header naming the table generation it was built from,
//! how far it had applied, and a checksum of the rest; a file that is
//! missing, corrupt (checksum), or from another generation is ignored and the
//! index is rebuilt from the table. One that is merely behind is loaded and
//! brought forward from the table — nothing is embedded again either way.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::store::vectors::{VectorStore, DIMENSIONS};

pub const FILE: &str = "vectors.usearch";
const MAGIC: &[u8; 8] = b"PADVEC01";
/// MAGIC, applied n, payload length, checksum, generation (16 bytes).
const HEADER: usize = 8 + 8 + 8 + 8 + 16;
/// Rows read from the table at a time while rebuilding or catching up.
const PAGE: i64 = 2000;

/// Stored as 8-bit integers: a quarter of f32's memory. On its own an i8
/// walk finds 97.8% of the true top 10; the engine asks it for twice `k`
/// and re-ranks those on the stored f32 vectors, which restores 100%
/// (docs/benchmarks.md has the measurements for f32, f16 and i8).
const SCALAR: ScalarKind = ScalarKind::I8;

pub struct VectorIndex {
    index: Index,
    /// Every row of the vectors table up to this `n` is applied.
    applied: i64,
    generation: String,
    /// Applied rows not yet in the saved file. Atomic so that saving needs
    /// only shared access: searches go on while the index is written out.
    unsaved: AtomicBool,
}

fn options() -> IndexOptions {
    IndexOptions {
        dimensions: DIMENSIONS,
        metric: MetricKind::Cos,
        quantization: SCALAR,
        // usearch's defaults (connectivity 16, expansion 128 on add, 64 on search).
        connectivity: 0,
        expansion_add: 0,
        expansion_search: 0,
        multi: false,
    }
}

fn new_index() -> Result<Index, String> {
    Index::new(&options()).map_err(|e| format!("cannot create the vector index: {e}"))
}

impl VectorIndex {
    /// The saved index if it is sound and from the table's generation, else
    /// a rebuild from the table; brought up to date either way.
    pub fn open(dir: &Path, vectors: &VectorStore) -> Result<VectorIndex, String> {
        let generation = vectors.generation().map_err(|e| e.to_string())?;
        let last_n = vectors.last_n().map_err(|e| e.to_string())?;
        let path = dir.join(FILE);
        let mut index = match load(&path, &generation, last_n) {
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
    pub fn rebuild(vectors: &VectorStore) -> Result<VectorIndex, String> {
        let generation = vectors.generation().map_err(|e| e.to_string())?;
        // Everything up to the current `n` is about to be read; rows written
        // meanwhile (only the worker writes, and it is the caller) come after.
        let applied = vectors.last_n().map_err(|e| e.to_string())?;
        let index = new_index()?;
        let total = vectors.count().map_err(|e| e.to_string())?;
        reserve(&index, total as usize)?;
        let started = std::time::Instant::now();
        let mut after = 0;
        loop {
            let page = vectors.live_after(after, PAGE).map_err(|e| e.to_string())?;
            let Some((last, _)) = page.last() else { break };
            after = *last;
            reserve(&index, page.len())?;
            for (seq, vec) in &page {
                index
                    .add(*seq as u64, vec)
                    .map_err(|e| format!("cannot add to the vector index: {e}"))?;
            }
        }
        if total > 0 {
            tracing::info!(
                "vector index rebuilt: {} vectors in {:.1}s",
                index.size(),
                started.elapsed().as_secs_f64()
            );
        }
        Ok(VectorIndex {
            index,
            applied,
            generation,
            unsaved: AtomicBool::new(true),
        })
    }

    /// Applies every row of the table written after `applied`; returns how many.
    pub fn catch_up(&mut self, vectors: &VectorStore) -> Result<usize, String> {
        let mut done = 0;
        loop {
            let rows = vectors
                .since(self.applied, PAGE)
                .map_err(|e| e.to_string())?;
            let Some(last) = rows.last() else { break };
            let last_n = last.n;
            reserve(&self.index, rows.len())?;
            for row in &rows {
                let key = row.seq as u64;
                if self.index.contains(key) {
                    self.index
                        .remove(key)
                        .map_err(|e| format!("cannot remove from the vector index: {e}"))?;
                }
                if let Some(v) = &row.vec {
                    self.index
                        .add(key, v)
                        .map_err(|e| format!("cannot add to the vector index: {e}"))?;
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

    pub fn unsaved(&self) -> bool {
        self.unsaved.load(Ordering::Relaxed)
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.index.size()
    }

    /// How many vectors the index holds under `key` (0 or 1 when sound).
    pub fn count(&self, key: i64) -> usize {
        self.index.count(key as u64)
    }

    pub fn memory_bytes(&self) -> usize {
        self.index.memory_usage()
    }

    /// The `k` nearest vectors whose keys pass `keep` (all, if `None`), as
    /// (id, cosine similarity).
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> Result<Vec<(i64, f32)>, String> {
        if self.index.size() == 0 {
            return Ok(Vec::new());
        }
        let found = match keep {
            None => self.index.search(query, k),
            Some(keep) => self.index.filtered_search(query, k, |key| keep(key as i64)),
        }
        .map_err(|e| format!("vector search failed: {e}"))?;
        Ok(found
            .keys
            .iter()
            .zip(&found.distances)
            .map(|(k, d)| (*k as i64, 1.0 - d))
            .collect())
    }

    /// Writes the index (with its header) to `dir/vectors.usearch`, replacing
    /// the old file only once the new one is complete.
    pub fn save(&self, dir: &Path) -> Result<(), String> {
        let mut payload = vec![0u8; self.index.serialized_length()];
        self.index
            .save_to_buffer(&mut payload)
            .map_err(|e| format!("cannot serialise the vector index: {e}"))?;
        let path = dir.join(FILE);
        let tmp = PathBuf::from(format!("{}.tmp", path.display()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&header(self.applied, &payload, &self.generation))?;
            f.write_all(&payload)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| format!("cannot save the vector index to {}: {e}", path.display()))?;
        self.unsaved.store(false, Ordering::Relaxed);
        Ok(())
    }
}

fn reserve(index: &Index, more: usize) -> Result<(), String> {
    let need = index.size() + more;
    if need > index.capacity() {
        let grown = need.max(index.capacity() * 2).max(1024);
        index
            .reserve(grown)
            .map_err(|e| format!("cannot grow the vector index to {grown}: {e}"))?;
    }
    Ok(())
}

fn header(applied: i64, payload: &[u8], generation: &str) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&applied.to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&checksum(payload).to_le_bytes());
    let mut g = [0u8; 16];
    let bytes = generation.as_bytes();
    g[..bytes.len().min(16)].copy_from_slice(&bytes[..bytes.len().min(16)]);
    h.extend_from_slice(&g);
    h
}

/// `Ok(None)`: no saved file. `Err`: a file that must not be used, and why.
fn load(path: &Path, generation: &str, last_n: i64) -> Result<Option<VectorIndex>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("unreadable: {e}")),
    };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err("not a Scratchpad vector index".into());
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let applied = word(8) as i64;
    let len = word(16) as usize;
    let sum = word(24);
    let payload = &bytes[HEADER..];
    if payload.len() != len || checksum(payload) != sum {
        return Err("checksum mismatch (corrupt or truncated)".into());
    }
    let saved_generation = String::from_utf8_lossy(&bytes[32..48])
        .trim_end_matches('\0')
        .to_string();
    if saved_generation != generation {
        return Err("built from other vectors (the store was re-embedded)".into());
    }
    if applied > last_n {
        return Err("ahead of the vector store (its last writes were lost)".into());
    }
    let index = new_index()?;
    index
        .load_from_buffer(payload)
        .map_err(|e| format!("usearch cannot load it: {e}"))?;
    if index.dimensions() != DIMENSIONS {
        return Err(format!(
            "{} dimensions, not {DIMENSIONS}",
            index.dimensions()
        ));
    }
    Ok(Some(VectorIndex {
        index,
        applied,
        generation: generation.to_string(),
        unsaved: AtomicBool::new(false),
    }))
}

/// A fast 64-bit checksum (word-wise multiply-rotate); it only has to catch
/// damaged files, not adversaries.
fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xCBF2_9CE4_8422_2325 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(K).rotate_left(29);
    }
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::checksum;

    #[test]
    fn checksum_sees_one_flipped_bit_and_length() {
        let mut data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let a = checksum(&data);
        data[5_003] ^= 0x10;
        assert_ne!(a, checksum(&data));
        data[5_003] ^= 0x10;
        assert_eq!(a, checksum(&data));
        data.push(0);
        assert_ne!(a, checksum(&data));
    }
}
