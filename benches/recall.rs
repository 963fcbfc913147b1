//! `cargo bench --bench recall`: does meaning search find what exact search
//! finds? Recall@10 of the engine's vector index against brute force (the
//! same vectors, exact f32 cosine), with search latency and memory, at 10k,
//! 100k and 1M entries, on two corpora:
//!
//! - `near-dup`: the notes agents really pile up — "<service> <fails|times
//!   out|…> <after the deploy|under load|…>; ticket N" — thousands of near
//!   duplicates per template, with 25 paraphrase targets planted in them;
//! - `varied`: plans, findings, questions and results about many subjects.
//!
//! Vectors come from the real model (int8, `PAD_MODEL_DIR` or the copy
//! `scripts/model.sh` fetched) and are cached in the target directory
//! (`bench-vectors/`), since embedding 1M notes takes ~15 minutes on 2 cores.
//! Each size is a prefix of the 1M corpus.
//!
//! The served index (`VectorIndex::candidates`: every i8 row scored, the
//! candidates rescored on f32, as the engine does) against the anchor,
//! brute force over the f32 vectors, in the same run, unfiltered and with
//! a filter a tenth and a fiftieth of the rows pass (`BENCH_FILTERS=1,10,50`:
//! a row passes 1 in N), with how many candidates were rescored and the
//! largest gap between a candidate's i8 estimate and its f32 cosine; and one query's embedding
//! time (one ONNX Runtime thread, the engine's default), which a fresh query
//! adds. (The HNSW index it replaced was measured by this benchmark at
//! commit 6529fdd; docs/benchmarks.md has both.) `BENCH_SIZES=10000,100000`
//! limits the sizes, `BENCH_CORPORA=near-dup` the corpora; `BENCH_QUERIES`
//! (default 100).

mod common;
#[path = "../tests/common/model.rs"]
mod model;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use common::stats;
use scratchpad::semantic::{runtime, Model, ModelSource, Precision, VectorIndex};

const DIM: usize = 384;

const K: usize = 10;
const CORPUS_VERSION: u32 = 1;

const SERVICES: &[&str] = &[
    "auth-service",
    "billing-api",
    "search-api",
    "checkout",
    "payments-worker",
    "image-resizer",
    "notification-hub",
    "user-profile",
    "inventory-sync",
    "report-builder",
    "gateway",
    "session-store",
    "email-sender",
    "feature-flags",
    "ledger",
    "analytics-ingest",
    "cdn-purger",
    "scheduler",
    "rate-limiter",
    "export-job",
    "webhook-relay",
    "pdf-renderer",
    "cache-warmer",
    "sso-bridge",
    "audit-log",
    "queue-consumer",
    "geo-lookup",
    "media-transcoder",
    "catalog",
    "order-router",
];
const FAILURES: &[&str] = &[
    "fails",
    "times out",
    "leaks memory",
    "crashes",
    "returns 500s",
    "is slow",
    "drops requests",
];
const WHEN: &[&str] = &[
    "after the deploy",
    "under load",
    "at night",
    "on retry",
    "since the migration",
];

/// Planted targets and a query meaning the same in other words.
const PARAPHRASES: &[(&str, &str)] = &[
    (
        "docker login to the registry fails with 401",
        "cannot authenticate to the container registry",
    ),
    (
        "the nightly backup job ran out of disk space",
        "backups stop because the volume is full",
    ),
    (
        "postgres queries take seconds since the index was dropped",
        "database is sluggish",
    ),
    (
        "the backend process dies every evening around 11pm",
        "server keeps crashing overnight",
    ),
    (
        "Maria is responsible for shipping version 2.3",
        "who owns the release",
    ),
    (
        "several users were charged twice for their subscription",
        "customer complaints about double billing",
    ),
    (
        "the integration suite fails randomly about one run in five",
        "tests are flaky",
    ),
    (
        "TLS certificate for the api domain expires on Friday",
        "renew the https cert soon",
    ),
    (
        "we moved the staging cluster to the new region",
        "staging now lives in another datacenter",
    ),
    (
        "the mobile app drains the battery when location is on",
        "phone battery empties fast with gps",
    ),
    (
        "compile times dropped after enabling incremental caching",
        "how do we make the build quicker",
    ),
    (
        "the css on the pricing page breaks in safari",
        "pricing page layout is wrong on apple browsers",
    ),
    (
        "agent-7 could not parse the csv export because of quoting",
        "spreadsheet file import chokes on quotes",
    ),
    (
        "rotate the aws access keys every ninety days",
        "cloud credentials need regular rotation",
    ),
    (
        "the recommendation model suggests the same item repeatedly",
        "suggestions keep repeating one product",
    ),
    (
        "dns changes took two hours to propagate",
        "domain name updates were slow to spread",
    ),
    (
        "kafka consumers lag behind by a million messages",
        "the message queue backlog keeps growing",
    ),
    (
        "the onboarding email goes out twice for new signups",
        "welcome mail is duplicated",
    ),
    (
        "translations are missing on the german checkout page",
        "checkout lacks localisation in german",
    ),
    (
        "a race condition corrupts the cart when two tabs are open",
        "concurrent browser tabs break the basket",
    ),
    (
        "the cron job runs in utc so reports arrive at 2am",
        "scheduled reports come in the middle of the night",
    ),
    (
        "grafana dashboards show gaps every sunday",
        "metrics charts have holes on weekends",
    ),
    (
        "customer data export must exclude deleted accounts",
        "gdpr: leave removed users out of downloads",
    ),
    (
        "the vpn drops every 30 minutes for remote staff",
        "remote workers lose the private network connection",
    ),
    (
        "password reset links expire too quickly",
        "the forgot-password email link stops working fast",
    ),
];

const SUBJECTS: &[&str] = &[
    "the login page",
    "the database migration",
    "the search index",
    "the mobile app",
    "the CI pipeline",
    "the payment webhook",
    "the onboarding flow",
    "the metrics dashboard",
    "the API gateway",
    "the docs site",
    "the data warehouse",
    "the recommendation model",
    "the on-call rotation",
    "the quarterly roadmap",
    "the design system",
    "the customer survey",
    "the pricing experiment",
    "the hiring plan",
    "the security review",
    "the vendor contract",
];
const FRAMES: &[&str] = &[
    "Plan: rewrite {s} in smaller steps, starting with {t}",
    "Finding: {s} behaves differently when {t}",
    "Question: should we pause {s} until {t}?",
    "Result: {s} improved by {n}% after {t}",
    "Idea: pair {s} with {t} for the next sprint",
    "Gotcha: {s} silently ignores {t}",
    "Summary of the meeting about {s}: {t} is the open point",
    "TODO check whether {s} still depends on {t}",
];
const TOPICS: &[&str] = &[
    "the holiday freeze",
    "missing credentials",
    "a race condition",
    "the new release",
    "disk pressure",
    "an expired certificate",
    "network flakiness",
    "a schema change",
    "the vendor outage",
    "the quarterly audit",
    "an upstream bug",
    "rate limits",
    "the marketing launch",
    "user interviews",
    "the budget review",
    "accessibility fixes",
    "the legal sign-off",
    "a flaky test",
    "the load test",
    "translation work",
];

fn near_dup(rng: &mut fastrand::Rng) -> String {
    format!(
        "{} {} {}; ticket {}",
        SERVICES[rng.usize(..SERVICES.len())],
        FAILURES[rng.usize(..FAILURES.len())],
        WHEN[rng.usize(..WHEN.len())],
        rng.u32(1000..100_000)
    )
}

fn varied(rng: &mut fastrand::Rng) -> String {
    FRAMES[rng.usize(..FRAMES.len())]
        .replace("{s}", SUBJECTS[rng.usize(..SUBJECTS.len())])
        .replace("{t}", TOPICS[rng.usize(..TOPICS.len())])
        .replace("{n}", &rng.u32(2..90).to_string())
}

/// The i-th note of a corpus: the planted targets sit in the first 10k.
fn corpus(name: &str, n: usize) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(if name == "near-dup" { 7 } else { 8 });
    let mut out: Vec<String> = (0..n)
        .map(|_| {
            if name == "near-dup" {
                near_dup(&mut rng)
            } else {
                varied(&mut rng)
            }
        })
        .collect();
    for (i, (target, _)) in PARAPHRASES.iter().enumerate() {
        if i * 397 < n {
            out[i * 397] = target.to_string();
        }
    }
    out
}

/// Queries: the paraphrases, then notes of the corpus reworded.
fn queries(name: &str, n: usize) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(99);
    let mut q: Vec<String> = PARAPHRASES.iter().map(|(_, q)| q.to_string()).collect();
    while q.len() < n {
        q.push(if name == "near-dup" {
            format!(
                "{} problems {}",
                SERVICES[rng.usize(..SERVICES.len())],
                WHEN[rng.usize(..WHEN.len())]
            )
        } else {
            format!(
                "anything about {} and {}",
                SUBJECTS[rng.usize(..SUBJECTS.len())],
                TOPICS[rng.usize(..TOPICS.len())]
            )
        });
    }
    q
}

fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// The first `n` vectors of a corpus, embedding (and caching) what is missing.
fn vectors(model: &mut Option<Model>, name: &str, n: usize) -> Vec<f32> {
    let dir = target_dir().join("bench-vectors");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-v{CORPUS_VERSION}.f32"));
    let mut have = Vec::new();
    if let Ok(mut f) = std::fs::File::open(&path) {
        f.read_to_end(&mut have).unwrap();
    }
    let have_n = have.len() / (DIM * 4);
    have.truncate(have_n * DIM * 4);
    if have_n < n {
        let texts = corpus(name, n);
        let m = model.get_or_insert_with(load_model);
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        f.set_len((have_n * DIM * 4) as u64).unwrap();
        let t = Instant::now();
        for (i, chunk) in texts[have_n..].chunks(64).enumerate() {
            let start = have.len();
            for v in m.embed(chunk).unwrap() {
                v.iter()
                    .for_each(|x| have.extend_from_slice(&x.to_le_bytes()));
            }
            f.write_all(&have[start..]).unwrap();
            if i % 500 == 0 {
                eprintln!(
                    "  embedding {name}: {} of {n} ({:.0}/s)",
                    have_n + i * 64,
                    (i * 64) as f64 / t.elapsed().as_secs_f64().max(1e-3)
                );
            }
        }
    }
    have[..n * DIM * 4]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn load_model() -> Model {
    let data = tempfile::tempdir().unwrap();
    runtime::init(data.path()).expect("ONNX Runtime (run scripts/setup.sh)");
    Model::load(
        &ModelSource::Dir(model::model_dir()),
        Precision::Int8,
        2,
        data.path(),
    )
    .unwrap()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Exact top `k` by f32 cosine (vectors are normalised) among the rows
/// `passes` keeps, ties by key.
fn brute_force(all: &[f32], q: &[f32], k: usize, passes: impl Fn(i64) -> bool) -> Vec<i64> {
    let mut scored: Vec<(i64, f32)> = all
        .chunks_exact(DIM)
        .enumerate()
        .filter(|(i, _)| passes(*i as i64))
        .map(|(i, v)| (i as i64, dot(v, q)))
        .collect();
    let k = k.min(scored.len());
    scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    scored.truncate(k);
    scored.iter().map(|(i, _)| *i).collect()
}

fn recall(found: &[i64], truth: &[i64]) -> f64 {
    found.iter().filter(|f| truth.contains(f)).count() as f64 / truth.len() as f64
}

fn main() {
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("BENCH_SIZES: numbers"))
        .collect();
    let nq: usize = std::env::var("BENCH_QUERIES").map_or(100, |v| v.parse().unwrap());
    let filters: Vec<i64> = std::env::var("BENCH_FILTERS")
        .unwrap_or_else(|_| "1,10,50".into())
        .split(',')
        .map(|s| s.trim().parse().expect("BENCH_FILTERS: numbers"))
        .collect();
    println!(
        "scratchpad {} recall bench — {} cores, k = {K}, {nq} queries per corpus and size\n",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut model = None;
    let max = *sizes.iter().max().unwrap();
    {
        let data = tempfile::tempdir().unwrap();
        runtime::init(data.path()).expect("ONNX Runtime (run scripts/setup.sh)");
        let dir = model::model_dir();
        let mut one = Model::load(&ModelSource::Dir(dir), Precision::Int8, 1, data.path()).unwrap();
        let mut took = Vec::new();
        for q in queries("near-dup", 100)
            .iter()
            .chain(&queries("varied", 100))
        {
            let t = Instant::now();
            one.embed(&[q]).unwrap();
            took.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let s = stats(took);
        println!(
            "one query's embedding (int8, 1 thread): p50 {:.0} µs, p99 {:.0} µs\n",
            s.p50, s.p99
        );
    }
    let corpora = std::env::var("BENCH_CORPORA").unwrap_or_else(|_| "near-dup,varied".into());
    for name in corpora.split(',') {
        let all = vectors(&mut model, name, max);
        let qtexts = queries(name, nq);
        let qv = model.get_or_insert_with(load_model).embed(&qtexts).unwrap();
        // The largest component of each vector: the i8 rounding step is it
        // over 127 (the walk's `ERROR` assumes at most ~0.3).
        let mut largest: Vec<f32> = all
            .chunks_exact(DIM)
            .chain(qv.iter().map(|q| q.as_slice()))
            .map(|v| v.iter().fold(0f32, |m, x| m.max(x.abs())))
            .collect();
        largest.sort_by(f32::total_cmp);
        let at = |p: f64| largest[((largest.len() - 1) as f64 * p) as usize];
        println!(
            "{name}: largest component p50 {:.3}, p99.9 {:.3}, max {:.3}",
            at(0.5),
            at(0.999),
            at(1.0)
        );
        println!(
            "  {:>9}  {:<10} {:>8} {:>6} {:>9} {:>9} {:>6} {:>9} {:>10}",
            "entries",
            "filter",
            "recall",
            "min",
            "p50 µs",
            "p99 µs",
            "cands",
            "max error",
            "memory MiB"
        );
        for &n in &sizes {
            let part = &all[..n * DIM];
            let row = |id: i64| &part[id as usize * DIM..][..DIM];
            let t = Instant::now();
            let index = VectorIndex::from_vectors(
                part.chunks_exact(DIM)
                    .enumerate()
                    .map(|(i, v)| (i as i64, v)),
            );
            let built = t.elapsed().as_secs_f64();
            let memory = index.memory_bytes() as f64 / (1 << 20) as f64;
            for &every in &filters {
                let passes = |id: i64| every == 1 || id % every == 3;
                let (mut lat, mut rec) = (Vec::new(), Vec::new());
                let (mut candidates, mut error) = (0, 0f32);
                for q in &qv {
                    let truth = brute_force(part, q, K, passes);
                    let mut check =
                        |keys: &[i64]| Ok(keys.iter().copied().filter(|k| passes(*k)).collect());
                    let check = (every > 1).then_some(&mut check as &mut _);
                    let t = Instant::now();
                    let (found, _) = index.candidates(q, K, check, &[]).unwrap();
                    let mut exact: Vec<(i64, f32)> = found
                        .iter()
                        .map(|(id, _)| (*id, dot(row(*id), q)))
                        .collect();
                    exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
                    lat.push(t.elapsed().as_secs_f64() * 1e6);
                    let ranked: Vec<i64> = exact.iter().take(K).map(|(id, _)| *id).collect();
                    rec.push(recall(&ranked, &truth));
                    candidates += found.len();
                    for (id, estimate) in &found {
                        error = error.max((estimate - dot(row(*id), q)).abs());
                    }
                }
                let mean = rec.iter().sum::<f64>() / rec.len() as f64;
                let min = rec.iter().cloned().fold(1.0, f64::min);
                let s = stats(lat);
                println!(
                    "  {n:>9}  {:<10} {mean:>8.4} {min:>6.2} {:>9.0} {:>9.0} {:>6} {error:>9.5} {memory:>10.0}   (built in {built:.1}s)",
                    if every == 1 { "all".to_string() } else { format!("1 in {every}") },
                    s.p50,
                    s.p99,
                    candidates / rec.len(),
                );
            }
        }
        println!();
    }
}
