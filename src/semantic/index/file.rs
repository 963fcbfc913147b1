//! The index's saved file, `vectors.index`: a header naming the table
//! generation the index was built from, how far it had applied, and a
//! checksum of the rest (the rows, their scales and keys). A file that is
//! missing, corrupt, from another generation, ahead of the table or too old
//! to catch up is not used (`load` says why); `VectorIndex::save` replaces
//! the old file only once the new one is complete.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::super::flat::{Flat, DIMENSIONS};
use super::{VectorIndex, FIRST_PASS_FROM};

pub const FILE: &str = "vectors.index";
/// The file the HNSW index of earlier versions was saved in: removed.
pub(super) const OLD_FILE: &str = "vectors.usearch";
const MAGIC: &[u8; 8] = b"PADVEC02";
/// MAGIC, applied n, payload length, checksum, generation (16 bytes).
const HEADER: usize = 8 + 8 + 8 + 8 + 16;

impl VectorIndex {
    /// Writes the index (with its header) to `dir/vectors.index`, replacing
    /// the old file only once the new one is complete.
    pub fn save(&self, dir: &Path) -> Result<(), String> {
        let payload = serialise(&self.flat);
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

/// Row count, then keys, scales and rows, little-endian.
fn serialise(flat: &Flat) -> Vec<u8> {
    let (keys, scales, rows) = flat.parts();
    let mut out = Vec::with_capacity(8 + keys.len() * (12 + DIMENSIONS));
    out.extend_from_slice(&(keys.len() as u64).to_le_bytes());
    keys.iter()
        .for_each(|k| out.extend_from_slice(&k.to_le_bytes()));
    scales
        .iter()
        .for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
    out.extend(rows.iter().map(|r| *r as u8));
    out
}

fn deserialise(payload: &[u8]) -> Option<Flat> {
    let n = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?) as usize;
    let keys_end = 8 + n.checked_mul(8)?;
    let scales_end = keys_end + n * 4;
    if payload.len() != scales_end + n.checked_mul(DIMENSIONS)? {
        return None;
    }
    let keys = payload[8..keys_end]
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    let scales = payload[keys_end..scales_end]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    let rows = payload[scales_end..].iter().map(|b| *b as i8).collect();
    Flat::from_parts(keys, scales, rows)
}

fn header(applied: i64, payload: &[u8], generation: &str) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&applied.to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&checksum(payload).to_le_bytes());
    h.extend_from_slice(&stamp(generation));
    h
}

/// A generation as the header holds it: its first 16 bytes, zero-padded.
/// A store's generation may be longer (PostgreSQL's is an md5 in hex, 32
/// characters), so a saved file is matched on this form, not on the text.
fn stamp(generation: &str) -> [u8; 16] {
    let mut g = [0u8; 16];
    let bytes = generation.as_bytes();
    let n = bytes.len().min(16);
    g[..n].copy_from_slice(&bytes[..n]);
    g
}

/// `Ok(None)`: no saved file. `Err`: a file that must not be used, and why.
pub(super) fn load(
    path: &Path,
    generation: &str,
    last_n: i64,
    floor: i64,
) -> Result<Option<VectorIndex>, String> {
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
    if bytes[32..48] != stamp(generation) {
        return Err("built from other vectors (the store was re-embedded)".into());
    }
    if applied > last_n {
        return Err("ahead of the vector store (its last writes were lost)".into());
    }
    if applied < floor {
        return Err("too old to catch up (deletions it lacks were pruned)".into());
    }
    let flat = deserialise(payload).ok_or("its rows do not fit together")?;
    Ok(Some(VectorIndex {
        flat,
        applied,
        generation: generation.to_string(),
        unsaved: AtomicBool::new(false),
        first_pass_from: FIRST_PASS_FROM,
    }))
}

/// A fast 64-bit checksum (word-wise multiply-rotate); it only has to catch
/// damaged files, not adversaries.
pub(super) fn checksum(bytes: &[u8]) -> u64 {
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
    use super::{checksum, load, VectorIndex, DIMENSIONS, FILE};

    #[test]
    fn a_saved_index_is_used_again_whatever_its_generations_length() {
        let dir = tempfile::tempdir().unwrap();
        let v: Vec<f32> = (0..DIMENSIONS).map(|i| (i % 5) as f32 - 2.0).collect();
        // SQLite's generation is 16 hex characters, PostgreSQL's 32 (md5).
        for (generation, other) in [
            ("0123456789abcdef", "fedcba9876543210"),
            (
                "0123456789abcdef0123456789abcdef",
                "fedcba98765432100123456789abcdef",
            ),
        ] {
            let mut index = VectorIndex::from_vectors([(7, v.as_slice())]);
            index.applied = 3;
            index.generation = generation.to_string();
            index.save(dir.path()).unwrap();
            let path = dir.path().join(FILE);
            let loaded = load(&path, generation, 3, 0)
                .unwrap()
                .expect("a saved file");
            assert_eq!(loaded.flat.len(), 1, "{generation}");
            assert_eq!(loaded.applied, 3);
            assert!(
                load(&path, other, 3, 0).is_err(),
                "another generation: {other}"
            );
        }
    }

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
