//! The engine's fusion and its neighbour lift, on the baselines' exact
//! lists: what the engine's hybrid should come close to.

use std::collections::HashMap;

/// Min–max scaled convex fusion, every candidate's score (not cut).
pub fn convex_scores(
    words: &[(usize, f64)],
    vectors: &[(usize, f64)],
    w: f64,
) -> Vec<(usize, f64)> {
    let scaled = |l: &[(usize, f64)]| -> HashMap<usize, f64> {
        let max = l.iter().map(|x| x.1).fold(f64::MIN, f64::max);
        let min = l.iter().map(|x| x.1).fold(f64::MAX, f64::min);
        l.iter()
            .map(|(i, s)| (*i, (s - min) / (max - min).max(1e-9)))
            .collect()
    };
    let (a, b) = (scaled(words), scaled(vectors));
    let mut all: Vec<usize> = a.keys().chain(b.keys()).copied().collect();
    all.sort();
    all.dedup();
    sorted(
        all.into_iter()
            .map(|i| {
                (
                    i,
                    w * a.get(&i).copied().unwrap_or(0.0)
                        + (1.0 - w) * b.get(&i).copied().unwrap_or(0.0),
                )
            })
            .collect(),
    )
}

fn sorted(mut l: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
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
