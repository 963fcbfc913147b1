//! Working memory over a real socket: insights by category and confidence,
//! sharing an entry with its provenance, the markdown export within a
//! budget, and the rolling window that keeps what matters.

mod common;

use common::{add, err, ok, Harness};
use scratchpad::error::code;
use serde_json::json;

#[tokio::test]
async fn insights_filter_by_category_and_confidence() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for (content, category, confidence) in [
        ("retry the flaky login twice before failing", "pattern", 0.9),
        (
            "the staging DB drops idle connections after 5 minutes",
            "gotcha",
            0.95,
        ),
        (
            "cache hit rate doubles with a 10 minute TTL",
            "discovery",
            0.4,
        ),
    ] {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "lessons", "content": content, "kind": "insight", "category": category, "confidence": confidence}),
        )
        .await;
    }
    let r = ok(
        &mut c,
        "entry.list",
        json!({"pad": "lessons", "category": "gotcha"}),
    )
    .await;
    assert_eq!(r["entries"].as_array().unwrap().len(), 1);
    assert_eq!(r["entries"][0]["category"], "gotcha");
    let r = ok(
        &mut c,
        "entry.list",
        json!({"kind": "insight", "min_confidence": 0.8}),
    )
    .await;
    assert_eq!(r["entries"].as_array().unwrap().len(), 2);
    let r = ok(
        &mut c,
        "search",
        json!({"query": "minute", "min_confidence": 0.5}),
    )
    .await;
    let hits = r["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{r}");
    assert_eq!(hits[0]["entry"]["category"], "gotcha");
    let r = ok(
        &mut c,
        "search",
        json!({"query": "minute", "category": "discovery"}),
    )
    .await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    err(
        &mut c,
        "entry.list",
        json!({"min_confidence": 1.5}),
        code::INVALID_PARAMS,
    )
    .await;
    err(
        &mut c,
        "entry.list",
        json!({"category": "hunch"}),
        code::INVALID_PARAMS,
    )
    .await;
}

#[tokio::test]
async fn sharing_copies_an_entry_with_its_provenance() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let r = ok(
        &mut c,
        "entry.add",
        json!({"pad": "proj-a", "author": "agent-research", "content": "pin numpy<2 for the old scipy", "kind": "insight",
               "category": "gotcha", "confidence": 0.9, "tags": ["deps"], "meta": {"source": "ci log 4411"}}),
    )
    .await;
    let src = r["entry"]["id"].as_str().unwrap().to_string();
    let r = ok(
        &mut c,
        "entry.share",
        json!({"id": src, "to": ["proj-b", "Proj-C", "proj-b"]}),
    )
    .await;
    let copies = r["copies"].as_array().unwrap();
    assert_eq!(copies.len(), 2, "targets are folded and deduplicated");
    for (copy, pad) in copies.iter().zip(["proj-b", "proj-c"]) {
        assert_eq!(copy["pad"], pad);
        assert_eq!(copy["content"], "pin numpy<2 for the old scipy");
        assert_eq!(copy["category"], "gotcha");
        assert_eq!(copy["tags"], json!(["deps"]));
        assert_eq!(copy["author"], "tester", "the sharer writes the copy");
        assert_eq!(copy["meta"]["source"], "ci log 4411");
        assert_eq!(
            copy["meta"]["shared_from"],
            json!({"pad": "proj-a", "id": src, "author": "agent-research"})
        );
    }
    // Found from the other pad, and by a search across pads.
    let r = ok(&mut c, "search", json!({"query": "numpy", "pad": "proj-b"})).await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    // Across pads the three copies show once, naming the other two.
    let r = ok(&mut c, "search", json!({"query": "numpy"})).await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["hits"][0]["copies"].as_array().unwrap().len(), 2, "{r}");
    let (msg, _) = err(
        &mut c,
        "entry.share",
        json!({"id": src, "to": ["proj-a"]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("already"), "{msg}");
    err(
        &mut c,
        "entry.share",
        json!({"id": src, "to": []}),
        code::INVALID_PARAMS,
    )
    .await;
    err(
        &mut c,
        "entry.share",
        json!({"id": "zzzzzzzzzzzz", "to": ["x"]}),
        code::NOT_FOUND,
    )
    .await;
}

#[tokio::test]
async fn markdown_export_groups_sections_and_keeps_pinned_within_a_budget() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(&mut c, "entry.add", json!({"pad": "m", "content": "Goal: cut p99 latency in half", "kind": "plan", "pinned": true})).await;
    ok(&mut c, "entry.add", json!({"pad": "m", "content": "never retry POST /charge", "kind": "insight", "tags": ["important"], "category": "gotcha"})).await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "m", "content": "profile the hot path", "kind": "task"}),
    )
    .await;
    for i in 0..40 {
        add(
            &mut c,
            "m",
            &format!("working note {i:02}: {}", "details ".repeat(12)),
        )
        .await;
    }
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "m", "content": "is the cache shared across regions?", "kind": "question"}),
    )
    .await;

    let full = ok(&mut c, "pad.export", json!({"name": "m"})).await;
    let text = full["text"].as_str().unwrap();
    for heading in [
        "## Goal and plan",
        "## Tasks",
        "## Working notes",
        "## Insights",
        "## Questions",
    ] {
        assert!(text.contains(heading), "{heading} missing");
    }
    assert!(
        text.find("working note 39").unwrap() < text.find("working note 00").unwrap(),
        "newest first"
    );
    assert_eq!(full["left_out"], 0);

    let budget = 1500;
    let r = ok(&mut c, "pad.export", json!({"name": "m", "budget": budget})).await;
    let text = r["text"].as_str().unwrap();
    assert!(
        text.chars().count() <= budget,
        "{} chars",
        text.chars().count()
    );
    assert!(
        text.contains("Goal: cut p99 latency in half"),
        "pinned kept"
    );
    assert!(text.contains("never retry POST /charge"), "important kept");
    assert!(text.contains("working note 39"), "newest notes kept");
    assert!(!text.contains("working note 00"), "oldest left out");
    let left = r["left_out"].as_u64().unwrap();
    assert!(left > 0);
    assert_eq!(r["entries"].as_u64().unwrap() + left, 44);
    assert!(text.contains(&format!("Left out {left} entries")), "{text}");

    err(
        &mut c,
        "pad.export",
        json!({"name": "m", "budget": 10}),
        code::INVALID_PARAMS,
    )
    .await;
    err(
        &mut c,
        "pad.export",
        json!({"name": "m", "format": "json", "budget": 5000}),
        code::INVALID_PARAMS,
    )
    .await;
}

#[tokio::test]
async fn the_rolling_window_keeps_pinned_and_important_entries() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "w", "max_entries": 3}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "w", "content": "keep me", "tags": ["important"]}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "w", "content": "pinned", "pinned": true}),
    )
    .await;
    for i in 0..5 {
        add(&mut c, "w", &format!("n{i}")).await;
    }
    let r = ok(&mut c, "entry.list", json!({"pad": "w"})).await;
    let contents: Vec<&str> = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert!(
        contents.contains(&"keep me") && contents.contains(&"pinned"),
        "{contents:?}"
    );
    assert!(
        contents.contains(&"n4") && !contents.contains(&"n0"),
        "{contents:?}"
    );
}
