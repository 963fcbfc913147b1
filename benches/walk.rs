//! `cargo bench --bench walk`: the vector index alone at a million rows
//! (`VectorIndex::candidates`, in process, no store): how long a meaning
//! search's walk takes unfiltered and with a filter a tenth and a fiftieth
//! of the rows pass (checked in process, so only the index's own time is
//! timed; the keys it asks about are what a store's check would cost), on
//! a quiet second core and beside a thread that keeps one core busy, as the
//! text side of a hybrid search does.
//!
//! Each shape also reports recall: the share of exact search's top 10
//! (every passing row's f32 vector scored) that the candidates, rescored
//! on their f32 vectors as the engine does, find — and how many candidates
//! the engine would rescore.
//!
//! The rows are synthetic unit vectors in clusters (`BENCH_CENTRES`
//! subjects, default 2,000, members spread around them); the queries are on
//! the same subjects. `BENCH_ROWS` (default 1,000,000), `BENCH_QUERIES`
//! (default 50).

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use common::stats;
use scratchpad::semantic::vector::best;
use scratchpad::semantic::VectorIndex;

const DIM: usize = 384;
/// The hits a search ranks: what the engine asks the index for.
const K: usize = 10;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` unit vectors in clusters around `centres` subjects.
fn clustered(n: usize, centres: usize, rng: &mut fastrand::Rng) -> Vec<f32> {
    let unit = |v: &mut [f32]| {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
    };
    let mut subjects: Vec<f32> = (0..centres * DIM).map(|_| rng.f32() - 0.5).collect();
    subjects.chunks_exact_mut(DIM).for_each(unit);
    let mut out = Vec::with_capacity(n * DIM);
    for i in 0..n {
        let c = &subjects[(i * 7919 % centres) * DIM..][..DIM];
        let spread = 0.5 + rng.f32();
        let at = out.len();
        out.extend(c.iter().map(|x| x + spread * (rng.f32() - 0.5) / 8.0));
        unit(&mut out[at..]);
    }
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The keys of the `K` best, as the engine ranks them.
fn top(scored: Vec<(i64, f32)>) -> HashSet<i64> {
    best(scored, K).into_iter().map(|(k, _)| k).collect()
}

fn main() {
    let rows = env("BENCH_ROWS", 1_000_000);
    let centres = env("BENCH_CENTRES", 2_000);
    let queries = env("BENCH_QUERIES", 50);
    let mut rng = fastrand::Rng::with_seed(5);
    let started = Instant::now();
    let vectors = clustered(rows + queries, centres, &mut rng);
    let (vectors, asked_for) = vectors.split_at(rows * DIM);
    let index = VectorIndex::from_vectors(
        vectors
            .chunks_exact(DIM)
            .enumerate()
            .map(|(k, v)| (k as i64, v)),
    );
    println!(
        "{rows} rows ({centres} subjects) indexed in {:.1}s, {} bytes a row",
        started.elapsed().as_secs_f64(),
        index.memory_bytes() / rows
    );
    let queries: Vec<&[f32]> = asked_for.chunks_exact(DIM).collect();
    let row = |k: i64| &vectors[k as usize * DIM..][..DIM];
    // Exact search's top 10 for each query, every row that passes scored.
    let exact: HashMap<i64, Vec<HashSet<i64>>> = [1, 10, 50]
        .into_iter()
        .map(|every| {
            let tops = queries
                .iter()
                .map(|q| {
                    let passing = (0..rows as i64).filter(|k| every == 1 || k % every == 3);
                    top(passing.map(|k| (k, cosine(q, row(k)))).collect())
                })
                .collect();
            (every, tops)
        })
        .collect();
    let busy = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // The other core's work when `busy`: a spin, as a query of the text
        // side is to the scan.
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if !busy.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                std::hint::black_box((0..10_000u64).sum::<u64>());
            }
        });
        println!(
            "| shape | beside | p50 ms | p99 ms | keys asked (mean) | checks (mean) | candidates (mean) | recall@10 |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for beside_busy in [false, true] {
            busy.store(beside_busy, Ordering::Relaxed);
            for (shape, every) in [
                ("unfiltered", 1),
                ("a tenth pass", 10),
                ("a fiftieth pass", 50),
            ] {
                let (mut ms, mut asked, mut calls) = (Vec::new(), 0, 0);
                let (mut candidates, mut found) = (0, 0);
                for (q, exact) in queries.iter().zip(&exact[&every]) {
                    let mut check = |keys: &[i64]| {
                        asked += keys.len();
                        calls += 1;
                        Ok(keys
                            .iter()
                            .copied()
                            .filter(|k| k % every == 3)
                            .collect::<HashSet<i64>>())
                    };
                    let check = (every > 1).then_some(&mut check as &mut _);
                    let t = Instant::now();
                    let (offered, _) = index.candidates(q, K, check, &[]).unwrap();
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                    assert!(offered.len() >= K, "{shape}: {} found", offered.len());
                    candidates += offered.len();
                    let rescored = offered
                        .iter()
                        .map(|(k, _)| (*k, cosine(q, row(*k))))
                        .collect();
                    found += top(rescored).iter().filter(|k| exact.contains(k)).count();
                }
                let s = stats(ms);
                let beside = if beside_busy {
                    "a busy core"
                } else {
                    "a quiet core"
                };
                let n = queries.len();
                println!(
                    "| {shape} | {beside} | {:.2} | {:.2} | {} | {:.1} | {} | {:.3} |",
                    s.p50,
                    s.p99,
                    asked / n,
                    calls as f64 / n as f64,
                    candidates / n,
                    found as f64 / (n * K) as f64
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}
