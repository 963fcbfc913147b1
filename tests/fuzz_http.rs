//! The HTTP front under fuzzing (`pad serve --mcp-http`: `/mcp` and
//! `POST /rpc`), over HTTP/1.1 and HTTP/2 without TLS, for a bounded time
//! (`PAD_FUZZ_SECONDS`, default 20; `PAD_FUZZ_SEED` replays a run): request
//! lines, headers (`Host`, `Authorization`, lengths, chunking) and bodies
//! broken every way, requests dropped halfway, and HTTP/2 frames of every
//! type, flag, stream and size. Throughout, it asserts:
//!
//! - the engine stays up, under `RSS_CEILING`, and its owner's socket
//!   answers (`stats`) within seconds while the listener is hammered;
//! - every HTTP/1.1 answer is a well-formed status line, and none is a
//!   `500`: whatever a client sends is a client's mistake;
//! - at the end a token holder's request over HTTP is served.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{ok, wait_for_socket};
use scratchpad::client::Client;
use serde_json::{json, Value};

const RSS_CEILING: u64 = 512 << 20;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Gen {
    rng: fastrand::Rng,
    port: u16,
    token: String,
}

impl Gen {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.rng.usize(..from.len())]
    }

    fn junk(&mut self, max: usize) -> Vec<u8> {
        let n = self.rng.usize(..=max);
        (0..n).map(|_| self.rng.u8(..)).collect()
    }

    /// A JSON-RPC request of any method with odd params, or not JSON at all.
    fn body(&mut self) -> Vec<u8> {
        let method = match self.rng.u8(..10) {
            0 => "nope".to_string(),
            _ => scratchpad::protocol::METHODS
                [self.rng.usize(..scratchpad::protocol::METHODS.len())]
            .to_string(),
        };
        let odd = [
            json!(null),
            json!(-1),
            json!(u64::MAX),
            json!("f1"),
            json!(["f1", 1]),
            json!({"x": "\u{202e}\u{0}"}),
            json!("x".repeat(5000)),
        ];
        let value = |g: &mut Gen| odd[g.rng.usize(..odd.len())].clone();
        let mut params = json!({});
        for field in [
            "pad",
            "content",
            "id",
            "query",
            "name",
            "wait_seconds",
            "to",
        ] {
            if self.rng.bool() {
                params[field] = value(self);
            }
        }
        match self.rng.u8(..8) {
            0 => self.junk(300),
            1 => b"[]".to_vec(),
            2 => json!([{"jsonrpc": "2.0", "id": 1, "method": method}])
                .to_string()
                .into_bytes(),
            _ => json!({"jsonrpc": "2.0", "id": self.rng.u32(..), "method": method, "params": params})
                .to_string()
                .into_bytes(),
        }
    }

    /// One HTTP/1.1 request, as bytes; sometimes cut short.
    fn h1_request(&mut self) -> (Vec<u8>, bool) {
        let method = self.pick(&[
            "POST", "POST", "GET", "DELETE", "PUT", "OPTIONS", "PO ST", "",
        ]);
        let path = self.pick(&[
            "/rpc",
            "/rpc",
            "/mcp",
            "/",
            "/rpc?x=1",
            "/mcp/../rpc",
            "*",
            "/.well-known/oauth-authorization-server",
        ]);
        let version = self.pick(&["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/9"]);
        let host = match self.rng.u8(..6) {
            0 => "evil.example".to_string(),
            1 => String::new(),
            2 => "localhost".to_string(),
            3 => format!("host.docker.internal:{}", self.port),
            _ => format!("127.0.0.1:{}", self.port),
        };
        let auth = match self.rng.u8(..6) {
            0 => None,
            1 => Some("Bearer padt_0000".to_string()),
            2 => Some(format!("bearer {}", self.token)),
            3 => Some(format!("Basic {}", "x".repeat(self.rng.usize(..3000)))),
            _ => Some(format!("Bearer {}", self.token)),
        };
        let body = self.body();
        let mut head = format!("{method} {path} {version}\r\n");
        if self.rng.u8(..8) != 0 {
            head.push_str(&format!("Host: {host}\r\n"));
        }
        if let Some(a) = auth {
            head.push_str(&format!("Authorization: {a}\r\n"));
        }
        head.push_str(self.pick(&[
            "Content-Type: application/json\r\n",
            "Content-Type: text/plain\r\n",
            "",
        ]));
        head.push_str(self.pick(&[
            "Accept: application/json, text/event-stream\r\n",
            "Accept: */*\r\n",
            "",
        ]));
        if self.rng.u8(..6) == 0 {
            head.push_str(&format!("mcp-session-id: {}\r\n", self.rng.u64(..)));
        }
        if self.rng.u8(..10) == 0 {
            head.push_str("X-Odd: \u{1b}[2J\u{7}\r\n");
        }
        let chunked = self.rng.u8(..6) == 0;
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        } else {
            let len = match self.rng.u8(..8) {
                0 => body.len() + self.rng.usize(..100),
                1 => body.len().saturating_sub(self.rng.usize(..10)),
                2 => usize::MAX,
                _ => body.len(),
            };
            head.push_str(&format!("Content-Length: {len}\r\n"));
        }
        head.push_str(self.pick(&["", "Connection: close\r\n"]));
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if chunked {
            bytes.extend(format!("{:x}\r\n", body.len() + self.rng.usize(..3)).as_bytes());
            bytes.extend(&body);
            bytes.extend(self.pick(&["\r\n0\r\n\r\n", "\r\nzz\r\n", ""]).as_bytes());
        } else {
            bytes.extend(&body);
        }
        let cut = self.rng.u8(..10) == 0;
        if cut {
            let at = self.rng.usize(..bytes.len().max(1));
            bytes.truncate(at);
        }
        (bytes, cut)
    }
}

/// HTTP/1.1 requests, each on a new connection: returns how many answers
/// were read and checked.
fn fuzz_h1(mut g: Gen, until: Instant, seed: u64) -> u64 {
    let mut answered = 0;
    while Instant::now() < until {
        let Ok(mut tcp) = TcpStream::connect(("127.0.0.1", g.port)) else {
            continue;
        };
        let (request, cut) = g.h1_request();
        if tcp.write_all(&request).is_err() || cut {
            continue;
        }
        let _ = tcp.shutdown(std::net::Shutdown::Write);
        // What comes within a few seconds (an event stream never ends).
        let mut answer = Vec::new();
        let stop = Instant::now() + Duration::from_secs(5);
        tcp.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut chunk = [0u8; 16384];
        while Instant::now() < stop && answer.len() < 1 << 20 {
            match tcp.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => answer.extend(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if !answer.is_empty() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        if answer.is_empty() {
            continue; // closed without a word: refused, or cut off
        }
        let text = String::from_utf8_lossy(&answer);
        let status = text.split_whitespace().nth(1).unwrap_or("");
        assert!(
            text.starts_with("HTTP/1.") && status.len() == 3,
            "not an HTTP answer (PAD_FUZZ_SEED={seed}): {:?} for {:?}",
            &text[..text.len().min(200)],
            String::from_utf8_lossy(&request[..request.len().min(300)])
        );
        assert_ne!(
            status,
            "500",
            "a 500 (PAD_FUZZ_SEED={seed}) for {:?}: {text}",
            String::from_utf8_lossy(&request[..request.len().min(300)])
        );
        answered += 1;
    }
    answered
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let n = payload.len() as u32;
    let mut f = n.to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend(payload);
    f
}

/// HPACK: a literal header, not indexed, no Huffman (names and values under
/// 127 bytes).
fn literal(name: &str, value: &str) -> Vec<u8> {
    let mut b = vec![0, name.len() as u8];
    b.extend(name.as_bytes());
    b.push(value.len().min(126) as u8);
    b.extend(&value.as_bytes()[..value.len().min(126)]);
    b
}

/// HTTP/2 connections (prior knowledge): a preface (sometimes broken), then
/// frames of every kind, some of them requests.
fn fuzz_h2(mut g: Gen, until: Instant) {
    while Instant::now() < until {
        let Ok(mut tcp) = TcpStream::connect(("127.0.0.1", g.port)) else {
            continue;
        };
        tcp.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut out = match g.rng.u8(..10) {
            0 => g.junk(40),
            _ => b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
        };
        out.extend(frame(4, 0, 0, &[]));
        for _ in 0..g.rng.usize(1..40) {
            let stream = match g.rng.u8(..4) {
                0 => 0,
                1 => g.rng.u32(..),
                _ => 2 * g.rng.u32(..64) + 1,
            };
            let f = match g.rng.u8(..6) {
                0 | 1 => {
                    let mut block = Vec::new();
                    block.extend(literal(":method", g.pick(&["POST", "GET", "CONNECT"])));
                    block.extend(literal(":scheme", "http"));
                    block.extend(literal(":path", g.pick(&["/rpc", "/mcp", "/", ""])));
                    if g.rng.bool() {
                        block.extend(literal(":authority", &format!("127.0.0.1:{}", g.port)));
                    }
                    if g.rng.bool() {
                        block.extend(literal("authorization", &format!("Bearer {}", g.token)));
                    }
                    frame(
                        1,
                        g.pick(&["\u{4}", "\u{5}", "\u{0}"]).as_bytes()[0],
                        stream,
                        &block,
                    )
                }
                2 => {
                    let body = g.body();
                    frame(0, g.rng.u8(..2), stream, &body)
                }
                _ => {
                    let payload = g.junk(64);
                    frame(g.rng.u8(..12), g.rng.u8(..), stream, &payload)
                }
            };
            out.extend(f);
        }
        if tcp.write_all(&out).is_err() {
            continue;
        }
        let mut sink = [0u8; 65536];
        let deadline = Instant::now() + Duration::from_millis(g.rng.u64(..300));
        while Instant::now() < deadline {
            match tcp.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => break,
            }
        }
    }
}

/// One call over `POST /rpc` on a connection of its own: its JSON answer,
/// or the whole answer when it is not JSON (a refusal).
fn try_rpc(port: u16, token: &str, method: &str, params: Value) -> Result<Value, String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        tcp,
        "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let json = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(json).map_err(|_| answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_front_holds_under_fuzzing() {
    let (seconds, seed) = common::fuzz_run();
    eprintln!("fuzzing HTTP for {seconds} s with PAD_FUZZ_SEED={seed}");
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let port = free_port();
    let mut engine = common::pad(&home, &socket)
        .args(["serve", "--mcp-http", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("pad serve starts");
    wait_for_socket(&socket).await;
    let pid = engine.id();
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
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP listener never came up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let until = Instant::now() + Duration::from_secs(seconds);
    let gen = |i: u64| Gen {
        rng: fastrand::Rng::with_seed(seed + i),
        port,
        token: token.clone(),
    };
    let h1: Vec<_> = (0..2)
        .map(|i| {
            let g = gen(i);
            tokio::task::spawn_blocking(move || fuzz_h1(g, until, seed))
        })
        .collect();
    let h2 = {
        let g = gen(7);
        tokio::task::spawn_blocking(move || fuzz_h2(g, until))
    };
    let (mut peak, mut slowest) = (0, Duration::ZERO);
    while Instant::now() < until {
        let asked = Instant::now();
        ok(&mut owner, "stats", json!({})).await;
        slowest = slowest.max(asked.elapsed());
        peak = peak.max(common::rss(pid));
        assert!(
            engine.try_wait().unwrap().is_none(),
            "the engine died (PAD_FUZZ_SEED={seed})"
        );
        assert!(peak < RSS_CEILING, "RSS {} MiB (seed {seed})", peak >> 20);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut answered = 0;
    for f in h1 {
        answered += tokio::time::timeout(Duration::from_secs(90), f)
            .await
            .expect("the fuzzers end within 90 s of their time")
            .unwrap_or_else(|e| panic!("a fuzzer failed (PAD_FUZZ_SEED={seed}): {e}"));
    }
    tokio::time::timeout(Duration::from_secs(90), h2)
        .await
        .expect("the HTTP/2 fuzzer ends")
        .unwrap();
    // The owner was served all along (tens of ms when quiet).
    assert!(
        slowest < Duration::from_secs(5),
        "the owner waited {slowest:?}"
    );
    assert!(engine.try_wait().unwrap().is_none(), "the engine died");
    // The fuzzer's own connections cut off mid-request may hold its share
    // of the listener (16) until their head or body deadline (10 s, 30 s)
    // closes them: its next call is refused for that, and served after.
    let served = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(45);
        loop {
            match try_rpc(
                port,
                &token,
                "entry.add",
                json!({"pad": "f-end", "content": "still served"}),
            ) {
                Ok(v) => break v,
                Err(refused) if Instant::now() < deadline => {
                    assert!(
                        refused.contains("already holds 16 connections"),
                        "{refused}"
                    );
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(refused) => panic!("never served again: {refused}"),
            }
        }
    })
    .await
    .unwrap();
    assert!(served.get("result").is_some(), "{served}");
    eprintln!(
        "{answered} HTTP/1.1 answers checked, owner's slowest stats {slowest:?}, peak RSS {} MiB",
        peak >> 20
    );
    common::signal(&engine, libc::SIGTERM);
    assert!(engine.wait().unwrap().success());
}
