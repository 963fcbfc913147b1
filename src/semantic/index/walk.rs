//! The walk over scored rows, best first: a band of the score histogram at
//! a time (`Bands`), the filter asked a chunk of the band at a time
//! (`Pace`: chunks sized from the pass rate seen), copies of one note
//! capped, and the stopping rule: the walk ends once no row left could
//! rank among the caller's best `k` after its rescoring on f32.
//!
//! The rule rests on `ERROR`, how far an estimate may lie from the cosine
//! it stands for. The `k` best passing rows by estimate, down to the k-th's
//! estimate `e`, each have a true cosine of at least `e - ERROR`; a row
//! whose estimate is below `e - 2·ERROR` has one below `e - ERROR`, so `k`
//! rows beat it and it cannot rank. The walk hands over every passing row
//! down to that floor, and at least `LEAST`·k (as the engine asked before
//! the bound was explicit), and stops at the first below it.

use std::collections::{HashMap, HashSet};

use super::super::flat::DIMENSIONS;
use super::file::checksum;
use super::{Candidates, ChunkCheck, VectorIndex};

/// How far an i8 estimate may lie from the f32 cosine, either way. The
/// query and the row are each rounded to steps of their largest component
/// over 127 (`flat::quantize`), so the estimate's error is the query
/// dotted with the row's rounding errors plus the row dotted with the
/// query's (their product is smaller still). Each rounding error is
/// spread evenly over a step, and the 384 of them are independent, so
/// for unit vectors the error's standard deviation is
/// √((step_query² + step_row²) / 12): the model's vectors have largest
/// components of ~0.3 at most, a step of ≤ 0.0024, σ ≤ 0.001 — and
/// `ERROR` is five σ. (Every rounding leaning the same way would reach
/// ~0.02; 384 independent ones do not.) Measured on the model's vectors:
/// docs/benchmarks.md, "The walk's stopping rule".
const ERROR: f32 = 0.005;
/// The walk hands over at least this many times `k` candidates, though
/// the bound says fewer could rank: how deep the walk goes also decides
/// whether the first pass's pool is trusted (`scan.rs`), and with only the
/// bound's candidates a filter a fiftieth pass stayed inside the pool where
/// it should not have (recall 0.98 against 0.995 on 100k clustered rows;
/// 1.000 with every row scored).
const LEAST: usize = 4;
/// At most this many candidates past those: a pile of near-equal notes
/// (thousands of near-duplicates) would otherwise all come.
pub(super) const NEAR_TIES: usize = 256;
/// Score histogram buckets over −1…1 (a bucket spans 0.00025).
const BUCKETS: usize = 8192;

impl VectorIndex {
    /// The walk, best first, over the rows `pool` names (every row when
    /// `None`), `scores` holding their estimates in the same order: the
    /// candidates to rank the best `k`. `None` when it would have to go
    /// past the best `trusted` of them.
    pub(super) fn walk(
        &self,
        pool: Option<&[u32]>,
        scores: &[f32],
        k: usize,
        mut check: Option<&mut ChunkCheck<'_>>,
        hidden: &[i64],
        trusted: usize,
    ) -> crate::error::Result<Option<Candidates>> {
        // Positions in `scores`; the row each names, and its key.
        let row = |at: u32| pool.map_or(at as usize, |p| p[at as usize] as usize);
        let key = |at: u32| self.flat.key(row(at));
        // Ties (identical notes have identical rows) go to the newest, as in
        // the final ranking: so the candidates are the ones it would keep.
        let by_score = |a: &u32, b: &u32| {
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then(key(*b).cmp(&key(*a)))
        };
        let (least, most) = (k * LEAST, k * LEAST + NEAR_TIES);
        let (mut bands, mut pace) = (Bands::new(scores), Pace::new(most));
        let (mut out, mut offered) = (Vec::with_capacity(least), 0);
        let mut copies: HashMap<u64, usize> = HashMap::new();
        // Set once `k` pass: no row below it can rank.
        let mut floor: Option<f32> = None;
        let mut band = Vec::new();
        loop {
            // The next band holds the rows the pass rate says the walk
            // needs, and those above the floor (all of them are checked).
            let above = floor.map_or(0, |f| bands.rows_above(f));
            let lacking = least.saturating_sub(out.len());
            let rows = pace
                .rows_for(lacking)
                .max(above.min(pace.rows_for(most - out.len())));
            if !bands.next(&mut band, rows) {
                break;
            }
            band.sort_unstable_by(by_score);
            let (mut passing, mut checked) = (HashSet::new(), 0);
            for (at, &position) in band.iter().enumerate() {
                let score = scores[position as usize];
                let past_floor = floor.is_some_and(|f| score < f);
                if out.len() >= least && past_floor || out.len() >= most {
                    return Ok(Some((out, offered)));
                }
                if bands.before + at >= trusted {
                    return Ok(None);
                }
                let key = key(position);
                if hidden.binary_search(&key).is_ok() {
                    continue;
                }
                match check.as_mut() {
                    None => offered += 1,
                    // Checked a chunk at a time as the walk reaches them
                    // (one call a chunk, each as long as the pass rate
                    // seen says the walk still goes, and a quarter more).
                    Some(check) => {
                        if at >= checked {
                            let ahead = floor.map_or(0, |f| {
                                band[at..].partition_point(|p| scores[*p as usize] >= f)
                            });
                            let lacking = least.saturating_sub(out.len());
                            let room = pace.rows_for(most - out.len());
                            checked = (at + pace.chunk(lacking, ahead.min(room))).min(band.len());
                            let keys = self.unhidden(&band[at..checked], row, hidden);
                            offered += keys.len();
                            passing = check(&keys)?;
                            pace.saw(keys.len(), passing.len());
                        }
                        if !passing.contains(&key) {
                            continue;
                        }
                    }
                }
                // Copies of one note (ties, newest first) past `k` can
                // never rank: leave them out, so they do not crowd distinct
                // near-ties out of rescoring.
                let count = copies.entry(self.fingerprint(row(position))).or_insert(0);
                if *count >= k {
                    continue;
                }
                *count += 1;
                out.push((key, score));
                if out.len() == k {
                    floor = Some(score - 2.0 * ERROR);
                }
            }
        }
        // Every row of a pool walked and the walk not done: rows outside it
        // might belong.
        Ok(pool.is_none().then_some((out, offered)))
    }

    /// The keys of these positions' rows, but those in `hidden`.
    fn unhidden(&self, positions: &[u32], row: impl Fn(u32) -> usize, hidden: &[i64]) -> Vec<i64> {
        positions
            .iter()
            .map(|p| self.flat.key(row(*p)))
            .filter(|k| hidden.binary_search(k).is_err())
            .collect()
    }

    /// A fingerprint of a row's contents (its i8 values and scale): copies
    /// of one note, identical vectors, share it.
    fn fingerprint(&self, row: usize) -> u64 {
        let (_, scales, rows) = self.flat.parts();
        let mut bytes = [0u8; DIMENSIONS + 4];
        for (b, v) in bytes
            .iter_mut()
            .zip(&rows[row * DIMENSIONS..(row + 1) * DIMENSIONS])
        {
            *b = *v as u8;
        }
        bytes[DIMENSIONS..].copy_from_slice(&scales[row].to_le_bytes());
        checksum(&bytes)
    }
}

/// The positions of `scores`, best first, in bands of the score histogram
/// that grow: each band holds about the rows the walk says it needs, and
/// from the second on at least four times all before it, so an unfiltered
/// search sorts a few hundred rows, not all of them.
struct Bands<'a> {
    scores: &'a [f32],
    histogram: Vec<usize>,
    /// Rows in the bands before the current one.
    before: usize,
    /// Rows in the current band.
    current: usize,
    /// Buckets from this one down are still to come.
    above: usize,
    /// The positions of the next bands, gathered from all the scores in
    /// one pass for ~16 bands' worth (a filter that few notes pass walks
    /// several bands; a pass over a million scores costs ~2 ms): those in
    /// buckets `gathered_from..` below the current band.
    gathered: Vec<u32>,
    gathered_from: usize,
}

impl<'a> Bands<'a> {
    fn new(scores: &'a [f32]) -> Bands<'a> {
        let mut histogram = vec![0usize; BUCKETS];
        for s in scores {
            histogram[bucket(*s)] += 1;
        }
        Bands {
            scores,
            histogram,
            before: 0,
            current: 0,
            above: BUCKETS,
            gathered: Vec::new(),
            gathered_from: BUCKETS,
        }
    }

    /// How many rows not in a band yet have an estimate of `score` or
    /// more (to a bucket).
    fn rows_above(&self, score: f32) -> usize {
        self.histogram[bucket(score).min(self.above)..self.above]
            .iter()
            .sum()
    }

    /// Puts the next band's positions in `band` (unsorted), at least
    /// `rows` of them if there are; `false` when every row has been in a
    /// band.
    fn next(&mut self, band: &mut Vec<u32>, rows: usize) -> bool {
        self.before += self.current;
        if self.above == 0 {
            return false;
        }
        // The band: buckets below `above` until `window` more rows.
        let window = rows.max(self.before * 4);
        let (above, mut low, mut more) = (self.above, self.above, 0);
        while low > 0 && more < window {
            low -= 1;
            more += self.histogram[low];
        }
        if low < self.gathered_from {
            let mut gathered = 0;
            self.gathered_from = above;
            while self.gathered_from > 0 && (self.gathered_from > low || gathered < more * 16) {
                self.gathered_from -= 1;
                gathered += self.histogram[self.gathered_from];
            }
            let scores = self.scores;
            let from = self.gathered_from;
            self.gathered.clear();
            self.gathered.extend(
                (0..scores.len() as u32)
                    .filter(|r| (from..above).contains(&bucket(scores[*r as usize]))),
            );
        }
        band.clear();
        let scores = self.scores;
        band.extend(
            self.gathered
                .iter()
                .copied()
                .filter(|r| (low..above).contains(&bucket(scores[*r as usize]))),
        );
        (self.above, self.current) = (low, more);
        true
    }
}

/// How many rows the walk asks the filter about at once: `first` rows,
/// then as many as the pass rate seen so far says the walk still needs and
/// a quarter more, but never more than were asked before (the rows asked
/// at most double a call: a filter's pass rate near the query is not its
/// rate further on — a tenth passing, the first 296 rows of a subject may
/// hold none). Each chunk is one call, on PostgreSQL one query: with a
/// fixed chunk of 296 rows, a filter a fiftieth of a million notes pass
/// took 27 a search.
struct Pace {
    first: usize,
    /// Rows asked about so far, and how many of them passed.
    asked: usize,
    passed: usize,
    last: usize,
}

impl Pace {
    fn new(first: usize) -> Pace {
        Pace {
            first,
            asked: 0,
            passed: 0,
            last: first,
        }
    }

    /// Rows to walk for `more` that pass, at the rate seen so far.
    fn rows_for(&self, more: usize) -> usize {
        if self.asked == 0 {
            return self.first;
        }
        let rows = (more * self.asked).div_ceil(self.passed.max(1)) * 5 / 4;
        rows.min(self.asked)
    }

    /// The next chunk: enough rows for `lacking` more that pass, and at
    /// least the `ahead` above the floor (each must be checked).
    fn chunk(&mut self, lacking: usize, ahead: usize) -> usize {
        self.last = self.rows_for(lacking).max(ahead).max(1);
        self.last
    }

    fn saw(&mut self, asked: usize, passed: usize) {
        self.asked += asked;
        self.passed += passed;
    }
}

/// The histogram bucket of an estimate.
fn bucket(score: f32) -> usize {
    (((score + 1.0) * (BUCKETS / 2) as f32) as usize).min(BUCKETS - 1)
}

#[cfg(test)]
mod tests {
    use super::NEAR_TIES;
    use crate::semantic::flat::DIMENSIONS;
    use crate::semantic::index::VectorIndex;
    use std::collections::HashSet;

    #[test]
    fn identical_notes_rank_newest_first_and_near_ties_all_reach_rescoring() {
        let v: Vec<f32> = (0..DIMENSIONS)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 40.0)
            .collect();
        let other: Vec<f32> = v.iter().rev().cloned().collect();
        // 400 copies of the best note and one distinct note tied with them
        // within the estimate's error: the distinct one reaches rescoring.
        let mut near = v.clone();
        near[0] += 0.002;
        let mut vectors: Vec<(i64, &[f32])> = (0..400).map(|k| (k, v.as_slice())).collect();
        vectors.push((5_000, near.as_slice()));
        let crowded = VectorIndex::from_vectors(vectors);
        let (found, _) = crowded.candidates(&v, 10, None, &[]).unwrap();
        assert!(
            found.iter().any(|(k, _)| *k == 5_000),
            "a distinct near-tie is not crowded out by copies: {} candidates",
            found.len()
        );
        assert!(found.len() <= 10 + NEAR_TIES);
        let mut vectors: Vec<(i64, &[f32])> = (0..300).map(|k| (k, v.as_slice())).collect();
        vectors.extend((300..1000).map(|k| (k, other.as_slice())));
        let index = VectorIndex::from_vectors(vectors);
        let (found, _) = index.candidates(&v, 10, None, &[]).unwrap();
        let keys: Vec<i64> = found.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys[..10], (290..300).rev().collect::<Vec<_>>());
        assert_eq!(
            found.len(),
            20,
            "copies of one note past the 10 ranked cannot rank: left out, \
             the 10 newest of each of the two notes come"
        );
        let mut odd_keys = |keys: &[i64]| Ok(keys.iter().copied().filter(|k| k % 2 == 1).collect());
        let (odd, _) = index.candidates(&v, 10, Some(&mut odd_keys), &[]).unwrap();
        assert_eq!(odd[0].0, 299);
        assert!(odd.iter().all(|(k, _)| k % 2 == 1));
        let of_the_best: Vec<i64> = odd.iter().map(|(k, _)| *k).filter(|k| *k < 300).collect();
        assert_eq!(
            of_the_best,
            (281..300).rev().step_by(2).collect::<Vec<_>>(),
            "the copies that pass, the 10 newest"
        );
    }

    #[test]
    fn hidden_rows_are_never_offered_to_the_filter() {
        let v: Vec<f32> = (0..DIMENSIONS)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 40.0)
            .collect();
        let mut far = v.clone();
        for x in far.iter_mut().step_by(2) {
            *x = -*x;
        }
        // 900 rows nearest the query are hidden (an archived pad's), 100
        // farther ones are not: the filter sees the 100 only.
        let mut vectors: Vec<(i64, Vec<f32>)> = (0..900)
            .map(|k| {
                let mut near = v.clone();
                near[k as usize % DIMENSIONS] += 0.001 * (k % 7) as f32;
                (k, near)
            })
            .collect();
        vectors.extend((900..1000).map(|k| (k, far.clone())));
        let index = VectorIndex::from_vectors(vectors.iter().map(|(k, v)| (*k, v.as_slice())));
        let hidden: Vec<i64> = (0..900).collect();
        let (found, offered) = index.candidates(&v, 10, None, &hidden).unwrap();
        assert!(found.iter().all(|(k, _)| *k >= 900), "{found:?}");
        assert_eq!(found.len(), 10);
        assert!(offered <= 100, "{offered} offered");
        let mut asked = 0;
        let mut check = |keys: &[i64]| {
            asked += keys.len();
            Ok(keys.iter().copied().collect::<HashSet<i64>>())
        };
        let (checked, offered) = index.candidates(&v, 10, Some(&mut check), &hidden).unwrap();
        assert!(checked.iter().all(|(k, _)| *k >= 900), "{checked:?}");
        assert_eq!(checked.len(), 10);
        assert!(asked <= 100, "{asked} asked about");
        assert_eq!(offered, asked);
    }
}
