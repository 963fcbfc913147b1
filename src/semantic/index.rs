//! The in-memory vector index (an i8 matrix scanned exhaustively, see
//! `flat`), derived from `vectors.db` and saved beside it as `vectors.index`.
//!
//! It follows the vectors table by `n` (see `store::vectors`): every row up to
//! `applied` is in the index, a tombstone having removed its key. The saved
//! file starts with a header naming the table generation it was built from,
//! how far it had applied, and a checksum of the rest; a file that is
//! missing, corrupt (checksum), or from another generation is ignored and the
//! index is rebuilt from the table. One that is merely behind is loaded and
//! brought forward from the table — nothing is embedded again either way.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::flat::{Flat, DIMENSIONS, MOST_AGREEMENT};
use super::VectorSource;

pub const FILE: &str = "vectors.index";
/// The file the HNSW index of earlier versions was saved in: removed.
const OLD_FILE: &str = "vectors.usearch";
const MAGIC: &[u8; 8] = b"PADVEC02";
/// MAGIC, applied n, payload length, checksum, generation (16 bytes).
const HEADER: usize = 8 + 8 + 8 + 8 + 16;
/// Rows read from the table at a time while rebuilding or catching up.
const PAGE: i64 = 2000;

/// Candidates whose 8-bit estimate is this close to the last one wanted are
/// rescored too (the estimate's error on real embeddings is a few
/// thousandths; docs/benchmarks.md, "Recall").
const NEAR: f32 = 0.01;
/// At most this many of them.
const NEAR_TIES: usize = 256;
/// Score histogram buckets over −1…1 (a bucket spans 0.00025).
const BUCKETS: usize = 8192;
/// From this many rows a search first picks the rows worth scoring by their
/// signs (`Flat::agreements`): below it, scoring every row takes under ~7 ms
/// on one core.
const FIRST_PASS_FROM: usize = 200_000;
/// The first pass keeps this fraction of the rows (1/8)...
const POOL_SHARE: usize = 8;
/// ...and the walk trusts the best quarter of those by the i8 estimate
/// (the best 3% of all rows; at a million, 31,000 rows, a filter a tenth
/// of the notes pass walks ~3,000): the best of all rows are among the
/// nearest by signs (docs/benchmarks.md, "A first pass on signs").
const TRUSTED: usize = 4;

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

    /// The `want` best vectors by estimated cosine, best first, as (key,
    /// estimate) — and after them up to `NEAR_TIES` more whose estimate is
    /// within `NEAR` of the last: the 8-bit estimate can misorder near-equal
    /// notes (a pile of duplicates of one text just above the duplicates of
    /// another), and the caller's rescoring on f32 must see them all to rank
    /// them right. Of identical rows (copies of one note) only the newest
    /// `want` come: no more of them can rank, and a pile of copies must not
    /// take the near-ties' places (a text repeated 357 times at 1M did,
    /// recall 0.987). Every vector is scored, on its signs first past
    /// `FIRST_PASS_FROM` rows (`best_rows`). Keys in `hidden` (sorted: the
    /// entries of archived pads) are passed by in the walk itself. With
    /// `check`, only keys that pass a filter: checked a chunk of the walk at
    /// a time, best first (`check` returns the keys of the chunk that pass:
    /// one query a chunk, where a store's check is a query), so a broad
    /// filter checks few — and still one scan of the index, however few
    /// pass; its error ends the walk. Also returns how many rows the walk
    /// offered (looked at, not hidden).
    pub fn candidates(
        &self,
        query: &[f32],
        want: usize,
        check: Option<&mut ChunkCheck<'_>>,
        hidden: &[i64],
    ) -> crate::error::Result<(Vec<(i64, f32)>, usize)> {
        Ok(self.best_rows(query, want, check, hidden)?.0)
    }

    /// From how many rows a search starts with the first pass on signs.
    #[cfg(test)]
    fn with_first_pass_from(mut self, rows: usize) -> VectorIndex {
        self.first_pass_from = rows;
        self
    }

    /// The scan: at most `want` rows of identical contents. From
    /// `first_pass_from` rows, a first pass on the rows' signs picks the
    /// `1/POOL_SHARE` that agree most with the query and only they are scored
    /// on i8; the walk trusts that pool for its best `1/TRUSTED` (a filter
    /// few notes pass walks deeper: then every row is scored after all, the
    /// filter's answers so far kept). Also says whether every row was
    /// scored.
    fn best_rows(
        &self,
        query: &[f32],
        want: usize,
        check: Option<&mut ChunkCheck<'_>>,
        hidden: &[i64],
    ) -> crate::error::Result<(Candidates, bool)> {
        let check = match check {
            Some(check) if self.flat.len() >= self.first_pass_from => check,
            // No filter, or a single walk of every row: nothing to remember.
            check => return self.first_pass_then_all(query, want, check, hidden),
        };
        // The filter's answers, so a key walked twice is asked about once.
        let (mut known, mut asked) = (std::collections::HashMap::new(), 0);
        let mut remembered = |keys: &[i64]| -> crate::error::Result<HashSet<i64>> {
            let new: Vec<i64> = keys
                .iter()
                .copied()
                .filter(|k| !known.contains_key(k))
                .collect();
            if !new.is_empty() {
                asked += new.len();
                let pass = check(&new)?;
                known.extend(new.into_iter().map(|k| (k, pass.contains(&k))));
            }
            Ok(keys.iter().copied().filter(|k| known[k]).collect())
        };
        let ((found, _), all) =
            self.first_pass_then_all(query, want, Some(&mut remembered), hidden)?;
        Ok(((found, asked), all))
    }

    /// `best_rows` without the filter's memory: the walk of the first pass's
    /// pool if it is trusted, else of every row.
    fn first_pass_then_all(
        &self,
        query: &[f32],
        want: usize,
        mut check: Option<&mut ChunkCheck<'_>>,
        hidden: &[i64],
    ) -> crate::error::Result<(Candidates, bool)> {
        if self.flat.len() >= self.first_pass_from {
            let pool = self.pool(query);
            let scores = self.flat.scores_of(query, &pool);
            let trusted = pool.len() / TRUSTED;
            let walked = self.walk(
                Some(&pool),
                &scores,
                want,
                check.as_deref_mut(),
                hidden,
                trusted,
            )?;
            if let Some(found) = walked {
                return Ok((found, false));
            }
        }
        let scores = self.flat.scores(query);
        let found = self.walk(None, &scores, want, check, hidden, usize::MAX)?;
        Ok((found.expect("a walk of every row ends"), true))
    }

    /// The rows that agree most with `query` on signs (`Flat::agreements`):
    /// at least `1/POOL_SHARE` of them (all rows at the last agreement taken).
    fn pool(&self, query: &[f32]) -> Vec<u32> {
        let agreements = self.flat.agreements(query);
        let mut histogram = vec![0usize; MOST_AGREEMENT + 1];
        for a in &agreements {
            histogram[*a as usize] += 1;
        }
        let share = agreements.len().div_ceil(POOL_SHARE);
        let (mut least, mut taken) = (MOST_AGREEMENT, 0);
        while least > 0 && taken + histogram[least] < share {
            taken += histogram[least];
            least -= 1;
        }
        let least = least as u16;
        (0..agreements.len() as u32)
            .filter(|r| agreements[*r as usize] >= least)
            .collect()
    }

    /// The walk, best first, over the rows `pool` names (every row when
    /// `None`), `scores` holding their estimates in the same order. `None`
    /// when it would have to go past the best `trusted` of them.
    fn walk(
        &self,
        pool: Option<&[u32]>,
        scores: &[f32],
        want: usize,
        mut check: Option<&mut ChunkCheck<'_>>,
        hidden: &[i64],
        trusted: usize,
    ) -> crate::error::Result<Option<Candidates>> {
        // Positions in `scores`; the row each names.
        let row = |at: u32| pool.map_or(at as usize, |p| p[at as usize] as usize);
        // Ties (identical notes have identical rows) go to the newest, as in
        // the final ranking: so the candidates are the ones it would keep.
        let by_score = |a: &u32, b: &u32| {
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then(self.flat.key(row(*b)).cmp(&self.flat.key(row(*a))))
        };
        // Best first, in bands of the score histogram that grow: the first
        // band holds about `want + NEAR_TIES` rows, so an unfiltered search
        // sorts a few hundred rows, not all of them.
        let bucket = |s: f32| (((s + 1.0) * (BUCKETS / 2) as f32) as usize).min(BUCKETS - 1);
        let mut histogram = vec![0usize; BUCKETS];
        for s in scores {
            histogram[bucket(*s)] += 1;
        }
        let mut out = Vec::with_capacity(want);
        let mut offered = 0;
        let mut seen: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        let mut floor = f32::NEG_INFINITY;
        let (mut above, mut covered) = (BUCKETS, 0);
        let mut window = want + NEAR_TIES;
        let chunk = window;
        let mut band = Vec::new();
        // The positions of the next bands, gathered from all the scores in
        // one pass for ~16 bands' worth (a filter that few notes pass walks
        // several bands; a pass over a million scores costs ~2 ms).
        let (mut gathered_pool, mut pool_low) = (Vec::new(), BUCKETS);
        let mut done = false;
        'scan: while above > 0 {
            // The band: buckets below `above` until `window` more rows.
            let mut low = above;
            let mut more = 0;
            while low > 0 && more < window {
                low -= 1;
                more += histogram[low];
            }
            if low < pool_low {
                let mut gathered = 0;
                pool_low = above;
                while pool_low > 0 && (pool_low > low || gathered < more * 16) {
                    pool_low -= 1;
                    gathered += histogram[pool_low];
                }
                gathered_pool.clear();
                gathered_pool.extend(
                    (0..scores.len() as u32)
                        .filter(|r| (pool_low..above).contains(&bucket(scores[*r as usize]))),
                );
            }
            band.clear();
            band.extend(
                gathered_pool
                    .iter()
                    .copied()
                    .filter(|r| (low..above).contains(&bucket(scores[*r as usize]))),
            );
            band.sort_unstable_by(by_score);
            // With a filter, the band's rows are checked a chunk at a time
            // as the walk reaches them (one call a chunk, none past where
            // the walk stops).
            let (mut passing, mut checked) = (HashSet::new(), 0);
            for (at, &position) in band.iter().enumerate() {
                let score = scores[position as usize];
                if out.len() >= want && (score < floor || out.len() >= want + NEAR_TIES) {
                    done = true;
                    break 'scan;
                }
                if covered + at >= trusted {
                    return Ok(None);
                }
                let key = self.flat.key(row(position));
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
                            let keys: Vec<i64> = band[at..checked]
                                .iter()
                                .map(|p| self.flat.key(row(*p)))
                                .filter(|k| hidden.binary_search(k).is_err())
                                .collect();
                            offered += keys.len();
                            passing = check(&keys)?;
                        }
                        passing.contains(&key)
                    }
                };
                if passes {
                    // Copies of one note (ties, newest first) past `want`
                    // can never rank: leave them out, so they do not crowd
                    // distinct near-ties out of rescoring.
                    let count = seen.entry(self.fingerprint(row(position))).or_insert(0);
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
            covered += more;
            above = low;
            window = covered * 4;
        }
        // Every row of a pool walked and the walk not done: rows outside it
        // might belong.
        if pool.is_some() && !done {
            return Ok(None);
        }
        Ok(Some((out, offered)))
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
fn load(
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
    use super::{checksum, load, VectorIndex, DIMENSIONS, FILE, NEAR_TIES, POOL_SHARE, TRUSTED};
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

    /// Unit vectors in clusters (200 centres, members spread around them),
    /// as notes on a few hundred subjects are; the last 40 are queries (on
    /// the same subjects).
    fn clustered(n: usize) -> Vec<Vec<f32>> {
        let mut rng = fastrand::Rng::with_seed(3);
        let unit = |v: Vec<f32>| {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        let centres: Vec<Vec<f32>> = (0..200)
            .map(|_| unit((0..DIMENSIONS).map(|_| rng.f32() - 0.5).collect()))
            .collect();
        (0..n)
            .map(|i| {
                let c = &centres[(i * 7919) % centres.len()];
                let spread = 0.5 + rng.f32();
                unit(
                    c.iter()
                        .map(|x| x + spread * (rng.f32() - 0.5) / 8.0)
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn the_first_pass_on_signs_finds_what_scoring_every_row_finds() {
        let mut vectors = clustered(40_040);
        let queries = vectors.split_off(40_000);
        let build = || {
            VectorIndex::from_vectors(
                vectors
                    .iter()
                    .enumerate()
                    .map(|(k, v)| (k as i64, v.as_slice())),
            )
        };
        let (every, first) = (build(), build().with_first_pass_from(0));
        let (mut same, mut total) = (0, 0);
        for q in &queries {
            // No filter, and a filter half pass: the pool is enough.
            let mut half = |keys: &[i64]| Ok(keys.iter().copied().filter(|k| k % 2 == 1).collect());
            let ((all, _), scored_all) = every.best_rows(q, 10, None, &[]).unwrap();
            assert!(scored_all);
            let ((picked, offered), scored_all) = first.best_rows(q, 10, None, &[]).unwrap();
            assert!(!scored_all, "the pool sufficed");
            assert!(offered < 40_000 / POOL_SHARE / TRUSTED);
            let ((all_f, _), _) = every.best_rows(q, 10, Some(&mut half), &[]).unwrap();
            let ((picked_f, _), scored_all) = first.best_rows(q, 10, Some(&mut half), &[]).unwrap();
            assert!(!scored_all, "the pool sufficed for half");
            for (a, b) in [(&all, &picked), (&all_f, &picked_f)] {
                let a: HashSet<i64> = a[..10].iter().map(|(k, _)| *k).collect();
                same += b[..10].iter().filter(|(k, _)| a.contains(k)).count();
                total += 10;
            }
        }
        let recall = same as f64 / total as f64;
        assert!(recall >= 0.99, "recall {recall}");
        // A filter 1 in 2,000 pass walks past the trusted part of the pool:
        // every row is scored, the same candidates as without the first
        // pass, and no key is asked about twice.
        for q in &queries[..5] {
            let mut rare =
                |keys: &[i64]| Ok(keys.iter().copied().filter(|k| k % 2_000 == 7).collect());
            let ((all, _), _) = every.best_rows(q, 10, Some(&mut rare), &[]).unwrap();
            let mut asked = Vec::new();
            let mut rare_counted = |keys: &[i64]| {
                asked.extend_from_slice(keys);
                Ok(keys.iter().copied().filter(|k| k % 2_000 == 7).collect())
            };
            let ((picked, offered), scored_all) = first
                .best_rows(q, 10, Some(&mut rare_counted), &[])
                .unwrap();
            assert!(scored_all, "past the pool's trusted part");
            assert_eq!(all, picked);
            let distinct: HashSet<i64> = asked.iter().copied().collect();
            assert_eq!(distinct.len(), asked.len(), "each key asked about once");
            assert_eq!(offered, asked.len());
        }
    }

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
