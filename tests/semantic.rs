//! Semantic and hybrid search with the real model (all-MiniLM-L6-v2 from
//! `PAD_MODEL_DIR` or ../shared/models), real ONNX Runtime and a real index.

mod common;

use std::collections::HashSet;

use common::*;
use scratchpad::semantic::{runtime, Model, ModelSource, Precision};
use serde_json::{json, Value};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

#[test]
fn embeddings_match_the_reference_model() {
    let reference: Value = serde_json::from_slice(
        &std::fs::read(model_dir().join("reference.json")).expect("reference.json"),
    )
    .unwrap();
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
    for precision in [Precision::Fp32, Precision::Int8] {
        let mut model = Model::load(&source, precision, data.path()).expect("model loads");
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
                worst = worst.min(cosine(got, want));
            }
        }
        let long_cos = cosine(&long_got, &long_expected);
        println!(
            "{}: lowest cosine vs reference {worst:.4}; 762-token text truncated to 256: {long_cos:.4}",
            precision.as_str()
        );
        match precision {
            Precision::Fp32 => {
                assert!(worst > 0.99, "fp32 must match the reference: {worst}");
                assert!(
                    long_cos > 0.99,
                    "fp32 truncates like sentence-transformers: {long_cos}"
                );
            }
            // The int8 weights trade a little accuracy for speed; the README
            // of the model measured 0.987–0.989 against fp32.
            Precision::Int8 => {
                assert!(worst > 0.98, "int8 stays close to the reference: {worst}");
                assert!(long_cos > 0.98, "{long_cos}");
            }
        }
    }
}

/// Dev-team notes, and for each of the first ones a question that means the
/// same but shares no important word with it.
const PARAPHRASES: &[(&str, &str)] = &[
    (
        "docker login failures",
        "cannot authenticate to the container registry",
    ),
    (
        "how do we make the build quicker",
        "compile times dropped after enabling incremental caching",
    ),
    (
        "database is sluggish",
        "queries against postgres take seconds since the index was dropped",
    ),
    (
        "server keeps crashing overnight",
        "the backend process dies every evening around 11pm",
    ),
    (
        "who owns the release",
        "Maria is responsible for shipping version 2.3",
    ),
    (
        "customer complaints about billing",
        "several users reported being charged twice for their subscription",
    ),
    (
        "tests are flaky",
        "the integration suite fails randomly about one run in five",
    ),
    (
        "we need to rotate secrets",
        "API keys and passwords must be replaced before the audit",
    ),
    (
        "website is down",
        "the landing page returns 502 errors for everyone",
    ),
    (
        "improve search relevance",
        "ranking results better so the right documents come first",
    ),
    (
        "notes from the planning session",
        "summary of what we decided in Tuesday's roadmap discussion",
    ),
    (
        "translate the app into Spanish",
        "localization for users in Mexico and Spain",
    ),
    (
        "memory leak in the worker",
        "RAM usage of the background job grows until it is killed",
    ),
    (
        "book time off",
        "I will be away on holiday from June 3 to June 14",
    ),
    (
        "GPU not detected",
        "CUDA reports no graphics card available on the training machine",
    ),
    (
        "upgrade dependencies",
        "bump library versions to their latest releases",
    ),
    (
        "encrypt the backups",
        "archived snapshots should be protected with AES before upload",
    ),
    (
        "phone app crashes on launch",
        "mobile client quits immediately after opening on Android",
    ),
    (
        "rate limiting for the API",
        "throttle clients that send too many requests per minute",
    ),
    (
        "write onboarding documentation",
        "a guide to help new hires get started",
    ),
];

const DISTRACTORS: &[&str] = &[
    "lunch order for friday is pizza",
    "the cat knocked over the plant",
    "renewed the domain for another year",
    "coffee machine on floor 3 is broken",
    "quarterly revenue grew 12 percent",
    "photos from the Paris trip are uploaded",
    "switch the logo color to dark blue",
    "the office wifi password changed",
    "refactored the parser module into smaller functions",
    "added a dark mode toggle to settings",
    "migrated CI from Jenkins to GitHub Actions",
    "benchmarks show p99 latency of 4 ms",
    "the font on the invoice PDF is too small",
    "bought new chairs for the meeting room",
    "the README has a typo in the install section",
    "rename the variable cfg to config",
    "team offsite is planned for September",
    "interview a candidate for the frontend role on Monday",
    "the printer on the second floor jams",
    "updated the privacy policy text",
    "the chart colors are hard to read",
    "moved the cron job to run hourly",
    "the logo file is missing from the assets folder",
    "added unit tests for the date parser",
    "removed the deprecated v1 endpoints",
    "the staging database was reset",
    "dashboards now show weekly totals",
    "we picked spaces over tabs",
    "sent the contract to legal for review",
    "the demo went well, the client wants a follow-up",
];

#[tokio::test]
async fn meaning_finds_paraphrases_that_text_misses_int8() {
    paraphrases(Precision::Int8).await;
}

#[tokio::test]
async fn meaning_finds_paraphrases_that_text_misses_fp32() {
    paraphrases(Precision::Fp32).await;
}

async fn paraphrases(precision: Precision) {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(precision))).await;
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
            "{} {mode}: target in the top 5 for {hits} of {} queries",
            precision.as_str(),
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
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::default()))).await;
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
