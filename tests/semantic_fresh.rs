//! Read-your-writes by meaning: a note is found by meaning in the search
//! right after its write, and when a flood of writes outruns the embedding
//! the search answers at once with the count it could not see.

mod common;

use std::time::Duration;

use common::*;
use scratchpad::semantic::{Precision, SETTLE_MAX_BACKLOG};
use serde_json::json;

#[path = "common/notes.rs"]
mod notes;
use notes::near_duplicates;

/// Waits until meaning search sees everything written (each search wakes
/// the worker, which the slow poll below would not).
async fn settled(c: &mut scratchpad::client::Client) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let r = c
            .call("search", json!({"query": "anything", "mode": "semantic"}))
            .await;
        match &r {
            Ok(r) if r.get("not_embedded").is_none() => return,
            Ok(_) => {}
            Err(e) => assert!(e.to_string().contains("loading"), "{e}"),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the backlog never drained: {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// With a poll period far longer than the test, only the search itself can
/// make the worker embed what was just written.
///
/// (These tests share no binary with CPU-heavy ones: the embedding worker
/// runs on idle CPU only, and a busy neighbour test would starve it.)
fn slow_poll(c: &mut scratchpad::Config) {
    let mut s = semantic_config(Precision::Int8);
    s.poll_every = Duration::from_secs(60);
    c.semantic = Some(s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_right_after_a_write_finds_it_by_meaning() {
    let h = Harness::with(slow_poll).await;
    let mut c = h.client().await;
    for note in near_duplicates(200) {
        add(&mut c, "team", &note).await;
    }
    settled(&mut c).await;
    let pairs = [
        (
            "docker login to the registry fails with 401",
            "cannot authenticate to the container registry",
        ),
        (
            "the nightly backup ran out of disk space",
            "backups stop because the volume is full",
        ),
        (
            "Maria is responsible for shipping version 2.3",
            "who owns the release",
        ),
        (
            "several users were charged twice this month",
            "customers billed double",
        ),
        (
            "TLS certificate for the api domain expires on Friday",
            "renew the https cert soon",
        ),
    ];
    for (note, query) in pairs {
        let id = add(&mut c, "team", note).await["id"]
            .as_str()
            .unwrap()
            .to_string();
        // Hybrid fuses the words too: "billed" also finds the twenty
        // "billing-api" notes by its form "billing" (`terms::forms_of`),
        // which may rank first; the note just written is still a hit.
        for (mode, limit) in [("semantic", 5), ("hybrid", 10)] {
            let r = ok(
                &mut c,
                "search",
                json!({"query": query, "mode": mode, "pad": "team", "limit": limit}),
            )
            .await;
            assert!(
                hit_ids(&r).contains(&id),
                "{mode}: '{query}' right after writing '{note}': {r}"
            );
            assert!(r.get("not_embedded").is_none(), "{r}");
        }
    }
    // An edit, too: found by the meaning of its new words.
    let e = add(&mut c, "team", "the weather in Lisbon is lovely").await;
    ok(
        &mut c,
        "entry.update",
        json!({"id": e["id"], "content": "the coffee machine on the third floor is broken again"}),
    )
    .await;
    let r = ok(
        &mut c,
        "search",
        json!({"query": "kitchen appliance out of order", "mode": "semantic", "pad": "team", "limit": 3}),
    )
    .await;
    assert!(
        hit_ids(&r).contains(&e["id"].as_str().unwrap().to_string()),
        "{r}"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_is_answered_at_once_with_what_is_not_embedded_yet() {
    let h = Harness::with(slow_poll).await;
    let mut c = h.client().await;
    add(&mut c, "team", "warm up").await;
    settled(&mut c).await;
    // The query once before the flood, so its embedding is cached: what is
    // timed below is the search's wait for the backlog, not the query's
    // embedding, which on a machine busy with other work can queue behind
    // a batch of the backlog running on idle CPU (seconds beside
    // `stress-ng`).
    let query = json!({"query": "checkout crashes", "mode": "semantic"});
    ok(&mut c, "search", query.clone()).await;
    let flood = 400;
    for note in near_duplicates(flood) {
        add(&mut c, "flood", &note).await;
    }
    let started = std::time::Instant::now();
    let r = ok(&mut c, "search", query).await;
    let waited = started.elapsed();
    let left = r["not_embedded"]
        .as_u64()
        .expect("the count of entries not embedded yet");
    assert!(
        left > SETTLE_MAX_BACKLOG as u64 && left <= flood as u64,
        "{left} of {flood} not embedded"
    );
    // Quiet: a few ms. Waiting out the 2 s bound would take 2 s.
    assert!(
        waited < Duration::from_millis(1500),
        "a flooded search answers at once, without waiting out its 2 s bound ({waited:?})"
    );
    // A token that may read only `team` is told of its pads' backlog, not
    // the store's (the third hostile pass: 300 notes of a pad it could not
    // read were counted to it).
    let secret = ok(
        &mut c,
        "token.create",
        json!({"name": "team-agent", "pads": ["team"]}),
    )
    .await;
    let mut scoped = scratchpad::client::Client::connect(&h.socket)
        .await
        .unwrap();
    ok(&mut scoped, "hello", json!({"token": secret["secret"]})).await;
    let r = ok(
        &mut scoped,
        "search",
        json!({"query": "checkout crashes", "mode": "semantic"}),
    )
    .await;
    assert!(
        r.get("not_embedded").is_none(),
        "the flood of another pad counted: {r}"
    );
    // Text search sees them all the while; meaning search once embedded.
    let r = ok(
        &mut c,
        "search",
        json!({"query": "ticket", "mode": "text", "pad": "flood", "limit": 1}),
    )
    .await;
    assert_eq!(hit_ids(&r).len(), 1);
    settled(&mut c).await;
    let r = ok(
        &mut c,
        "search",
        json!({"query": "checkout crashes", "mode": "semantic"}),
    )
    .await;
    assert!(r.get("not_embedded").is_none(), "{r}");

    // The CLI says it on stderr (and nothing when all is embedded).
    for note in near_duplicates(flood) {
        add(&mut c, "flood", &format!("{note} again")).await;
    }
    let out = pad(&h.dir.path().join("data"), &h.socket)
        .args(["search", "checkout crashes", "--mode", "semantic"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("not yet searchable by meaning") && err.contains("--mode text"),
        "{err}"
    );
    h.stop().await;
}

/// A lasting backlog is split with a second copy of the model
/// (`semantic/backlog.rs`, forced here, busy machine or not): every note
/// still gets its own vector — each, searched by its own text, comes first
/// — and the copy did embed some of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_split_with_a_second_model_keeps_each_note_its_own_vector() {
    let h = Harness::with(|c| {
        let mut s = semantic_config(Precision::Int8);
        s.helper = scratchpad::semantic::Helper::Always;
        c.semantic = Some(s);
    })
    .await;
    let mut c = h.client().await;
    // Distinct notes of unlike lengths, so a vector given to the wrong note
    // is found.
    let notes: Vec<String> = (0..160)
        .map(|i| {
            let topic = [
                "the billing export",
                "a flaky login test",
                "the staging database",
                "our release notes",
            ][i % 4];
            format!(
                "{} note {i}: {topic}{}",
                ["alice", "bob"][i % 2],
                " and more".repeat(i % 7)
            )
        })
        .collect();
    for note in &notes {
        c.send("entry.add", json!({"pad": "flood", "content": note}))
            .await
            .unwrap();
    }
    c.flush().await.unwrap();
    for _ in &notes {
        c.response().await.unwrap().1.unwrap();
    }
    settled(&mut c).await;
    let on_copy = h.engine.semantic().unwrap().stats().on_copy;
    assert!(on_copy > 0, "the second copy embedded none of 160 notes");
    for note in notes.iter().step_by(7) {
        // The text as it was embedded (`embedded_text`): its own vector
        // answers it at a cosine of ~1.
        let query = scratchpad::semantic::vector::embedded_text("tester", note);
        let r = ok(
            &mut c,
            "search",
            json!({"query": query, "mode": "semantic", "pad": "flood", "limit": 1}),
        )
        .await;
        assert_eq!(r["hits"][0]["entry"]["content"], json!(note), "{r}");
    }
    h.stop().await;
}

/// A search's own query is embedded at once even while the backlog's run
/// holds the model and gets no CPU: here the machine turns busy (spinning
/// threads at normal priority, twice the cores) while a run of the backlog
/// is under way at idle priority. The worker used to wait for that run
/// (tens of seconds); a query now waits a run's length at most and is then
/// embedded on a model of its own, at normal priority.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_query_never_waits_behind_a_starved_backlog() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    add(&mut c, "team", "warm up").await;
    settled(&mut c).await;
    let flood = 400;
    for note in near_duplicates(flood) {
        add(&mut c, "flood", &note).await;
    }
    let busy = Arc::new(AtomicBool::new(true));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let hogs: Vec<_> = (0..2 * cores)
        .map(|_| {
            let busy = busy.clone();
            std::thread::spawn(move || {
                // Bounded, so a stuck worker fails the test rather than hangs it.
                let until = std::time::Instant::now() + Duration::from_secs(45);
                while busy.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    // A run of the backlog is now starved.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    let r = c
        .call(
            "search",
            json!({"query": "why does checkout crash at night", "mode": "semantic"}),
        )
        .await;
    let waited = started.elapsed();
    busy.store(false, Ordering::Relaxed);
    for hog in hogs {
        hog.join().unwrap();
    }
    let r = r.unwrap();
    println!("a fresh query behind a starved backlog: answered in {waited:?}");
    assert!(
        r["not_embedded"].as_u64().is_some_and(|n| n > 0),
        "the backlog was still being embedded: {r}"
    );
    // Busy (with `stress-ng` beside it too): a model loaded and a query
    // embedded at normal priority, a second or two. The run it would have
    // waited for gets next to no CPU until the spinning stops (45 s).
    assert!(
        waited < Duration::from_secs(20),
        "a fresh query waited {waited:?} behind the backlog"
    );
    h.stop().await;
}
