//! Many writers at once lose nothing; optimistic updates have one winner.

mod common;

use common::{ok, Harness};
use scratchpad::error::code;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_clients_times_500_writes_leave_exactly_4000_entries() {
    let h = Harness::start().await;
    let mut tasks = Vec::new();
    for client in 0..8 {
        let mut c = h.client().await;
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::with_capacity(500);
            for i in 0..500 {
                let r = c
                    .call("entry.add", json!({"pad": "hammer", "content": format!("c{client} w{i}"), "tags": [format!("c{client}")]}))
                    .await
                    .expect("write acknowledged");
                ids.push(r["entry"]["id"].as_str().unwrap().to_string());
            }
            ids
        }));
    }
    let mut all = std::collections::HashSet::new();
    for t in tasks {
        for id in t.await.unwrap() {
            assert!(all.insert(id), "ids are unique");
        }
    }
    assert_eq!(all.len(), 4000);
    let mut c = h.client().await;
    let pads = ok(&mut c, "pad.list", json!({})).await;
    assert_eq!(pads["pads"][0]["entries"], 4000, "the pad's count agrees");
    let tags = ok(&mut c, "tags.list", json!({"pad": "hammer"})).await;
    for t in tags["tags"].as_array().unwrap() {
        assert_eq!(t["count"], 500, "{t}");
    }
    // Every entry is listable, and exactly once.
    let listed = common::all_ids(&mut c, "hammer").await;
    assert_eq!(listed, all);
    let hits = ok(
        &mut c,
        "search",
        json!({"query": "c7 w49", "pad": "hammer", "limit": 200}),
    )
    .await;
    // c7 w49 and w490-w499 first (every word, as a word or its beginning),
    // then notes with some of the words.
    let hits = hits["hits"].as_array().unwrap();
    let both = hits
        .iter()
        .take_while(|h| {
            let text = h["entry"]["content"].as_str().unwrap();
            text.split_whitespace().any(|w| w == "c7")
                && text.split_whitespace().any(|w| w.starts_with("w49"))
        })
        .count();
    assert_eq!(both, 11, "{hits:?}");
    assert_eq!(hits.len(), 200, "then some of the words");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_if_version_updates_have_exactly_one_winner() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for round in 0..20 {
        let e = common::add(&mut c, "race", "start").await;
        let id = e["id"].as_str().unwrap().to_string();
        let mut tasks = Vec::new();
        for n in 0..8 {
            let mut c = h.client().await;
            let id = id.clone();
            tasks.push(tokio::spawn(async move {
                c.call(
                    "entry.update",
                    json!({"id": id, "content": format!("writer {n}"), "if_version": 1}),
                )
                .await
            }));
        }
        let mut winners = Vec::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(r) => winners.push(r["entry"]["content"].as_str().unwrap().to_string()),
                Err(e) => assert_eq!(e.code(), Some(code::CONFLICT), "losers get a conflict: {e}"),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one winner, got {winners:?}"
        );
        let now = ok(&mut c, "entry.get", json!({"id": id})).await;
        assert_eq!(now["entry"]["version"], 2);
        assert_eq!(
            now["entry"]["content"],
            winners[0].as_str(),
            "the winner's write is the one kept"
        );
    }
}
