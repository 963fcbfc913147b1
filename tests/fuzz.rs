//! A property harness over the protocol: every method with wrong types,
//! edge numbers, odd Unicode and unknown fields, in batches and pipelined,
//! plus broken lines — for a bounded time (`PAD_FUZZ_SECONDS`, default 20;
//! `PAD_FUZZ_SEED` replays a run). Throughout, it asserts:
//!
//! - the engine stays up, and its memory under `RSS_CEILING`;
//! - every reply is a valid JSON-RPC response (or an array of them) with
//!   the request's id, and no error is `-32603 internal error`: whatever a
//!   client sends is a client's mistake, answered as one;
//! - no acknowledged entry disappears: entries written (by the owner) to a
//!   pad the fuzzing clients cannot reach are all there at the end. The
//!   fuzzers hold a token for the pads `f*`, so their `entry.delete`,
//!   `pad.clear` and the like act on their own pads only.

mod common;

use std::time::{Duration, Instant};

use common::{ok, spawn_engine};
use scratchpad::client::Client;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const RSS_CEILING: u64 = 512 << 20;

const FIELDS: &[&str] = &[
    "pad",
    "content",
    "kind",
    "tags",
    "status",
    "assignee",
    "resume",
    "category",
    "confidence",
    "depends_on",
    "reply_to",
    "choices",
    "to",
    "url",
    "remind_in",
    "remind_at",
    "pinned",
    "meta",
    "id",
    "if_version",
    "limit",
    "cursor",
    "author",
    "since",
    "min_confidence",
    "query",
    "mode",
    "name",
    "ttl_seconds",
    "max_entries",
    "keep_pinned",
    "format",
    "budget",
    "agent",
    "lease_seconds",
    "error",
    "retry",
    "result",
    "subscription",
    "activity",
    "peek",
    "wait_seconds",
    "pads",
    "read_only",
    "question",
    "to",
    "include_archived",
    "token",
    "events",
    "bogus",
];

struct Gen {
    rng: fastrand::Rng,
    /// Ids this fuzzer's writes got back, to aim at.
    ids: Vec<String>,
}

impl Gen {
    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.rng.usize(..from.len())]
    }

    fn number(&mut self) -> Value {
        match self.rng.u8(..12) {
            0 => json!(0),
            1 => json!(-1),
            2 => json!(i64::MAX),
            3 => json!(i64::MIN),
            4 => json!(u64::MAX),
            5 => json!(1e308),
            6 => json!(-0.0),
            7 => json!(9_007_199_254_740_993u64),
            8 => json!(0.5),
            9 => json!(self.rng.u32(..2000)),
            10 => json!(315_360_001),
            _ => json!(self.rng.i64(..)),
        }
    }

    fn text(&mut self) -> String {
        let pieces = [
            "f1",
            "f2",
            "fz",
            "x",
            "",
            " ",
            "\u{0}",
            "a\u{0}b",
            "\u{202e}rtl",
            "😀",
            "e\u{301}",
            "\u{fffd}",
            "\u{1F469}\u{200D}\u{1F4BB}",
            "日本語",
            "*",
            "f*",
            "important",
            "task",
            "note",
            "done",
            "failed",
            "semantic",
            "text",
            "markdown",
            "json",
            "\\",
            "\"",
            "\n",
            "\t",
            "%",
            "'; DROP TABLE entries; --",
            "0",
            "zz",
            "1j",
            "🦀🦀🦀",
        ];
        let mut s = String::new();
        for _ in 0..self.rng.usize(1..4) {
            s.push_str(pieces[self.rng.usize(..pieces.len())]);
        }
        match self.rng.u8(..20) {
            0 => s.repeat(2000),
            1 => "y".repeat(4001),
            _ => s,
        }
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.rng.u8(..if depth > 2 { 6 } else { 9 }) {
            0 => Value::Null,
            1 => json!(self.rng.bool()),
            2 | 3 => self.number(),
            4 | 5 => {
                if !self.ids.is_empty() && self.rng.bool() {
                    let id = self.pick(&self.ids.clone()).clone();
                    json!(id[..self.rng.usize(1..=id.len())])
                } else {
                    json!(self.text())
                }
            }
            6 | 7 => Value::Array(
                (0..self.rng.usize(..4))
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            _ => Value::Object(self.params(depth + 1)),
        }
    }

    fn params(&mut self, depth: u32) -> Map<String, Value> {
        let mut m = Map::new();
        for _ in 0..self.rng.usize(..5) {
            let field = self.pick(FIELDS).to_string();
            m.insert(field, self.value(depth));
        }
        m
    }

    fn request(&mut self, id: u64) -> Value {
        // Every method the engine answers, and one it does not.
        let methods = scratchpad::protocol::METHODS;
        let method = if self.rng.usize(..=methods.len()) == methods.len() {
            "no.such.method"
        } else {
            *self.pick(methods)
        };
        let mut params = self.params(0);
        // Waits are bounded by their ranges, but a fuzz run should not sit
        // in them.
        if params.contains_key("wait_seconds") || method == "ask" {
            params.insert("wait_seconds".into(), json!(0));
        }
        if method == "entry.add" && self.rng.bool() {
            params.insert("pad".into(), json!(["f1", "f2", "fz"][self.rng.usize(..3)]));
            params.insert("content".into(), json!(self.text()));
        }
        let mut r = json!({"jsonrpc": "2.0", "id": id, "method": method});
        match self.rng.u8(..10) {
            0 => r["params"] = self.value(0),
            1 => {}
            _ => r["params"] = Value::Object(params),
        }
        if self.rng.u8(..25) == 0 {
            r.as_object_mut().unwrap().remove("id");
        }
        r
    }
}

/// Checks one response against the request ids it may answer.
fn check_response(r: &Value, sent: &[Option<u64>], line: &str) {
    let o = r
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {r}\nfor {line}"));
    assert_eq!(o.get("jsonrpc"), Some(&json!("2.0")), "{r}");
    let id = o.get("id").unwrap_or_else(|| panic!("no id: {r}"));
    assert!(
        id.is_null() || sent.iter().flatten().any(|s| id == &json!(s)),
        "id {id} was not sent: {r}"
    );
    match (o.get("result"), o.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            let code = e["code"].as_i64().unwrap_or_else(|| panic!("{r}"));
            let message = e["message"].as_str().unwrap_or("");
            assert!(!message.is_empty(), "{r}");
            assert_ne!(
                code, -32603,
                "an internal error for an input:\n{r}\nfor {line}"
            );
        }
        _ => panic!("neither result nor error: {r}"),
    }
}

/// One fuzzing client: sends lines (single requests, batches, several
/// pipelined, broken ones) and checks every reply, until `until`.
async fn fuzz_client(socket: std::path::PathBuf, token: String, seed: u64, until: Instant) -> u64 {
    let stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut gen = Gen {
        rng: fastrand::Rng::with_seed(seed),
        ids: Vec::new(),
    };
    let mut next_id = 1u64;
    let mut answered = 0u64;
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "hello", "params": {"token": token, "author": "fuzz"}});
    write
        .write_all(format!("{hello}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    read.read_line(&mut line).await.unwrap();
    assert!(line.contains("\"result\""), "{line}");
    while Instant::now() < until {
        // Up to 4 lines pipelined before reading.
        let mut expect: Vec<(Vec<Option<u64>>, bool, String)> = Vec::new();
        let mut out = Vec::new();
        for _ in 0..gen.rng.usize(1..5) {
            let (text, ids, batch) = match gen.rng.u8(..20) {
                0 => (
                    // Broken JSON: a parse error, answered with a null id.
                    format!("{{\"jsonrpc\":\"2.0\",\"id\":{next_id},\"method\":"),
                    vec![None],
                    false,
                ),
                1..=3 => {
                    let n = gen.rng.usize(1..120);
                    let batch: Vec<Value> = (0..n)
                        .map(|_| {
                            next_id += 1;
                            gen.request(next_id)
                        })
                        .collect();
                    let ids = batch.iter().map(|r| r["id"].as_u64()).collect();
                    (Value::Array(batch).to_string(), ids, true)
                }
                _ => {
                    next_id += 1;
                    let r = gen.request(next_id);
                    (r.to_string(), vec![r["id"].as_u64()], false)
                }
            };
            out.extend_from_slice(text.as_bytes());
            out.push(b'\n');
            // Notifications alone get no reply.
            if ids.iter().any(Option::is_some) || ids == [None] && text.ends_with(':') {
                expect.push((ids, batch, text));
            }
        }
        // Written while the replies are read: the engine stops reading a
        // client that does not read its answers, so writing everything
        // first could wait for ever on a large answer.
        let (written, ()) = tokio::join!(write.write_all(&out), async {
            for (ids, batch, text) in expect {
                // Events of the fuzzer's subscriptions come between replies.
                let reply = loop {
                    line.clear();
                    let n =
                        tokio::time::timeout(Duration::from_secs(30), read.read_line(&mut line))
                            .await
                            .expect("a reply within 30 s")
                            .unwrap();
                    assert!(n > 0, "the engine closed the connection after {text}");
                    let v: Value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                    if v.get("method") == Some(&json!("event")) {
                        assert!(
                            v["params"]["type"].is_string() && v.get("id").is_none(),
                            "{v}"
                        );
                        continue;
                    }
                    break v;
                };
                let replies = match (&reply, batch) {
                    (Value::Array(a), true) => a.clone(),
                    // A batch refused whole answers with one error.
                    (Value::Object(_), true) => vec![reply.clone()],
                    (Value::Object(_), false) => vec![reply.clone()],
                    _ => panic!("a batch reply to a single request: {line}"),
                };
                for r in &replies {
                    check_response(r, &ids, &text);
                    if let Some(id) = r["result"]["entry"]["id"].as_str() {
                        gen.ids.push(id.to_string());
                    }
                    answered += 1;
                }
            }
        });
        written.unwrap();
    }
    answered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_holds_under_fuzzing() {
    let (seconds, seed) = common::fuzz_run();
    eprintln!("fuzzing for {seconds} s with PAD_FUZZ_SEED={seed}");
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut engine = spawn_engine(&home, &socket).await;
    let pid = engine.child.id();
    let mut owner = Client::connect(&socket).await.unwrap();
    let token = ok(
        &mut owner,
        "token.create",
        json!({"name": "fuzzer", "pads": ["f*"]}),
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_string();

    let until = Instant::now() + Duration::from_secs(seconds);
    let fuzzers: Vec<_> = (0..3)
        .map(|i| tokio::spawn(fuzz_client(socket.clone(), token.clone(), seed + i, until)))
        .collect();
    // Meanwhile the owner writes to a pad the fuzzers cannot reach.
    let (mut kept, mut peak) = (Vec::new(), 0);
    while Instant::now() < until {
        let e = common::add(&mut owner, "kept", &format!("kept {}", kept.len())).await;
        kept.push(e["id"].as_str().unwrap().to_string());
        peak = peak.max(common::rss(pid));
        assert!(
            engine.child.try_wait().unwrap().is_none(),
            "the engine died (seed {seed})"
        );
        assert!(peak < RSS_CEILING, "RSS {} MiB (seed {seed})", peak >> 20);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut answered = 0;
    for f in fuzzers {
        answered += tokio::time::timeout(Duration::from_secs(60), f)
            .await
            .expect("fuzzers end within a minute of their time")
            .unwrap_or_else(|e| panic!("a fuzzer failed (PAD_FUZZ_SEED={seed}): {e}"));
    }
    assert!(
        engine.child.try_wait().unwrap().is_none(),
        "the engine died (seed {seed})"
    );
    let listed = common::all_ids(&mut owner, "kept").await;
    for id in &kept {
        assert!(
            listed.contains(id),
            "acknowledged entry {id} disappeared (seed {seed})"
        );
    }
    eprintln!(
        "{answered} replies checked, {} acknowledged entries kept, peak RSS {} MiB",
        kept.len(),
        peak >> 20
    );
    common::signal(&engine.child, libc::SIGTERM);
    assert!(engine.child.wait().unwrap().success());
}
