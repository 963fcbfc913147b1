//! Shared by the benches: the release `pad serve` as a child process,
//! percentiles and printing.
#![allow(dead_code)]

pub mod devnotes;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scratchpad::client::Client;
use serde_json::Value;

pub struct Stats {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

pub fn stats(mut us: Vec<f64>) -> Stats {
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |p: f64| us[((us.len() as f64 * p) as usize).min(us.len() - 1)];
    Stats {
        p50: at(0.50),
        p95: at(0.95),
        p99: at(0.99),
    }
}

pub struct Engine {
    pub child: Child,
    pub socket: PathBuf,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

impl Engine {
    pub async fn start(dir: &Path, extra: &[&str]) -> Engine {
        let socket = dir.join("run/pad.sock");
        // BENCH_PAD=<binary> measures another build (an A/B of two commits).
        let bin = std::env::var_os("BENCH_PAD").unwrap_or(env!("CARGO_BIN_EXE_pad").into());
        let mut child = Command::new(bin)
            .arg("serve")
            .args(extra)
            .env("PAD_HOME", dir.join("data"))
            .env("PAD_SOCKET", &socket)
            .env("PAD_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("pad serve starts");
        for _ in 0..500 {
            if Client::connect(&socket).await.is_ok() {
                return Engine { child, socket };
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("engine did not start");
    }

    pub async fn client(&self) -> Client {
        Client::connect(&self.socket).await.unwrap()
    }

    pub fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: f64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        kb / 1024.0
    }
}

pub async fn timed(c: &mut Client, method: &str, params: Value) -> f64 {
    let t = Instant::now();
    c.call(method, params).await.expect("call succeeds");
    t.elapsed().as_secs_f64() * 1e6
}

/// Fills a pad quickly with pipelined writes.
pub async fn fill_with(
    c: &mut Client,
    pad: &str,
    n: usize,
    mut content: impl FnMut() -> String,
) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let batch = left.min(500);
        for _ in 0..batch {
            c.send(
                "entry.add",
                serde_json::json!({"pad": pad, "content": content(), "tags": ["bench"]}),
            )
            .await
            .unwrap();
        }
        c.flush().await.unwrap();
        for _ in 0..batch {
            let (_, r) = c.response().await.unwrap();
            ids.push(r.unwrap()["entry"]["id"].as_str().unwrap().to_string());
        }
        left -= batch;
    }
    ids
}

pub fn row(name: &str, s: &Stats) {
    println!("{name:<52} p50 {:>8.1} µs   p99 {:>8.1} µs", s.p50, s.p99);
}

pub fn which(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A two-thread runtime: the engine's own shape on this machine, and one
/// agent host's.
pub fn two_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

pub const WORDS: &[&str] = &[
    "login",
    "docker",
    "registry",
    "token",
    "deploy",
    "migration",
    "schema",
    "retry",
    "timeout",
    "cache",
    "index",
    "agent",
    "planner",
    "result",
    "insight",
    "error",
    "latency",
    "queue",
    "socket",
    "build",
    "release",
    "branch",
    "commit",
    "review",
    "config",
    "secret",
    "network",
    "kernel",
    "memory",
    "thread",
    "embedding",
    "vector",
    "search",
    "prompt",
    "model",
    "context",
    "budget",
    "invoice",
    "customer",
    "report",
    "dashboard",
    "metric",
    "alert",
    "backup",
    "restore",
    "upgrade",
    "version",
    "python",
    "rust",
    "test",
    "flaky",
    "green",
    "red",
    "blocked",
    "done",
];

/// A note of 8–30 common words and a rare ticket number.
pub fn sentence(rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(8..30);
    let mut s: Vec<String> = (0..n)
        .map(|_| WORDS[rng.usize(..WORDS.len())].to_string())
        .collect();
    // A rare token per entry, so some searches are selective.
    s.push(format!("ticket-{}", rng.u32(..1_000_000)));
    s.join(" ")
}
