//! The engine on PostgreSQL: two engines (two data directories, two
//! sockets, as on two machines) sharing one real database.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::postgres::Postgres;
use common::{err, ok, Harness};
use serde_json::{json, Value};

async fn engine(pg: &Postgres) -> Harness {
    let url = pg.url();
    Harness::with(move |c| c.database = Some(url)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_writers_over_two_engines_store_every_entry_once() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let mut tasks = Vec::new();
    for h in [&a, &b] {
        for w in 0..8 {
            let mut c = h.client().await;
            tasks.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..500 {
                    let r = ok(
                        &mut c,
                        "entry.add",
                        json!({"pad": "team", "content": format!("writer {w} note {i}")}),
                    )
                    .await;
                    ids.push(r["entry"]["id"].as_str().unwrap().to_string());
                }
                ids
            }));
        }
    }
    let mut acknowledged = HashSet::new();
    for t in tasks {
        acknowledged.extend(t.await.unwrap());
    }
    assert_eq!(acknowledged.len(), 8_000, "ids are unique across engines");
    let mut c = b.client().await;
    let stored = common::all_ids(&mut c, "team").await;
    assert_eq!(
        stored, acknowledged,
        "engine B lists exactly what both acknowledged"
    );
    let pads = ok(&mut c, "pad.list", json!({})).await;
    assert_eq!(pads["pads"][0]["entries"], 8_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_across_engines_take_every_task_once() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let mut c = a.client().await;
    for i in 0..120 {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "jobs", "kind": "task", "content": format!("job {i}")}),
        )
        .await;
    }
    let mut tasks = Vec::new();
    for (h, name) in [(&a, "a"), (&b, "b")] {
        for w in 0..8 {
            let mut c = h.client().await;
            let agent = format!("{name}{w}");
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let r = ok(&mut c, "task.claim", json!({"pad": "jobs", "agent": agent})).await;
                    match r["entry"]["id"].as_str() {
                        Some(id) => got.push(id.to_string()),
                        None => return got,
                    }
                }
            }));
        }
    }
    let mut claimed = Vec::new();
    for t in tasks {
        claimed.extend(t.await.unwrap());
    }
    let unique: HashSet<_> = claimed.iter().collect();
    assert_eq!(claimed.len(), 120, "every task claimed, none twice");
    assert_eq!(unique.len(), 120);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_on_one_engine_reaches_subscribers_of_the_other() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let mut watcher = b.client().await;
    ok(&mut watcher, "subscribe", json!({"pads": ["team"]})).await;
    let mut c = a.client().await;
    let added = ok(
        &mut c,
        "entry.add",
        json!({"pad": "team", "content": "deploy is green"}),
    )
    .await;
    // 8,000 bytes: more than one NOTIFY carries.
    let big = "é".repeat(4_000);
    let eyes = ok(
        &mut c,
        "entry.add",
        json!({"pad": "elsewhere", "content": big, "tags": ["needs_eyes"]}),
    )
    .await;
    let mut seen: Vec<Value> = Vec::new();
    // Its `created` is outside the watcher's pads; its `needs_eyes` is not.
    while seen.len() < 2 {
        let ev = tokio::time::timeout(Duration::from_secs(10), watcher.next_event())
            .await
            .expect("events from engine A reach engine B")
            .expect("the subscription stays open")
            .expect("an event");
        seen.push(ev);
    }
    assert_eq!(seen[0]["type"], "created");
    assert_eq!(seen[0]["entry"]["id"], added["entry"]["id"]);
    // A needs_eyes entry on a pad the watcher did not ask for still reaches
    // it (needs_eyes bypasses filters), with its whole text (the payload was
    // too large for one NOTIFY).
    let needs: Vec<_> = seen.iter().filter(|e| e["type"] == "needs_eyes").collect();
    assert_eq!(needs.len(), 1, "{seen:?}");
    assert_eq!(needs[0]["entry"]["id"], eyes["entry"]["id"]);
    assert_eq!(
        needs[0]["entry"]["content"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        4_000
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_contract_holds_across_engines() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    let e = ok(
        &mut ca,
        "entry.add",
        json!({"pad": "p", "content": "Docker login fails behind the proxy", "tags": ["infra"]}),
    )
    .await;
    let id = e["entry"]["id"].as_str().unwrap().to_string();
    // if_version: the second writer of version 1 gets a conflict, on either engine.
    ok(
        &mut cb,
        "entry.update",
        json!({"id": id, "content": "fixed", "if_version": 1}),
    )
    .await;
    let (msg, _) = err(
        &mut ca,
        "entry.update",
        json!({"id": id, "content": "mine", "if_version": 1}),
        -32002,
    )
    .await;
    assert!(msg.contains("version 2"), "{msg}");
    ok(
        &mut cb,
        "entry.update",
        json!({"id": id, "content": "Docker login fails behind the proxy"}),
    )
    .await;
    // Text search: whole words, word beginnings, then substrings.
    for (query, pad_hit) in [
        ("login", true),
        ("dock", true),
        ("ocker", true),
        ("LOGIN proxy", true),
        ("kubernetes", false),
    ] {
        let r = ok(&mut cb, "search", json!({"query": query, "mode": "text"})).await;
        assert_eq!(
            !r["hits"].as_array().unwrap().is_empty(),
            pad_hit,
            "{query}: {r}"
        );
    }
    let tags = ok(&mut cb, "tags.list", json!({})).await;
    assert_eq!(tags["tags"][0]["tag"], "infra");
    // A token made on A is honoured on B; revoked on A, refused on B.
    let t = ok(
        &mut ca,
        "token.create",
        json!({"name": "ci", "pads": ["p"]}),
    )
    .await;
    let secret = t["secret"].as_str().unwrap().to_string();
    let mut agent = scratchpad::client::Client::connect(&b.socket)
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match agent.call("hello", json!({"token": secret})).await {
            Ok(_) => break,
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("token from engine A refused on B: {e}"),
        }
    }
    ok(&mut agent, "entry.get", json!({"id": id})).await;
    err(
        &mut agent,
        "entry.add",
        json!({"pad": "other", "content": "x"}),
        -32003,
    )
    .await;
    // A thread across engines, and plans, reports, export, inbox.
    ok(
        &mut cb,
        "entry.add",
        json!({"pad": "p", "content": "try the mirror", "reply_to": id, "author": "helper"}),
    )
    .await;
    let thread = ok(&mut ca, "entry.thread", json!({"id": id})).await;
    assert_eq!(thread["replies"].as_array().unwrap().len(), 1);
    assert_eq!(thread["entry"]["replies"], 1);
    let md = ok(&mut ca, "pad.export", json!({"name": "p"})).await;
    assert!(md["text"].as_str().unwrap().contains("try the mirror"));
    ok(&mut ca, "report", json!({"pad": "p"})).await;
    ok(&mut ca, "plan.order", json!({"pad": "p"})).await;
    ok(&mut ca, "inbox", json!({"author": "tester"})).await;
    // A deletion on one engine is seen on the other.
    ok(&mut ca, "entry.delete", json!({"id": id})).await;
    err(&mut cb, "entry.get", json!({"id": id}), -32001).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_that_goes_away_is_unavailable_then_back_by_itself() {
    let pg = Postgres::start();
    let a = engine(&pg).await;
    let mut c = a.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "before"}),
    )
    .await;
    pg.ctl("stop");
    let started = std::time::Instant::now();
    let (msg, _) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "during"}),
        -32005,
    )
    .await;
    assert!(msg.contains("PostgreSQL"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered within a client's timeout"
    );
    pg.ctl("start");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match c
            .call("entry.add", json!({"pad": "p", "content": "after"}))
            .await
        {
            Ok(_) => break,
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("the engine did not reconnect: {e}"),
        }
    }
    let ids = common::all_ids(&mut c, "p").await;
    assert_eq!(
        ids.len(),
        2,
        "before and after are stored; the refused write is not"
    );
}
