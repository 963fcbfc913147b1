//! Every bad input gets the right code and an instructive message, and the
//! connection stays usable afterwards.

mod common;

use common::{add, err, ok, Harness};
use scratchpad::client::Client;
use scratchpad::error::code;
use serde_json::{json, Value};

/// The connection still works: a real call succeeds on it.
async fn still_usable(c: &mut Client) {
    let r = ok(c, "hello", json!({})).await;
    assert_eq!(r["server"], "scratchpad");
}

async fn raw(c: &mut Client, line: &[u8]) -> Value {
    c.send_raw(line).await.unwrap();
    c.read_message().await.unwrap()
}

#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let r = raw(&mut c, b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n").await;
    assert_eq!(r["error"]["code"], code::PARSE);
    assert_eq!(r["id"], Value::Null);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("not valid JSON") && msg.contains("one JSON-RPC"),
        "{msg}"
    );
    still_usable(&mut c).await;
}

#[tokio::test]
async fn invalid_requests_say_what_a_request_looks_like() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for (line, needle) in [
        (&b"42\n"[..], "JSON object"),
        (b"[]\n", "empty batch"),
        (b"{\"id\":1,\"method\":\"hello\"}\n", "jsonrpc"),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1}\n", "method"),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"hello\"}\n",
            "'id'",
        ),
    ] {
        let r = raw(&mut c, line).await;
        assert_eq!(
            r["error"]["code"],
            code::INVALID_REQUEST,
            "{}",
            String::from_utf8_lossy(line)
        );
        assert!(
            r["error"]["message"].as_str().unwrap().contains(needle),
            "{r}"
        );
    }
    still_usable(&mut c).await;
}

/// A request is read two ways — straight into its parts when well formed,
/// as a JSON value otherwise — and every shape JSON-RPC allows is answered
/// the same either way.
#[tokio::test]
async fn every_request_shape_is_answered_alike() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    // An explicit null id is owed an answer, with that id.
    let r = raw(
        &mut c,
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"hello\"}\n",
    )
    .await;
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["result"]["server"], "scratchpad", "{r}");
    // No id: a notification, not answered (the next answer is the next call's).
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"entry.add\",\"params\":{\"pad\":\"shapes\",\"content\":\"told\"}}\n")
        .await
        .unwrap();
    let r = raw(&mut c, b"{\"jsonrpc\":\"2.0\",\"id\":\"s\\u0031\",\"method\":\"entry\\u002elist\",\"params\":{\"pad\":\"shapes\"},\"extra\":true}\n").await;
    // An escaped id and method name, and a field JSON-RPC does not define.
    assert_eq!(r["id"], "s1", "{r}");
    let entries = r["result"]["entries"].as_array().expect("a list");
    assert_eq!(entries.len(), 1, "the notification's note was written: {r}");
    assert_eq!(entries[0]["content"], "told");
    // A repeated field: the last one holds, as in a JSON value.
    let r = raw(&mut c, b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"entry.add\",\"params\":{\"pad\":\"first\",\"content\":\"twice\",\"pad\":\"shapes\"}}\n").await;
    assert_eq!(r["result"]["entry"]["pad"], "shapes", "{r}");
    let r = raw(
        &mut c,
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"id\":4,\"method\":\"hello\"}\n",
    )
    .await;
    assert_eq!(r["id"], 4, "{r}");
    // Params null are no params; params that are not an object are refused.
    let r = raw(
        &mut c,
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"stats\",\"params\":null}\n",
    )
    .await;
    assert!(r["result"].is_object(), "{r}");
    let r = raw(
        &mut c,
        b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"entry.add\",\"params\":[\"shapes\",\"x\"]}\n",
    )
    .await;
    assert_eq!(r["error"]["code"], code::INVALID_PARAMS, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("must be an object of named fields, not an array"),
        "{msg}"
    );
    // Another version of JSON-RPC is refused, with the id it came with.
    let r = raw(
        &mut c,
        b"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"hello\"}\n",
    )
    .await;
    assert_eq!(r["error"]["code"], code::INVALID_REQUEST, "{r}");
    assert_eq!(r["id"], 7);
    // Wrong params name their field, whichever way they were read.
    let r = raw(&mut c, b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"entry.add\",\"params\":{\"pad\":\"shapes\",\"content\":7}}\n").await;
    assert_eq!(r["error"]["code"], code::INVALID_PARAMS, "{r}");
    assert_eq!(r["error"]["data"]["field"], "content", "{r}");
    still_usable(&mut c).await;
}

#[tokio::test]
async fn unknown_method_lists_the_methods() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let (msg, data) = err(&mut c, "entry_add", json!({}), code::METHOD_NOT_FOUND).await;
    assert!(msg.contains("Did you mean 'entry.add'"), "{msg}");
    assert_eq!(data["got"], "entry_add");
    still_usable(&mut c).await;
}

#[tokio::test]
async fn unknown_fields_and_wrong_types_name_the_field() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "tagz": ["a"]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "tagz");
    assert!(
        msg.contains("unknown field `tagz`") && msg.contains("`tags`"),
        "{msg}"
    );

    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": 5}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "content");
    assert!(msg.contains("expected a string"), "{msg}");

    let (_, data) = err(
        &mut c,
        "entry.list",
        json!({"limit": "ten"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "limit");
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "kind": "memo"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "kind");
    assert!(
        msg.contains("memo") && msg.contains("insight"),
        "lists the kinds: {msg}"
    );
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"content": "x"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "pad");
    assert!(msg.contains("missing field `pad`"), "{msg}");
    let (msg, _) = err(
        &mut c,
        "entry.add",
        json!(["inbox", "x"]),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("object of named fields"), "{msg}");
    still_usable(&mut c).await;
}

#[tokio::test]
async fn tag_rules_explain_the_limit() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let eleven: Vec<String> = (0..11).map(|i| format!("t{i}")).collect();
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "tags": eleven}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(
        msg.contains("11 tags") && msg.contains("limit is 10"),
        "{msg}"
    );
    assert_eq!(data, json!({"field": "tags", "limit": 10, "got": 11}));

    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "tags": ["no spaces"]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(
        msg.contains("' '") && msg.contains("a-z, 0-9, '_' and '-'") && msg.contains("no-spaces"),
        "{msg}"
    );
    assert_eq!(data["field"], "tags");
    let (_, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "tags": ["x".repeat(33)]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["limit"], 32);
    still_usable(&mut c).await;
}

#[tokio::test]
async fn pad_names_cannot_escape() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for bad in ["../x", "a/b", "has space", "", ".."] {
        let (msg, data) = err(
            &mut c,
            "entry.add",
            json!({"pad": bad, "content": "x"}),
            code::INVALID_PARAMS,
        )
        .await;
        assert_eq!(data["field"], "pad", "{bad}: {msg}");
        assert!(msg.contains("pad"), "{msg}");
    }
    let (msg, _) = err(
        &mut c,
        "entry.add",
        json!({"pad": "../x", "content": "x"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("'/'") || msg.contains("'.'"), "{msg}");
    assert_eq!(
        ok(&mut c, "pad.list", json!({"include_archived": true})).await["pads"],
        json!([])
    );
    still_usable(&mut c).await;
}

#[tokio::test]
async fn content_and_meta_over_their_limits_are_too_large() {
    let h = Harness::with(|c| c.max_content_chars = 100).await;
    let mut c = h.client().await;
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "é".repeat(101)}),
        code::TOO_LARGE,
    )
    .await;
    assert!(
        msg.contains("101 characters") && msg.contains("limit is 100") && msg.contains("Split"),
        "{msg}"
    );
    assert_eq!(data, json!({"field": "content", "limit": 100, "got": 101}));
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "é".repeat(100)}),
    )
    .await;

    let big = json!({"blob": "x".repeat(17 * 1024)});
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "meta": big}),
        code::TOO_LARGE,
    )
    .await;
    assert!(msg.contains("16384"), "{msg}");
    assert_eq!(data["field"], "meta");
    let (_, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "  "}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "content");
    still_usable(&mut c).await;
}

/// `{"k": {"k": … 1}}`, `levels` objects deep.
fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = json!({ "k": v });
    }
    v
}

#[tokio::test]
async fn meta_nested_past_its_depth_is_refused_and_every_note_stays_readable() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    // 125 levels was accepted once, and then no Rust client (the CLI, the
    // MCP server, the app) could read the pad back: they stop at 128.
    for levels in [33, 125] {
        let (msg, data) = err(
            &mut c,
            "entry.add",
            json!({"pad": "deep", "content": "x", "meta": nested(levels)}),
            code::INVALID_PARAMS,
        )
        .await;
        assert!(
            msg.contains(&format!("nests {levels} levels")) && msg.contains("limit is 32"),
            "{msg}"
        );
        assert_eq!(data, json!({"field": "meta", "limit": 32, "got": levels}));
    }
    let kept = add(&mut c, "deep", "as deep as allowed").await["id"].clone();
    let (msg, _) = err(
        &mut c,
        "entry.update",
        json!({"id": kept, "meta": nested(60)}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("nests 60 levels"), "{msg}");
    // Arrays count as levels too.
    let mut v = json!([1]);
    for _ in 0..40 {
        v = json!([v]);
    }
    err(
        &mut c,
        "entry.add",
        json!({"pad": "deep", "content": "x", "meta": {"list": v}}),
        code::INVALID_PARAMS,
    )
    .await;
    ok(
        &mut c,
        "entry.update",
        json!({"id": kept, "meta": nested(32)}),
    )
    .await;
    let listed = ok(&mut c, "entry.list", json!({"pad": "deep"})).await;
    assert_eq!(listed["entries"][0]["meta"], nested(32));
    still_usable(&mut c).await;
}

#[tokio::test]
async fn a_line_over_one_mebibyte_is_refused_and_the_connection_survives() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let mut line =
        br#"{"jsonrpc":"2.0","id":1,"method":"entry.add","params":{"pad":"a","content":""#.to_vec();
    line.extend(std::iter::repeat_n(b'x', 1024 * 1024 + 10));
    line.extend(b"\"}}\n");
    let r = raw(&mut c, &line).await;
    assert_eq!(r["error"]["code"], code::TOO_LARGE);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("1 MiB"),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["limit"], 1024 * 1024);
    still_usable(&mut c).await;
    assert_eq!(
        ok(&mut c, "stats", json!({})).await["entries"],
        0,
        "nothing of the long line was stored"
    );
}

#[tokio::test]
async fn unknown_ids_and_bad_ids_are_told_apart() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let (msg, data) = err(
        &mut c,
        "entry.get",
        json!({"id": "000000000000"}),
        code::NOT_FOUND,
    )
    .await;
    assert!(msg.contains("no entry with id"), "{msg}");
    assert_eq!(data["field"], "id");
    let (msg, _) = err(
        &mut c,
        "entry.get",
        json!({"id": "../etc/passwd"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("not an entry id"), "{msg}");
    err(
        &mut c,
        "entry.update",
        json!({"id": "000000000000", "content": "x"}),
        code::NOT_FOUND,
    )
    .await;
    err(
        &mut c,
        "entry.delete",
        json!({"id": "000000000000"}),
        code::NOT_FOUND,
    )
    .await;
    // A prefix shared by two entries is ambiguous, not "not found".
    let a = add(&mut c, "p", "a").await;
    add(&mut c, "p", "b").await;
    let (msg, _) = err(
        &mut c,
        "entry.get",
        json!({"id": &a["id"].as_str().unwrap()[..3]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("matches several"), "{msg}");
    still_usable(&mut c).await;
}

#[tokio::test]
async fn a_stale_if_version_is_a_conflict_that_changes_nothing() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let e = add(&mut c, "p", "v1").await;
    ok(
        &mut c,
        "entry.update",
        json!({"id": e["id"], "content": "v2", "if_version": 1}),
    )
    .await;
    let (msg, data) = err(
        &mut c,
        "entry.update",
        json!({"id": e["id"], "content": "v3", "if_version": 1}),
        code::CONFLICT,
    )
    .await;
    assert!(
        msg.contains("version 2, not 1") && msg.contains("if_version 2"),
        "{msg}"
    );
    assert_eq!(
        data,
        json!({"field": "if_version", "expected": 1, "got": 2})
    );
    assert_eq!(
        ok(&mut c, "entry.get", json!({"id": e["id"]})).await["entry"]["content"],
        "v2"
    );
    err(
        &mut c,
        "entry.delete",
        json!({"id": e["id"], "if_version": 1}),
        code::CONFLICT,
    )
    .await;
    still_usable(&mut c).await;
}

#[tokio::test]
async fn other_values_out_of_range() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let cases = [
        ("entry.list", json!({"limit": 5000}), "limit"),
        ("entry.list", json!({"limit": 0}), "limit"),
        ("entry.list", json!({"cursor": "abc"}), "cursor"),
        ("entry.list", json!({"since": "yesterday"}), "since"),
        (
            "entry.add",
            json!({"pad": "a", "content": "x", "remind_in": 5, "remind_at": "2030-01-01T00:00:00Z"}),
            "remind_at",
        ),
        (
            "entry.add",
            json!({"pad": "a", "content": "x", "confidence": 1.5}),
            "confidence",
        ),
        (
            "entry.add",
            json!({"pad": "a", "content": "x", "author": "bad author!"}),
            "author",
        ),
        (
            "entry.add",
            json!({"pad": "a", "content": "x", "status": "started"}),
            "status",
        ),
        (
            "pad.configure",
            json!({"name": "a", "ttl_seconds": -5}),
            "ttl_seconds",
        ),
        (
            "pad.configure",
            json!({"name": "a", "max_entries": 0}),
            "max_entries",
        ),
        ("search", json!({"query": "   "}), "query"),
        ("search", json!({"query": "x", "mode": "fuzzy"}), "mode"),
        ("search", json!({"query": "x".repeat(1001)}), "query"),
        (
            "pad.export",
            json!({"name": "a", "format": "pdf"}),
            "format",
        ),
        ("subscribe", json!({"pads": ["../x"]}), "pads"),
    ];
    for (method, params, field) in cases {
        let (msg, data) = err(&mut c, method, params.clone(), code::INVALID_PARAMS).await;
        assert_eq!(data["field"], field, "{method} {params}: {msg}");
        assert!(msg.len() > 20, "say how to fix it: {msg}");
    }
    still_usable(&mut c).await;
}

#[tokio::test]
async fn every_listed_method_is_served_and_documented() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md")).unwrap();
    for method in scratchpad::protocol::METHODS {
        // Empty params: a served method answers (often "missing field"), never -32601.
        if let Err(e) = c.call(method, json!({})).await {
            assert_ne!(
                e.code(),
                Some(code::METHOD_NOT_FOUND),
                "{method} is listed but not dispatched"
            );
        }
        assert!(
            doc.contains(&format!("### `{method}`")),
            "docs/protocol.md has no section for {method}"
        );
    }
    still_usable(&mut c).await;
}

#[tokio::test]
async fn a_line_left_unfinished_is_cut_off_and_its_buffer_freed() {
    let h = Harness::with(|c| c.partial_idle = std::time::Duration::from_millis(300)).await;
    let mut slow = h.client().await;
    let started = std::time::Instant::now();
    slow.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sta")
        .await
        .unwrap();
    let r = slow.read_message().await.unwrap();
    assert_eq!(r["error"]["code"], code::INVALID_REQUEST);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("left unfinished") && msg.contains("newline"),
        "{msg}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(
        slow.read_message().await.is_err(),
        "and the connection is closed"
    );
    // A client that finishes its line in time is not affected.
    let mut c = h.client().await;
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    c.send_raw(b"\"method\":\"hello\"}\n").await.unwrap();
    assert_eq!(c.read_message().await.unwrap()["id"], 2);
    still_usable(&mut c).await;
}

#[tokio::test]
async fn a_client_over_the_connection_cap_is_told_not_left_hanging() {
    let h = Harness::with(|c| c.max_connections = Some(3)).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut c = h.client().await;
        still_usable(&mut c).await;
        held.push(c);
    }
    let mut over = Client::connect(&h.socket).await.unwrap();
    let r = tokio::time::timeout(std::time::Duration::from_secs(5), over.read_message())
        .await
        .expect("an answer, not a hang")
        .unwrap();
    assert_eq!(r["error"]["code"], code::UNAVAILABLE);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("serves 3 connections") && msg.contains("ulimit -n"),
        "{msg}"
    );
    // Once one closes, there is room again.
    drop(held.pop());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let mut c = Client::connect(&h.socket).await.unwrap();
        if c.call("hello", json!({})).await.is_ok() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "room again after a close"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn subscriptions_per_connection_are_capped_with_a_clear_error() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let max = scratchpad::rpc::MAX_SUBSCRIPTIONS;
    let mut first = None;
    for i in 0..max {
        let r = ok(&mut c, "subscribe", json!({"pads": [format!("p{i}")]})).await;
        first.get_or_insert(r["subscription"].clone());
    }
    let (msg, data) = err(&mut c, "subscribe", json!({}), -32004).await;
    assert!(
        msg.contains(&format!("{max} subscriptions")) && msg.contains("Unsubscribe"),
        "{msg}"
    );
    assert_eq!(data["limit"], max as u64, "{data}");
    // One freed makes room for one more; other connections have their own.
    ok(
        &mut c,
        "unsubscribe",
        json!({"subscription": first.unwrap()}),
    )
    .await;
    ok(&mut c, "subscribe", json!({})).await;
    let mut other = h.client().await;
    ok(&mut other, "subscribe", json!({})).await;
    still_usable(&mut c).await;
}
