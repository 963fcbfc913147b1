//! Semantic and hybrid search with the real model (all-MiniLM-L6-v2, int8,
//! from `PAD_MODEL_DIR` or the copy `scripts/model.sh` fetches from PyPI),
//! real ONNX Runtime and a real index.

mod common;

use std::collections::HashSet;

use common::*;
use scratchpad::semantic::{runtime, Model, ModelSource, Precision};
use serde_json::{json, Value};

#[path = "common/paraphrases.rs"]
mod paraphrases;
use paraphrases::{DISTRACTORS, PARAPHRASES};

/// The model the engine runs (int8 ONNX) against what the original
/// all-MiniLM-L6-v2 says: tests/data/reference-vectors.json, computed from the
/// original fp32 weights by scripts/reference_vectors.py.
#[test]
fn embeddings_match_the_reference_model() {
    let reference: Value =
        serde_json::from_str(include_str!("data/reference-vectors.json")).unwrap();
    let sentences: Vec<&str> = reference["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let expected: Vec<Vec<f32>> = reference["embeddings"]
        .as_array()
        .unwrap()
        .iter()
        .map(floats)
        .collect();
    let long = reference["truncation_case"]["text"].as_str().unwrap();
    let long_expected = floats(&reference["truncation_case"]["embedding"]);

    let data = tempfile::tempdir().unwrap();
    runtime::init(data.path()).expect("ONNX Runtime loads (run scripts/setup.sh)");
    let source = ModelSource::Dir(model_dir());
    let mut model = Model::load(&source, Precision::Int8, 1, data.path()).expect("model loads");
    // One at a time (as queries are embedded) and as one batch (as entries are).
    let mut single = Vec::new();
    for s in &sentences {
        single.push(model.embed(&[*s]).unwrap().remove(0));
    }
    let batched = model.embed(&sentences).unwrap();
    let long_got = model.embed(&[long]).unwrap().remove(0);
    let mut worst = f32::MAX;
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(single[i].len(), 384);
        for got in [&single[i], &batched[i]] {
            let c = cosine(got, want);
            assert!(
                c > 0.995,
                "{:?}: cosine {c} against the reference",
                sentences[i]
            );
            worst = worst.min(c);
        }
    }
    let long_cos = cosine(&long_got, &long_expected);
    println!("int8: lowest cosine vs reference {worst:.4}; 256-token truncation: {long_cos:.4}");
    assert!(
        long_cos > 0.995,
        "long texts are cut at 256 tokens like sentence-transformers: {long_cos}"
    );
    // Near-duplicates stay apart, paraphrases together, as in the reference.
    let pair = |v: &[Vec<f32>], a: usize, b: usize| cosine(&v[a], &v[b]);
    for (a, b) in [(0, 1), (11, 12), (0, 13)] {
        let (got, want) = (pair(&single, a, b), pair(&expected, a, b));
        assert!((got - want).abs() < 0.01, "pair {a},{b}: {got} vs {want}");
    }
}

#[tokio::test]
async fn meaning_finds_paraphrases_that_text_misses() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let mut target = Vec::new();
    for (_, note) in PARAPHRASES {
        target.push(
            add(&mut c, "team", note).await["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    for note in DISTRACTORS {
        add(&mut c, "team", note).await;
    }
    embedded_all(&mut c).await;

    let mut found = std::collections::HashMap::new();
    for mode in ["text", "semantic", "hybrid"] {
        let mut hits = 0;
        for (i, (query, _)) in PARAPHRASES.iter().enumerate() {
            let r = ok(
                &mut c,
                "search",
                json!({"query": query, "mode": mode, "limit": 5}),
            )
            .await;
            assert_eq!(r["mode"], mode, "{mode} ran as {}", r["mode"]);
            let ids: Vec<&str> = r["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["entry"]["id"].as_str().unwrap())
                .collect();
            if ids.contains(&target[i].as_str()) {
                hits += 1;
            } else {
                println!(
                    "{mode}: '{query}' missed; got {:?}",
                    r["hits"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|h| h["entry"]["content"].clone())
                        .collect::<Vec<_>>()
                );
            }
        }
        println!(
            "{mode}: target in the top 5 for {hits} of {} queries",
            PARAPHRASES.len()
        );
        found.insert(mode, hits);
    }
    let need = PARAPHRASES.len() * 9 / 10;
    assert!(found["semantic"] >= need, "semantic: {found:?}");
    assert!(found["hybrid"] >= need, "hybrid: {found:?}");
    assert!(
        found["text"] <= PARAPHRASES.len() / 4,
        "text search should mostly miss paraphrases: {found:?}"
    );
    h.stop().await;
}

#[tokio::test]
async fn hybrid_says_which_side_found_each_hit() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let exact = add(&mut c, "ops", "docker login fails with error 401").await;
    let para = add(
        &mut c,
        "ops",
        "cannot authenticate to the container registry",
    )
    .await;
    add(&mut c, "ops", "lunch order for friday is pizza").await;
    embedded_all(&mut c).await;
    let r = ok(&mut c, "search", json!({"query": "docker login"})).await;
    assert_eq!(r["mode"], "hybrid");
    let by = |id: &Value| -> HashSet<String> {
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["entry"]["id"] == *id)
            .map(|h| {
                h["found_by"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(r["hits"][0]["entry"]["id"], exact["id"], "{r}");
    assert_eq!(
        by(&exact["id"]),
        HashSet::from(["text".into(), "semantic".into()])
    );
    assert_eq!(by(&para["id"]), HashSet::from(["semantic".into()]), "{r}");
    assert!(
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["entry"]["content"] != "lunch order for friday is pizza"),
        "an unrelated note is not a hybrid hit: {r}"
    );
    h.stop().await;
}

/// A note is embedded with its author ("carol: …"): a question naming
/// someone finds what they wrote. The two questions differ only in the
/// name, so with content alone embedded one note would top both.
#[tokio::test]
async fn a_question_naming_an_author_finds_what_they_wrote() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let mut by = std::collections::HashMap::new();
    for (author, content) in [
        ("carol", "the staging database needs a bigger disk"),
        (
            "dave",
            "the staging database should move to the new cluster",
        ),
        ("erin", "lunch order for friday is pizza"),
    ] {
        let r = ok(
            &mut c,
            "entry.add",
            json!({"pad": "team", "author": author, "content": content}),
        )
        .await;
        by.insert(author, r["entry"]["id"].clone());
    }
    embedded_all(&mut c).await;
    for author in ["carol", "dave"] {
        let query = format!("what did {author} say about the staging database?");
        let r = ok(
            &mut c,
            "search",
            json!({"query": query, "mode": "semantic", "limit": 3}),
        )
        .await;
        assert_eq!(r["hits"][0]["entry"]["id"], by[author], "{query}: {r}");
    }
    h.stop().await;
}

/// 800 distinct, realistic, clustered notes (real embeddings of these have
/// the structure HNSW relies on; random vectors would not).
fn corpus() -> Vec<String> {
    let subjects = [
        "the deploy",
        "the login page",
        "the database migration",
        "the billing service",
        "the search index",
        "the mobile app",
        "the nightly backup",
        "the CI pipeline",
        "the payment webhook",
        "the cache layer",
    ];
    let predicates = [
        "failed again because of",
        "is slow today due to",
        "was fixed after",
        "needs a review from",
        "got a new owner:",
        "is blocked on",
        "passed all checks despite",
        "was rolled back after",
    ];
    let tails = [
        "Alice",
        "the security team",
        "a bad config",
        "the holiday freeze",
        "missing credentials",
        "a race condition",
        "the new release",
        "disk pressure",
        "an expired certificate",
        "network flakiness",
    ];
    let mut out = Vec::new();
    for s in subjects {
        for p in predicates {
            for t in tails {
                out.push(format!("{s} {p} {t}"));
            }
        }
    }
    out
}

/// Ids of every entry passing `filter` (entry.list params), paging through.
async fn ids_where(c: &mut scratchpad::client::Client, filter: Value) -> HashSet<String> {
    let mut ids = HashSet::new();
    let mut params = filter;
    params["limit"] = json!(1000);
    loop {
        let r = ok(c, "entry.list", params.clone()).await;
        for e in r["entries"].as_array().unwrap() {
            ids.insert(e["id"].as_str().unwrap().to_string());
        }
        match r["next_cursor"].as_str() {
            Some(cur) => params["cursor"] = json!(cur),
            None => return ids,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_semantic_search_equals_brute_force() {
    let h = Harness::with(|c| {
        let mut s = semantic_config(Precision::Int8);
        // Small enough that this corpus exercises both strategies.
        s.exact_max = 150;
        c.semantic = Some(s);
    })
    .await;
    let mut c = h.client().await;
    for (i, text) in corpus().iter().enumerate() {
        let pad = if i % 8 == 0 { "small" } else { "big" };
        let tags = if i % 2 == 0 {
            json!(["even"])
        } else {
            json!([])
        };
        ok(
            &mut c,
            "entry.add",
            json!({"pad": pad, "content": text, "tags": tags}),
        )
        .await;
    }
    embedded_all(&mut c).await;

    // The stored vectors, read straight from the store.
    let vectors = stored_vectors(h.dir.path()).await;
    assert_eq!(vectors.len(), 800);

    let semantic = h.engine.semantic().unwrap();
    let cases = [
        ("selective: one pad of 100", json!({"pad": "small"})),
        ("broad: one pad of 700", json!({"pad": "big"})),
        ("broad: a tag on half", json!({"tags": ["even"]})),
        (
            "broad: a pad and a tag",
            json!({"pad": "big", "tags": ["even"]}),
        ),
        ("none", json!({})),
    ];
    let queries = [
        "database problems",
        "who reviews the payments code",
        "certificate expired",
        "phone application is sluggish",
        "backups broke over the holidays",
    ];
    for (name, filter) in &cases {
        let allowed = ids_where(&mut c, filter.clone()).await;
        for q in queries {
            let qv = semantic.query_vector(q).await.unwrap();
            let mut brute: Vec<(f32, &str)> = vectors
                .iter()
                .filter(|(id, _)| allowed.contains(id))
                .map(|(id, v)| (cosine(&qv, v), id.as_str()))
                .collect();
            brute.sort_by(|a, b| b.0.total_cmp(&a.0));
            let want: Vec<&str> = brute.iter().take(10).map(|(_, id)| *id).collect();

            let mut params = filter.clone();
            params["query"] = json!(q);
            params["mode"] = json!("semantic");
            params["limit"] = json!(10);
            let r = ok(&mut c, "search", params).await;
            let got: Vec<&str> = r["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["entry"]["id"].as_str().unwrap())
                .collect();
            assert_eq!(
                got, want,
                "{name}, '{q}': the top 10 differ from a brute-force scan"
            );
            for (hit, (score, _)) in r["hits"].as_array().unwrap().iter().zip(&brute) {
                assert!((hit["score"].as_f64().unwrap() as f32 - score).abs() < 1e-4);
                assert_eq!(hit["found_by"], json!(["semantic"]));
            }
        }
    }
    h.stop().await;
}

/// Top semantic hit's content for `query`.
async fn best(c: &mut scratchpad::client::Client, query: &str) -> String {
    let r = ok(
        c,
        "search",
        json!({"query": query, "mode": "semantic", "limit": 1}),
    )
    .await;
    r["hits"][0]["entry"]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn edits_are_re_embedded_and_deletions_leave_the_index() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let note = add(&mut c, "ops", "the cat sleeps on the warm windowsill").await;
    let other = add(&mut c, "ops", "quarterly revenue grew by twelve percent").await;
    add(&mut c, "misc", "Paris is the capital of France").await;
    let s = embedded_all(&mut c).await;
    assert_eq!(
        best(&mut c, "a kitten napping in the sun").await,
        "the cat sleeps on the warm windowsill"
    );

    // A change of kind or tags leaves the text: nothing is embedded again.
    let embedded = s["semantic"]["embedded"].clone();
    ok(
        &mut c,
        "entry.update",
        json!({"id": note["id"], "tags": ["pets"], "kind": "insight"}),
    )
    .await;
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["embedded"], embedded, "{s}");

    ok(
        &mut c,
        "entry.update",
        json!({"id": note["id"], "content": "cannot authenticate to the container registry"}),
    )
    .await;
    let s = embedded_all(&mut c).await;
    assert_eq!(
        s["semantic"]["vectors"], 3,
        "an edit replaces the vector: {s}"
    );
    assert_eq!(
        best(&mut c, "docker login failures").await,
        "cannot authenticate to the container registry"
    );
    assert_ne!(
        best(&mut c, "a kitten napping in the sun").await,
        "the cat sleeps on the warm windowsill"
    );
    let seq = |id: &Value| -> i64 {
        let (lo, _) = scratchpad::id::prefix_range(id.as_str().unwrap()).unwrap();
        lo
    };
    assert_eq!(
        h.engine.semantic().unwrap().index_count(seq(&note["id"])),
        1
    );

    ok(&mut c, "entry.delete", json!({"id": other["id"]})).await;
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["vectors"], 2, "{s}");
    assert_eq!(
        h.engine.semantic().unwrap().index_count(seq(&other["id"])),
        0
    );
    let r = ok(
        &mut c,
        "search",
        json!({"query": "revenue growth", "mode": "semantic"}),
    )
    .await;
    assert!(r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["entry"]["id"] != other["id"]));

    ok(&mut c, "pad.clear", json!({"name": "ops"})).await;
    let s = embedded_all(&mut c).await;
    assert_eq!(
        s["semantic"]["vectors"], 1,
        "a cleared pad leaves the index: {s}"
    );
    h.stop().await;
}

#[tokio::test]
async fn archived_pads_are_not_searched_by_meaning() {
    let clock = scratchpad::clock::Clock::manual(1_800_000_000_000);
    let h = Harness::with(|c| {
        c.semantic = Some(semantic_config(Precision::Int8));
        c.clock = clock.clone();
    })
    .await;
    let mut c = h.client().await;
    add(
        &mut c,
        "old",
        "cannot authenticate to the container registry",
    )
    .await;
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "old", "ttl_seconds": 60}),
    )
    .await;
    add(&mut c, "live", "the cat sleeps on the warm windowsill").await;
    embedded_all(&mut c).await;
    clock.advance(std::time::Duration::from_secs(61));
    ok(&mut c, "pad.touch", json!({"name": "live"})).await;
    let swept = h.engine.sweep().await.unwrap();
    assert_eq!(swept.archived, vec!["old".to_string()]);
    for mode in ["semantic", "hybrid"] {
        let r = ok(
            &mut c,
            "search",
            json!({"query": "docker login failures", "mode": mode}),
        )
        .await;
        assert!(
            r["hits"]
                .as_array()
                .unwrap()
                .iter()
                .all(|h| h["entry"]["pad"] != "old"),
            "{mode}: {r}"
        );
    }
    // Restoring the pad brings its entries back, vectors and all.
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "old", "ttl_seconds": 3600}),
    )
    .await;
    assert_eq!(
        best(&mut c, "docker login failures").await,
        "cannot authenticate to the container registry"
    );
    h.stop().await;
}

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

/// Every live stored vector, by entry id: from `vectors.db`, or from the
/// shared database when the suite runs on PostgreSQL.
async fn stored_vectors(dir: &std::path::Path) -> Vec<(String, Vec<f32>)> {
    let floats = |blob: &[u8]| -> Vec<f32> {
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    let rows: Vec<(i64, Vec<u8>)> = match std::fs::read_to_string(dir.join("database-url")) {
        Ok(url) => {
            let pool = sqlx::PgPool::connect(&url).await.unwrap();
            sqlx::query_as("SELECT seq, vec FROM vectors WHERE vec IS NOT NULL")
                .fetch_all(&pool)
                .await
                .unwrap()
        }
        Err(_) => {
            let db = rusqlite::Connection::open(dir.join("data/vectors.db")).unwrap();
            let mut stmt = db
                .prepare("SELECT seq, vec FROM vectors WHERE vec IS NOT NULL")
                .unwrap();
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            rows
        }
    };
    rows.into_iter()
        .map(|(seq, blob)| (scratchpad::id::encode(seq), floats(&blob)))
        .collect()
}
