//! Meaning search that misses nothing among near-duplicates: the served
//! index against brute force (recall@10 at least 0.99). Its own binary: it
//! embeds 3,000 notes, and CPU-heavy neighbours would slow the others.

mod common;

use std::collections::HashSet;

use common::*;
use scratchpad::semantic::Precision;
use serde_json::{json, Value};

#[path = "common/notes.rs"]
mod notes;
use notes::{near_duplicates, QUERIES};

/// The served index against brute force (the same engine restarted to score
/// every stored f32 vector exactly), unfiltered and filtered by pad.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meaning_search_agrees_with_brute_force_among_near_duplicates() {
    const N: usize = 3000;
    let served = |c: &mut scratchpad::Config| {
        let mut s = semantic_config(Precision::Int8);
        s.exact_max = 0; // every search goes through the index
        s.batch = 64;
        c.semantic = Some(s);
    };
    let h = Harness::with(served).await;
    let mut c = h.client().await;
    for (i, note) in near_duplicates(N).iter().enumerate() {
        let pad = if i % 3 == 0 { "ops" } else { "dev" };
        add(&mut c, pad, note).await;
    }
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["vectors"], N as u64, "{s}");

    let searches: Vec<Value> = QUERIES
        .iter()
        .flat_map(|q| {
            [
                json!({"query": q, "mode": "semantic", "limit": 10}),
                json!({"query": q, "mode": "semantic", "limit": 10, "pad": "ops"}),
            ]
        })
        .collect();
    let mut got = Vec::new();
    for p in &searches {
        got.push(hit_ids(&ok(&mut c, "search", p.clone()).await));
    }
    drop(c);
    let exact = h
        .restart_with(|c| {
            let mut s = semantic_config(Precision::Int8);
            s.exact_max = 1 << 40; // brute force: every stored vector scored
            c.semantic = Some(s);
        })
        .await;
    let mut c = exact.client().await;
    embedded_all(&mut c).await;
    let (mut found, mut total) = (0, 0);
    for (p, served) in searches.iter().zip(&got) {
        let truth: HashSet<String> = hit_ids(&ok(&mut c, "search", p.clone()).await)
            .into_iter()
            .collect();
        assert_eq!(truth.len(), 10, "{p}");
        found += served.iter().filter(|id| truth.contains(*id)).count();
        total += truth.len();
    }
    let recall = found as f64 / total as f64;
    println!("recall@10 against brute force over {N} near-duplicates: {recall:.4}");
    assert!(recall >= 0.99, "recall@10 {recall:.4} < 0.99");
    exact.stop().await;
}
