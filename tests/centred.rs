//! A hybrid search's meaning list, beside the sparse list, is centred on
//! the mean of the notes it covers (`engine::centre`), on SQLite and (with
//! `PAD_TEST_BACKEND=postgres`) PostgreSQL, real models: its scores are not
//! the plain cosine `semantic` gives, and they follow the pad's notes as
//! they are written and deleted.

mod common;

use common::*;
use scratchpad::client::Client;
use serde_json::{json, Value};

const TARGET: &str = "the staging database was migrated to the new cluster on tuesday";
const QUESTION: &str = "when was the staging database migrated?";

/// `TARGET`'s meaning score in a search of pad `ops` in `mode`.
async fn meaning_score(c: &mut Client, mode: &str) -> (f64, Value) {
    let r = ok(
        c,
        "search",
        json!({"query": QUESTION, "mode": mode, "pad": "ops", "explain": true, "limit": 10}),
    )
    .await;
    let score = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["entry"]["content"] == TARGET)
        .and_then(|h| h["explain"]["meaning"]["score"].as_f64())
        .unwrap_or_else(|| panic!("the target is found by meaning in {mode}: {r}"));
    (score, r)
}

#[tokio::test]
async fn hybrid_centres_on_the_pads_mean_and_the_mean_follows_writes_and_deletes() {
    let h = Harness::with(|c| c.semantic = Some(sparse_config())).await;
    let mut c = h.client().await;
    add(&mut c, "ops", TARGET).await;
    for other in [
        "the deploy failed on staging because the disk was full",
        "password rotation for the database is due on friday",
        "the backup job runs every night at two",
    ] {
        add(&mut c, "ops", other).await;
    }
    // Another pad's notes are not the ops pad's mean.
    add(
        &mut c,
        "garden",
        "the tomatoes need water twice a day in july",
    )
    .await;
    embedded_all(&mut c).await;

    let (plain, _) = meaning_score(&mut c, "semantic").await;
    let (centred, r) = meaning_score(&mut c, "hybrid").await;
    assert!(
        r["explain"]["meaning_scores"]
            .as_str()
            .is_some_and(|s| s.starts_with("cosine centred on the mean of the notes searched")),
        "{}",
        r["explain"]
    );
    assert!(
        (plain - centred).abs() > 1e-3,
        "hybrid's meaning score {centred} is not the plain cosine {plain}"
    );
    // The same search again: the same mean, the same score.
    assert_eq!(meaning_score(&mut c, "hybrid").await.0, centred);

    // Notes written elsewhere leave the pad's mean as it was.
    add(&mut c, "garden", "prune the roses after they flower").await;
    embedded_all(&mut c).await;
    let (same, _) = meaning_score(&mut c, "hybrid").await;
    assert!((same - centred).abs() < 1e-5, "{same} against {centred}");

    // Notes written to the pad move its mean, and the score with it.
    let mut added = Vec::new();
    for n in 0..4 {
        let e = add(
            &mut c,
            "ops",
            &format!("lunch order {n}: two salads and a soup for the review"),
        )
        .await;
        added.push(e["id"].as_str().unwrap().to_string());
    }
    embedded_all(&mut c).await;
    let (moved, _) = meaning_score(&mut c, "hybrid").await;
    assert!(
        (moved - centred).abs() > 1e-3,
        "the mean followed the writes: {moved} against {centred}"
    );
    assert_eq!(meaning_score(&mut c, "semantic").await.0, plain);

    // Deleted again: the mean, and the score, are as before.
    for id in &added {
        ok(&mut c, "entry.delete", json!({"id": id})).await;
    }
    embedded_all(&mut c).await;
    let (back, _) = meaning_score(&mut c, "hybrid").await;
    assert!(
        (back - centred).abs() < 1e-5,
        "the mean followed the deletes: {back} against {centred}"
    );
    h.stop().await;
}
