//! The vectors as one flat matrix of 8-bit integers, searched exhaustively.
//!
//! Every row is the stored f32 vector scaled so its largest component is
//! ±127 and rounded; a query is scaled the same way, and a row's estimated
//! cosine is their integer dot product divided by both scales. Scanning
//! every row finds what exact search finds — no graph to get lost in among
//! thousands of near-duplicate notes, which is where the HNSW walk this
//! replaced missed half of the best matches (docs/benchmarks.md, "Recall").
//! The caller rescores the best candidates on the stored f32 vectors, which
//! irons out the rounding.
//!
//! The scan uses AVX2 when the CPU has it and both cores above
//! `PARALLEL_FROM` rows: 100k rows (38 MB) take ~1.25 ms on one core.

use std::collections::HashMap;

pub const DIMENSIONS: usize = super::vector::DIMENSIONS;
/// Below this many rows one thread scans (a second costs more to start).
const PARALLEL_FROM: usize = 50_000;

#[derive(Default)]
pub struct Flat {
    /// Row-major, DIMENSIONS per row.
    rows: Vec<i8>,
    /// What each row was multiplied by before rounding.
    scales: Vec<f32>,
    keys: Vec<i64>,
    slot: HashMap<i64, usize>,
}

/// The i8 form of a vector and its scale.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { 127.0 / max } else { 1.0 };
    out.extend(
        v.iter()
            .map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8),
    );
    scale
}

impl Flat {
    pub fn with_capacity(n: usize) -> Flat {
        Flat {
            rows: Vec::with_capacity(n * DIMENSIONS),
            scales: Vec::with_capacity(n),
            keys: Vec::with_capacity(n),
            slot: HashMap::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn contains(&self, key: i64) -> bool {
        self.slot.contains_key(&key)
    }

    /// Adds or replaces the vector under `key`.
    pub fn put(&mut self, key: i64, v: &[f32]) {
        assert_eq!(v.len(), DIMENSIONS, "a {DIMENSIONS}-dimensional vector");
        self.remove(key);
        let scale = quantize(v, &mut self.rows);
        self.scales.push(scale);
        self.slot.insert(key, self.keys.len());
        self.keys.push(key);
    }

    /// Removes `key`'s vector (the last row moves into its place).
    pub fn remove(&mut self, key: i64) -> bool {
        let Some(at) = self.slot.remove(&key) else {
            return false;
        };
        let last = self.keys.len() - 1;
        if at != last {
            self.rows
                .copy_within(last * DIMENSIONS..(last + 1) * DIMENSIONS, at * DIMENSIONS);
            self.scales[at] = self.scales[last];
            self.keys[at] = self.keys[last];
            self.slot.insert(self.keys[at], at);
        }
        self.rows.truncate(last * DIMENSIONS);
        self.scales.truncate(last);
        self.keys.truncate(last);
        true
    }

    pub fn memory_bytes(&self) -> usize {
        self.rows.capacity()
            + self.scales.capacity() * 4
            + self.keys.capacity() * 8
            // A hashbrown entry (key, slot) plus its control byte.
            + self.slot.capacity() * 17
    }

    /// Every row's estimated cosine to `query`, by row.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        let mut q = Vec::with_capacity(DIMENSIONS);
        let qscale = quantize(query, &mut q);
        let mut out = vec![0f32; self.len()];
        let score_rows = kernel();
        if self.len() < PARALLEL_FROM {
            score_rows(&self.rows, &self.scales, &q, qscale, &mut out);
        } else {
            let half = self.len() / 2;
            let (rows_a, rows_b) = self.rows.split_at(half * DIMENSIONS);
            let (scales_a, scales_b) = self.scales.split_at(half);
            let (out_a, out_b) = out.split_at_mut(half);
            std::thread::scope(|s| {
                s.spawn(|| score_rows(rows_b, scales_b, &q, qscale, out_b));
                score_rows(rows_a, scales_a, &q, qscale, out_a);
            });
        }
        out
    }

    pub fn key(&self, row: usize) -> i64 {
        self.keys[row]
    }

    /// Every (key, row) pair, for saving.
    pub fn parts(&self) -> (&[i64], &[f32], &[i8]) {
        (&self.keys, &self.scales, &self.rows)
    }

    /// Rebuilds from saved parts; `None` if they do not fit together.
    pub fn from_parts(keys: Vec<i64>, scales: Vec<f32>, rows: Vec<i8>) -> Option<Flat> {
        if scales.len() != keys.len() || rows.len() != keys.len() * DIMENSIONS {
            return None;
        }
        let slot: HashMap<i64, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        (slot.len() == keys.len()).then_some(Flat {
            rows,
            scales,
            keys,
            slot,
        })
    }
}

/// Scores rows: each row's dot product with the quantized query `q`,
/// divided by the row's scale and the query's (`qscale`), into `out`.
type ScoreRows = fn(rows: &[i8], scales: &[f32], q: &[i8], qscale: f32, out: &mut [f32]);

fn score_rows_portable(rows: &[i8], scales: &[f32], q: &[i8], qscale: f32, out: &mut [f32]) {
    for ((row, scale), o) in rows.chunks_exact(DIMENSIONS).zip(scales).zip(out) {
        let dot: i32 = row.iter().zip(q).map(|(x, y)| *x as i32 * *y as i32).sum();
        *o = dot as f32 / (scale * qscale);
    }
}

// The AVX2 kernel reads 32 components at a time.
const _: () = assert!(DIMENSIONS.is_multiple_of(32));

/// The same with AVX2, 32 components at a time: `maddubs` multiplies the
/// query's magnitudes (unsigned) by the row's components carrying the
/// query's signs, adding pairs into 16 bits — exact, since every component
/// is within ±127 (`quantize`), so a pair is at most 2·127² < 2¹⁵ — then
/// `madd` widens the pairs to 32-bit sums. Twice the speed of the
/// compiler's vectorised loop (1.25 vs 2.2 ms for 100k rows on one core),
/// and the same integers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn score_rows_avx2(rows: &[i8], scales: &[f32], q: &[i8], qscale: f32, out: &mut [f32]) {
    use std::arch::x86_64::*;
    const LANES: usize = DIMENSIONS / 32;
    assert_eq!(q.len(), DIMENSIONS);
    // SAFETY: every load reads 32 bytes at offsets below DIMENSIONS within
    // `q` (checked above) or a row of exactly DIMENSIONS bytes
    // (`chunks_exact`); loads are unaligned.
    unsafe {
        let signed: [__m256i; LANES] =
            std::array::from_fn(|i| _mm256_loadu_si256(q.as_ptr().add(i * 32).cast()));
        let magnitude = signed.map(|v| _mm256_abs_epi8(v));
        let ones = _mm256_set1_epi16(1);
        for ((row, scale), o) in rows.chunks_exact(DIMENSIONS).zip(scales).zip(out) {
            let mut sum = _mm256_setzero_si256();
            for i in 0..LANES {
                let r = _mm256_loadu_si256(row.as_ptr().add(i * 32).cast());
                let pairs = _mm256_maddubs_epi16(magnitude[i], _mm256_sign_epi8(r, signed[i]));
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
            }
            let x = _mm_add_epi32(
                _mm256_castsi256_si128(sum),
                _mm256_extracti128_si256(sum, 1),
            );
            let x = _mm_hadd_epi32(x, x);
            let x = _mm_hadd_epi32(x, x);
            *o = _mm_cvtsi128_si32(x) as f32 / (scale * qscale);
        }
    }
}

fn kernel() -> ScoreRows {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return |rows, scales, q, qscale, out| unsafe {
            score_rows_avx2(rows, scales, q, qscale, out)
        };
    }
    score_rows_portable
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64) -> Vec<f32> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let v: Vec<f32> = (0..DIMENSIONS).map(|_| rng.f32() - 0.5).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn estimates_are_close_to_the_exact_cosine() {
        let mut f = Flat::default();
        let vs: Vec<Vec<f32>> = (0..200).map(unit).collect();
        for (i, v) in vs.iter().enumerate() {
            f.put(i as i64, v);
        }
        let q = unit(1_000);
        for (row, est) in f.scores(&q).iter().enumerate() {
            let exact = cos(&vs[f.key(row) as usize], &q);
            assert!((est - exact).abs() < 0.01, "{est} vs {exact}");
        }
    }

    #[test]
    fn the_simd_kernel_and_the_portable_one_agree_exactly() {
        // Random rows and queries, and the extremes (every component ±127,
        // where a 16-bit pair sum comes closest to overflowing; zeros).
        let mut rng = fastrand::Rng::with_seed(9);
        let mut rows: Vec<i8> = (0..500 * DIMENSIONS).map(|_| rng.i8(-127..=127)).collect();
        rows.extend(std::iter::repeat_n(127, DIMENSIONS));
        rows.extend(std::iter::repeat_n(-127, DIMENSIONS));
        rows.extend(std::iter::repeat_n(0, DIMENSIONS));
        let n = rows.len() / DIMENSIONS;
        let scales: Vec<f32> = (0..n).map(|i| 100.0 + i as f32).collect();
        let mut queries: Vec<Vec<i8>> = (0..20)
            .map(|_| (0..DIMENSIONS).map(|_| rng.i8(-127..=127)).collect())
            .collect();
        queries.push(vec![127; DIMENSIONS]);
        queries.push(vec![-127; DIMENSIONS]);
        for q in &queries {
            let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
            kernel()(&rows, &scales, q, 3.0, &mut a);
            score_rows_portable(&rows, &scales, q, 3.0, &mut b);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn replace_and_remove_keep_rows_and_keys_together() {
        let mut f = Flat::default();
        for i in 0..10 {
            f.put(i, &unit(i as u64));
        }
        f.put(3, &unit(33));
        assert!(f.remove(0));
        assert!(!f.remove(0));
        assert_eq!(f.len(), 9);
        for key in 1..10 {
            let seed = if key == 3 { 33 } else { key as u64 };
            let scores = f.scores(&unit(seed));
            let best = (0..f.len())
                .max_by(|a, b| scores[*a].total_cmp(&scores[*b]))
                .unwrap();
            assert_eq!(f.key(best), key, "each key still finds its own vector");
        }
        let (keys, scales, rows) = f.parts();
        let back = Flat::from_parts(keys.to_vec(), scales.to_vec(), rows.to_vec()).unwrap();
        assert_eq!(back.scores(&unit(5)), f.scores(&unit(5)));
        assert!(Flat::from_parts(vec![1, 1], vec![1.0; 2], vec![0; 2 * DIMENSIONS]).is_none());
    }
}
