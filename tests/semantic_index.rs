//! The semantic index's life with the real model: rebuilt when missing or
//! corrupt, text search when the runtime or model is missing, a killed
//! engine's backlog finished without repeating work, writes that never wait
//! for embeddings, reindexing and a model change, and the command line.

mod common;

use common::corpus::{best, corpus};
use common::*;
use scratchpad::semantic::Precision;
use serde_json::{json, Value};

#[tokio::test]
async fn a_missing_or_corrupt_index_is_rebuilt_from_the_stored_vectors() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let notes = &corpus()[..300];
    for n in notes {
        add(&mut c, "p", n).await;
    }
    embedded_all(&mut c).await;
    let mut dir = h.stop().await;
    let file = dir
        .path()
        .join("data")
        .join(scratchpad::semantic::INDEX_FILE);
    assert!(file.exists(), "shutdown saves the index");

    for damage in ["corrupt", "truncate", "delete"] {
        match damage {
            "corrupt" => {
                let mut bytes = std::fs::read(&file).unwrap();
                let mid = bytes.len() / 2;
                for b in &mut bytes[mid..mid + 64] {
                    *b ^= 0x5a;
                }
                std::fs::write(&file, bytes).unwrap();
            }
            "truncate" => {
                let bytes = std::fs::read(&file).unwrap();
                std::fs::write(&file, &bytes[..bytes.len() / 3]).unwrap();
            }
            _ => std::fs::remove_file(&file).unwrap(),
        }
        let h = Harness::restart_in_with(dir, |c| {
            let mut s = semantic_config(Precision::Int8);
            s.exact_max = 10; // search through the index, not exact scans
            c.semantic = Some(s);
        })
        .await;
        let mut c = h.client().await;
        let s = embedded_all(&mut c).await;
        assert_eq!(s["semantic"]["vectors"], 300, "{damage}: {s}");
        assert_eq!(
            s["semantic"]["embedded"], 0,
            "{damage}: rebuilt from stored vectors, nothing embedded again"
        );
        for n in notes.iter().step_by(37) {
            let r = ok(
                &mut c,
                "search",
                json!({"query": n, "mode": "semantic", "limit": 3}),
            )
            .await;
            assert!(
                r["hits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|h| h["entry"]["content"] == n.as_str()),
                "{damage}: '{n}' not found: {r}"
            );
        }
        dir = h.stop().await;
    }
}

async fn stats_when_settled(c: &mut scratchpad::client::Client) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = ok(c, "stats", json!({})).await;
        if s["semantic"]["status"] != "loading" {
            return s;
        }
        assert!(std::time::Instant::now() < deadline, "still loading: {s}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_runtime_or_model_the_engine_runs_on_text_search() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "runtime",
            "ORT_DYLIB_PATH",
            dir.path().join("nowhere/libonnxruntime.so"),
            "ORT_DYLIB_PATH",
        ),
        (
            "model",
            "PAD_MODEL_DIR",
            dir.path().join("no-model-here"),
            "PAD_MODEL_DIR",
        ),
    ];
    for (what, var, value, hint) in cases {
        let home = dir.path().join(format!("data-{what}"));
        let socket = dir.path().join(format!("run-{what}/pad.sock"));
        let mut cmd = pad_semantic(&home, &socket);
        cmd.env(var, &value);
        let mut engine = spawn(cmd, &socket).await;
        let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "ops", "content": "docker login fails"}),
        )
        .await;

        let s = stats_when_settled(&mut c).await;
        assert_eq!(s["semantic"]["status"], "unavailable", "{what}: {s}");
        let reason = s["semantic"]["reason"].as_str().unwrap();
        assert!(
            reason.contains(hint) && reason.contains(&value.display().to_string()),
            "{what}: {reason}"
        );

        let (msg, _) = err(
            &mut c,
            "search",
            json!({"query": "docker", "mode": "semantic"}),
            -32005,
        )
        .await;
        assert!(
            msg.contains(reason) && msg.contains("mode 'text'"),
            "{what}: {msg}"
        );
        let r = ok(&mut c, "search", json!({"query": "docker login"})).await;
        assert_eq!(r["mode"], "text", "hybrid falls back to text");
        assert_eq!(r["hits"][0]["entry"]["content"], "docker login fails");
        assert_eq!(r["hits"][0]["found_by"], json!(["text"]));

        let out = pad(&home, &socket).arg("stats").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("semantic     unavailable") && text.contains(hint),
            "{text}"
        );

        signal(&engine.child, libc::SIGTERM);
        assert!(engine.child.wait().unwrap().success());
    }
}

/// Writes `n` distinct notes to pad `load` from four clients at once, each
/// waiting for every acknowledgement.
async fn write_load(socket: &std::path::Path, n: usize) {
    let texts = corpus();
    let mut writers = Vec::new();
    for w in 0..4 {
        let (socket, texts) = (socket.to_owned(), texts.clone());
        writers.push(tokio::spawn(async move {
            let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
            for i in (w..n).step_by(4) {
                let content = format!("{} (#{i})", texts[i % texts.len()]);
                ok(
                    &mut c,
                    "entry.add",
                    json!({"pad": "load", "content": content}),
                )
                .await;
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_engine_finishes_its_embedding_backlog_without_repeating_work() {
    const N: usize = 3000;
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut engine = spawn(pad_semantic(&home, &socket), &socket).await;
    write_load(&socket, N).await;
    // Kill it mid-backlog: some entries embedded, many not.
    let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
    // Bounded: without the model or runtime nothing is ever embedded, and
    // the test must say so rather than wait forever.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = ok(&mut c, "stats", json!({})).await;
        let done = s["semantic"]["vectors"].as_u64().unwrap_or(0);
        assert!(
            std::time::Instant::now() < deadline,
            "nothing embedded within 60 s (is the model or ONNX Runtime missing?): {s}"
        );
        if done > 0 {
            assert!(
                done < N as u64 / 2,
                "the backlog drained too fast to test: {s}"
            );
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    signal(&engine.child, libc::SIGKILL);
    engine.child.wait().unwrap();

    let committed: i64 = rusqlite::Connection::open(home.join("vectors.db"))
        .unwrap()
        .query_row(
            "SELECT count(*) FROM vectors WHERE vec IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(committed > 0 && committed < N as i64, "{committed}");

    let mut engine = spawn(pad_semantic(&home, &socket), &socket).await;
    let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
    let s = embedded_all(&mut c).await;
    assert_eq!(s["entries"], N);
    assert_eq!(
        s["semantic"]["vectors"], N,
        "each entry once in the index: {s}"
    );
    assert_eq!(
        s["semantic"]["embedded"].as_i64().unwrap(),
        N as i64 - committed,
        "after the restart only the backlog is embedded: {s}"
    );
    signal(&engine.child, libc::SIGTERM);
    assert!(engine.child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_never_wait_for_embeddings_and_the_backlog_drains() {
    const N: usize = 10_000;
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    stats_when_settled(&mut c).await;
    let started = std::time::Instant::now();
    write_load(&h.socket, N).await;
    let wrote = started.elapsed();
    let s = ok(&mut c, "stats", json!({})).await;
    let queued = s["embed_queue"].as_u64().unwrap();
    println!("{N} writes in {wrote:?}; {queued} still to embed when the last was acknowledged");
    assert!(
        queued > N as u64 / 4,
        "writes were acknowledged at the embedding pace, as if they waited for it: {s}"
    );
    // Text search sees everything at once; meaning catches up.
    let r = ok(&mut c, "search", json!({"query": "#9999", "mode": "text"})).await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    let s = embedded_all(&mut c).await;
    println!(
        "backlog drained after {:?} ({} entries/s)",
        started.elapsed(),
        s["semantic"]["embed_per_second"]
    );
    assert_eq!(s["semantic"]["vectors"], N);
    h.stop().await;
}

#[tokio::test]
async fn reindex_and_a_model_change_embed_everything_again() {
    let h = Harness::with(|c| {
        let mut s = semantic_config(Precision::Int8);
        s.save_every = std::time::Duration::from_millis(50);
        c.semantic = Some(s);
    })
    .await;
    let mut c = h.client().await;
    for n in &corpus()[..40] {
        add(&mut c, "p", n).await;
    }
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["embedded"], 40);
    assert_eq!(s["semantic"]["model"], "all-MiniLM-L6-v2/int8");
    // Saved while running, not only at shutdown.
    let file = h
        .dir
        .path()
        .join("data")
        .join(scratchpad::semantic::INDEX_FILE);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the index is saved periodically"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let r = ok(&mut c, "reindex", json!({})).await;
    assert!(r["queued"].as_i64().unwrap() > 0, "{r}");
    let s = embedded_all(&mut c).await;
    assert_eq!(
        s["semantic"]["embedded"], 80,
        "every entry embedded once more: {s}"
    );
    assert_eq!(s["semantic"]["vectors"], 40);
    assert_eq!(best(&mut c, &corpus()[7]).await, corpus()[7]);

    // Vectors another model made (as after an upgrade of the model files)
    // are not mixed with new ones: everything is embedded again.
    let dir = h.stop().await;
    match std::fs::read_to_string(dir.path().join("database-url")) {
        Ok(url) => {
            let pool = sqlx::PgPool::connect(&url).await.unwrap();
            sqlx::query(
                "UPDATE vector_state SET value = 'all-MiniLM-L12-v2/int8' WHERE key = 'model'",
            )
            .execute(&pool)
            .await
            .unwrap();
        }
        Err(_) => {
            rusqlite::Connection::open(dir.path().join("data/vectors.db"))
                .unwrap()
                .execute(
                    "UPDATE state SET value = 'all-MiniLM-L12-v2/int8' WHERE key = 'model'",
                    [],
                )
                .unwrap();
        }
    }
    let h = Harness::in_dir(dir, |c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["model"], "all-MiniLM-L6-v2/int8");
    assert_eq!(s["semantic"]["embedded"], 40, "{s}");
    assert_eq!(s["semantic"]["vectors"], 40);
    assert_eq!(best(&mut c, &corpus()[7]).await, corpus()[7]);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_searches_by_mode_and_reindexes() {
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut engine = spawn(pad_semantic(&home, &socket), &socket).await;
    let cli = |args: &[&str]| {
        let out = pad(&home, &socket).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "pad {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    cli(&[
        "note",
        "-p",
        "ops",
        "cannot authenticate to the container registry",
    ]);
    cli(&["note", "-p", "ops", "lunch order for friday is pizza"]);
    let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
    embedded_all(&mut c).await;

    let out = cli(&[
        "search",
        "docker login failures",
        "--mode",
        "semantic",
        "-n",
        "1",
    ]);
    assert!(
        out.contains("container registry") && out.contains("semantic"),
        "{out}"
    );
    let out = cli(&["search", "docker login failures", "--mode", "text"]);
    assert!(out.contains("no matches"), "{out}");
    let out = cli(&["search", "registry"]);
    assert!(
        out.contains("container registry") && out.contains("text+semantic"),
        "{out}"
    );
    let out = cli(&["--json", "search", "registry", "--mode", "hybrid"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mode"], "hybrid");

    let out = cli(&["reindex"]);
    assert!(out.contains("re-embedding 2 entries"), "{out}");
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["embedded"], 4);
    let out = cli(&["stats"]);
    assert!(
        out.contains("semantic     ready: all-MiniLM-L6-v2/int8, 2 vectors"),
        "{out}"
    );

    signal(&engine.child, libc::SIGTERM);
    assert!(engine.child.wait().unwrap().success());
    assert!(home.join(scratchpad::semantic::INDEX_FILE).exists());
}
