//! `cargo bench --bench teams`: the SQLite store and the PostgreSQL store
//! side by side, in one run, each engine the release `pad serve` as its own
//! process over its real socket.
//!
//! PostgreSQL is Debian's packaged server in a cluster of its own (a temp
//! directory, loopback), with its defaults for durability (`fsync` and
//! `synchronous_commit` on); SQLite runs with the engine's default
//! (`--durability normal`). Rows:
//!
//! - write p50/p99, 1 client;
//! - writes/s with 16 clients: on one SQLite engine, and over two engines
//!   (8 clients each) on one PostgreSQL database;
//! - text, hybrid and semantic search p50/p99 at 100k entries (meaning
//!   with a fresh query each time, so the query's embedding is included;
//!   semantic also filtered to the big pad — the index's candidates checked
//!   against the filter — and to a pad of 300, scored exactly);
//! - event latency: a write on engine A until a subscriber on engine B has
//!   it (PostgreSQL), next to a subscriber on the same engine (SQLite).
//!
//! For hybrid search, vectors for the 100k entries are written through the
//! embedding worker's own path (`VectorSource::embed_next`) with a stand-in
//! embedder (seeded random unit vectors, the same on both stores), so the
//! run does not spend ~17 minutes embedding 100k notes twice; the search
//! itself, and its query embedding, are the engine's. `BENCH_QUICK=1`: 10k.
//! `BENCH_ONLY=search` skips the write and event rows.

mod common;
#[path = "../tests/common/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "../tests/common/postgres.rs"]
mod postgres;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{sentence, stats, timed, Engine};
use scratchpad::client::Client;
use scratchpad::semantic::{Encoded, Note, VectorSource};
use scratchpad::store::SqliteVectors;
use serde_json::{json, Value};

fn main() {
    common::two_thread_runtime().block_on(run());
}

/// `pad serve` flags for an engine on `store` (None: SQLite).
fn flags(store: Option<&str>, semantic: bool) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(url) = store {
        f.extend(["--database".to_string(), url.to_string()]);
    }
    if semantic {
        f.extend([
            "--model-dir".to_string(),
            model::model_dir().display().to_string(),
        ]);
    } else {
        f.push("--no-semantic".into());
    }
    f
}

async fn start(dir: &Path, store: Option<&str>, semantic: bool) -> Engine {
    let f = flags(store, semantic);
    let f: Vec<&str> = f.iter().map(String::as_str).collect();
    Engine::start(dir, &f).await
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let big = if quick { 10_000 } else { 100_000 };
    let pg = postgres::Postgres::start_durable();
    let url = pg.url();
    println!(
        "scratchpad {} teams bench — {} cores; SQLite (one engine) vs PostgreSQL (two engines, one database)\n",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let (sq_dir, a_dir, b_dir) = (tempdir(), tempdir(), tempdir());

    // Writes.
    if std::env::var("BENCH_ONLY").as_deref() != Ok("search") {
        let sq = start(sq_dir.path(), None, false).await;
        let a = start(a_dir.path(), Some(&url), false).await;
        let b = start(b_dir.path(), Some(&url), false).await;
        let (mut cs, mut ca) = (sq.client().await, a.client().await);
        let n = if quick { 500 } else { 2_000 };
        let (mut ls, mut lp) = (Vec::new(), Vec::new());
        // Interleaved rounds, so both see the same machine.
        for round in 0..10 {
            for i in 0..n / 10 {
                let p = json!({"pad": "w1", "content": format!("round {round} note {i}")});
                ls.push(timed(&mut cs, "entry.add", p.clone()).await);
                lp.push(timed(&mut ca, "entry.add", p).await);
            }
        }
        let (s, p) = (stats(ls), stats(lp));
        println!("{:<44} {:>12} {:>12}", "", "SQLite", "PostgreSQL");
        println!(
            "{:<44} {:>9.0} µs {:>9.0} µs",
            "write p50, 1 client", s.p50, p.p50
        );
        println!(
            "{:<44} {:>9.0} µs {:>9.0} µs",
            "write p99, 1 client", s.p99, p.p99
        );
        let per = if quick { 200 } else { 1_000 };
        for (name, pads) in [("one pad", 1), ("a pad each", 16)] {
            let ws = writes_per_second(&[&sq.socket], 16, per, pads).await;
            let wp = writes_per_second(&[&a.socket, &b.socket], 16, per, pads).await;
            println!(
                "{:<44} {:>12.0} {:>12.0}",
                format!("writes/s, 16 clients, {name}"),
                ws,
                wp
            );
        }
        let es = event_latency(&sq.socket, &sq.socket).await;
        let ep = event_latency(&a.socket, &b.socket).await;
        println!(
            "{:<44} {:>9.0} µs {:>9.0} µs",
            "event p50 (PG: written on A, heard on B)", es.p50, ep.p50
        );
        println!("{:<44} {:>9.0} µs {:>9.0} µs", "event p99", es.p99, ep.p99);
    }

    // Search at `big` entries. Meaning search on once, so each store
    // records the model; the fill without it (nothing embeds meanwhile);
    // then the vectors; then meaning search on again.
    // Fresh stores, so the search rows see `big` entries and no more.
    let (sq_dir, a_dir) = (tempdir(), tempdir());
    let url = pg.new_database();
    for semantic in [true, false] {
        let sq = start(sq_dir.path(), None, semantic).await;
        let a = start(a_dir.path(), Some(&url), semantic).await;
        let (mut cs, mut ca) = (sq.client().await, a.client().await);
        if semantic {
            ready(&mut cs).await;
            ready(&mut ca).await;
            continue;
        }
        let rng = fastrand::Rng::with_seed(7);
        for c in [&mut cs, &mut ca] {
            let mut r = rng.clone();
            common::fill_with(c, "big", big, || sentence(&mut r)).await;
            common::fill_with(c, "small", 300, || sentence(&mut r)).await;
        }
    }
    let seeded = {
        let dir = sq_dir.path().join("data");
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            let store = scratchpad::store::Store::open(
                &dir,
                scratchpad::store::Durability::Normal,
                None,
                1000,
                scratchpad::clock::Clock::system().now_ms(),
                true,
            )
            .expect("the SQLite store opens");
            let _ = std::fs::remove_file(dir.join(scratchpad::semantic::INDEX_FILE));
            let s = seed(&SqliteVectors(Arc::new(store)));
            let pgs = tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(scratchpad::pg::PgStore::open(&url, None))
                .expect("PostgreSQL opens");
            let p = seed(&scratchpad::pg::PgVectors::new(&pgs).expect("vectors"));
            (s, p)
        })
        .await
        .unwrap()
    };
    let sq = start(sq_dir.path(), None, true).await;
    let a = start(a_dir.path(), Some(&url), true).await;
    let (mut cs, mut ca) = (sq.client().await, a.client().await);
    let (vs, vp) = (ready(&mut cs).await, ready(&mut ca).await);
    println!(
        "\nsearch: {vs} (SQLite) and {vp} (PostgreSQL) entries with vectors ({} and {} seeded)",
        seeded.0, seeded.1
    );
    let words = [
        "deploy",
        "docker registry",
        "timeout retry",
        "memory leak",
        "kernel",
    ];
    let queries = if quick { 50 } else { 200 };
    let shapes: [(&str, &str, Value); 5] = [
        ("text", "text", json!({})),
        ("hybrid", "hybrid", json!({})),
        ("semantic", "semantic", json!({})),
        (
            "semantic, big pad (index, checked)",
            "semantic",
            json!({"pad": "big"}),
        ),
        (
            "semantic, pad of 300 (exact)",
            "semantic",
            json!({"pad": "small"}),
        ),
    ];
    println!("{:<44} {:>12} {:>12}", "p50 / p99", "SQLite", "PostgreSQL");
    for (name, mode, filter) in shapes {
        let (mut ls, mut lp) = (Vec::new(), Vec::new());
        for i in 0..queries {
            let q = match mode {
                "text" => words[i % words.len()].to_string(),
                // A query never seen before: its embedding is computed.
                _ => format!("{} problem number {i} {name}", words[i % words.len()]),
            };
            let mut p = json!({"query": q, "mode": mode, "limit": 10});
            for (k, v) in filter.as_object().unwrap() {
                p[k] = v.clone();
            }
            ls.push(timed(&mut cs, "search", p.clone()).await);
            lp.push(timed(&mut ca, "search", p).await);
        }
        let (s, p) = (stats(ls), stats(lp));
        println!(
            "{:<44} {:>5.2} / {:<5.2} {:>5.2} / {:<5.2} ms",
            format!("{name}, {big} entries"),
            s.p50 / 1000.0,
            s.p99 / 1000.0,
            p.p50 / 1000.0,
            p.p99 / 1000.0
        );
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Writes a stand-in vector for everything left to embed; returns how many.
fn seed(source: &dyn VectorSource) -> usize {
    let mut rng = fastrand::Rng::with_seed(11);
    let mut total = 0;
    let mut embed = |notes: &[Note]| -> Vec<Option<Encoded>> {
        notes
            .iter()
            .map(|_| {
                let v: Vec<f32> = (0..384).map(|_| rng.f32() - 0.5).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                Some(Encoded {
                    vector: v.into_iter().map(|x| x / norm).collect(),
                    terms: Vec::new(),
                })
            })
            .collect()
    };
    while let Some(n) = source.embed_next(2_000, &mut embed).expect("seeding") {
        total += n;
    }
    total
}

/// Waits until meaning search is ready with nothing left to embed; returns
/// the vectors this engine's index holds.
async fn ready(c: &mut Client) -> u64 {
    let t = Instant::now();
    loop {
        let s = c.call("stats", json!({})).await.unwrap();
        if s["semantic"]["status"] == "ready" && s["embed_queue"] == 0 {
            return s["semantic"]["vectors"].as_u64().unwrap_or(0);
        }
        assert!(s["semantic"]["status"] != "unavailable", "{s}");
        assert!(t.elapsed() < Duration::from_secs(600), "not ready: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Writes per second with `clients` clients spread over `sockets` (PG: 8
/// on each engine), each writing `per` entries one at a time into one of
/// `pads` pads.
async fn writes_per_second(sockets: &[&Path], clients: usize, per: usize, pads: usize) -> f64 {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..clients {
        let socket = sockets[i % sockets.len()].to_owned();
        tasks.push(tokio::spawn(async move {
            let mut c = Client::connect(&socket).await.unwrap();
            for j in 0..per {
                c.call(
                    "entry.add",
                    json!({"pad": format!("w16-{}", i % pads), "content": format!("client {i} note {j}")}),
                )
                .await
                .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    (clients * per) as f64 / started.elapsed().as_secs_f64()
}

/// From just before a write on `writer` until a subscriber on `watcher`
/// has its `created` event.
async fn event_latency(writer: &Path, watcher: &Path) -> common::Stats {
    let mut w = Client::connect(watcher).await.unwrap();
    w.call("subscribe", json!({"pads": ["events"]}))
        .await
        .unwrap();
    let mut c = Client::connect(writer).await.unwrap();
    let mut lat = Vec::new();
    for i in 0..300 {
        let t = Instant::now();
        c.call(
            "entry.add",
            json!({"pad": "events", "content": format!("event {i}")}),
        )
        .await
        .unwrap();
        let ev = tokio::time::timeout(Duration::from_secs(10), w.next_event())
            .await
            .expect("the event arrives")
            .unwrap()
            .unwrap();
        assert_eq!(ev["type"], "created");
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    stats(lat)
}
