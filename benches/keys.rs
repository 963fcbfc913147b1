//! `cargo bench --bench keys`: what an idempotency key costs the write path.
//!
//! One release engine (SQLite, semantic search off), one client, the same
//! requests in alternating rounds so drift on the machine hits each alike:
//! `entry.add` without a key (journaled), `entry.add` with a fresh key
//! (committed with its key's row, `storage::once`), and a keyed call sent
//! again (answered from the key's row, nothing written).
//! BENCH_QUICK=1 for a smaller run.

mod common;

use std::time::Instant;

use common::{row, sentence, stats, Engine};
use scratchpad::client::{fresh_key, Client};
use serde_json::{json, Value};

async fn add(c: &mut Client, params: Value) -> f64 {
    let t = Instant::now();
    c.call("entry.add", params).await.unwrap();
    t.elapsed().as_secs_f64() * 1e6
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let (rounds, per) = if quick { (4, 500) } else { (10, 2_000) };
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(dir.path(), &["--no-semantic"]).await;
    let mut c = engine.client().await;
    c.call("hello", json!({"author": "bench"})).await.unwrap();
    println!(
        "scratchpad {} idempotency-key bench — {} cores, {rounds} rounds of {per}\n",
        env!("CARGO_PKG_VERSION"),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    let (mut plain, mut keyed, mut again) = (Vec::new(), Vec::new(), Vec::new());
    let mut rng = fastrand::Rng::with_seed(3);
    for round in 0..rounds {
        let mut sent = Vec::with_capacity(per);
        let mut one = async |with_key: bool, rng: &mut fastrand::Rng| {
            let mut params = json!({"pad": "notes", "content": sentence(rng)});
            if with_key {
                params["idempotency_key"] = json!(fresh_key());
            }
            (add(&mut c, params.clone()).await, params)
        };
        for i in 0..2 * per {
            // Alternate which goes first, call by call and round by round.
            let with_key = (i + round) % 2 == 1;
            let (us, params) = one(with_key, &mut rng).await;
            if with_key {
                keyed.push(us);
                sent.push(params);
            } else {
                plain.push(us);
            }
        }
        for params in sent.into_iter().take(per / 4) {
            again.push(add(&mut c, params).await);
        }
    }
    row("entry.add, no key (journaled)", &stats(plain));
    row("entry.add, a fresh key (committed with it)", &stats(keyed));
    row(
        "entry.add, its key sent again (first answer)",
        &stats(again),
    );
}

fn main() {
    common::two_thread_runtime().block_on(run());
}
