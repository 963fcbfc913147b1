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
//! Prints the neighbour's p50/p99 and the engine's peak memory growth, and
//! the same reads with nothing else running as the anchor.

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
    let body = "lorem ipsum dolor sit amet ".repeat(147);
    let mut i = 0;
    common::fill_with(&mut c, "wide", 5000, || {
        i += 1;
        format!("{i:05} {body}")
    })
    .await;
    let probe = c
        .call("entry.add", json!({"pad": "probe", "content": "small"}))
        .await
        .unwrap()["entry"]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let quiet = probe_for(&mut c, &probe, Duration::from_secs(3)).await;
    report("nothing else running (anchor)", quiet, 0.0);

    let before = peak_mib(&engine);
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
    let lat = probe_while(&mut c, &probe, &attackers).await;
    report(
        "4 clients × 5 batches of 100 entry.list",
        lat,
        peak_mib(&engine) - before,
    );

    let before = peak_mib(&engine);
    let export = br#"{"jsonrpc":"2.0","id":1,"method":"pad.export","params":{"name":"wide","format":"json"}}"#;
    let exporters: Vec<_> = (0..8)
        .map(|_| {
            let socket = engine.socket.clone();
            tokio::spawn(async move {
                raw_answer(&socket, export).await;
            })
        })
        .collect();
    let lat = probe_while(&mut c, &probe, &exporters).await;
    report(
        "8 clients exporting a 20 MB pad at once",
        lat,
        peak_mib(&engine) - before,
    );
}

fn report(what: &str, lat: Vec<f64>, grew_mib: f64) {
    let n = lat.len();
    let s = stats(lat);
    println!(
        "{what:<42} neighbour entry.get p50 {:>8.2} ms  p99 {:>8.2} ms  ({n} reads)  engine peak +{grew_mib:.0} MiB",
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

async fn probe_while(c: &mut Client, id: &str, tasks: &[tokio::task::JoinHandle<()>]) -> Vec<f64> {
    let mut lat = Vec::new();
    while !tasks.iter().all(|t| t.is_finished()) {
        lat.push(common::timed(c, "entry.get", json!({ "id": id })).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    lat
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

/// The engine's peak resident memory so far, MiB.
fn peak_mib(engine: &Engine) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", engine.child.id())).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}
