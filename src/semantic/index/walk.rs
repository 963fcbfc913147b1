//! The walk over scored rows, best first: a band of the score histogram at
//! a time (`Bands`), the filter asked a chunk of the band at a time, copies
//! of one note capped, and the stopping rule — the `want` best that pass,
//! then those whose estimate is within `NEAR` of the last, for the caller's
//! rescoring on f32.

use std::collections::{HashMap, HashSet};

use super::super::flat::DIMENSIONS;
use super::file::checksum;
use super::{Candidates, ChunkCheck, VectorIndex};

/// Candidates whose 8-bit estimate is this close to the last one wanted are
/// rescored too (the estimate's error on real embeddings is a few
/// thousandths; docs/benchmarks.md, "Recall").
const NEAR: f32 = 0.01;
/// At most this many of them.
pub(super) const NEAR_TIES: usize = 256;
/// Score histogram buckets over −1…1 (a bucket spans 0.00025).
const BUCKETS: usize = 8192;

impl VectorIndex {
    /// The walk, best first, over the rows `pool` names (every row when
    /// `None`), `scores` holding their estimates in the same order. `None`
    /// when it would have to go past the best `trusted` of them.
    pub(super) fn walk(
        &self,
        pool: Option<&[u32]>,
        scores: &[f32],
        want: usize,
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
        let chunk = want + NEAR_TIES;
        let mut bands = Bands::new(scores, want + NEAR_TIES);
        let (mut out, mut offered) = (Vec::with_capacity(want), 0);
        let mut copies: HashMap<u64, usize> = HashMap::new();
        let mut floor = f32::NEG_INFINITY;
        let mut band = Vec::new();
        while bands.next(&mut band) {
            band.sort_unstable_by(by_score);
            // With a filter, the band's rows are checked a chunk at a time
            // as the walk reaches them (one call a chunk, none past where
            // the walk stops).
            let (mut passing, mut checked) = (HashSet::new(), 0);
            for (at, &position) in band.iter().enumerate() {
                let score = scores[position as usize];
                if out.len() >= want && (score < floor || out.len() >= want + NEAR_TIES) {
                    return Ok(Some((out, offered)));
                }
                if bands.before + at >= trusted {
                    return Ok(None);
                }
                let key = key(position);
                if hidden.binary_search(&key).is_ok() {
                    continue;
                }
                let passes = match check.as_mut() {
                    None => {
                        offered += 1;
                        true
                    }
                    Some(check) => {
                        if at >= checked {
                            checked = (at + chunk).min(band.len());
                            let keys = self.unhidden(&band[at..checked], row, hidden);
                            offered += keys.len();
                            passing = check(&keys)?;
                        }
                        passing.contains(&key)
                    }
                };
                if !passes {
                    continue;
                }
                // Copies of one note (ties, newest first) past `want` can
                // never rank: leave them out, so they do not crowd distinct
                // near-ties out of rescoring.
                let count = copies.entry(self.fingerprint(row(position))).or_insert(0);
                if *count >= want {
                    continue;
                }
                *count += 1;
                out.push((key, score));
                if out.len() == want {
                    floor = score - NEAR;
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
/// that grow: the first band holds about `first` rows, each next one four
/// times all before it, so an unfiltered search sorts a few hundred rows,
/// not all of them.
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
    /// How many rows the next band holds at least.
    window: usize,
}

impl<'a> Bands<'a> {
    fn new(scores: &'a [f32], first: usize) -> Bands<'a> {
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
            window: first,
        }
    }

    /// Puts the next band's positions in `band` (unsorted); `false` when
    /// every row has been in a band.
    fn next(&mut self, band: &mut Vec<u32>) -> bool {
        if self.current > 0 {
            self.before += self.current;
            self.window = self.before * 4;
        }
        if self.above == 0 {
            return false;
        }
        // The band: buckets below `above` until `window` more rows.
        let (above, mut low, mut more) = (self.above, self.above, 0);
        while low > 0 && more < self.window {
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
            10,
            "copies of one note past the 10 wanted cannot rank: left out"
        );
        let mut odd_keys = |keys: &[i64]| Ok(keys.iter().copied().filter(|k| k % 2 == 1).collect());
        let (odd, _) = index.candidates(&v, 10, Some(&mut odd_keys), &[]).unwrap();
        assert_eq!(odd[0].0, 299);
        assert!(odd.iter().all(|(k, _)| k % 2 == 1));
        assert_eq!(odd.len(), 10, "the copies that pass, the 10 newest");
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
