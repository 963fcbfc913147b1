//! Test harness: a real engine on a temp socket over a temp data directory.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use scratchpad::client::{Client, ClientError};
use scratchpad::semantic::{ModelSource, Precision, SemanticConfig};
use scratchpad::{server, Config, Engine};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub mod cli;
pub mod corpus;
mod model;
pub mod postgres;
#[allow(unused_imports)]
pub use model::{e5_model_dir, model_dir, splade_model_dir};

pub struct Harness {
    pub dir: TempDir,
    pub socket: PathBuf,
    pub engine: Engine,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Harness {
    pub async fn start() -> Harness {
        Harness::with(|_| {}).await
    }

    pub async fn with(tweak: impl FnOnce(&mut Config)) -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        Harness::in_dir(dir, tweak).await
    }

    /// An engine whose entries' times come from `clock` (a manual one the
    /// test moves).
    pub async fn on_clock(clock: &scratchpad::clock::Clock) -> Harness {
        let clock = clock.clone();
        Harness::with(move |c| c.clock = clock).await
    }

    pub async fn in_dir(dir: TempDir, tweak: impl FnOnce(&mut Config)) -> Harness {
        let socket = dir.path().join("run").join("pad.sock");
        let mut config = Config::new(dir.path().join("data"));
        // Tests that exercise semantic search turn it on (`semantic_config`).
        config.semantic = None;
        if postgres::wanted() {
            // The same database when the harness restarts on this directory.
            let marker = dir.path().join("database-url");
            let url = std::fs::read_to_string(&marker).unwrap_or_else(|_| {
                let url = postgres::shared_database();
                std::fs::write(&marker, &url).expect("remember the test database");
                url
            });
            config.database = Some(url);
        }
        tweak(&mut config);
        let engine = Engine::open(config).await.expect("engine opens");
        let bound = server::bind(&socket).expect("socket binds");
        let (stop, stopped) = oneshot::channel::<()>();
        let e = engine.clone();
        let task = tokio::spawn(async move {
            let background = e.spawn_background();
            server::serve(
                &bound.listener,
                e.clone(),
                async {
                    let _ = stopped.await;
                },
                Duration::from_secs(5),
            )
            .await;
            e.shutdown().await;
            let _ = background.await;
            drop(bound);
        });
        Harness {
            dir,
            socket,
            engine,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub async fn client(&self) -> Client {
        let mut c = Client::connect(&self.socket)
            .await
            .expect("client connects");
        c.call("hello", json!({"author": "tester", "client": "tests"}))
            .await
            .expect("hello");
        c
    }

    /// Stops the engine gracefully (as SIGTERM would).
    pub async fn stop(mut self) -> TempDir {
        self.shutdown().await;
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"))
    }

    async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task ends cleanly");
        }
        // A handle still held elsewhere (a blocking thread finishing, on a
        // busy machine) keeps the data directory locked: a restart waits
        // for it to go rather than finding the directory "in use".
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.engine.handles() > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "{} handles to the stopped engine are still held after 10 s",
                self.engine.handles() - 1
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Starts an engine on a data directory a stopped harness left behind.
    pub async fn restart_in(dir: TempDir) -> Harness {
        Harness::in_dir(dir, |_| {}).await
    }

    pub async fn restart_in_with(dir: TempDir, tweak: impl FnOnce(&mut Config)) -> Harness {
        Harness::in_dir(dir, tweak).await
    }

    /// Stops the engine and opens a new one on the same data directory.
    pub async fn restart(self) -> Harness {
        let dir = self.stop().await;
        Harness::in_dir(dir, |_| {}).await
    }

    pub async fn restart_with(self, tweak: impl FnOnce(&mut Config)) -> Harness {
        let dir = self.stop().await;
        Harness::in_dir(dir, tweak).await
    }
}

/// Semantic search with the test model.
pub fn semantic_config(precision: Precision) -> SemanticConfig {
    let mut c = SemanticConfig::new(ModelSource::Dir(model_dir()));
    c.precision = Some(precision);
    c.poll_every = Duration::from_millis(20);
    c
}

/// Semantic search with the test model and the sparse model beside it
/// (hybrid's third list).
pub fn sparse_config() -> SemanticConfig {
    let mut c = semantic_config(Precision::Int8);
    c.sparse = Some(splade_model_dir());
    c
}

/// Waits until semantic search is ready and nothing is left to embed;
/// returns the final `stats`.
pub async fn embedded_all(c: &mut Client) -> Value {
    // A backlog drains at idle priority: beside a busy CPU it is slow (10,000
    // notes took 330 s beside `stress-ng --cpu 2`, debug build), so the wait
    // is for progress, not for a rate: it fails only when nothing more was
    // embedded for two minutes.
    let stalled_after = Duration::from_secs(120);
    let mut progress = (-1i64, std::time::Instant::now());
    loop {
        let s = ok(c, "stats", json!({})).await;
        let status = s["semantic"]["status"].as_str().unwrap_or("").to_string();
        assert!(
            status == "ready" || status == "loading",
            "semantic search is {status}: {}",
            s["semantic"]["reason"]
        );
        if status == "ready" && s["embed_queue"] == 0 && s["semantic"]["vectors"] == s["entries"] {
            return s;
        }
        let embedded = s["semantic"]["embedded"].as_i64().unwrap_or(0);
        if embedded != progress.0 {
            progress = (embedded, std::time::Instant::now());
        }
        assert!(
            progress.1.elapsed() < stalled_after,
            "embedding stalled: nothing embedded for {stalled_after:?}: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Calls and unwraps.
pub async fn ok(c: &mut Client, method: &str, params: Value) -> Value {
    match c.call(method, params.clone()).await {
        Ok(v) => v,
        Err(e) => panic!("{method} {params} failed: {e}"),
    }
}

/// Calls, expects an error with `code`, and returns (message, data).
pub async fn err(c: &mut Client, method: &str, params: Value, code: i64) -> (String, Value) {
    match c.call(method, params.clone()).await {
        Ok(v) => panic!("{method} {params} should fail with {code}, got {v}"),
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, code, "{method} {params}: {}", e.message);
            (e.message, e.data.unwrap_or(Value::Null))
        }
        Err(e) => panic!("{method} {params}: transport error {e}"),
    }
}

/// The cosine of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

/// A JSON array of numbers (a vector in a reference file) as floats.
pub fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// The ids of a search's hits, best first.
pub fn hit_ids(r: &Value) -> Vec<String> {
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["entry"]["id"].as_str().unwrap().to_string())
        .collect()
}

/// The contents of a search's hits, in order.
pub fn hit_contents(r: &Value) -> Vec<String> {
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["entry"]["content"].as_str().unwrap().to_string())
        .collect()
}

pub async fn add(c: &mut Client, pad: &str, content: &str) -> Value {
    ok(c, "entry.add", json!({"pad": pad, "content": content})).await["entry"].clone()
}

/// Every id of a pad, paging with `next_cursor`; panics if a page repeats one.
pub async fn all_ids(c: &mut Client, pad: &str) -> std::collections::HashSet<String> {
    let mut ids = std::collections::HashSet::new();
    let mut params = json!({"pad": pad, "limit": 1000});
    loop {
        let r = ok(c, "entry.list", params.clone()).await;
        for e in r["entries"].as_array().unwrap() {
            let id = e["id"].as_str().unwrap().to_string();
            assert!(ids.insert(id.clone()), "{id} listed twice");
        }
        match r["next_cursor"].as_str() {
            Some(cur) => params["cursor"] = json!(cur),
            None => return ids,
        }
    }
}

/// An engine running as its own process (`pad serve`), stopped (killed)
/// when dropped, so a failing test leaves no engine behind.
pub struct Proc {
    pub child: std::process::Child,
    pub socket: PathBuf,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The `pad` binary, aimed at `home` and `socket`, without semantic search
/// (tests that want it set `PAD_MODEL_DIR` and remove `PAD_NO_SEMANTIC`).
pub fn pad(home: &std::path::Path, socket: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pad"));
    cmd.env("PAD_HOME", home)
        .env("PAD_SOCKET", socket)
        .env("PAD_LOG", "warn")
        .env("PAD_NO_SEMANTIC", "1")
        .env("PAD_NO_AUTOSTART", "1")
        .env_remove("PAD_AUTHOR");
    cmd
}

/// The `pad` binary with semantic search on the test model.
pub fn pad_semantic(home: &std::path::Path, socket: &std::path::Path) -> std::process::Command {
    let mut cmd = pad(home, socket);
    cmd.env_remove("PAD_NO_SEMANTIC")
        .env("PAD_MODEL_DIR", model_dir());
    cmd
}

pub async fn spawn_engine(home: &std::path::Path, socket: &std::path::Path) -> Proc {
    spawn(pad(home, socket), socket).await
}

/// Starts `pad serve` from `cmd` and waits until it answers on `socket`.
pub async fn spawn(mut cmd: std::process::Command, socket: &std::path::Path) -> Proc {
    let child = cmd
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("pad serve starts");
    wait_for_socket(socket).await;
    Proc {
        child,
        socket: socket.to_owned(),
    }
}

pub async fn wait_for_socket(socket: &std::path::Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if let Ok(mut c) = Client::connect(socket).await {
            if c.call("hello", json!({})).await.is_ok() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("engine did not come up on {}", socket.display());
}

pub fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

/// A fuzz run's length and seed: `PAD_FUZZ_SECONDS` (default 20) and
/// `PAD_FUZZ_SEED` (random unless given; the test prints it to replay).
pub fn fuzz_run() -> (u64, u64) {
    let seconds = std::env::var("PAD_FUZZ_SECONDS").map_or(20, |s| s.parse().unwrap());
    let seed =
        std::env::var("PAD_FUZZ_SEED").map_or_else(|_| fastrand::u64(..), |s| s.parse().unwrap());
    (seconds, seed)
}

/// A process's resident memory, in bytes (0 if it is gone).
pub fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
