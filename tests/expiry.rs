//! Expiry with a test clock: archive after the TTL, restore, purge after
//! retention, pinned entries survive. No sleeping: the clock is moved.

mod common;

use std::time::Duration;

use common::{add, ok, Harness};
use scratchpad::clock::Clock;
use serde_json::json;

const START: i64 = 1_900_000_000_000;

/// The pad called `name` in a `pad.list` result.
fn pad_named(list: &serde_json::Value, name: &str) -> serde_json::Value {
    list["pads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no pad {name} in {list}"))
        .clone()
}

#[tokio::test]
async fn idle_pads_are_archived_hidden_restorable_and_purged_after_retention() {
    let clock = Clock::manual(START);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    let mut watcher = h.client().await;
    ok(&mut watcher, "subscribe", json!({"pads": ["session-1"]})).await;

    add(&mut c, "session-1", "temporary finding about tokens").await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "session-1", "content": "pinned tokens insight", "pinned": true}),
    )
    .await;
    add(&mut c, "inbox", "the person's own tokens note").await;
    add(&mut c, "session-2", "tokens too").await;
    assert_eq!(
        watcher.next_event().await.unwrap().unwrap()["type"],
        "created"
    );
    assert_eq!(
        watcher.next_event().await.unwrap().unwrap()["type"],
        "created"
    );

    // 1h59m: nothing expires. Writes touch: session-2 gets a fresh write.
    clock.advance(Duration::from_secs(7140));
    add(&mut c, "session-2", "still alive").await;
    assert!(h.engine.sweep().await.unwrap().archived.is_empty());

    // 2h01m: session-1 is idle past its 2 h TTL; session-2 is not; inbox never.
    clock.advance(Duration::from_secs(120));
    let swept = h.engine.sweep().await.unwrap();
    assert_eq!(swept.archived, vec!["session-1"]);
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "pad_expired");
    assert_eq!(ev["pad"], "session-1");

    // Hidden from lists, tags and search; visible with include_archived.
    let pads = ok(&mut c, "pad.list", json!({})).await;
    let names: Vec<&str> = pads["pads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"session-1") && names.contains(&"inbox") && names.contains(&"session-2"),
        "{names:?}"
    );
    let all = ok(&mut c, "pad.list", json!({"include_archived": true})).await;
    let archived = pad_named(&all, "session-1");
    assert_eq!(archived["archived"], true);
    assert_eq!(
        ok(&mut c, "entry.list", json!({"pad": "session-1"})).await["entries"],
        json!([])
    );
    let hits = ok(&mut c, "search", json!({"query": "tokens"})).await;
    assert_eq!(
        hits["hits"].as_array().unwrap().len(),
        2,
        "only live pads (inbox, session-2): {hits}"
    );
    assert!(hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["entry"]["pad"] != "session-1"));

    // Restorable: pad.configure brings it back with everything in it.
    ok(&mut c, "pad.configure", json!({"name": "session-1"})).await;
    assert_eq!(
        ok(&mut c, "entry.list", json!({"pad": "session-1"})).await["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Expire again, then wait out the 7-day retention.
    clock.advance(Duration::from_secs(7201));
    let swept = h.engine.sweep().await.unwrap();
    assert!(swept.archived.contains(&"session-1".to_string()));
    clock.advance(Duration::from_secs(6 * 86400));
    let swept = h.engine.sweep().await.unwrap();
    assert_eq!(
        (swept.purged_entries, swept.purged_pads),
        (0, 0),
        "not yet: 6 days"
    );
    clock.advance(Duration::from_secs(86400 + 1));
    let swept = h.engine.sweep().await.unwrap();
    // session-1's unpinned entry goes; session-2 (archived at the same time, no pins) goes whole.
    assert_eq!(swept.purged_entries, 3);
    assert_eq!(swept.purged_pads, 1);

    // The pinned entry survives, its pad still archived and restorable.
    let all = ok(&mut c, "pad.list", json!({"include_archived": true})).await;
    let s1 = pad_named(&all, "session-1");
    assert_eq!(s1["entries"], 1);
    ok(&mut c, "pad.configure", json!({"name": "session-1"})).await;
    let left = ok(&mut c, "entry.list", json!({"pad": "session-1"})).await;
    assert_eq!(left["entries"][0]["content"], "pinned tokens insight");
    assert!(all["pads"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["name"] != "session-2"));
    // The inbox never expires.
    assert_eq!(
        ok(&mut c, "entry.list", json!({"pad": "inbox"})).await["entries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Purged entries are gone from search too.
    let hits = ok(&mut c, "search", json!({"query": "tokens"})).await;
    assert_eq!(hits["hits"].as_array().unwrap().len(), 2, "{hits}");
}

#[tokio::test]
async fn a_write_to_an_archived_pad_restores_it_and_ttl_is_configurable() {
    let clock = Clock::manual(START);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "short", "ttl_seconds": 60}),
    )
    .await;
    add(&mut c, "short", "a").await;
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "forever", "ttl_seconds": null}),
    )
    .await;
    add(&mut c, "forever", "b").await;
    clock.advance(Duration::from_secs(61));
    assert_eq!(h.engine.sweep().await.unwrap().archived, vec!["short"]);
    add(&mut c, "short", "c").await;
    let r = ok(&mut c, "entry.list", json!({"pad": "short"})).await;
    assert_eq!(
        r["entries"].as_array().unwrap().len(),
        2,
        "writing restored the pad with its entries"
    );
    clock.advance(Duration::from_secs(365 * 86400));
    let swept = h.engine.sweep().await.unwrap();
    assert_eq!(
        swept.archived,
        vec!["short"],
        "a pad with ttl null never expires"
    );
}

#[tokio::test]
async fn an_entry_written_this_millisecond_counts_in_the_last_minute_of_activity() {
    // The clock stands still: the write and the stats share one millisecond.
    let clock = Clock::manual(START);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    add(&mut c, "now", "written right now").await;
    let s = ok(&mut c, "stats", json!({"activity": true})).await;
    let per_minute = s["activity"]["entries_per_minute"].as_array().unwrap();
    assert_eq!(per_minute.len(), 60);
    assert_eq!(per_minute[59], 1, "{per_minute:?}");
    assert_eq!(s["activity"]["entries_last_hour"], 1);
}
