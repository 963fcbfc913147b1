//! `search {explain: true}`, on both stores: each part of the explanation —
//! a common word dropped, a filter, a copy folded, a superseded note left
//! out, each side's place and score — and that its figures are the ones
//! the ranking used (the hybrid's score is rebuilt from them).

mod common;

use common::{add, embedded_all, ok, semantic_config, Harness};
use scratchpad::client::Client;
use scratchpad::semantic::Precision;
use serde_json::{json, Value};

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

async fn explained(c: &mut Client, params: Value) -> Value {
    let mut params = params;
    params["explain"] = json!(true);
    ok(c, "search", params).await
}

#[tokio::test]
async fn a_question_says_its_dropped_words_its_weights_and_each_hits_place() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    add(
        &mut c,
        "ops",
        "we moved the staging database to db-2 on Tuesday",
    )
    .await;
    add(&mut c, "ops", "the staging cluster runs three nodes").await;
    add(&mut c, "ops", "lunch is at noon").await;
    for i in 0..20 {
        add(&mut c, "other", &format!("the database backup {i} ran")).await;
    }
    let plain = ok(
        &mut c,
        "search",
        json!({"query": "when did we move the staging database?", "mode": "text"}),
    )
    .await;
    assert!(
        plain.get("explain").is_none(),
        "nothing unless asked: {plain}"
    );
    assert!(plain["hits"][0].get("explain").is_none());

    let r = explained(
        &mut c,
        json!({"query": "when did we move the staging database?", "mode": "text"}),
    )
    .await;
    let q = &r["explain"];
    assert_eq!(q["reads_as"], "question");
    let dropped = strings(&q["dropped_common"]);
    for w in ["when", "did", "we", "the"] {
        assert!(dropped.contains(&w.to_string()), "{w} dropped: {q}");
    }
    let words: Vec<(String, u64, f64)> = q["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["word"].as_str().unwrap().to_string(),
                w["entries"].as_u64().unwrap(),
                w["weight"].as_f64().unwrap(),
            )
        })
        .collect();
    let find = |word: &str| words.iter().find(|w| w.0 == word).cloned().unwrap();
    assert_eq!(find("database").1, 21, "{q}");
    assert_eq!(find("staging").1, 2);
    assert!(
        find("staging").2 > find("database").2,
        "rarer weighs more: {q}"
    );
    assert!(
        words.windows(2).all(|w| w[0].2 >= w[1].2),
        "heaviest first: {q}"
    );
    assert!(
        !words.iter().any(|w| w.0 == "move"),
        "a word no note holds weighs nothing: {q}"
    );

    // Each hit: the words it holds, with the query's weights; its place.
    let hits = r["hits"].as_array().unwrap();
    for (i, h) in hits.iter().enumerate() {
        let why = &h["explain"];
        assert_eq!(why["text"]["rank"], i + 1);
        assert_eq!(why["score"], h["score"], "the score it ranked by");
        assert_eq!(why["text"]["score"], h["score"]);
        assert!(why.get("meaning").is_none());
        let content = h["entry"]["content"].as_str().unwrap();
        for w in why["words"].as_array().unwrap() {
            let word = w["word"].as_str().unwrap();
            assert!(content.to_lowercase().contains(word), "{word} in {content}");
            assert_eq!(w["weight"].as_f64().unwrap(), find(word).2);
        }
    }
    let moved = hits
        .iter()
        .find(|h| h["entry"]["content"] == "we moved the staging database to db-2 on Tuesday")
        .unwrap();
    let held: Vec<&str> = moved["explain"]["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["word"].as_str().unwrap())
        .collect();
    assert_eq!(
        held,
        ["moved", "staging", "database"],
        "'moved' is a form of 'move' (`terms::forms_of`), held whole: {}",
        moved["explain"]
    );
    h.stop().await;
}

#[tokio::test]
async fn the_filter_a_copy_folded_and_a_superseded_note_are_said() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    let old = add(&mut owner, "proj-a", "deploy with make release").await;
    let _copy1 = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "proj-a", "content": "deploy with make ship", "tags": ["deploy"],
               "supersedes": old["id"]}),
    )
    .await;
    for _ in 0..2 {
        ok(
            &mut owner,
            "entry.add",
            json!({"pad": "proj-a", "content": "deploy runs on fridays", "tags": ["deploy"]}),
        )
        .await;
    }
    let secret = ok(
        &mut owner,
        "token.create",
        json!({"name": "agent-x", "pads": ["proj-*"]}),
    )
    .await["secret"]
        .clone();
    let mut agent = Client::connect(&h.socket).await.unwrap();
    ok(&mut agent, "hello", json!({"token": secret})).await;

    let r = explained(
        &mut agent,
        json!({"query": "deploy", "mode": "text", "pad": "proj-a", "tags": ["deploy"]}),
    )
    .await;
    let q = &r["explain"];
    assert_eq!(q["reads_as"], "keywords");
    let filter = strings(&q["filter"]);
    for c in [
        "pad = proj-a",
        "tagged deploy",
        "only the token's pads: proj-*",
        "notes a newer note supersedes left out",
    ] {
        assert!(filter.contains(&c.to_string()), "{c}: {filter:?}");
    }
    assert_eq!(q["copies_folded"], 1, "{q}");
    assert_eq!(r["hits"].as_array().unwrap().len(), 2);
    let folded = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["entry"]["content"] == "deploy runs on fridays")
        .unwrap();
    assert_eq!(folded["copies"].as_array().unwrap().len(), 1);
    assert_eq!(q["text"]["asked"], 20);
    assert_eq!(q["words"][0]["word"], "deploy");

    // Without the tag: the superseded note matches, and is left out.
    let r = explained(
        &mut owner,
        json!({"query": "deploy", "mode": "text", "pad": "proj-a"}),
    )
    .await;
    assert_eq!(r["explain"]["superseded_left_out"], 1, "{}", r["explain"]);
    let r = explained(
        &mut owner,
        json!({"query": "deploy", "mode": "text", "pad": "proj-a", "include_superseded": true}),
    )
    .await;
    assert_eq!(r["explain"]["superseded_left_out"], 0);
    assert!(!strings(&r["explain"]["filter"])
        .iter()
        .any(|c| c.contains("supersedes")));
    h.stop().await;
}

#[tokio::test]
async fn a_hybrid_hits_score_is_rebuilt_from_its_explanation() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    for note in [
        "the integration suite fails randomly about one run in five",
        "the login page retries three times before it gives up",
        "the nightly backup finished in twelve minutes",
        "tests are slow on the arm runners",
        "we should pin the compiler version in CI",
    ] {
        add(&mut c, "dev", note).await;
    }
    embedded_all(&mut c).await;
    let r = explained(
        &mut c,
        json!({"query": "why are the tests flaky?", "pad": "dev", "limit": 5}),
    )
    .await;
    assert_eq!(r["mode"], "hybrid");
    let q = &r["explain"];
    assert_eq!(q["meaning_floor"], 0.15);
    let w = q["words_weight"]
        .as_f64()
        .expect("hybrid says the words' share");
    assert_eq!(w, 0.6, "the words' share the fusion uses");
    assert_eq!(
        q["meaning"]["asked"], 20,
        "hybrid asks each side for more than it shows"
    );
    let hits = r["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    let mut last = f64::MAX;
    for h in hits {
        let why = &h["explain"];
        let part = |side: &str| {
            why.get(side)
                .and_then(|s| s["scaled"].as_f64())
                .unwrap_or(0.0)
        };
        let rebuilt = w * part("text")
            + (1.0 - w) * part("meaning")
            + why["author_named"].as_f64().unwrap()
            + why["neighbours"].as_f64().unwrap();
        let score = h["score"].as_f64().unwrap();
        assert!(
            (rebuilt - score).abs() < 1e-9,
            "{rebuilt} vs {score}: {why}"
        );
        assert!(score <= last, "ranked by that score");
        last = score;
        let by = strings(&h["found_by"]);
        assert_eq!(by.contains(&"text".into()), why.get("text").is_some());
        assert_eq!(
            by.contains(&"semantic".into()),
            why.get("meaning").is_some()
        );
        if let Some(m) = why.get("meaning") {
            assert!(m["score"].as_f64().unwrap() >= 0.15, "above the floor: {m}");
        }
    }
    h.stop().await;
}

/// The neighbours' lift, rebuilt from the hits' explanations: each hit
/// gains half the best fused score among the hits written just before or
/// after it in its pad, and half of half for those two away (both stores'
/// `pad_neighbours`).
#[tokio::test]
async fn the_neighbours_lift_is_the_notes_beside_and_two_away() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    let notes = [
        "the integration suite fails randomly about one run in five",
        "flaky tests again on the arm runners tonight",
        "the login page retries three times before it gives up",
        "tests are slow and flaky on the arm runners",
        "we should pin the compiler version in CI",
        "the flaky integration tests were the arm runners' clock",
    ];
    let mut ids = Vec::new();
    for note in notes {
        ids.push(add(&mut c, "dev", note).await["id"].clone());
    }
    // A note elsewhere is nobody's neighbour here.
    add(&mut c, "other", "flaky tests on the arm runners").await;
    embedded_all(&mut c).await;
    let r = explained(
        &mut c,
        json!({"query": "flaky tests on the arm runners", "pad": "dev", "limit": 10}),
    )
    .await;
    let hits = r["hits"].as_array().unwrap();
    assert!(hits.len() >= 4, "most notes are hits: {r}");
    let fused: std::collections::HashMap<usize, f64> = hits
        .iter()
        .map(|h| {
            let pos = ids.iter().position(|i| *i == h["entry"]["id"]).unwrap();
            let lift = h["explain"]["neighbours"].as_f64().unwrap();
            (pos, h["score"].as_f64().unwrap() - lift)
        })
        .collect();
    let mut far_counted = false;
    for h in hits {
        let pos = ids.iter().position(|i| *i == h["entry"]["id"]).unwrap();
        let at = |d: isize| {
            let j = pos as isize + d;
            (j >= 0)
                .then(|| fused.get(&(j as usize)).copied())
                .flatten()
                .unwrap_or(0.0)
        };
        let near = at(-1).max(at(1));
        let far = 0.5 * at(-2).max(at(2));
        far_counted |= far > near;
        let expected = 0.5 * near.max(far);
        let lift = h["explain"]["neighbours"].as_f64().unwrap();
        assert!(
            (expected - lift).abs() < 1e-9,
            "note {pos}: lifted {lift}, expected {expected}: {r}"
        );
    }
    assert!(far_counted, "a hit whose best neighbour is two away: {r}");
    h.stop().await;
}

/// A question naming a note's author raises that note by the fusion's
/// `AUTHOR_NAMED` (0.2), and the explanation says so: of two notes alike
/// but for their author, the one by the person asked about comes first.
#[tokio::test]
async fn a_question_naming_the_author_raises_what_they_wrote() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    for (author, text) in [
        ("melanie", "we moved to the new flat by the river in march"),
        ("caroline", "we moved to the new flat by the river in may"),
    ] {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "chat", "content": text, "author": author}),
        )
        .await;
    }
    embedded_all(&mut c).await;
    let r = explained(
        &mut c,
        json!({"query": "when did Caroline move to the flat by the river?", "pad": "chat"}),
    )
    .await;
    let hits = r["hits"].as_array().unwrap();
    assert_eq!(hits[0]["entry"]["author"], "caroline", "{r}");
    let named = |h: &Value| h["explain"]["author_named"].as_f64().unwrap();
    assert_eq!(named(&hits[0]), 0.2, "{r}");
    let other = hits.iter().find(|h| h["entry"]["author"] == "melanie");
    assert_eq!(other.map(named), Some(0.0), "{r}");
    h.stop().await;
}

/// A hybrid search's words side ranks within a smaller budget than text
/// search (`terms::HYBRID_POSTINGS_BUDGET`): a word in more notes than
/// that is said to be dropped over the budget, and the rarer words rank.
#[tokio::test]
async fn hybrid_ranks_its_words_within_the_smaller_budget_and_says_so() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut c = h.client().await;
    add(
        &mut c,
        "ops",
        "the payment webhook fails on a bad signature",
    )
    .await;
    // The model is loaded (hybrid needs it), and the first note embedded.
    embedded_all(&mut c).await;
    // Pipelined: 3,100 notes holding "webhook" (over 3,000, under the
    // 10,000 SQLite's text search ranks within).
    for chunk in 0..31 {
        for i in 0..100 {
            c.send(
                "entry.add",
                json!({"pad": "load", "content": format!("webhook retry {} queued", chunk * 100 + i)}),
            )
            .await
            .unwrap();
        }
        c.flush().await.unwrap();
        for _ in 0..100 {
            c.response().await.unwrap().1.unwrap();
        }
    }
    let question = "why does the payment webhook fail so often?";
    let r = explained(&mut c, json!({"query": question, "mode": "hybrid"})).await;
    assert_eq!(r["mode"], "hybrid");
    let q = &r["explain"];
    assert_eq!(strings(&q["dropped_over_budget"]), ["webhook"], "{q}");
    assert_eq!(q["newest_only"], false);
    let ranked: Vec<&str> = q["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["word"].as_str().unwrap())
        .collect();
    assert!(ranked.contains(&"payment"), "{q}");
    assert_eq!(
        r["hits"][0]["entry"]["content"],
        "the payment webhook fails on a bad signature"
    );
}
