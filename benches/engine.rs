//! `cargo bench --bench engine`: the engine's figures, over its real socket.
//!
//! Starts the release `pad serve` as its own process on a temp socket and data
//! directory, drives it with the crate's client, and prints write and read
//! round trips (1 and 8 clients), write throughput, the cost of a write by pad
//! size, text search latency at 100k entries and the engine's resident memory;
//! then, if `redis-server` is installed, the single-client write from Python
//! against a Redis Stream, interleaved; then write latency with
//! `--durability full`; then the cost of metrics on the write path (two
//! engines, `--metrics` on and off, fed in alternating rounds). Semantic
//! search is off here (benches/semantic.rs measures it). Set BENCH_QUICK=1
//! for a smaller run, BENCH_ONLY=metrics for the metrics comparison alone,
//! BENCH_ONLY=writes for the write rows alone (1 and 8 clients),
//! BENCH_ONLY=python for the Python-vs-Redis comparison alone (fresh engine),
//! BENCH_ONLY=meaning for that comparison with meaning search off and on, and
//! on with a backlog queued before the writes (the model from
//! `PAD_MODEL_DIR`, as `tests/common/model.rs` finds it), in alternating
//! rounds of fresh engines (BENCH_ROUNDS, default 3).

mod common;
#[path = "../tests/common/model.rs"]
mod model;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{row, sentence, stats, timed, which, Engine, WORDS};
use scratchpad::client::Client;
use serde_json::{json, Value};

/// Waits until the engine's background work has caught up — the journal
/// applied, the text index current — so the next row measures its own
/// requests and not the tail of the previous phase; returns how long that
/// took.
async fn quiesce(c: &mut Client) -> Duration {
    let t = Instant::now();
    loop {
        let s: Value = c.call("stats", json!({})).await.unwrap();
        if s["journal_queue"].as_i64() == Some(0) && s["index_queue"].as_i64() == Some(0) {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < Duration::from_secs(600),
            "background work never caught up: {s}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Fills a pad quickly with pipelined writes.
async fn fill(c: &mut Client, pad: &str, n: usize, rng: &mut fastrand::Rng) -> Vec<String> {
    common::fill_with(c, pad, n, || sentence(rng)).await
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let n1 = if quick { 2_000 } else { 20_000 };
    let big = if quick { 10_000 } else { 100_000 };
    let mut rng = fastrand::Rng::with_seed(7);
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only == "metrics" {
        return metrics_cost(20_000, &mut rng).await;
    }
    if only == "meaning" {
        let rounds = std::env::var("BENCH_ROUNDS").map_or(3, |r| r.parse().expect("BENCH_ROUNDS"));
        return meaning_vs_redis(rounds, &mut rng).await;
    }
    if only == "python" {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::start(dir.path(), &["--no-semantic"]).await;
        return python_vs_redis(&engine, 10).await;
    }
    let writes_only = only == "writes";
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path(), &["--no-semantic"]).await;
    println!(
        "scratchpad {} bench — {} cores\n",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );

    // 1 client: write and read round trips.
    let mut c = engine.client().await;
    let mut ids = Vec::new();
    let mut w = Vec::with_capacity(n1);
    for _ in 0..n1 {
        let content = sentence(&mut rng);
        let t = Instant::now();
        let r = c
            .call(
                "entry.add",
                json!({"pad": "one", "content": content, "tags": ["bench"]}),
            )
            .await
            .unwrap();
        w.push(t.elapsed().as_secs_f64() * 1e6);
        ids.push(r["entry"]["id"].as_str().unwrap().to_string());
    }
    row("write round trip, 1 client", &stats(w));
    // The same round trip with no work: how fast the machine is right now
    // (it swings by half between runs), so a slower write row can be told
    // from a slower machine.
    let mut h = Vec::with_capacity(n1 / 4);
    for _ in 0..n1 / 4 {
        h.push(timed(&mut c, "hello", json!({})).await);
    }
    row("round trip, 1 client, hello (no work)", &stats(h));
    let mut r = Vec::with_capacity(n1);
    for _ in 0..if writes_only { 0 } else { n1 } {
        let id = &ids[rng.usize(..ids.len())];
        r.push(timed(&mut c, "entry.get", json!({"id": id})).await);
    }
    if !writes_only {
        row("read round trip (entry.get), 1 client", &stats(r));
    }

    // 8 clients at once.
    quiesce(&mut c).await;
    let per = n1 / 4;
    let t0 = Instant::now();
    let all = eight_clients(&engine.socket, move |k, mut c| async move {
        let mut rng = fastrand::Rng::with_seed(k);
        let mut lat = Vec::with_capacity(per);
        for _ in 0..per {
            let content = sentence(&mut rng);
            lat.push(
                timed(
                    &mut c,
                    "entry.add",
                    json!({"pad": format!("eight-{k}"), "content": content}),
                )
                .await,
            );
        }
        lat
    });
    let secs = t0.elapsed().as_secs_f64();
    let total = all.len();
    row("write round trip, 8 clients", &stats(all));
    println!(
        "{:<52} {:>8.0} writes/s",
        "write throughput, 8 clients",
        total as f64 / secs
    );
    if writes_only {
        return;
    }
    quiesce(&mut c).await;
    let read_ids = std::sync::Arc::new(ids.clone());
    let all = eight_clients(&engine.socket, move |k, mut c| {
        let ids = read_ids.clone();
        async move {
            let mut rng = fastrand::Rng::with_seed(k + 100);
            let mut lat = Vec::with_capacity(per);
            for _ in 0..per {
                let id = &ids[rng.usize(..ids.len())];
                lat.push(timed(&mut c, "entry.get", json!({"id": id})).await);
            }
            lat
        }
    });
    row("read round trip, 8 clients", &stats(all));

    // Write cost by pad size, interleaved so drift hits every size alike.
    fill(&mut c, "size-10", 10, &mut rng).await;
    fill(&mut c, "size-10k", big / 10, &mut rng).await;
    fill(&mut c, "size-100k", big, &mut rng).await;
    let behind = quiesce(&mut c).await;
    println!(
        "{:<52} {:>8.1} s",
        format!(
            "text index catching up after a {}-entry fill",
            big + big / 10 + 10
        ),
        behind.as_secs_f64()
    );
    let sizes = ["size-10", "size-10k", "size-100k"];
    let mut lat: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for _ in 0..(n1 / 4) {
        for (i, pad) in sizes.iter().enumerate() {
            let content = sentence(&mut rng);
            lat[i].push(
                timed(
                    &mut c,
                    "entry.add",
                    json!({"pad": pad, "content": content, "tags": ["bench"]}),
                )
                .await,
            );
        }
    }
    for (i, pad) in sizes.iter().enumerate() {
        row(
            &format!("write into a pad of {}", &pad[5..]),
            &stats(std::mem::take(&mut lat[i])),
        );
    }

    // Text search with the store at full size; let the indexer settle first.
    let s: Value = c.call("stats", json!({})).await.unwrap();
    let entries = s["entries"].as_i64().unwrap();
    c.call("search", json!({"query": "warm", "mode": "text"}))
        .await
        .unwrap();
    type MakeQuery = Box<dyn Fn(&mut fastrand::Rng) -> Value>;
    let classes: [(&str, MakeQuery); 4] = [
        (
            "rare token",
            Box::new(
                |r| json!({"query": format!("ticket-{}", r.u32(..1_000_000)), "mode": "text", "limit": 10}),
            ),
        ),
        (
            "two common words",
            Box::new(
                |r| json!({"query": format!("{} {}", WORDS[r.usize(..WORDS.len())], WORDS[r.usize(..WORDS.len())]), "mode": "text", "limit": 10}),
            ),
        ),
        (
            "common word, one pad",
            Box::new(
                |r| json!({"query": WORDS[r.usize(..WORDS.len())], "mode": "text", "pad": "size-100k", "limit": 10}),
            ),
        ),
        // Inside words only, so the word index finds nothing and the trigram index answers.
        (
            "mid-word substring (trigram path)",
            Box::new(|r| {
                let w = WORDS
                    .iter()
                    .filter(|w| w.len() >= 6)
                    .nth(r.usize(..10))
                    .unwrap();
                json!({"query": &w[1..w.len() - 1], "mode": "text", "limit": 10})
            }),
        ),
    ];
    for (name, make) in &classes {
        let mut lat = Vec::new();
        for _ in 0..60 {
            let q = make(&mut rng);
            lat.push(timed(&mut c, "search", q).await);
        }
        row(
            &format!("text search, {entries} entries: {name}"),
            &stats(lat),
        );
    }
    println!(
        "{:<52} {:>8.1} MiB",
        format!("engine resident memory, {entries} entries"),
        engine.rss_mib()
    );
    println!(
        "{:<52} {:>8.1} MiB",
        "database + index on disk",
        s["db_bytes"].as_f64().unwrap() / 1048576.0
    );

    quiesce(&mut c).await;
    python_vs_redis(&engine, if quick { 4 } else { 10 }).await;
    drop(c);
    drop(engine);

    // Durability FULL: an fsync per commit.
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path(), &["--no-semantic", "--durability", "full"]).await;
    let mut c = engine.client().await;
    let mut w = Vec::new();
    for _ in 0..(n1 / 10) {
        let content = sentence(&mut rng);
        w.push(
            timed(
                &mut c,
                "entry.add",
                json!({"pad": "full", "content": content}),
            )
            .await,
        );
    }
    row("write round trip, 1 client, --durability full", &stats(w));
    drop(c);
    drop(engine);

    metrics_cost(n1, &mut rng).await;
}

/// The write path with metrics on (`--metrics`) and off: two engines, fed
/// the same writes in alternating rounds so drift on the machine hits both.
/// Python: Scratchpad vs Redis Stream (XADD + EXPIRE, AOF everysec), the
/// single-client write from Python against the design a user would otherwise
/// build, interleaved in rounds of 1,000.
async fn python_vs_redis(engine: &Engine, rounds: usize) {
    let socket = &engine.socket;
    if which("redis-server") && which("python3") {
        let rdir = tempfile::tempdir().unwrap();
        let rsock = rdir.path().join("redis.sock");
        let mut redis = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&rsock)
            .args([
                "--unixsocketperm",
                "700",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--save",
                "",
                "--dir",
            ])
            .arg(rdir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        for _ in 0..500 {
            if rsock.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/redis_compare.py");
        let out = Command::new("python3")
            .args([
                script,
                socket.to_str().unwrap(),
                rsock.to_str().unwrap(),
                &rounds.to_string(),
                "1000",
                &engine.child.id().to_string(),
                &redis.id().to_string(),
            ])
            .output()
            .expect("python runs");
        let _ = redis.kill();
        let _ = redis.wait();
        match serde_json::from_slice::<Value>(&out.stdout) {
            Ok(Value::Object(placements)) => {
                for (placement, v) in &placements {
                    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
                    let rows = [
                        ("scratchpad entry.add", "pad"),
                        ("redis XADD+EXPIRE (AOF everysec)", "redis"),
                        ("scratchpad hello (no work)", "hello"),
                    ];
                    for (name, key) in rows {
                        println!(
                            "{:<52} p50 {:>8.1} µs   p99 {:>8.1} µs",
                            format!("python, {placement}: {name}"),
                            f(&format!("{key}_p50_us")),
                            f(&format!("{key}_p99_us"))
                        );
                    }
                    println!(
                        "{:<52} {:>8.2}× redis at p50, {:.2}× at p99",
                        format!("python, {placement}: scratchpad / redis"),
                        f("pad_p50_us") / f("redis_p50_us"),
                        f("pad_p99_us") / f("redis_p99_us")
                    );
                }
            }
            Ok(_) | Err(_) => println!(
                "redis comparison failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    } else {
        println!("(redis-server or python3 not installed: Redis comparison skipped)");
    }
}

/// The Python-vs-Redis write comparison with meaning search off, on (every
/// note embedded in the background after its write) and on with a backlog
/// (`BACKLOG` notes queued just before), each a fresh engine, in `rounds`
/// alternating rounds so drift on the machine hits all three; then how
/// many notes each engine embedded meanwhile and what was left.
async fn meaning_vs_redis(rounds: usize, rng: &mut fastrand::Rng) {
    const BACKLOG: usize = 2_000;
    // The folder of model folders, so the sparse model beside MiniLM loads too.
    let minilm = model::model_dir();
    let models = minilm
        .parent()
        .filter(|p| p.join("splade-tiny").is_dir())
        .unwrap_or(&minilm);
    let models = models.to_str().unwrap().to_string();
    for round in 0..rounds {
        for (name, semantic, backlog) in [
            ("meaning off", false, 0),
            ("meaning on", true, 0),
            ("meaning on, backlog", true, BACKLOG),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let args: Vec<&str> = if semantic {
                vec!["--model-dir", &models]
            } else {
                vec!["--no-semantic"]
            };
            let engine = Engine::start(dir.path(), &args).await;
            let mut c = engine.client().await;
            if semantic {
                ready(&mut c).await;
            }
            if backlog > 0 {
                fill(&mut c, "backlog", backlog, rng).await;
            }
            quiesce(&mut c).await;
            println!("round {}: {name}", round + 1);
            python_vs_redis(&engine, 10).await;
            let s: Value = c.call("stats", json!({})).await.unwrap();
            if semantic {
                println!(
                    "  embedded meanwhile {}, still queued {}, {:.0} notes/s while encoding",
                    s["semantic"]["embedded"], s["embed_queue"], s["semantic"]["embed_per_second"]
                );
            }
        }
    }
}

/// Waits until the model is loaded and nothing waits to be embedded.
async fn ready(c: &mut Client) {
    let t = Instant::now();
    loop {
        let s: Value = c.call("stats", json!({})).await.unwrap();
        if s["semantic"]["status"] == "ready" && s["embed_queue"] == 0 {
            return;
        }
        assert_ne!(s["semantic"]["status"], "unavailable", "{s}");
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "the model never loaded: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn metrics_cost(n1: usize, rng: &mut fastrand::Rng) {
    let (off_dir, on_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let off = Engine::start(off_dir.path(), &["--no-semantic"]).await;
    let on = Engine::start(
        on_dir.path(),
        &["--no-semantic", "--metrics", "127.0.0.1:0"],
    )
    .await;
    let (mut c_off, mut c_on) = (off.client().await, on.client().await);
    let (mut w_off, mut w_on) = (Vec::new(), Vec::new());
    // Many short rounds, each engine going first in every other one: the
    // background work one engine's writes leave behind (a checkpoint, the
    // text indexer) then slows both sides equally.
    let rounds = 40;
    for round in 0..rounds {
        let mut sides = [(&mut c_off, &mut w_off), (&mut c_on, &mut w_on)];
        if round % 2 == 1 {
            sides.reverse();
        }
        for (c, w) in sides {
            for _ in 0..n1 / rounds / 2 {
                let content = sentence(rng);
                w.push(
                    timed(
                        c,
                        "entry.add",
                        json!({"pad": format!("m{round}"), "content": content, "tags": ["bench"]}),
                    )
                    .await,
                );
            }
        }
    }
    let (s_off, s_on) = (stats(w_off), stats(w_on));
    row("write round trip, 1 client, metrics off", &s_off);
    row("write round trip, 1 client, metrics on", &s_on);
    println!(
        "{:<52} {:>+8.1} %",
        "metrics cost on write p50 (end to end, noisy)",
        (s_on.p50 / s_off.p50 - 1.0) * 100.0
    );
    // What a write records, timed alone: the part of the difference that
    // is the metrics' own, free of the machine's noise.
    let m = scratchpad::metrics::Metrics::new().unwrap();
    let n = 1_000_000;
    let t = Instant::now();
    for _ in 0..n {
        m.entry_written(scratchpad::model::Kind::Note);
        m.request("entry.add", std::time::Duration::from_micros(150), None);
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    println!(
        "{:<52} {:>8.0} ns  ({:.2} % of the off p50)",
        "metrics recorded per write (in process)",
        ns,
        ns / 1000.0 / s_off.p50 * 100.0
    );
}

/// Runs `work` on eight clients at once, each with its own connection, as
/// one agent host running eight agents would: eight tasks on a two-thread
/// runtime. Returns every latency they measured.
fn eight_clients<F, Fut>(socket: &std::path::Path, work: F) -> Vec<f64>
where
    F: Fn(u64, Client) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Vec<f64>> + Send + 'static,
{
    let socket = socket.to_path_buf();
    let host = std::thread::spawn(move || {
        let rt = common::two_thread_runtime();
        rt.block_on(async move {
            let mut tasks = Vec::new();
            for k in 0..8u64 {
                let c = Client::connect(&socket).await.unwrap();
                tasks.push(tokio::spawn(work.clone()(k, c)));
            }
            let mut all = Vec::new();
            for t in tasks {
                all.extend(t.await.unwrap());
            }
            all
        })
    });
    host.join().unwrap()
}

/// A client's runtime, as the `pad` CLI has: one thread, no pool.
fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn main() {
    client_runtime().block_on(run());
}
