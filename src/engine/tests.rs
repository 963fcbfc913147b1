use super::*;
use crate::rpc::{handle_line, Session};
use serde_json::{json, Value};

async fn call(engine: &Engine, session: &mut Session, method: &str, params: Value) -> Value {
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let reply = handle_line(engine, session, line.to_string().as_bytes())
        .await
        .expect("a request with an id gets an answer");
    let reply: Value = serde_json::from_slice(&reply).unwrap();
    assert!(reply.get("error").is_none(), "{method}: {reply}");
    reply["result"].clone()
}

/// A cached statement whose plan looked at a bound value is expired
/// whenever a new value is bound, and SQLite then parses and plans it
/// again on every call (a one-entry `entry.list` cost ~50 µs instead of
/// ~6). Every method, called twice with different values, must reuse its
/// statements as prepared.
#[tokio::test]
async fn statements_stay_prepared_across_calls_with_new_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path().join("data"));
    config.semantic = None;
    let engine = Engine::open(config).await.unwrap();
    let mut s = Session::new(None);
    for (round, pad) in ["proj-a", "proj-b", "proj-a"].into_iter().enumerate() {
        let (limit, agent, tag) = (5 + round, format!("agent-{round}"), format!("t{round}"));
        let mut ids = Vec::new();
        for i in 0..3 {
            let params = json!({"pad": pad, "content": format!("login retry {i} in {pad}"), "tags": [tag], "author": agent});
            let r = call(&engine, &mut s, "entry.add", params).await;
            ids.push(r["entry"]["id"].as_str().unwrap().to_string());
        }
        let page = call(
            &engine,
            &mut s,
            "entry.list",
            json!({"pad": pad, "limit": 1}),
        )
        .await;
        let calls = [
            (
                "entry.add",
                json!({"pad": pad, "kind": "task", "content": format!("migrate {round}"), "depends_on": [ids[0]]}),
            ),
            ("entry.get", json!({"id": ids[1]})),
            (
                "entry.update",
                json!({"id": ids[1], "content": format!("edited {round}"), "if_version": 1}),
            ),
            ("entry.delete", json!({"id": ids[2]})),
            ("entry.list", json!({"pad": pad, "limit": limit})),
            (
                "entry.list",
                json!({"pad": pad, "limit": limit, "cursor": page["next_cursor"]}),
            ),
            (
                "entry.list",
                json!({"pad": pad, "tags": [tag], "author": agent, "kind": "note", "limit": limit}),
            ),
            (
                "entry.list",
                json!({"status": "todo", "since": "2020-01-01T00:00:00Z", "min_confidence": 0.1 * round as f64, "limit": limit}),
            ),
            (
                "search",
                json!({"query": format!("login {round}"), "pad": pad, "limit": limit}),
            ),
            (
                "search",
                json!({"query": format!("ogi{}", ["n", "n r", "n retry"][round]), "limit": limit}),
            ),
            ("tags.list", json!({"pad": pad})),
            ("pad.list", json!({})),
            (
                "pad.configure",
                json!({"name": pad, "ttl_seconds": 3600 + round}),
            ),
            ("pad.touch", json!({"name": pad})),
            ("pad.export", json!({"name": pad, "budget": 600 + round})),
            ("plan.order", json!({"pad": pad})),
            (
                "task.claim",
                json!({"pad": pad, "agent": agent, "lease_seconds": 60 + round}),
            ),
            (
                "entry.share",
                json!({"id": ids[0], "to": [format!("share-{round}")]}),
            ),
            ("report", json!({"pad": pad})),
            ("inbox", json!({"author": agent})),
            ("stats", json!({})),
        ];
        for (method, params) in calls {
            call(&engine, &mut s, method, params).await;
        }
    }
    let reprepared = engine.sqlite_store().expect("SQLite").reprepared();
    assert!(
        reprepared.is_empty(),
        "statements re-planned on every call (every connection must plan without looking at bound values: store::open_connection):\n{}",
        reprepared
            .iter()
            .map(|(sql, n)| format!("{n}× {sql}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Stopping is complete when `shutdown` returns: the data directory is free
/// for the next engine in the same process (the app, tests) even while a
/// handle to the stopped one is still held somewhere (a relay callback, a
/// task finishing on a busy machine), and what was written is there.
#[tokio::test]
async fn a_stopped_engine_lets_go_of_its_directory_while_a_handle_lingers() {
    let dir = tempfile::tempdir().unwrap();
    let config = || {
        let mut c = Config::new(dir.path().join("data"));
        c.semantic = None;
        c
    };
    let first = Engine::open(config()).await.unwrap();
    let mut s = Session::new(None);
    call(
        &first,
        &mut s,
        "entry.add",
        json!({"pad": "p", "content": "kept across"}),
    )
    .await;
    let lingering = first.clone();
    first.shutdown().await;
    assert!(lingering.handles() >= 2, "the test holds a second handle");
    let second = Engine::open(config())
        .await
        .expect("the directory is free once shutdown returned");
    let mut s = Session::new(None);
    let listed = call(&second, &mut s, "entry.list", json!({"pad": "p"})).await;
    assert_eq!(listed["entries"][0]["content"], "kept across");
    let third = Engine::open(config()).await;
    assert!(
        third.is_err(),
        "the running engine still holds the directory"
    );
    drop(lingering);
}
