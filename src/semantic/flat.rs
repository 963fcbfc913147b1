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
//! `PARALLEL_FROM` rows: 100k rows (38 MB) take ~1.25 ms on one core. Past
//! a few hundred thousand rows it is bound by reading them (a million rows,
//! 384 MB: ~35 ms on one core, ~18 ms on two, AVX-512 VNNI barely faster),
//! so each row also keeps its signs, one bit a component (48 bytes): how
//! far they agree with the query's, weighed by the query's magnitudes
//! (`agreements`: ~6 ms a million rows on two cores), picks the rows worth
//! scoring (`scores_of`; the index decides how many).

use std::collections::HashMap;

pub const DIMENSIONS: usize = super::vector::DIMENSIONS;
/// 64-bit words of a row's signs.
const WORDS: usize = DIMENSIONS / 64;
const _: () = assert!(DIMENSIONS.is_multiple_of(64));
/// Below this many rows one thread scans (a second costs more to start).
const PARALLEL_FROM: usize = 50_000;

#[derive(Default)]
pub struct Flat {
    /// Row-major, DIMENSIONS per row.
    rows: Vec<i8>,
    /// What each row was multiplied by before rounding.
    scales: Vec<f32>,
    /// Each row's signs, WORDS per row: bit j of word i set when component
    /// 64·i + j is above zero.
    signs: Vec<u64>,
    keys: Vec<i64>,
    slot: HashMap<i64, usize>,
}

/// Which rows a pass reads: a range of them, or the rows picked.
#[derive(Clone, Copy)]
enum Which<'a> {
    Range(usize, usize),
    Picked(&'a [u32]),
}

impl<'a> Which<'a> {
    fn len(&self) -> usize {
        match self {
            Which::Range(from, to) => to - from,
            Which::Picked(rows) => rows.len(),
        }
    }

    /// The first `at` of them and the rest.
    fn split(self, at: usize) -> (Which<'a>, Which<'a>) {
        match self {
            Which::Range(from, to) => (Which::Range(from, from + at), Which::Range(from + at, to)),
            Which::Picked(rows) => {
                let (a, b) = rows.split_at(at);
                (Which::Picked(a), Which::Picked(b))
            }
        }
    }

    fn rows(self) -> impl Iterator<Item = usize> + 'a {
        let (range, picked) = match self {
            Which::Range(from, to) => (from..to, &[][..]),
            Which::Picked(rows) => (0..0, rows),
        };
        range.chain(picked.iter().map(|r| *r as usize))
    }
}

/// Runs `pass` over `which`, writing one output per row: on both cores
/// from `PARALLEL_FROM` rows, each taking half.
fn on_cores<T: Send>(which: Which<'_>, out: &mut [T], pass: impl Fn(Which<'_>, &mut [T]) + Sync) {
    if which.len() < PARALLEL_FROM {
        return pass(which, out);
    }
    let half = which.len() / 2;
    let (a, b) = which.split(half);
    let (out_a, out_b) = out.split_at_mut(half);
    std::thread::scope(|s| {
        s.spawn(|| pass(b, out_b));
        pass(a, out_a);
    });
}

/// A row's signs (see `Flat::signs`).
fn signs_of(row: &[i8], out: &mut Vec<u64>) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { signs_avx2(row, out) };
    }
    signs_portable(row, out)
}

fn signs_portable(row: &[i8], out: &mut Vec<u64>) {
    out.extend(row.chunks_exact(64).map(|c| {
        c.iter()
            .enumerate()
            .fold(0u64, |w, (j, x)| w | (u64::from(*x > 0) << j))
    }));
}

/// The same, 32 components at a time: a byte comparison with zero, then
/// the comparison's sign bits (`movemask`). A tenth of the portable time
/// (loading a million rows' saved index computes them all).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn signs_avx2(row: &[i8], out: &mut Vec<u64>) {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_si256();
    for c in row.chunks_exact(64) {
        // SAFETY: each load reads 32 bytes of a 64-byte chunk
        // (`chunks_exact`), unaligned.
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(c.as_ptr().cast()),
                _mm256_loadu_si256(c.as_ptr().add(32).cast()),
            )
        };
        let low = _mm256_movemask_epi8(_mm256_cmpgt_epi8(low, zero)) as u32;
        let high = _mm256_movemask_epi8(_mm256_cmpgt_epi8(high, zero)) as u32;
        out.push(u64::from(low) | (u64::from(high) << 32));
    }
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
            signs: Vec::with_capacity(n * WORDS),
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
        signs_of(&self.rows[self.rows.len() - DIMENSIONS..], &mut self.signs);
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
            self.signs
                .copy_within(last * WORDS..(last + 1) * WORDS, at * WORDS);
            self.scales[at] = self.scales[last];
            self.keys[at] = self.keys[last];
            self.slot.insert(self.keys[at], at);
        }
        self.rows.truncate(last * DIMENSIONS);
        self.scales.truncate(last);
        self.signs.truncate(last * WORDS);
        self.keys.truncate(last);
        true
    }

    pub fn memory_bytes(&self) -> usize {
        self.rows.capacity()
            + self.scales.capacity() * 4
            + self.signs.capacity() * 8
            + self.keys.capacity() * 8
            // A hashbrown entry (key, slot) plus its control byte.
            + self.slot.capacity() * 17
    }

    /// Every row's estimated cosine to `query`, by row.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        self.score(query, Which::Range(0, self.len()))
    }

    /// The estimated cosine to `query` of each row in `rows`, in their order.
    pub fn scores_of(&self, query: &[f32], rows: &[u32]) -> Vec<f32> {
        self.score(query, Which::Picked(rows))
    }

    fn score(&self, query: &[f32], which: Which<'_>) -> Vec<f32> {
        let mut q = Vec::with_capacity(DIMENSIONS);
        let qscale = quantize(query, &mut q);
        let mut out = vec![0f32; which.len()];
        let score_rows = kernel();
        on_cores(which, &mut out, |which, out| {
            score_rows(&self.rows, &self.scales, which, &q, qscale, out)
        });
        out
    }

    /// Every row's agreement with `query` on signs alone, by row: the sum,
    /// over the components where the row's sign is the query's, of the
    /// query's magnitude there on four bits (0–15). Higher is nearer: a
    /// coarse dot product of the query with the row's signs, weighing the
    /// components where the query is large, as the true one does.
    pub fn agreements(&self, query: &[f32]) -> Vec<u16> {
        let mut q = Vec::with_capacity(DIMENSIONS);
        quantize(query, &mut q);
        let mut qsigns = Vec::with_capacity(WORDS);
        signs_of(&q, &mut qsigns);
        let largest = q.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0).max(1);
        let mut planes = [[0u64; WORDS]; PLANES];
        for (i, x) in q.iter().enumerate() {
            let m = (u32::from(x.unsigned_abs()) * MAGNITUDE + u32::from(largest) / 2)
                / u32::from(largest);
            for (b, plane) in planes.iter_mut().enumerate() {
                plane[i / 64] |= u64::from((m >> b) & 1) << (i % 64);
            }
        }
        let query = Signs {
            signs: qsigns.try_into().expect("WORDS words"),
            planes,
        };
        let mut out = vec![0u16; self.len()];
        let count = agreement_kernel();
        on_cores(Which::Range(0, self.len()), &mut out, |which, out| {
            let Which::Range(from, to) = which else {
                unreachable!("every row")
            };
            count(&self.signs[from * WORDS..to * WORDS], &query, out)
        });
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
        let mut signs = Vec::with_capacity(keys.len() * WORDS);
        for row in rows.chunks_exact(DIMENSIONS) {
            signs_of(row, &mut signs);
        }
        (slot.len() == keys.len()).then_some(Flat {
            rows,
            scales,
            signs,
            keys,
            slot,
        })
    }
}

/// Scores the rows `which` names (of all `rows`, with their `scales`):
/// each row's dot product with the quantized query `q`, divided by the
/// row's scale and the query's (`qscale`), into `out` in `which`'s order.
type ScoreRows =
    fn(rows: &[i8], scales: &[f32], which: Which<'_>, q: &[i8], qscale: f32, out: &mut [f32]);

fn score_rows_portable(
    rows: &[i8],
    scales: &[f32],
    which: Which<'_>,
    q: &[i8],
    qscale: f32,
    out: &mut [f32],
) {
    for (r, o) in which.rows().zip(out) {
        let row = &rows[r * DIMENSIONS..(r + 1) * DIMENSIONS];
        let dot: i32 = row.iter().zip(q).map(|(x, y)| *x as i32 * *y as i32).sum();
        *o = dot as f32 / (scales[r] * qscale);
    }
}

/// A query as `Flat::agreements` weighs it: its signs, and bit b of its
/// magnitude (four bits) for each component.
pub struct Signs {
    signs: [u64; WORDS],
    planes: [[u64; WORDS]; PLANES],
}

/// The largest agreement: every sign the query's, every magnitude 15.
pub const MOST_AGREEMENT: usize = MAGNITUDE as usize * DIMENSIONS;
/// Bits of the query's magnitudes the first pass weighs by.
const PLANES: usize = 2;
const MAGNITUDE: u32 = (1 << PLANES) - 1;

/// Each row's agreement (WORDS words of signs a row) with the query, into
/// `out`.
type Agreements = fn(signs: &[u64], q: &Signs, out: &mut [u16]);

fn agreements_portable(signs: &[u64], q: &Signs, out: &mut [u16]) {
    agreements_of(signs, q, out)
}

/// Inlined into each kernel, so that `count_ones` compiles to the
/// instruction the kernel is built for.
#[inline(always)]
fn agreements_of(signs: &[u64], q: &Signs, out: &mut [u16]) {
    for (row, o) in signs.chunks_exact(WORDS).zip(out) {
        let mut sum = 0;
        for w in 0..WORDS {
            let agree = !(row[w] ^ q.signs[w]);
            for (b, plane) in q.planes.iter().enumerate() {
                sum += (agree & plane[w]).count_ones() << b;
            }
        }
        *o = sum as u16;
    }
}

/// The same compiled for the CPU's `popcnt` instruction (the portable
/// build counts bits with shifts and masks: twice the time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn agreements_popcnt(signs: &[u64], q: &Signs, out: &mut [u16]) {
    agreements_of(signs, q, out)
}

fn agreement_kernel() -> Agreements {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has popcnt (checked just above).
        return |signs, q, out| unsafe { agreements_popcnt(signs, q, out) };
    }
    agreements_portable
}

/// How many rows ahead the AVX2 kernel fetches a picked row.
const AHEAD: usize = 8;

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
fn score_rows_avx2(
    rows: &[i8],
    scales: &[f32],
    which: Which<'_>,
    q: &[i8],
    qscale: f32,
    out: &mut [f32],
) {
    use std::arch::x86_64::*;
    const LANES: usize = DIMENSIONS / 32;
    assert_eq!(q.len(), DIMENSIONS);
    // SAFETY: every load reads 32 bytes at offsets below DIMENSIONS within
    // `q` (checked above) or a row of exactly DIMENSIONS bytes (a slice
    // of `rows`, bounds-checked); loads are unaligned.
    unsafe {
        let signed: [__m256i; LANES] =
            std::array::from_fn(|i| _mm256_loadu_si256(q.as_ptr().add(i * 32).cast()));
        let magnitude = signed.map(|v| _mm256_abs_epi8(v));
        let ones = _mm256_set1_epi16(1);
        let dot = |row: &[i8]| {
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
            _mm_cvtsi128_si32(x) as f32
        };
        match which {
            // A range in order (7% faster than by position: 1.35 against
            // 1.45 ms for 100k rows on one core).
            Which::Range(from, to) => {
                let range = rows[from * DIMENSIONS..to * DIMENSIONS].chunks_exact(DIMENSIONS);
                for ((row, scale), o) in range.zip(&scales[from..to]).zip(out) {
                    *o = dot(row) / (scale * qscale);
                }
            }
            // Picked rows are scattered: each is fetched a few rows ahead,
            // as the hardware does by itself for rows in a range.
            Which::Picked(picked) => {
                for (at, (r, o)) in picked.iter().map(|r| *r as usize).zip(out).enumerate() {
                    if let Some(next) = picked.get(at + AHEAD).map(|n| *n as usize) {
                        let ahead = rows[next * DIMENSIONS..(next + 1) * DIMENSIONS].as_ptr();
                        for line in (0..DIMENSIONS).step_by(64) {
                            _mm_prefetch::<_MM_HINT_T0>(ahead.add(line));
                        }
                    }
                    *o = dot(&rows[r * DIMENSIONS..(r + 1) * DIMENSIONS]) / (scales[r] * qscale);
                }
            }
        }
    }
}

fn kernel() -> ScoreRows {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return |rows, scales, which, q, qscale, out| unsafe {
            score_rows_avx2(rows, scales, which, q, qscale, out)
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
            kernel()(&rows, &scales, Which::Range(0, n), q, 3.0, &mut a);
            score_rows_portable(&rows, &scales, Which::Range(0, n), q, 3.0, &mut b);
            assert_eq!(a, b);
            // Rows picked out of order score what they score in the range.
            let picked: Vec<u32> = (0..n as u32).rev().step_by(3).collect();
            let mut c = vec![0f32; picked.len()];
            kernel()(&rows, &scales, Which::Picked(&picked), q, 3.0, &mut c);
            let expected: Vec<f32> = picked.iter().map(|r| a[*r as usize]).collect();
            assert_eq!(c, expected);
        }
    }

    #[test]
    fn the_simd_signs_and_the_portable_ones_agree() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut rows: Vec<i8> = (0..200 * DIMENSIONS).map(|_| rng.i8(-127..=127)).collect();
        rows.extend(std::iter::repeat_n(0, DIMENSIONS));
        rows.extend(std::iter::repeat_n(1, DIMENSIONS));
        rows.extend(std::iter::repeat_n(-1, DIMENSIONS));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        signs_of(&rows, &mut a);
        signs_portable(&rows, &mut b);
        assert_eq!(a, b);
        assert_eq!(
            b[200 * WORDS..201 * WORDS],
            [0; WORDS],
            "zero is not above zero"
        );
        assert_eq!(b[201 * WORDS..202 * WORDS], [u64::MAX; WORDS]);
        assert_eq!(b[202 * WORDS..], [0; WORDS]);
        assert_eq!(b[0] & 1, u64::from(rows[0] > 0), "bit j is component j");
    }

    #[test]
    fn agreement_weighs_the_components_whose_sign_the_row_shares_with_the_query() {
        let mut f = Flat::default();
        for i in 0..300 {
            f.put(i, &unit(i as u64));
        }
        f.remove(17);
        f.put(5, &unit(555));
        for seed in [1_000, 1_001] {
            let q = unit(seed);
            let mut qi = Vec::new();
            quantize(&q, &mut qi);
            let largest = qi
                .iter()
                .map(|x| x.unsigned_abs() as f32)
                .fold(0f32, f32::max);
            let got = f.agreements(&q);
            for (row, a) in got.iter().enumerate() {
                let key = f.key(row);
                let mut vi = Vec::new();
                quantize(&unit(if key == 5 { 555 } else { key as u64 }), &mut vi);
                let expected: u32 = vi
                    .iter()
                    .zip(&qi)
                    .filter(|(r, q)| (**r > 0) == (**q > 0))
                    .map(|(_, q)| {
                        (q.unsigned_abs() as f32 * MAGNITUDE as f32 / largest).round() as u32
                    })
                    .sum();
                assert_eq!(u32::from(*a), expected, "row {row} (key {key})");
            }
            // The nearest row by agreement is the query's own subject.
            let own = f.agreements(&unit(42));
            let best = (0..f.len()).max_by_key(|r| own[*r]).unwrap();
            assert_eq!(f.key(best), 42);
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
