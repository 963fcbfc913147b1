//! `cargo bench --bench semantic`: semantic search figures.
//!
//! 1. Encoding throughput of the models themselves (MiniLM int8, and fp32
//!    when the folder has `model.onnx`; SPLADE-tiny; both as the worker runs
//!    them; one and two ONNX Runtime threads; batches of 16 and one note at
//!    a time) and one query's embedding time.
//! 2. The release `pad serve` with the model (`PAD_MODEL_DIR`, default the
//!    copy `scripts/model.sh` caches in the target directory), over its
//!    socket: write round trips while the embedding backlog drains, against
//!    the same engine with `--no-semantic`; how fast the backlog drains;
//!    `semantic` and `hybrid` search p50/p99 at 10k and 100k entries with
//!    fresh queries (each one embedded) and cached ones; a search right after
//!    1, 16, 48 and 400 writes (read-your-writes); the index's memory;
//!    restart time to ready. At 100k the same on PostgreSQL (a durable
//!    cluster of Debian's server, as `benches/search.rs`), its queries
//!    interleaved with SQLite's; then a pad of 5k notes beside the others
//!    and the same searches before and after the 100k pad is archived.
//!
//! BENCH_ONLY=encoders runs 1. alone (both encoders, one and two threads,
//! batched and one at a time).
//!
//! Entries are realistic, clustered dev notes. Recall against brute force
//! is `benches/recall.rs`. Set BENCH_QUICK=1 for 2k/10k instead of 10k/100k.

mod common;
#[path = "../tests/common/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "../tests/common/postgres.rs"]
mod postgres;

use std::time::{Duration, Instant};

use common::devnotes::{note, QUERIES};
use common::{row, stats, timed, Engine};
use model::{model_dir, splade_model_dir};
use scratchpad::client::Client;
use scratchpad::semantic::splade::Splade;
use scratchpad::semantic::{runtime, Model, ModelSource, Precision};
use serde_json::{json, Value};

fn embedding_throughput() {
    println!(
        "encoding throughput (the models alone, 512 notes; batches of 16 against one at a time)"
    );
    let data = tempfile::tempdir().unwrap();
    runtime::init(data.path()).expect("ONNX Runtime (run scripts/setup.sh)");
    let mut rng = fastrand::Rng::with_seed(3);
    let texts: Vec<String> = (0..512).map(|_| note(&mut rng)).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let dir = model_dir();
    let sparse_dir = splade_model_dir();
    for threads in [1, 2] {
        let load = |precision| {
            Model::load(
                &ModelSource::Dir(dir.clone()),
                precision,
                threads,
                data.path(),
            )
            .unwrap()
        };
        for precision in [Precision::Int8, Precision::Fp32] {
            if !dir.join(precision.file()).is_file() {
                continue;
            }
            let mut m = load(precision);
            let name = format!("MiniLM {}", precision.as_str());
            throughput(&name, threads, &texts, |t| drop(m.embed(t).unwrap()));
            let mut one = Vec::new();
            for q in QUERIES.iter().cycle().take(50) {
                let t = Instant::now();
                m.embed(&[*q]).unwrap();
                one.push(t.elapsed().as_secs_f64() * 1e6);
            }
            let q = stats(one);
            println!("    one query p50 {:>6.0} µs  p99 {:>6.0} µs", q.p50, q.p99);
        }
        let mut splade = Splade::load(&sparse_dir, threads).unwrap();
        throughput("SPLADE-tiny", threads, &texts, |t| {
            drop(splade.encode(t).unwrap())
        });
        // What the worker runs for each note: both, one after the other.
        let mut m = load(Precision::Int8);
        throughput("both (MiniLM int8 + SPLADE)", threads, &texts, |t| {
            m.embed(t).unwrap();
            splade.encode(t).unwrap();
        });
    }
    println!();
}

/// Notes a second `encode` gets through `texts`, in batches of 16 and one
/// at a time (after a warm-up batch).
fn throughput(name: &str, threads: usize, texts: &[&str], mut encode: impl FnMut(&[&str])) {
    let mut rates = Vec::new();
    for batch in [16, 1] {
        encode(&texts[..16]);
        let t = Instant::now();
        for chunk in texts.chunks(batch) {
            encode(chunk);
        }
        rates.push(texts.len() as f64 / t.elapsed().as_secs_f64());
    }
    println!(
        "  {name:<28} {threads} thread{}  {:>6.0} notes/s in batches of 16, {:>6.0} one at a time",
        if threads == 1 { " " } else { "s" },
        rates[0],
        rates[1]
    );
}

async fn stats_of(c: &mut Client) -> Value {
    c.call("stats", json!({})).await.unwrap()
}

/// Waits until everything is embedded; returns the seconds it took.
async fn drained(c: &mut Client) -> f64 {
    let t = Instant::now();
    loop {
        let s = stats_of(c).await;
        if s["semantic"]["status"] == "ready" && s["embed_queue"] == 0 {
            return t.elapsed().as_secs_f64();
        }
        assert_ne!(s["semantic"]["status"], "unavailable", "{s}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn write_rtts(c: &mut Client, n: usize, rng: &mut fastrand::Rng) -> Vec<f64> {
    let mut us = Vec::with_capacity(n);
    for _ in 0..n {
        us.push(timed(c, "entry.add", json!({"pad": "rtt", "content": note(rng)})).await);
    }
    us
}

/// Semantic and hybrid search p50/p99 on each store of `stores` (a name and
/// a client), the same queries interleaved so every store sees the same
/// machine.
async fn searches(stores: &mut [(&str, &mut Client)], label: &str, size: usize) {
    let query = |q: &str, mode: &str| json!({"query": q, "mode": mode, "limit": 10});
    for mode in ["semantic", "hybrid"] {
        // Fresh: every query string is new, so each one is embedded.
        // Unique per mode too, so hybrid does not find semantic's in the cache.
        let fresh = each_store(stores, 200, |i| {
            query(&format!("{} {mode} {i}", QUERIES[i % QUERIES.len()]), mode)
        })
        .await;
        rows(
            stores,
            &format!("{mode} search, {label} entries, fresh query"),
            fresh,
        );
        each_store(stores, QUERIES.len(), |i| query(QUERIES[i], mode)).await;
        let cached = each_store(stores, 300, |i| query(QUERIES[i % QUERIES.len()], mode)).await;
        rows(
            stores,
            &format!("{mode} search, {label} entries, cached query"),
            cached,
        );
    }
    let filtered = each_store(stores, 200, |i| {
        json!({"query": QUERIES[i % QUERIES.len()], "mode": "semantic", "pad": "small", "limit": 10})
    })
    .await;
    let what = format!("semantic, {label} entries, pad of {} (exact)", size / 500);
    rows(stores, &what, filtered);
}

/// `rounds` searches (`params` of the round), each sent to every store in
/// turn; each store's round trips in µs.
async fn each_store(
    stores: &mut [(&str, &mut Client)],
    rounds: usize,
    params: impl Fn(usize) -> Value,
) -> Vec<Vec<f64>> {
    let mut us = vec![Vec::with_capacity(rounds); stores.len()];
    for i in 0..rounds {
        let p = params(i);
        for ((_, c), us) in stores.iter_mut().zip(&mut us) {
            us.push(timed(c, "search", p.clone()).await);
        }
    }
    us
}

/// A row of figures per store, named after it when there are several.
fn rows(stores: &[(&str, &mut Client)], what: &str, us: Vec<Vec<f64>>) {
    for ((store, _), us) in stores.iter().zip(us) {
        match stores.len() {
            1 => row(what, &stats(us)),
            _ => row(&format!("{what} ({store})"), &stats(us)),
        }
    }
}

/// Read-your-writes: `backlog` notes written, then at once a semantic search
/// with the last one's text (a fresh query), which must find it first. Below the settle bound the search
/// waits for the embedding and finds it; above, it answers at once and
/// reports what it could not see.
async fn read_your_writes(c: &mut Client, rng: &mut fastrand::Rng) {
    for backlog in [1usize, 16, 48, 400] {
        let mut took = Vec::new();
        let (mut found, mut not_embedded) = (0, 0);
        let rounds = if backlog > 48 { 3 } else { 20 };
        for _ in 0..rounds {
            let (mut last, mut text) = (String::new(), String::new());
            for _ in 0..backlog {
                text = note(rng);
                last = c
                    .call("entry.add", json!({"pad": "ryw", "content": text}))
                    .await
                    .unwrap()["entry"]["id"]
                    .as_str()
                    .unwrap()
                    .to_string();
            }
            let t = Instant::now();
            let r = c
                .call(
                    "search",
                    json!({"query": text, "mode": "semantic", "pad": "ryw", "limit": 1}),
                )
                .await
                .unwrap();
            took.push(t.elapsed().as_secs_f64() * 1e6);
            not_embedded += r["not_embedded"].as_u64().unwrap_or(0);
            found += usize::from(
                r["hits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|h| h["entry"]["id"] == last.as_str()),
            );
            drained(c).await;
        }
        row(
            &format!("search right after {backlog} write(s)"),
            &stats(took),
        );
        println!(
            "  (the newest note found first in {found} of {rounds} rounds; not_embedded reported: {not_embedded})"
        );
    }
    println!();
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let (small, big): (usize, usize) = if quick {
        (2_000, 10_000)
    } else {
        (10_000, 100_000)
    };
    println!(
        "scratchpad {} semantic bench — {} cores\n",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    embedding_throughput();
    if std::env::var("BENCH_ONLY").is_ok_and(|o| o == "encoders") {
        return;
    }

    let model = model_dir();
    std::env::set_var("PAD_MODEL_DIR", &model);
    let mut rng = fastrand::Rng::with_seed(11);

    // Write latency: without semantic search, then with a backlog draining.
    let plain_dir = tempfile::tempdir().unwrap();
    let plain = Engine::start(plain_dir.path(), &["--no-semantic"]).await;
    let mut c = plain.client().await;
    let base = stats(write_rtts(&mut c, 3000, &mut rng).await);
    drop(plain);

    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path(), &[]).await;
    let mut c = engine.client().await;
    drained(&mut c).await; // model loaded
    common::fill_with(&mut c, "load", small, || note(&mut rng)).await;
    let t = Instant::now();
    let busy = stats(write_rtts(&mut c, 3000, &mut rng).await);
    let during = t.elapsed().as_secs_f64();
    let left = stats_of(&mut c).await["embed_queue"].as_i64().unwrap();
    row("write round trip, no semantic search", &base);
    row("write round trip, embedding backlog draining", &busy);
    println!("  (the 3,000 writes took {during:.1}s; {left} entries still queued after)");
    let took = during + drained(&mut c).await;
    println!(
        "backlog of {} entries drained in {took:.1}s: {:.0} entries/s\n",
        small + 3000,
        (small + 3000) as f64 / took
    );
    common::fill_with(&mut c, "small", small / 500, || note(&mut rng)).await;
    drained(&mut c).await;
    searches(
        &mut [("SQLite", &mut c)],
        &format!("{}k", small / 1000),
        small,
    )
    .await;
    let s = stats_of(&mut c).await;
    println!(
        "index memory at {} vectors: {:.1} MiB; engine RSS {:.0} MiB\n",
        s["semantic"]["vectors"],
        s["semantic"]["index_bytes"].as_f64().unwrap() / 1048576.0,
        engine.rss_mib()
    );
    read_your_writes(&mut c, &mut rng).await;
    drop(engine);

    // Up to `big` entries on SQLite and as many on PostgreSQL, embedded with
    // two threads to save time, then searched on restarted engines with the
    // default single thread, side by side.
    let engine = Engine::start(dir.path(), &["--embed-threads", "2"]).await;
    let mut c = engine.client().await;
    let have = stats_of(&mut c).await["entries"].as_u64().unwrap() as usize;
    fill_to(&mut c, big, have, small / 500, &mut rng).await;
    drop(engine);
    let pg = postgres::Postgres::start_durable();
    let url = pg.url();
    let pg_dir = tempfile::tempdir().unwrap();
    let pg_args = ["--database", url.as_str()];
    let engine = Engine::start(
        pg_dir.path(),
        &[&pg_args[..], &["--embed-threads", "2"]].concat(),
    )
    .await;
    let mut c = engine.client().await;
    drained(&mut c).await;
    fill_to(&mut c, big, 0, 0, &mut rng).await;
    drop(engine);
    // As in `benches/search.rs`: autovacuum would have analysed a store this
    // size long before anyone searches it.
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query("VACUUM ANALYZE").execute(&pool).await.unwrap();
    pool.close().await;

    let mut ready = Vec::new();
    for (store, dir, args) in [
        ("SQLite", dir.path(), &[][..]),
        ("PostgreSQL", pg_dir.path(), &pg_args[..]),
    ] {
        let t = Instant::now();
        let engine = Engine::start(dir, args).await;
        let mut c = engine.client().await;
        drained(&mut c).await;
        println!(
            "{store}: restart to ready at {big} entries (load the saved index): {:.1}s",
            t.elapsed().as_secs_f64()
        );
        ready.push((store, engine, c));
    }
    println!();
    let mut stores: Vec<(&str, &mut Client)> = ready.iter_mut().map(|(s, _, c)| (*s, c)).collect();
    searches(&mut stores, &format!("{}k", big / 1000), big).await;
    for (store, engine, c) in &mut ready {
        let s = stats_of(c).await;
        println!(
            "{store}: index memory at {} vectors: {:.1} MiB; engine RSS {:.0} MiB",
            s["semantic"]["vectors"],
            s["semantic"]["index_bytes"].as_f64().unwrap() / 1048576.0,
            engine.rss_mib()
        );
    }
    println!();
    let mut stores: Vec<(&str, &mut Client)> = ready.iter_mut().map(|(s, _, c)| (*s, c)).collect();
    mostly_archived(&mut stores, big, &mut rng).await;
}

/// Most of the store archived: a pad of `big / 20` notes written beside
/// the others (live notes past `exact_max`, so searches go through the
/// index), the same cached searches before and after the big pad is
/// archived (its TTL set to a second; the engine's sweep archives it).
async fn mostly_archived(stores: &mut [(&str, &mut Client)], big: usize, rng: &mut fastrand::Rng) {
    let live = big / 20;
    for (_, c) in stores.iter_mut() {
        common::fill_with(c, "beside", live, || note(rng)).await;
        drained(c).await;
    }
    let query = |q: &str, mode: &str| json!({"query": q, "mode": mode, "limit": 10});
    let all_live = format!("{}k entries, none archived", big / 1000);
    let archived = format!(
        "{}k entries, all but {}k archived",
        big / 1000,
        (live + big / 500) / 1000
    );
    for (label, archive) in [(all_live, false), (archived, true)] {
        if archive {
            for (store, c) in stores.iter_mut() {
                let t = Instant::now();
                c.call("pad.configure", json!({"name": "load", "ttl_seconds": 1}))
                    .await
                    .unwrap();
                loop {
                    let pads = c
                        .call("pad.list", json!({"include_archived": true}))
                        .await
                        .unwrap();
                    let load = pads["pads"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["name"] == "load");
                    if load.is_some_and(|p| p["archived"] == true) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                println!(
                    "{store}: the big pad archived by the sweep after {:.0}s",
                    t.elapsed().as_secs_f64()
                );
            }
        }
        for mode in ["semantic", "hybrid"] {
            each_store(stores, QUERIES.len(), |i| query(QUERIES[i], mode)).await;
            let cached = each_store(stores, 300, |i| query(QUERIES[i % QUERIES.len()], mode)).await;
            rows(
                stores,
                &format!("{mode} search, {label}, cached query"),
                cached,
            );
        }
    }
}

/// Fills a store that holds `have` entries up to `big` (`big / 500` of them
/// in the pad `small`, which holds `small_has` already) and waits for the
/// embedding backlog to drain.
async fn fill_to(
    c: &mut Client,
    big: usize,
    have: usize,
    small_has: usize,
    rng: &mut fastrand::Rng,
) {
    common::fill_with(
        c,
        "load",
        big.saturating_sub(have + big / 500 - small_has),
        || note(rng),
    )
    .await;
    common::fill_with(c, "small", big / 500 - small_has, || note(rng)).await;
    let took = drained(c).await;
    println!(
        "filled to {big}: remaining backlog drained in {took:.0}s with 2 threads ({:.0} entries/s)",
        stats_of(c).await["semantic"]["embed_per_second"]
    );
}

fn main() {
    common::two_thread_runtime().block_on(run());
}
