//! The encoders stay out of the writers' way (`semantic/pace.rs`): a burst
//! of notes is encoded in a few batches after it, not one per note; while
//! writes stream, encoding waits (a short batch now and then, so a stream
//! is still encoded); and a search that needs its writes catches them up
//! all the same. On both stores: the writes yielded to are the engine's
//! own (on PostgreSQL, the write transactions it began).
//!
//! (Their own binary: the encoders run on idle CPU only, and a CPU-heavy
//! neighbour test would starve them.)

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// Both encoders: the embedding model and the sparse one.
fn both_encoders(c: &mut scratchpad::Config) {
    c.semantic = Some(sparse_config());
}

/// Waits until everything written is embedded; a search that waits
/// hurries the worker, as a person's would.
async fn settled(c: &mut scratchpad::client::Client) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let r = ok(c, "stats", json!({})).await;
        if r["semantic"]["status"] == "ready" && r["embed_queue"] == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "the backlog never drained: {r}");
        let _ = c
            .call("search", json!({"query": "anything", "mode": "semantic"}))
            .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// (embedded, runs) so far.
fn encoded(h: &Harness) -> (u64, u64) {
    let s = h.engine.semantic().unwrap().stats();
    (s.embedded, s.runs)
}

fn note(i: usize) -> String {
    let topic = [
        "the billing export times out",
        "a flaky login test on staging",
        "the nightly backup ran out of disk",
        "the release notes need a review",
    ][i % 4];
    format!("note {i}: {topic}")
}

/// Writes a note and searches for it by meaning at once: it is the first
/// hit, and nothing is left `not_embedded` (read your writes).
async fn writes_and_reads_it_by_meaning(c: &mut scratchpad::client::Client) {
    let id = add(
        c,
        "team",
        "the TLS certificate for the api domain expires on Friday",
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = ok(
        c,
        "search",
        json!({"query": "renew the https cert soon", "mode": "semantic", "pad": "team", "limit": 2}),
    )
    .await;
    assert!(r.get("not_embedded").is_none(), "{r}");
    assert_eq!(hit_ids(&r).first(), Some(&id), "{r}");
}

/// Writes `n` notes to `pad`, one every `every`.
async fn stream(c: &mut scratchpad::client::Client, pad: &str, n: usize, every: Duration) {
    for i in 0..n {
        add(c, pad, &note(i)).await;
        tokio::time::sleep(every).await;
    }
}

/// 40 notes written 40 ms apart (the worker looks every 20 ms): today's
/// worker encoded each as it came, a batch per note; gathered, they go in
/// a few batches once the burst is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_notes_is_encoded_in_a_few_batches() {
    let h = Harness::with(both_encoders).await;
    let mut c = h.client().await;
    add(&mut c, "team", "warm up").await;
    settled(&mut c).await;
    let (e0, r0) = encoded(&h);
    let n = 40;
    stream(&mut c, "burst", n, Duration::from_millis(40)).await;
    settled(&mut c).await;
    let (e1, r1) = encoded(&h);
    println!("{n} notes 40 ms apart: {} batches", r1 - r0);
    assert_eq!(e1 - e0, n as u64);
    assert!(
        r1 - r0 <= n as u64 / 4,
        "{n} notes written 40 ms apart were encoded in {} batches",
        r1 - r0
    );
    h.stop().await;
}

/// While a note arrives every 10 ms (2.5 s), encoding waits, then runs
/// whole batches once `pace::HELD_AT_MOST` notes wait (today's worker ran
/// a batch each time it looked, every 20 ms, ~2 notes each); once the
/// stream stops, everything is encoded. The index is still saved as
/// often as configured meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_writes_holds_the_encoders_back() {
    let h = Harness::with(|c| {
        both_encoders(c);
        c.semantic.as_mut().unwrap().save_every = Duration::from_millis(50);
    })
    .await;
    let mut c = h.client().await;
    add(&mut c, "team", "warm up").await;
    settled(&mut c).await;
    let index = h
        .dir
        .path()
        .join("data")
        .join(scratchpad::semantic::INDEX_FILE);
    let saved = || std::fs::metadata(&index).and_then(|m| m.modified()).ok();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = saved();
    assert!(before.is_some(), "the index was never saved");
    let (e0, r0) = encoded(&h);
    let started = Instant::now();
    let mut written = 0;
    while started.elapsed() < Duration::from_millis(2500) {
        add(&mut c, "stream", &note(written)).await;
        written += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (e1, r1) = encoded(&h);
    let during = saved();
    assert!(
        e1 == e0 || during > before,
        "the index took new vectors during the stream but was not saved"
    );
    let (n, runs) = (e1 - e0, r1 - r0);
    println!("{n} of {written} notes encoded in {runs} batches while they streamed in");
    // Held back until `pace::HELD_AT_MOST` wait, then a whole batch (16):
    // a batch per few notes, never one per note as today's worker ran
    // (it looked every 20 ms: ~2 notes a batch). One short batch a second
    // besides.
    assert!(
        runs * 6 <= n + 12,
        "{n} notes were encoded in {runs} batches while they streamed in"
    );
    // And some held back: a whole batch (16) goes only once 24 wait.
    assert!(
        n + 8 <= written as u64,
        "{n} of {written} notes were encoded while they streamed in: none held back"
    );
    settled(&mut c).await;
    assert_eq!(encoded(&h).0 - e0, written as u64);
    h.stop().await;
}

/// A search that needs a note just written finds it by meaning while
/// other writes stream in (and the encoders yield to them): the search
/// hurries the worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_catches_up_while_writes_stream() {
    let h = Harness::with(both_encoders).await;
    let mut c = h.client().await;
    add(&mut c, "team", "warm up").await;
    settled(&mut c).await;
    let socket = h.socket.clone();
    let writer = tokio::spawn(async move {
        let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
        stream(&mut c, "stream", 60, Duration::from_millis(40)).await;
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    writes_and_reads_it_by_meaning(&mut c).await;
    writer.await.unwrap();
    h.stop().await;
}

/// A stream longer than the encoders' yield could hold (15 notes a second
/// for about 5 s: yielding alone, a short batch a second, would leave ~60
/// behind, past what a search waits for) and then a note and a search for
/// it: the search still reads its write by meaning, because runs never
/// hold back more than `pace::HELD_AT_MOST` notes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_after_a_long_stream_still_reads_its_write() {
    let h = Harness::with(both_encoders).await;
    let mut c = h.client().await;
    add(&mut c, "team", "warm up").await;
    settled(&mut c).await;
    stream(&mut c, "stream", 70, Duration::from_millis(66)).await;
    writes_and_reads_it_by_meaning(&mut c).await;
    h.stop().await;
}
