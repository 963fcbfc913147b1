//! `cargo bench --bench neighbour`: what a heavy client costs the others.
//!
//! The figures behind `tests/heavy.rs`'s bounds (the tests only check that
//! nobody is stalled for seconds, which holds on a busy machine): the
//! release `pad serve`, one pad of 5,000 notes of 4,000 characters (20 MB),
//! then two attacks, each with another client reading one small entry by
//! id every 5 ms for as long as the attack runs:
//! - 4 clients × 5 batches of 100 `entry.list` of 1,000 entries (answers cut
//!   at 16 MiB each);
//! - 8 clients exporting the 20 MB pad at once (they take turns, two at a
//!   time).
//!
//! Prints the neighbour's p50/p99 and how far the engine's resident memory
//! rose (sampled with each read), and the same reads with nothing else
//! running as the anchor.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{stats, Engine};
use scratchpad::client::Client;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

fn main() {
    common::two_thread_runtime().block_on(run());
}

async fn run() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path(), &["--no-semantic"]).await;
    let mut c = engine.client().await;
    fill(&mut c, "wide", 5000).await;
    let probe = c
        .call("entry.add", json!({"pad": "probe", "content": "small"}))
        .await
        .unwrap()["entry"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let quiet = probe_for(&mut c, &probe, Duration::from_secs(3)).await;
    report("nothing else running (anchor)", quiet, 0.0);

    let before = engine.rss_mib();
    let line = serde_json::to_vec(
        &(0..100)
            .map(|i| {
                json!({"jsonrpc": "2.0", "id": i, "method": "entry.list",
                            "params": {"pad": "wide", "limit": 1000}})
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let attackers: Vec<_> = (0..4)
        .map(|_| {
            let (socket, line) = (engine.socket.clone(), line.clone());
            tokio::spawn(async move {
                for _ in 0..5 {
                    raw_answer(&socket, &line).await;
                }
            })
        })
        .collect();
    let (lat, most) = probe_while(&mut c, &probe, &attackers, &engine).await;
    report(
        "4 clients × 5 batches of 100 entry.list",
        lat,
        most - before,
    );

    let before = engine.rss_mib();
    let export = br#"{"jsonrpc":"2.0","id":1,"method":"pad.export","params":{"name":"wide","format":"json"}}"#;
    let exporters: Vec<_> = (0..8)
        .map(|_| {
            let socket = engine.socket.clone();
            tokio::spawn(async move {
                raw_answer(&socket, export).await;
            })
        })
        .collect();
    let (lat, most) = probe_while(&mut c, &probe, &exporters, &engine).await;
    report(
        "8 clients exporting a 20 MB pad at once",
        lat,
        most - before,
    );
}

/// `n` notes of 4,000 characters, a batch of 100 a line (pipelining this
/// much unread would fill both socket buffers).
async fn fill(c: &mut Client, pad: &str, n: usize) {
    let body = "lorem ipsum dolor sit amet ".repeat(147);
    for start in (0..n).step_by(100) {
        let batch: Vec<_> = (start..(start + 100).min(n))
            .map(|i| {
                json!({"jsonrpc": "2.0", "id": i, "method": "entry.add",
                       "params": {"pad": pad, "content": format!("{i:05} {body}")}})
            })
            .collect();
        let mut line = serde_json::to_vec(&batch).unwrap();
        line.push(b'\n');
        c.send_raw(&line).await.unwrap();
        c.read_message().await.unwrap();
    }
}

fn report(what: &str, lat: Vec<f64>, grew_mib: f64) {
    let n = lat.len();
    let s = stats(lat);
    println!(
        "{what:<42} neighbour entry.get p50 {:>8.2} ms  p99 {:>8.2} ms  ({n} reads)  engine RSS +{grew_mib:.0} MiB at most",
        s.p50 / 1000.0,
        s.p99 / 1000.0,
    );
}

async fn probe_for(c: &mut Client, id: &str, d: Duration) -> Vec<f64> {
    let until = Instant::now() + d;
    let mut lat = Vec::new();
    while Instant::now() < until {
        lat.push(common::timed(c, "entry.get", json!({ "id": id })).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    lat
}

/// The neighbour's latencies while `tasks` run, and the engine's largest
/// resident memory seen meanwhile (MiB).
async fn probe_while(
    c: &mut Client,
    id: &str,
    tasks: &[tokio::task::JoinHandle<()>],
    engine: &Engine,
) -> (Vec<f64>, f64) {
    let (mut lat, mut most) = (Vec::new(), 0f64);
    while !tasks.iter().all(|t| t.is_finished()) {
        lat.push(common::timed(c, "entry.get", json!({ "id": id })).await);
        most = most.max(engine.rss_mib());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (lat, most)
}

/// One request line's answer, read and dropped.
async fn raw_answer(socket: &Path, line: &[u8]) {
    let mut s = tokio::net::UnixStream::connect(socket).await.unwrap();
    s.write_all(line).await.unwrap();
    s.write_all(b"\n").await.unwrap();
    let mut r = tokio::io::BufReader::new(s);
    let mut answer = Vec::new();
    r.read_until(b'\n', &mut answer).await.unwrap();
    assert!(answer.starts_with(b"{") || answer.starts_with(b"["));
}
