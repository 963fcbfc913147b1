//! `cargo bench --bench history`: what keeping history costs the write path.
//!
//! Two release engines side by side, one keeping history (the default) and
//! one with `--history-days 0`, fed the same requests in alternating rounds
//! so drift on the machine hits both: `entry.add`, `entry.update` (each an
//! edit of a random live note) and `entry.delete` round trips, one client.
//! Then, on the engine that keeps history: a `pad.clear` of 10,000 entries
//! and the `entry.restore` that undoes it, and the bytes one kept version
//! costs in `pad.db`. Semantic search is off (it is the same on both).
//! BENCH_QUICK=1 for a smaller run.

mod common;

use std::time::Instant;

use common::{row, sentence, stats, timed, Engine};
use scratchpad::client::Client;
use serde_json::{json, Value};

/// `pad.db`'s size once the engine's background checkpoint has copied the
/// WAL into it (the file only grows: nothing vacuums it).
async fn db_bytes(dir: &std::path::Path) -> u64 {
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    std::fs::metadata(dir.join("data/pad.db")).map_or(0, |m| m.len())
}

/// Writes `n` notes of about 300 characters, pipelined 100 at a time (500
/// would fill both directions of the socket before any answer is read).
async fn fill(c: &mut Client, pad: &str, n: usize, rng: &mut fastrand::Rng) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(100) {
        for _ in chunk {
            c.send("entry.add", json!({"pad": pad, "content": note(rng)}))
                .await
                .unwrap();
        }
        c.flush().await.unwrap();
        for _ in chunk {
            let (_, r) = c.response().await.unwrap();
            ids.push(r.unwrap()["entry"]["id"].as_str().unwrap().to_string());
        }
    }
    ids
}

/// A note of about 300 characters.
fn note(rng: &mut fastrand::Rng) -> String {
    let mut s = String::new();
    while s.len() < 300 {
        s.push_str(&sentence(rng));
        s.push(' ');
    }
    s
}

struct Side {
    name: &'static str,
    engine: Engine,
    c: Client,
    ids: Vec<String>,
    add: Vec<f64>,
    update: Vec<f64>,
    delete: Vec<f64>,
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let (rounds, per) = if quick { (4, 500) } else { (10, 2_000) };
    let mut rng = fastrand::Rng::with_seed(11);
    let (don, doff) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut sides = Vec::new();
    for (name, dir, extra) in [
        ("history kept", &don, &["--no-semantic"][..]),
        (
            "history off",
            &doff,
            &["--no-semantic", "--history-days", "0"][..],
        ),
    ] {
        let engine = Engine::start(dir.path(), extra).await;
        let mut c = engine.client().await;
        c.call("hello", json!({"author": "bench"})).await.unwrap();
        let ids = fill(&mut c, "notes", 5_000, &mut fastrand::Rng::with_seed(1)).await;
        sides.push(Side {
            name,
            engine,
            c,
            ids,
            add: Vec::new(),
            update: Vec::new(),
            delete: Vec::new(),
        });
    }
    println!(
        "scratchpad {} history bench — {} cores, {rounds} rounds of {per}\n",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    for round in 0..rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            vec![0, 1]
        } else {
            vec![1, 0]
        };
        for &i in &order {
            let s = &mut sides[i];
            let mut rng = fastrand::Rng::with_seed(round as u64);
            for _ in 0..per {
                let t = Instant::now();
                let r: Value =
                    s.c.call(
                        "entry.add",
                        json!({"pad": "notes", "content": note(&mut rng)}),
                    )
                    .await
                    .unwrap();
                s.add.push(t.elapsed().as_secs_f64() * 1e6);
                s.ids.push(r["entry"]["id"].as_str().unwrap().to_string());
            }
            for _ in 0..per {
                let id = s.ids[rng.usize(..s.ids.len())].clone();
                let content = note(&mut rng);
                s.update.push(
                    timed(
                        &mut s.c,
                        "entry.update",
                        json!({"id": id, "content": content}),
                    )
                    .await,
                );
            }
            for _ in 0..per / 4 {
                let id = s.ids.swap_remove(rng.usize(..s.ids.len()));
                s.delete
                    .push(timed(&mut s.c, "entry.delete", json!({"id": id})).await);
            }
        }
    }
    for what in ["add", "update", "delete"] {
        for s in &sides {
            let lat = match what {
                "add" => s.add.clone(),
                "update" => s.update.clone(),
                _ => s.delete.clone(),
            };
            row(&format!("entry.{what}, {}", s.name), &stats(lat));
        }
    }

    // Undo at scale, on the engine that keeps history.
    let s = &mut sides[0];
    let n = if quick { 2_000 } else { 10_000 };
    fill(&mut s.c, "big", n, &mut rng).await;
    let t = Instant::now();
    let cleared: Value = s.c.call("pad.clear", json!({"name": "big"})).await.unwrap();
    let clear_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let back: Value =
        s.c.call("entry.restore", json!({"change": cleared["change"]}))
            .await
            .unwrap();
    let restore_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(back["restored"].as_array().unwrap().len(), n);
    println!("\npad.clear of {n} entries (into the trash)        {clear_ms:>8.1} ms");
    println!("entry.restore of that clear ({n} entries)      {restore_ms:>8.1} ms");

    // What a kept version costs on disk: the same edits on both engines.
    let edits = if quick { 2_000 } else { 20_000 };
    let mut grew = Vec::new();
    for (s, dir) in sides.iter_mut().zip([&don, &doff]) {
        let before = db_bytes(dir.path()).await;
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..edits {
            let id = s.ids[rng.usize(..s.ids.len())].clone();
            s.c.call("entry.update", json!({"id": id, "content": note(&mut rng)}))
                .await
                .unwrap();
        }
        grew.push(db_bytes(dir.path()).await as f64 - before as f64);
    }
    println!(
        "pad.db growth over {edits} edits of ~300-char notes: kept {:.0} KB, off {:.0} KB: {:.2} KB per kept version",
        grew[0] / 1024.0,
        grew[1] / 1024.0,
        (grew[0] - grew[1]) / edits as f64 / 1024.0
    );
    println!(
        "resident memory: kept {:.0} MiB, off {:.0} MiB",
        sides[0].engine.rss_mib(),
        sides[1].engine.rss_mib()
    );
}

fn main() {
    common::two_thread_runtime().block_on(run());
}
