//! A hybrid search's meaning list, centred (beside the sparse list, the
//! configuration measured: `Plan::centred`): the plain cosine's best
//! `POOL` candidates re-scored by the cosine of the question and each note
//! taken from the mean of the notes searched, cos(q − m, d − m).
//!
//! What every note of a pad shares (the way its people talk, its topic)
//! lifts every cosine alike, so short generic turns ("Cool! What did it
//! look like?") crowd the top; with the shared direction taken out, a
//! note ranks by what it shares with the question beyond it. Measured on
//! LoCoMo's and REALTALK's development halves (docs/benchmarks.md, issue
//! 68): with the pad's mean, more than with the whole store's.
//!
//! Only each candidate's dot product with the mean is needed beside its
//! cosine (all stored vectors are unit length):
//! (q − m)·(d − m) = q·d − q·m − d·m + |m|² and |d − m|² = 1 − 2 d·m + |m|²
//! (`centred_cosine`); the store gives d·m for the pool
//! (`Meaning::similarities`, the mean as its query).
//!
//! The mean is the stored vectors' sum over the notes the search covers,
//! read by the store (`Meaning::vector_sum`) for at most `MEAN_SAMPLE`
//! notes, the newest, and kept per filter until the index moves (a vector
//! added or removed, here or by another engine of a team) or a pad is
//! archived or brought back. Up to `MEAN_SAMPLE` notes it is exact — a
//! search covering several pads centres on the mean of all their notes,
//! their means weighted by their counts —; in one pad of more, it is the
//! mean of its newest `MEAN_SAMPLE`. A search over more notes than that in
//! several pads (the whole store, a token's pads) is not centred: the
//! newest notes of a store are its busiest pads', not its mean, and the
//! replay measured a pad's mean and the whole store's, not a sample's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::Engine;
use crate::error::Result;
use crate::semantic::Semantic;
use crate::storage::{ArchiveMark, EntryFilter};

/// The plain cosine's best this many are re-scored centred (the replay
/// measured the best 200 to give the whole of centring's lift).
pub(super) const POOL: usize = 200;

/// The mean is taken over at most this many notes of the search's scope:
/// a pad up to this size exactly; reading them costs ~1.5 KB each.
pub(super) const MEAN_SAMPLE: usize = 2_000;

/// Means kept: one per filter searched recently.
const MEANS_KEPT: usize = 64;

/// A mean vector and its squared length.
#[derive(Debug)]
pub(super) struct Mean {
    pub vector: Arc<[f32]>,
    pub norm2: f64,
}

impl Mean {
    /// The mean of `n` vectors whose sum is `sum`; `None` for none.
    fn of(sum: &[f64], n: usize) -> Option<Mean> {
        if n == 0 || sum.is_empty() {
            return None;
        }
        let vector: Arc<[f32]> = sum.iter().map(|s| (s / n as f64) as f32).collect();
        let norm2 = vector.iter().map(|x| (*x as f64) * (*x as f64)).sum();
        Some(Mean { vector, norm2 })
    }
}

/// The cosine of q − m and d − m for unit vectors q and d, from q·d,
/// q·m, d·m and |m|². 0 when either is (nearly) the mean itself.
pub(super) fn centred_cosine(qd: f64, qm: f64, dm: f64, mm: f64) -> f64 {
    let q2 = 1.0 - 2.0 * qm + mm;
    let d2 = 1.0 - 2.0 * dm + mm;
    if q2 <= 1e-12 || d2 <= 1e-12 {
        return 0.0;
    }
    (qd - qm - dm + mm) / (q2 * d2).sqrt()
}

/// The means of the filters searched, each with the marks it was read at.
#[derive(Default)]
pub(super) struct Means(Mutex<Vec<Kept>>);

/// One filter's mean, as read when the index and the archived pads stood
/// at `marks`.
struct Kept {
    filter: String,
    marks: ((i64, i64), ArchiveMark),
    mean: Option<Arc<Mean>>,
}

impl Means {
    fn get(&self, filter: &str, marks: ((i64, i64), ArchiveMark)) -> Option<Option<Arc<Mean>>> {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|k| k.filter == filter && k.marks == marks)
            .map(|k| k.mean.clone())
    }

    fn keep(&self, filter: String, marks: ((i64, i64), ArchiveMark), mean: Option<Arc<Mean>>) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|k| k.filter != filter);
        if kept.len() >= MEANS_KEPT {
            kept.remove(0);
        }
        kept.push(Kept {
            filter,
            marks,
            mean,
        });
    }
}

impl Engine {
    /// The mean vector of the notes `filter` passes (`None`: none has a
    /// vector, or more than `MEAN_SAMPLE` do outside a single pad), read
    /// again only when the index or the archived pads moved.
    pub(super) async fn mean_of(
        &self,
        semantic: &Semantic,
        filter: &EntryFilter,
    ) -> Result<Option<Arc<Mean>>> {
        let db = self.db();
        // The index's mark first: a vector added while the sum is read
        // moves it, and the next search reads the sum again.
        let marks = (semantic.indexed(), db.archived().await?);
        let key = format!("{filter:?}");
        if let Some(mean) = self.0.means.get(&key, marks) {
            return Ok(mean);
        }
        let (sum, n) = db.vector_sum(filter.clone(), MEAN_SAMPLE).await?;
        let sampled = n >= MEAN_SAMPLE && filter.pad.is_none();
        let mean = match sampled {
            true => None,
            false => Mean::of(&sum, n).map(Arc::new),
        };
        self.0.means.keep(key, marks, mean.clone());
        Ok(mean)
    }

    /// `pool` (id, plain cosine with `query`) re-scored by the centred
    /// cosine on the mean of the notes `filter` passes; the best `k`,
    /// best first. As it came (the plain cosine's best `k`) when there is
    /// no mean.
    pub(super) async fn centred(
        &self,
        semantic: &Semantic,
        query: &Arc<[f32]>,
        filter: &EntryFilter,
        pool: Vec<(i64, f32)>,
        k: usize,
    ) -> Result<Vec<(i64, f32)>> {
        use crate::semantic::vector::best;
        let Some(mean) = self.mean_of(semantic, filter).await? else {
            return Ok(best(pool, k));
        };
        let ids: Vec<i64> = pool.iter().map(|(id, _)| *id).collect();
        let to_mean: HashMap<i64, f32> = self
            .db()
            .similarities(mean.vector.clone(), ids)
            .await?
            .into_iter()
            .collect();
        let qm: f64 = query
            .iter()
            .zip(mean.vector.iter())
            .map(|(q, m)| *q as f64 * *m as f64)
            .sum();
        let scored = pool
            .into_iter()
            .filter_map(|(id, qd)| {
                let dm = *to_mean.get(&id)? as f64;
                Some((id, centred_cosine(qd as f64, qm, dm, mean.norm2) as f32))
            })
            .collect();
        Ok(best(scored, k))
    }
}

#[cfg(test)]
mod tests {
    use super::{centred_cosine, Mean};

    fn unit(v: &[f64]) -> Vec<f64> {
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// The cosine of q − m and d − m computed on the vectors themselves.
    fn direct(q: &[f64], d: &[f64], m: &[f64]) -> f64 {
        let qc: Vec<f64> = q.iter().zip(m).map(|(a, b)| a - b).collect();
        let dc: Vec<f64> = d.iter().zip(m).map(|(a, b)| a - b).collect();
        dot(&qc, &dc) / (dot(&qc, &qc) * dot(&dc, &dc)).sqrt()
    }

    #[test]
    fn the_centred_cosine_equals_the_cosine_of_the_vectors_less_the_mean() {
        let q = unit(&[0.9, 0.3, 0.1, 0.2]);
        let d = unit(&[0.7, -0.2, 0.5, 0.1]);
        let m = [0.4, 0.1, 0.05, 0.2];
        let got = centred_cosine(dot(&q, &d), dot(&q, &m), dot(&d, &m), dot(&m, &m));
        assert!((got - direct(&q, &d, &m)).abs() < 1e-12, "{got}");
        // A mean of zero leaves the plain cosine.
        let zero = [0.0; 4];
        assert!((centred_cosine(dot(&q, &d), 0.0, 0.0, 0.0) - dot(&q, &d)).abs() < 1e-12);
        assert!((direct(&q, &d, &zero) - dot(&q, &d)).abs() < 1e-12);
        // A vector at the mean has no direction: 0, not a division by 0.
        assert_eq!(centred_cosine(0.5, 0.5, 1.0, 1.0), 0.0);
    }

    #[test]
    fn a_note_sharing_only_the_pads_common_direction_drops_below_one_sharing_the_questions() {
        // Every note of the pad leans on axis 0 (its common direction); the
        // question is about axis 1. The generic note is nearly all axis 0;
        // the relevant one carries axis 1 beside the common lean.
        let q = unit(&[0.8, 0.6, 0.0, 0.0]);
        let generic = unit(&[1.0, 0.05, 0.1, 0.0]);
        let relevant = unit(&[0.5, 0.45, 0.0, 0.74]);
        let pad = [
            generic.clone(),
            relevant.clone(),
            unit(&[0.9, 0.0, 0.0, 0.4]),
            unit(&[0.95, 0.0, 0.3, 0.0]),
            unit(&[0.9, -0.1, -0.3, -0.2]),
        ];
        let mut sum = vec![0.0; 4];
        for v in &pad {
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x;
            }
        }
        let mean = Mean::of(&sum, pad.len()).expect("a mean of five");
        let m: Vec<f64> = mean.vector.iter().map(|x| *x as f64).collect();
        assert!((mean.norm2 - dot(&m, &m)).abs() < 1e-9);
        // Plain cosines: the generic note ranks first.
        assert!(dot(&q, &generic) > dot(&q, &relevant));
        // Centred: the relevant one does.
        let centred = |d: &[f64]| centred_cosine(dot(&q, d), dot(&q, &m), dot(d, &m), mean.norm2);
        assert!(
            centred(&relevant) > centred(&generic),
            "relevant {} generic {}",
            centred(&relevant),
            centred(&generic)
        );
        assert!(Mean::of(&sum, 0).is_none() && Mean::of(&[], 3).is_none());
    }
}
