//! The engine's fusion and its neighbour lift, on the baselines' exact
//! lists: what the engine's hybrid should come close to.

use std::collections::HashMap;

/// Min–max scaled convex fusion, every candidate's score (not cut).
pub fn convex_scores(
    words: &[(usize, f64)],
    vectors: &[(usize, f64)],
    w: f64,
) -> Vec<(usize, f64)> {
    convex_many(&[(words, w), (vectors, 1.0 - w)])
}

/// Min–max scaled convex fusion of any number of lists, each with its
/// weight; every candidate's score (not cut).
pub fn convex_many(lists: &[(&[(usize, f64)], f64)]) -> Vec<(usize, f64)> {
    let mut fused: HashMap<usize, f64> = HashMap::new();
    for &(l, w) in lists {
        let max = l.iter().map(|x| x.1).fold(f64::MIN, f64::max);
        let min = l.iter().map(|x| x.1).fold(f64::MAX, f64::min);
        for &(i, s) in l {
            *fused.entry(i).or_default() += w * (s - min) / (max - min).max(1e-9);
        }
    }
    sorted(fused.into_iter().collect())
}

pub fn sorted(mut l: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    l.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    l
}

pub fn top_of(l: &[(usize, f64)]) -> Vec<usize> {
    l.iter().map(|x| x.0).take(super::DEPTH).collect()
}

/// Each candidate lifted by `beta` times its best neighbour's score (the
/// turn before or after it).
pub fn neighbours(l: &[(usize, f64)], beta: f64) -> Vec<(usize, f64)> {
    let score: HashMap<usize, f64> = l.iter().copied().collect();
    let at = |i: usize| score.get(&i).copied().unwrap_or(0.0);
    sorted(
        l.iter()
            .map(|&(i, s)| {
                let n = at(i + 1).max(if i > 0 { at(i - 1) } else { 0.0 });
                (i, s + beta * n)
            })
            .collect(),
    )
}

/// `neighbours`, and each candidate's neighbours that are not candidates
/// join with `beta` times its score (the best such).
pub fn neighbours_joining(l: &[(usize, f64)], beta: f64, n: usize) -> Vec<(usize, f64)> {
    let mut out: HashMap<usize, f64> = neighbours(l, beta).into_iter().collect();
    let candidates: std::collections::HashSet<usize> = l.iter().map(|x| x.0).collect();
    for &(i, s) in l {
        for j in [i.checked_sub(1), Some(i + 1)].into_iter().flatten() {
            if j < n && !candidates.contains(&j) {
                let e = out.entry(j).or_insert(0.0);
                *e = e.max(beta * s);
            }
        }
    }
    sorted(out.into_iter().collect())
}

/// `neighbours` over two turns each side, the farther at half weight.
pub fn neighbours_two(l: &[(usize, f64)], beta: f64) -> Vec<(usize, f64)> {
    let score: HashMap<usize, f64> = l.iter().copied().collect();
    let at = |i: Option<usize>| i.and_then(|i| score.get(&i).copied()).unwrap_or(0.0);
    sorted(
        l.iter()
            .map(|&(i, s)| {
                let near = at(i.checked_sub(1)).max(at(Some(i + 1)));
                let far = at(i.checked_sub(2)).max(at(Some(i + 2)));
                (i, s + beta * near.max(far / 2.0))
            })
            .collect(),
    )
}

/// `neighbours_two`, and the turns one and two away from a candidate that
/// are not candidates join it: each with `beta` times its best candidate
/// neighbour's score (one two away at half), plus `own(i)`, what it scores
/// itself (0 for a joiner found by neither list).
pub fn joining_two(
    l: &[(usize, f64)],
    beta: f64,
    n: usize,
    own: impl Fn(usize) -> f64,
) -> Vec<(usize, f64)> {
    let score: HashMap<usize, f64> = l.iter().copied().collect();
    let mut pool: Vec<usize> = l.iter().map(|x| x.0).collect();
    for &(i, _) in l {
        for j in [i.checked_sub(2), i.checked_sub(1), Some(i + 1), Some(i + 2)]
            .into_iter()
            .flatten()
        {
            if j < n && !score.contains_key(&j) && !pool.contains(&j) {
                pool.push(j);
            }
        }
    }
    let base = |i: usize| score.get(&i).copied().unwrap_or_else(|| own(i));
    let at = |i: Option<usize>| i.and_then(|i| score.get(&i).copied()).unwrap_or(0.0);
    sorted(
        pool.into_iter()
            .map(|i| {
                let near = at(i.checked_sub(1)).max(at(Some(i + 1)));
                let far = at(i.checked_sub(2)).max(at(Some(i + 2)));
                (i, base(i) + beta * near.max(far / 2.0))
            })
            .collect(),
    )
}

/// A second stage over a wide pool: the two lists' candidates and the turns
/// two each side of each, every one scored on both sides in full (`words`,
/// `meaning`: a turn's BM25 and cosine), each side min–max scaled over the
/// pool, fused with the words weighing `w`, then lifted two each side.
pub fn wide_pool(
    firsts: &[&[(usize, f64)]],
    n: usize,
    words: impl Fn(usize) -> f64,
    meaning: impl Fn(usize) -> f64,
    w: f64,
) -> Vec<(usize, f64)> {
    let mut pool: Vec<usize> = Vec::new();
    for l in firsts {
        for &(i, _) in *l {
            for j in i.saturating_sub(2)..=(i + 2).min(n - 1) {
                if !pool.contains(&j) {
                    pool.push(j);
                }
            }
        }
    }
    let scaled = |f: &dyn Fn(usize) -> f64| -> HashMap<usize, f64> {
        let s: Vec<f64> = pool.iter().map(|&i| f(i)).collect();
        let max = s.iter().copied().fold(f64::MIN, f64::max);
        let min = s.iter().copied().fold(f64::MAX, f64::min);
        pool.iter()
            .zip(s)
            .map(|(&i, v)| (i, (v - min) / (max - min).max(1e-9)))
            .collect()
    };
    let (a, b) = (scaled(&words), scaled(&meaning));
    let fused: Vec<(usize, f64)> = pool
        .iter()
        .map(|&i| (i, w * a[&i] + (1.0 - w) * b[&i]))
        .collect();
    neighbours_two(&sorted(fused), 0.5)
}
