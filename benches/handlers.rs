//! `cargo bench --bench handlers`: what the engine itself spends on each
//! method, in process, without a socket.
//!
//! Opens an engine on a temp data directory (semantic search off, background
//! tasks running as under `pad serve`), fills one pad, then calls
//! `rpc::handle_line` — parse, check, run, serialize — in a loop on one
//! thread and prints p50/p99 per method. The socket round trip of
//! `benches/engine.rs` is this plus the transport and the wake-ups; the gap
//! between `hello` and another method here is that method's own work.
//! `BENCH_ONLY=list` (any part of a row's name) prints only those rows.

mod common;

use std::time::Instant;

use common::{row, stats};
use scratchpad::engine::{Config, Engine};
use scratchpad::rpc::{handle_line, Session};

fn main() {
    common::two_thread_runtime().block_on(run());
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let n = if quick { 2_000 } else { 20_000 };
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path().join("data"));
    config.semantic = None;
    let engine = Engine::open(config).await.unwrap();
    let _background = engine.spawn_background();
    let mut session = Session::new(None);

    let mut id = 0u64;
    // `times` request lines of one method, each with its own id.
    let mut requests = |method: &str, params: &str, times: usize| {
        let mut lines = Vec::with_capacity(times);
        for _ in 0..times {
            id += 1;
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
            ));
        }
        lines
    };
    let add = requests(
        "entry.add",
        r#"{"pad":"one","content":"agent-3 found that the login flow retries three times before giving up","tags":["bench"]}"#,
        n,
    );
    let hello = requests("hello", "{}", n);
    let list1 = requests("entry.list", r#"{"pad":"one","limit":1}"#, n / 4);
    let list20 = requests("entry.list", r#"{"pad":"one","limit":20}"#, n / 4);
    let search = requests(
        "search",
        r#"{"query":"login flow","pad":"one","limit":10}"#,
        n / 20,
    );

    lat(&engine, "entry.add", &add, &mut session).await;
    lat(&engine, "hello", &hello, &mut session).await;

    let reply = handle_line(
        &engine,
        &mut session,
        br#"{"jsonrpc":"2.0","id":0,"method":"entry.list","params":{"pad":"one","limit":1}}"#,
    )
    .await
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&reply).unwrap();
    let first_id = v["result"]["entries"][0]["id"]
        .as_str()
        .expect("the pad has entries");
    let get = requests("entry.get", &format!(r#"{{"id":"{first_id}"}}"#), n / 4);
    lat(&engine, "entry.get", &get, &mut session).await;
    // The writes that take the store's write sequences (`storage::write`):
    // a reply (its parent resolved and noted), an edit, a task claimed
    // and finished.
    let replies = requests(
        "entry.add",
        &format!(r#"{{"pad":"two","content":"seen it too","reply_to":"{first_id}"}}"#),
        n / 4,
    );
    lat(&engine, "entry.add, a reply", &replies, &mut session).await;
    let edits = requests(
        "entry.update",
        &format!(r#"{{"id":"{first_id}","tags":["bench","seen"]}}"#),
        n / 4,
    );
    lat(&engine, "entry.update", &edits, &mut session).await;
    let tasks = requests(
        "entry.add",
        r#"{"pad":"work","kind":"task","content":"rotate the logs"}"#,
        n / 20,
    );
    lat(&engine, "entry.add, a task", &tasks, &mut session).await;
    let claims = requests("task.claim", r#"{"pad":"work","agent":"bench"}"#, n / 20);
    lat(&engine, "task.claim", &claims, &mut session).await;
    lat(&engine, "entry.list, limit 1", &list1, &mut session).await;
    lat(&engine, "entry.list, limit 20", &list20, &mut session).await;
    lat(&engine, "search (text), limit 10", &search, &mut session).await;

    // The same calls by an agent holding a token for the pad: what the
    // guard adds (its declared checks before, the seal after).
    let made = handle_line(
        &engine,
        &mut session,
        br#"{"jsonrpc":"2.0","id":0,"method":"token.create","params":{"name":"bench","pads":["one"]}}"#,
    )
    .await
    .unwrap();
    let made: serde_json::Value = serde_json::from_slice(&made).unwrap();
    let secret = made["result"]["secret"].as_str().expect("a token");
    let mut agent = Session::new(None);
    let hello =
        format!(r#"{{"jsonrpc":"2.0","id":0,"method":"hello","params":{{"token":"{secret}"}}}}"#);
    handle_line(&engine, &mut agent, hello.as_bytes())
        .await
        .unwrap();
    lat(&engine, "token: entry.add", &add, &mut agent).await;
    lat(&engine, "token: entry.get", &get, &mut agent).await;
    lat(&engine, "token: entry.list, limit 20", &list20, &mut agent).await;
    lat(
        &engine,
        "token: search (text), limit 10",
        &search,
        &mut agent,
    )
    .await;

    // What another pad's words cost a token's text search (issue 66's
    // finding 11): a token for a small pad searching a word of its own,
    // before and after 5,000 notes of a pad it cannot read hold the word.
    let small = |content: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"entry.add","params":{{"pad":"small","content":"{content}"}}}}"#
        )
    };
    for i in 0..3 {
        let line = small(&format!("the harbor crane {i} needs a new cable"));
        handle_line(&engine, &mut session, line.as_bytes()).await;
    }
    let made = handle_line(
        &engine,
        &mut session,
        br#"{"jsonrpc":"2.0","id":0,"method":"token.create","params":{"name":"small","pads":["small"]}}"#,
    )
    .await
    .unwrap();
    let made: serde_json::Value = serde_json::from_slice(&made).unwrap();
    let secret = made["result"]["secret"].as_str().expect("a token");
    let mut scoped = Session::new(None);
    let hello =
        format!(r#"{{"jsonrpc":"2.0","id":0,"method":"hello","params":{{"token":"{secret}"}}}}"#);
    handle_line(&engine, &mut scoped, hello.as_bytes()).await;
    let harbor = requests(
        "search",
        r#"{"query":"harbor","mode":"text","limit":10}"#,
        n / 20,
    );
    lat(
        &engine,
        "small token: search (text), 0 foreign holders",
        &harbor,
        &mut scoped,
    )
    .await;
    let foreign = requests(
        "entry.add",
        r#"{"pad":"foreign","content":"the harbor lights were checked again tonight"}"#,
        5_000,
    );
    lat(&engine, "entry.add (foreign)", &foreign, &mut session).await;
    lat(
        &engine,
        "small token: search (text), 5,000 foreign holders",
        &harbor,
        &mut scoped,
    )
    .await;
    engine.shutdown().await;
}

/// Calls each line in turn, checks that it succeeded, prints p50/p99.
/// `BENCH_ONLY=<text>` prints only the rows whose name contains it (every
/// call is still made, so the engine is in the same state).
async fn lat(engine: &Engine, name: &str, lines: &[String], session: &mut Session) {
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let timed = name.contains(&only);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let t = Instant::now();
        let reply = handle_line(engine, session, line.as_bytes())
            .await
            .expect("a request gets an answer");
        out.push(t.elapsed().as_secs_f64() * 1e6);
        assert!(
            reply.windows(15).any(|w| w == br#""2.0","result":"#),
            "{name} failed: {}",
            String::from_utf8_lossy(&reply)
        );
    }
    if timed {
        row(&format!("in process: {name}"), &stats(out));
    }
}
