//! Every method of the protocol, through a real socket.

mod common;

use common::{add, err, ok, Harness};
use scratchpad::error::code;
use serde_json::{json, Value};

#[tokio::test]
async fn hello_names_the_server_and_sets_the_default_author() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let r = ok(
        &mut c,
        "hello",
        json!({"author": "Agent-0", "client": "a0"}),
    )
    .await;
    assert_eq!(r["server"], "scratchpad");
    assert_eq!(r["protocol"], 1);
    assert_eq!(r["author"], "agent-0");
    assert_eq!(r["pid"], std::process::id());
    let e = add(&mut c, "inbox", "hi").await;
    assert_eq!(e["author"], "agent-0", "hello's author is the default");
    let e = ok(
        &mut c,
        "entry.add",
        json!({"pad": "inbox", "content": "x", "author": "user"}),
    )
    .await;
    assert_eq!(e["entry"]["author"], "user", "an explicit author wins");
}

#[tokio::test]
async fn add_get_update_delete_round_trip() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let r = ok(
        &mut c,
        "entry.add",
        json!({"pad": "Proj-X", "content": "check the migration", "kind": "task",
               "tags": ["DB", "db", "needs_eyes"], "pinned": true, "meta": {"tokens": 12},
               "remind_in": 3600, "category": "gotcha", "confidence": 0.5}),
    )
    .await;
    let e = &r["entry"];
    let id = e["id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 12);
    assert_eq!(e["pad"], "proj-x");
    assert_eq!(e["kind"], "task");
    assert_eq!(e["status"], "todo", "tasks start as todo");
    assert_eq!(e["tags"], json!(["db", "needs_eyes"]));
    assert_eq!(e["pinned"], true);
    assert_eq!(e["meta"], json!({"tokens": 12}));
    assert_eq!(e["version"], 1);
    assert_eq!(e["category"], "gotcha");
    assert!(e["remind_at"].as_str().unwrap().ends_with('Z'));
    assert!(
        e["created_at"].as_str().unwrap().len() == 24,
        "RFC 3339 with ms: {}",
        e["created_at"]
    );

    let got = ok(&mut c, "entry.get", json!({"id": id})).await;
    assert_eq!(&got["entry"], e);
    let by_prefix = ok(&mut c, "entry.get", json!({"id": &id[..10]})).await;
    assert_eq!(
        by_prefix["entry"]["id"],
        id.as_str(),
        "a unique prefix is accepted"
    );

    let dep = add(&mut c, "proj-x", "first do this").await;
    let up = ok(
        &mut c,
        "entry.update",
        json!({"id": id, "content": "check the migration twice", "status": "doing", "tags": ["db"],
               "depends_on": [dep["id"]], "meta": null, "if_version": 1}),
    )
    .await;
    let u = &up["entry"];
    assert_eq!(u["content"], "check the migration twice");
    assert_eq!(u["status"], "doing");
    assert_eq!(u["tags"], json!(["db"]));
    assert_eq!(u["depends_on"], json!([dep["id"]]));
    assert_eq!(u["meta"], serde_json::Value::Null, "null clears meta");
    assert_eq!(u["pinned"], true, "absent fields are kept");
    assert_eq!(u["version"], 2);
    assert_eq!(u["created_at"], e["created_at"]);
    // remind_at: kept by an update that does not name it, cleared by null —
    // as stored, not only as answered.
    let stored = ok(&mut c, "entry.get", json!({"id": id})).await;
    assert_eq!(stored["entry"]["remind_at"], e["remind_at"]);
    ok(&mut c, "entry.update", json!({"id": id, "remind_at": null})).await;
    let stored = ok(&mut c, "entry.get", json!({"id": id})).await;
    assert_eq!(stored["entry"]["remind_at"], serde_json::Value::Null);
    ok(
        &mut c,
        "entry.update",
        json!({"id": id, "remind_at": "2030-01-02T03:04:05.678Z"}),
    )
    .await;
    let stored = ok(&mut c, "entry.get", json!({"id": id})).await;
    assert_eq!(stored["entry"]["remind_at"], "2030-01-02T03:04:05.678Z");

    let del = ok(&mut c, "entry.delete", json!({"id": id})).await;
    assert_eq!((&del["deleted"], &del["id"]), (&json!(true), &json!(id)));
    assert!(del["change"].is_i64(), "{del}");
    err(&mut c, "entry.get", json!({"id": id}), code::NOT_FOUND).await;
}

#[tokio::test]
async fn depends_on_refuses_cycles_and_unknown_ids() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let a = add(&mut c, "plan", "a").await;
    let b = ok(
        &mut c,
        "entry.add",
        json!({"pad": "plan", "content": "b", "depends_on": [a["id"]]}),
    )
    .await;
    let b_id = b["entry"]["id"].as_str().unwrap();
    let (msg, data) = err(
        &mut c,
        "entry.update",
        json!({"id": a["id"], "depends_on": [b_id]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("cycle") && msg.contains(b_id), "{msg}");
    assert_eq!(data["field"], "depends_on");
    err(
        &mut c,
        "entry.add",
        json!({"pad": "plan", "content": "c", "depends_on": ["000000000000"]}),
        code::NOT_FOUND,
    )
    .await;
}

#[tokio::test]
async fn list_filters_by_pad_tags_author_kind_status_and_since() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "1", "tags": ["x", "y"], "author": "ann"}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "2", "tags": ["x"], "kind": "task"}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "b", "content": "3", "tags": ["y"], "kind": "result"}),
    )
    .await;
    let contents = |r: &serde_json::Value| -> Vec<String> {
        r["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["content"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({})).await),
        ["3", "2", "1"],
        "newest first"
    );
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({"pad": "a"})).await),
        ["2", "1"]
    );
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({"tags": ["x", "y"]})).await),
        ["1"],
        "all tags must match"
    );
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({"tags": ["Y"]})).await),
        ["3", "1"]
    );
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({"author": "ann"})).await),
        ["1"]
    );
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({"kind": "result"})).await),
        ["3"]
    );
    assert_eq!(
        contents(&ok(&mut c, "entry.list", json!({"status": "todo"})).await),
        ["2"]
    );
    assert_eq!(
        contents(
            &ok(
                &mut c,
                "entry.list",
                json!({"since": "2999-01-01T00:00:00Z"})
            )
            .await
        )
        .len(),
        0
    );
    assert_eq!(
        contents(
            &ok(
                &mut c,
                "entry.list",
                json!({"since": "2000-01-01T00:00:00Z"})
            )
            .await
        )
        .len(),
        3
    );
}

#[tokio::test]
async fn pagination_returns_every_entry_exactly_once_even_while_others_write() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let mut writer = h.client().await;
    for i in 0..237 {
        add(&mut c, "big", &format!("entry {i}")).await;
    }
    let mut seen = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = json!({"pad": "big", "limit": 50});
        if let Some(cur) = &cursor {
            params["cursor"] = json!(cur);
        }
        let r = ok(&mut c, "entry.list", params).await;
        // Writes between pages land before the cursor and must not disturb it.
        add(&mut writer, "big", "written while paging").await;
        for e in r["entries"].as_array().unwrap() {
            assert!(
                seen.insert(e["id"].as_str().unwrap().to_string()),
                "entry listed twice"
            );
        }
        pages += 1;
        match r["next_cursor"].as_str() {
            Some(cur) => cursor = Some(cur.to_string()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 237);
    assert_eq!(pages, 5);
}

#[tokio::test]
async fn tags_pads_configure_touch_clear_export_stats() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "one", "tags": ["a", "b"]}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "two **bold**", "tags": ["a"], "pinned": true}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "inbox", "content": "mine", "tags": ["c"]}),
    )
    .await;

    let t = ok(&mut c, "tags.list", json!({})).await;
    assert_eq!(
        t["tags"],
        json!([{"tag": "a", "count": 2}, {"tag": "b", "count": 1}, {"tag": "c", "count": 1}])
    );
    let t = ok(&mut c, "tags.list", json!({"pad": "inbox"})).await;
    assert_eq!(t["tags"], json!([{"tag": "c", "count": 1}]));

    let pads = ok(&mut c, "pad.list", json!({})).await["pads"].clone();
    let inbox = pads
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "inbox")
        .unwrap();
    assert_eq!(
        inbox["ttl_seconds"],
        serde_json::Value::Null,
        "the inbox never expires"
    );
    assert_eq!(inbox["expires_at"], serde_json::Value::Null);
    let p = pads
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "p")
        .unwrap();
    assert_eq!(p["ttl_seconds"], 7200);
    assert_eq!(p["entries"], 2);
    assert_eq!(p["archived"], false);

    let r = ok(
        &mut c,
        "pad.configure",
        json!({"name": "p", "ttl_seconds": 60, "max_entries": 5}),
    )
    .await;
    assert_eq!(r["pad"]["ttl_seconds"], 60);
    assert_eq!(r["pad"]["max_entries"], 5);
    let r = ok(
        &mut c,
        "pad.configure",
        json!({"name": "fresh", "ttl_seconds": null}),
    )
    .await;
    assert_eq!(r["pad"]["entries"], 0, "configure creates a pad");
    assert_eq!(r["pad"]["expires_at"], serde_json::Value::Null);
    let r = ok(&mut c, "pad.touch", json!({"name": "p"})).await;
    assert_eq!(r["pad"]["name"], "p");
    err(
        &mut c,
        "pad.touch",
        json!({"name": "nope"}),
        code::NOT_FOUND,
    )
    .await;

    let md = ok(
        &mut c,
        "pad.export",
        json!({"name": "p", "format": "markdown"}),
    )
    .await;
    let text = md["text"].as_str().unwrap();
    assert!(text.starts_with("# Pad `p`"), "{text}");
    assert!(text.contains("two **bold**") && text.contains("#a #b") && text.contains("pinned"));
    assert!(
        text.find("two").unwrap() < text.find("one").unwrap(),
        "newest first within a section"
    );
    let js = ok(&mut c, "pad.export", json!({"name": "p", "format": "json"})).await;
    let parsed: serde_json::Value = serde_json::from_str(js["text"].as_str().unwrap()).unwrap();
    assert_eq!(parsed["entries"].as_array().unwrap().len(), 2);
    assert_eq!(js["entries"], 2);

    let s = ok(&mut c, "stats", json!({})).await;
    assert_eq!(s["entries"], 3);
    assert_eq!(s["pads"], 3);
    assert_eq!(s["tags"], 3);
    assert_eq!(s["connections"], 1);
    assert!(s["db_bytes"].as_u64().unwrap() > 0);
    assert!(s["journal_queue"].as_i64().is_some_and(|q| q >= 0));

    let r = ok(
        &mut c,
        "pad.clear",
        json!({"name": "p", "keep_pinned": true}),
    )
    .await;
    assert_eq!(r["deleted"], 1);
    let r = ok(&mut c, "pad.clear", json!({"name": "p"})).await;
    assert_eq!(r["deleted"], 1);
    assert_eq!(
        ok(&mut c, "entry.list", json!({"pad": "p"})).await["entries"],
        json!([])
    );
    assert_eq!(
        ok(&mut c, "search", json!({"query": "bold"})).await["hits"],
        json!([])
    );
    err(
        &mut c,
        "pad.clear",
        json!({"name": "nope"}),
        code::NOT_FOUND,
    )
    .await;
}

#[tokio::test]
async fn max_entries_keeps_a_rolling_window_but_never_drops_pinned() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "w", "max_entries": 3}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "w", "content": "keep me", "pinned": true}),
    )
    .await;
    for i in 0..6 {
        add(&mut c, "w", &format!("n{i}")).await;
    }
    let r = ok(&mut c, "entry.list", json!({"pad": "w"})).await;
    let contents: Vec<&str> = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["n5", "n4", "keep me"]);
    // The window survives a restart (it is cached in memory on the hot path).
    let h = h.restart().await;
    let mut c = h.client().await;
    add(&mut c, "w", "n6").await;
    let r = ok(&mut c, "entry.list", json!({"pad": "w"})).await;
    assert_eq!(r["entries"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn subscriptions_deliver_filtered_events_and_needs_eyes_to_everyone() {
    let h = Harness::start().await;
    let mut watcher = h.client().await;
    let mut other = h.client().await;
    let sub = ok(
        &mut watcher,
        "subscribe",
        json!({"pads": ["proj-*"], "kinds": ["note"]}),
    )
    .await;
    let sid = sub["subscription"].as_u64().unwrap();
    ok(&mut other, "subscribe", json!({"pads": ["elsewhere"]})).await;
    let mut w = h.client().await;

    add(&mut w, "unrelated", "not for the watcher").await;
    let e = add(&mut w, "proj-a", "for the watcher").await;
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "created");
    assert_eq!(ev["subscription"], sid);
    assert_eq!(ev["entry"]["id"], e["id"]);

    ok(
        &mut w,
        "entry.update",
        json!({"id": e["id"], "tags": ["needs_eyes"]}),
    )
    .await;
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "updated");
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "needs_eyes");
    // The other subscriber filters on another pad but still hears needs_eyes.
    let ev = other.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "needs_eyes");
    assert_eq!(ev["entry"]["id"], e["id"]);

    ok(&mut w, "entry.delete", json!({"id": e["id"]})).await;
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "deleted");
    assert_eq!(ev["entry"]["id"], e["id"]);

    ok(&mut watcher, "unsubscribe", json!({"subscription": sid})).await;
    err(
        &mut watcher,
        "unsubscribe",
        json!({"subscription": sid}),
        code::NOT_FOUND,
    )
    .await;
    add(&mut w, "proj-a", "after unsubscribe").await;
    // The connection still answers, and no event arrived before the answer.
    ok(&mut watcher, "stats", json!({})).await;
    let r = tokio::time::timeout(std::time::Duration::from_millis(200), watcher.next_event()).await;
    assert!(r.is_err(), "no events after unsubscribe: {r:?}");
}

#[tokio::test]
async fn a_slow_subscriber_gets_lagged_and_never_slows_writers() {
    let h = Harness::start().await;
    let mut slow = h.client().await;
    ok(&mut slow, "subscribe", json!({})).await;
    let mut w = h.client().await;
    // Far more events than the ring and the connection queue hold, while the
    // subscriber reads nothing.
    let chunks = (scratchpad::events::RING + 2000) / 500 + 1;
    let n = chunks * 500;
    let start = std::time::Instant::now();
    for chunk in 0..chunks {
        for i in 0..500 {
            w.send(
                "entry.add",
                json!({"pad": "flood", "content": format!("{chunk}-{i}")}),
            )
            .await
            .unwrap();
        }
        w.flush().await.unwrap();
        for _ in 0..500 {
            let (_, r) = w.response().await.unwrap();
            r.unwrap();
        }
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    let mut lagged = None;
    let mut created = 0;
    while let Ok(Some(ev)) =
        tokio::time::timeout(std::time::Duration::from_secs(2), slow.next_event())
            .await
            .unwrap_or(Ok(None))
    {
        match ev["type"].as_str().unwrap() {
            "lagged" => lagged = Some(ev["missed"].as_u64().unwrap()),
            "created" => created += 1,
            t => panic!("unexpected {t}"),
        }
        if created + lagged.unwrap_or(0) as usize >= n {
            break;
        }
    }
    let missed = lagged.expect("a lagged event arrived");
    assert!(missed > 0);
    assert_eq!(
        created + missed as usize,
        n,
        "every event was delivered or counted as missed"
    );
}

#[tokio::test]
async fn batches_and_pipelining_answer_every_request() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    c.send_raw(
        br#"[{"jsonrpc":"2.0","id":"a","method":"entry.add","params":{"pad":"b","content":"1"}},{"jsonrpc":"2.0","id":"b","method":"nope"},{"jsonrpc":"2.0","method":"entry.add","params":{"pad":"b","content":"notification"}}]
"#,
    )
    .await
    .unwrap();
    let r = c.read_message().await.unwrap();
    let arr = r.as_array().expect("a batch gets an array back");
    assert_eq!(arr.len(), 2, "notifications get no response");
    assert_eq!(arr[0]["id"], "a");
    assert!(arr[0]["result"]["entry"]["id"].is_string());
    assert_eq!(arr[1]["error"]["code"], code::METHOD_NOT_FOUND);

    for i in 0..100 {
        c.send("entry.add", json!({"pad": "b", "content": format!("p{i}")}))
            .await
            .unwrap();
    }
    c.flush().await.unwrap();
    let mut ids = Vec::new();
    for _ in 0..100 {
        let (id, r) = c.response().await.unwrap();
        r.unwrap();
        ids.push(id);
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "responses come back in request order");
    assert_eq!(ok(&mut c, "stats", json!({})).await["entries"], 102);
}

#[tokio::test]
async fn inbox_shows_new_needs_eyes_and_replies_by_others_once() {
    let h = Harness::start().await;
    let mut agent = h.client().await; // author "tester"
    let mut person = h.client().await;
    ok(&mut person, "hello", json!({"author": "user"})).await;

    // The first read starts the inbox: nothing from before it.
    add_tagged(&mut person, "old", &["needs_eyes"]).await;
    let r = ok(&mut agent, "inbox", json!({})).await;
    assert_eq!(r["author"], "tester");
    assert_eq!(
        (
            r["needs_eyes"].as_array().unwrap().len(),
            r["replies"].as_array().unwrap().len()
        ),
        (0, 0)
    );

    let mine = add(&mut agent, "work", "my finding").await;
    add_tagged(&mut agent, "my own poke", &["needs_eyes"]).await;
    let poke = add_tagged(&mut person, "please look at the migration", &["needs_eyes"]).await;
    let reply = ok(
        &mut person,
        "entry.add",
        json!({"pad": "work", "content": "good catch", "reply_to": mine["id"]}),
    )
    .await["entry"]
        .clone();
    // A reply to the person's own note is not the agent's business.
    ok(
        &mut agent,
        "entry.add",
        json!({"pad": "work", "content": "on it", "reply_to": poke["id"]}),
    )
    .await;

    let peek = ok(&mut agent, "inbox", json!({"peek": true})).await;
    let r = ok(&mut agent, "inbox", json!({})).await;
    assert_eq!(peek, r, "peeking does not move the cursor");
    let ids = |v: &Value| -> Vec<Value> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].clone())
            .collect()
    };
    assert_eq!(
        ids(&r["needs_eyes"]),
        vec![poke["id"].clone()],
        "others' pokes only: {r}"
    );
    assert_eq!(ids(&r["replies"]), vec![reply["id"].clone()], "{r}");
    let again = ok(&mut agent, "inbox", json!({})).await;
    assert!(
        again["needs_eyes"].as_array().unwrap().is_empty()
            && again["replies"].as_array().unwrap().is_empty()
    );
    // Anyone's inbox by name; the person sees nothing of their own.
    let theirs = ok(&mut agent, "inbox", json!({"author": "user", "peek": true})).await;
    assert_eq!(theirs["author"], "user");
}

async fn add_tagged(c: &mut scratchpad::client::Client, content: &str, tags: &[&str]) -> Value {
    ok(
        c,
        "entry.add",
        json!({"pad": "work", "content": content, "tags": tags}),
    )
    .await["entry"]
        .clone()
}

/// `entry.add` with `check_duplicates` stores the note and says which live
/// note of the pad it repeats; search shows exact copies once.
#[tokio::test]
async fn a_repeated_note_is_stored_and_said() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let text = "The nightly backup job failed at 02:00 because the disk was full.";
    let first = add(&mut c, "ops", text).await;
    add(&mut c, "ops", "Lunch order for Thursday is pizza.").await;
    add(
        &mut c,
        "elsewhere",
        "Reset the staging database before the demo.",
    )
    .await;
    let add_checked = |content: &str, pad: &str| json!({"pad": pad, "content": content, "check_duplicates": true});

    let r = ok(&mut c, "entry.add", add_checked(text, "ops")).await;
    assert_eq!(r["looks_like"]["id"], first["id"], "{r}");
    assert_eq!(r["looks_like"]["same"], "text");
    assert_eq!(r["looks_like"]["similarity"], 1.0);
    let copy = r["entry"]["id"].clone();
    assert_ne!(copy, first["id"], "stored all the same");
    ok(&mut c, "entry.get", json!({"id": copy})).await;

    let r = ok(
        &mut c,
        "entry.add",
        add_checked(
            "The nightly backup job failed at 02:00 because the disk is full.",
            "ops",
        ),
    )
    .await;
    assert_eq!(r["looks_like"]["same"], "words", "{r}");
    assert!(r["looks_like"]["similarity"].as_f64().unwrap() >= 0.8);

    for (content, pad) in [
        (
            "The nightly backup job succeeded after we freed space on the disk.",
            "ops",
        ),
        (
            "Lunch order for Friday is sushi and salad for everyone.",
            "ops",
        ),
        (text, "another-pad"), // another pad's notes are not this pad's duplicates
    ] {
        let r = ok(&mut c, "entry.add", add_checked(content, pad)).await;
        assert!(r.get("looks_like").is_none(), "{content}: {r}");
    }
    // Unasked, nothing is said.
    let r = ok(&mut c, "entry.add", json!({"pad": "ops", "content": text})).await;
    assert!(r.get("looks_like").is_none(), "{r}");
    let third = r["entry"]["id"].clone();

    // Search: the copies show once, naming the others.
    let r = ok(
        &mut c,
        "search",
        json!({"query": "backup disk full", "mode": "text", "pad": "ops"}),
    )
    .await;
    let hits = r["hits"].as_array().unwrap();
    let same: Vec<&Value> = hits
        .iter()
        .filter(|h| h["entry"]["content"] == text)
        .collect();
    assert_eq!(same.len(), 1, "{r}");
    let mut ids: Vec<Value> = same[0]["copies"].as_array().unwrap().clone();
    ids.push(same[0]["entry"]["id"].clone());
    for id in [&first["id"], &copy, &third] {
        assert!(
            ids.contains(id),
            "{id} is the hit or one of its copies: {r}"
        );
    }
    h.stop().await;
}

/// Exact copies fold into one hit before the page is cut: a page of 3 holds
/// 3 different hits while more match, however many copies rank on top.
#[tokio::test]
async fn a_page_is_full_though_copies_fold_into_one_hit() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for host in ["aa", "bb", "cc"] {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "ops", "content": format!("disk full on host {host}")}),
        )
        .await;
    }
    let mut copies = Vec::new();
    for _ in 0..3 {
        let r = ok(
            &mut c,
            "entry.add",
            json!({"pad": "ops", "content": "disk full on host zz"}),
        )
        .await;
        copies.push(r["entry"]["id"].clone());
    }
    for mode in ["text", "hybrid"] {
        let r = ok(
            &mut c,
            "search",
            json!({"query": "disk full", "mode": mode, "pad": "ops", "limit": 3}),
        )
        .await;
        let hits = r["hits"].as_array().unwrap();
        assert_eq!(hits.len(), 3, "{mode}: a full page of different notes: {r}");
        let zz = hits
            .iter()
            .find(|h| h["entry"]["content"] == "disk full on host zz")
            .expect("the copied note is a hit");
        assert_eq!(
            zz["copies"].as_array().map(Vec::len),
            Some(2),
            "{mode}: {r}"
        );
        let contents: std::collections::HashSet<_> =
            hits.iter().map(|h| h["entry"]["content"].clone()).collect();
        assert_eq!(contents.len(), 3, "{mode}: {r}");
    }
    h.stop().await;
}
