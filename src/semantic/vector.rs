//! What a vector is, for both stores and the index: its size, the text it
//! is computed from, how it is stored (little-endian f32s) and compared.

pub const DIMENSIONS: usize = 384;

/// The text a note's vector is computed from: its author and its content,
/// as a transcript line ("agent-zero: the staging DB is migrated"). Who
/// wrote a note is part of what it is about — "what did agent-zero find
/// about staging?" — and a question naming a person finds what they said
/// (docs/protocol.md, `search`). One recipe for both stores.
pub fn embedded_text(author: &str, content: &str) -> String {
    format!("{author}: {content}")
}

/// Names `embedded_text`'s recipe in the model key the vectors are stored
/// under: vectors computed from another recipe are computed again.
pub const EMBEDDED_AS: &str = "author: content";

/// One row of the vectors table, as the index follows it.
#[derive(Debug)]
pub struct VectorRow {
    pub seq: i64,
    pub n: i64,
    /// `None`: a tombstone, the entry was deleted.
    pub vec: Option<Vec<f32>>,
}

pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The dot product of `query` with a stored vector (little-endian f32s);
/// both are unit length, so this is their cosine similarity.
pub fn dot(query: &[f32], blob: &[u8]) -> f32 {
    query
        .iter()
        .zip(blob.chunks_exact(4))
        .map(|(q, c)| q * f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .sum()
}

/// Adds a stored vector (little-endian f32s) to `sum` (empty: the
/// vector's length of zeros first), in f64: a million notes summed in f32
/// would lose the last ones' digits.
pub fn add_blob(sum: &mut Vec<f64>, blob: &[u8]) {
    if sum.is_empty() {
        sum.resize(blob.len() / 4, 0.0);
    }
    for (s, c) in sum.iter_mut().zip(blob.chunks_exact(4)) {
        *s += f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64;
    }
}

/// The `k` best, best first; among equal scores the newest, as everywhere.
pub fn best(mut scored: Vec<(i64, f32)>, k: usize) -> Vec<(i64, f32)> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    scored.truncate(k);
    scored
}
