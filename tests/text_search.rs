//! Text search: whole words, word beginnings and substrings in any case,
//! questions ranked by BM25, on either store (`PAD_TEST_BACKEND`).

mod common;

use common::{add, err, hit_contents, hit_ids, ok, Harness};
use scratchpad::clock::Clock;
use scratchpad::error::code;
use serde_json::{json, Value};

/// Substrings inside words: the trigram index only narrows the candidates
/// (every trigram of the query somewhere in the entry), so what is found must
/// still contain the query itself, in any case, in any script.
#[tokio::test]
async fn substring_search_matches_the_substring_itself_in_any_case() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    add(&mut c, "sub", "the ogi and the gin").await; // every trigram of "ogin", apart
    add(&mut c, "sub", "relogin needed").await;
    add(&mut c, "sub", "Überprüfung der GRÖSSE, 50% done_ok").await;
    let r = ok(
        &mut c,
        "search",
        json!({"query": "ogin", "mode": "text", "pad": "sub"}),
    )
    .await;
    assert_eq!(hit_contents(&r), vec!["relogin needed"], "{r}");
    for q in ["PRÜFUNG", "grösse", "rÖs"] {
        let r = ok(
            &mut c,
            "search",
            json!({"query": q, "mode": "text", "pad": "sub"}),
        )
        .await;
        assert_eq!(hit_contents(&r).len(), 1, "{q}: {r}");
    }
    // LIKE's wildcards are plain characters here.
    let r = ok(
        &mut c,
        "search",
        json!({"query": "0%", "mode": "text", "pad": "sub"}),
    )
    .await;
    assert_eq!(hit_contents(&r).len(), 1, "{r}");
    let r = ok(
        &mut c,
        "search",
        json!({"query": "n_", "mode": "text", "pad": "sub"}),
    )
    .await;
    assert!(
        hit_contents(&r).is_empty(),
        "'_' is not a wildcard (as in 'ne'): {r}"
    );
    let r = ok(
        &mut c,
        "search",
        json!({"query": "e_", "mode": "text", "pad": "sub"}),
    )
    .await;
    assert_eq!(hit_contents(&r).len(), 1, "{r}");
}

#[tokio::test]
async fn text_search_is_case_insensitive_substring_ranked_and_read_your_writes() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    add(
        &mut c,
        "s",
        "The container registry refused our credentials",
    )
    .await;
    add(
        &mut c,
        "s",
        "docker login fails: docker says unauthorized; docker again",
    )
    .await;
    add(&mut c, "s", "lunch order").await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "t", "content": "Docker on another pad", "tags": ["ops"]}),
    )
    .await;
    // Immediately after the writes: no waiting for the background indexer.
    let r = ok(&mut c, "search", json!({"query": "DOCK", "mode": "text"})).await;
    let hits = r["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    assert!(
        hits[0]["entry"]["content"]
            .as_str()
            .unwrap()
            .starts_with("docker login"),
        "more matches rank first"
    );
    assert_eq!(hits[0]["found_by"], json!(["text"]));
    assert!(hits[0]["score"].as_f64().unwrap() >= hits[1]["score"].as_f64().unwrap());

    let r = ok(&mut c, "search", json!({"query": "docker unauth"})).await;
    assert!(
        r["hits"][0]["entry"]["content"]
            .as_str()
            .unwrap()
            .contains("unauthorized"),
        "the entry with every word (one as a word beginning) first: {r}"
    );
    assert_eq!(
        r["hits"].as_array().unwrap().len(),
        2,
        "then those with some of the words: {r}"
    );
    assert_eq!(
        r["mode"], "text",
        "hybrid answers as text without embeddings"
    );
    let r = ok(&mut c, "search", json!({"query": "docker", "pad": "t"})).await;
    assert_eq!(r["hits"][0]["entry"]["pad"], "t");
    let r = ok(
        &mut c,
        "search",
        json!({"query": "docker", "tags": ["ops"]}),
    )
    .await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    let r = ok(&mut c, "search", json!({"query": "on", "mode": "text"})).await;
    assert_eq!(
        r["hits"].as_array().unwrap().len(),
        2,
        "two-letter words match as substrings (c-on-tainer, on)"
    );
    let r = ok(&mut c, "search", json!({"query": "OU", "mode": "text"})).await;
    assert_eq!(
        r["hits"].as_array().unwrap().len(),
        1,
        "case-insensitive for short words too"
    );
    let r = ok(&mut c, "search", json!({"query": "docker", "limit": 1})).await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);

    // Mid-word substrings are found too, after whole-word (prefix) matches.
    add(&mut c, "u", "mocker library").await;
    add(&mut c, "u", "Docker daemon").await;
    let r = ok(&mut c, "search", json!({"query": "ocker", "pad": "u"})).await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 2, "{r}");
    let r = ok(&mut c, "search", json!({"query": "dock", "pad": "u"})).await;
    assert_eq!(
        r["hits"].as_array().unwrap().len(),
        1,
        "'dock' starts only 'Docker'"
    );
    let r = ok(&mut c, "search", json!({"query": "mock", "limit": 5})).await;
    assert_eq!(r["hits"][0]["entry"]["content"], "mocker library");

    // Edits and deletes show up at once as well.
    let lunch =
        ok(&mut c, "search", json!({"query": "lunch"})).await["hits"][0]["entry"]["id"].clone();
    ok(
        &mut c,
        "entry.update",
        json!({"id": lunch, "content": "dinner order"}),
    )
    .await;
    assert_eq!(
        ok(&mut c, "search", json!({"query": "lunch"})).await["hits"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        ok(&mut c, "search", json!({"query": "dinner"})).await["hits"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    ok(&mut c, "entry.delete", json!({"id": lunch})).await;
    assert_eq!(
        ok(&mut c, "search", json!({"query": "dinner"})).await["hits"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    err(
        &mut c,
        "search",
        json!({"query": "x", "mode": "semantic"}),
        code::UNAVAILABLE,
    )
    .await;
}

/// A question in `mode: "text"` matches any of its words, common ones
/// aside, ranked by BM25: the note sharing its rarest words comes first,
/// though no note holds every word of it.
#[tokio::test]
async fn a_question_finds_the_note_that_shares_its_rare_words() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let answer = add(
        &mut c,
        "ops",
        "Decided: the staging database moves to the new cluster on Friday; Dana signs off the cutover.",
    )
    .await;
    add(
        &mut c,
        "ops",
        "Staging deploy failed twice, the migration locks a table.",
    )
    .await;
    for i in 0..30 {
        add(
            &mut c,
            "ops",
            &format!("We looked at the database dashboards again today ({i}); nothing to do."),
        )
        .await;
    }
    // The same words in another pad: a pad filter leaves them out.
    let other = add(&mut c, "elsewhere", "the staging cutover for the database").await;

    let q = "When is the cutover of the staging database planned?";
    let r = ok(
        &mut c,
        "search",
        json!({"query": q, "mode": "text", "pad": "ops"}),
    )
    .await;
    assert_eq!(hit_ids(&r)[0], answer["id"].as_str().unwrap(), "{r}");
    assert_eq!(r["hits"][0]["found_by"], json!(["text"]));
    let scores: Vec<f64> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "ranked: {scores:?}"
    );
    assert!(
        !hit_ids(&r).contains(&other["id"].as_str().unwrap().to_string()),
        "the pad filter holds: {r}"
    );
    // Without the filter, both notes with the rare word lead.
    let r = ok(
        &mut c,
        "search",
        json!({"query": q, "mode": "text", "limit": 2}),
    )
    .await;
    let mut top = hit_ids(&r);
    top.sort();
    let mut want = vec![
        answer["id"].as_str().unwrap().to_string(),
        other["id"].as_str().unwrap().to_string(),
    ];
    want.sort();
    assert_eq!(top, want, "{r}");
    // Common words alone still find what holds them.
    let r = ok(
        &mut c,
        "search",
        json!({"query": "what is the database", "mode": "text", "pad": "ops", "limit": 50}),
    )
    .await;
    assert_eq!(hit_ids(&r).len(), 31, "{r}");
    // An author filter narrows inside the index, exactly.
    let r = ok(
        &mut c,
        "search",
        json!({"query": q, "mode": "text", "author": "nobody-here"}),
    )
    .await;
    assert!(hit_ids(&r).is_empty(), "{r}");
    // A question none of whose words occur finds nothing.
    let r = ok(
        &mut c,
        "search",
        json!({"query": "where are the giraffes sleeping?", "mode": "text"}),
    )
    .await;
    assert!(hit_ids(&r).is_empty(), "{r}");
    h.stop().await;
}

/// A question finds a note that says its words in another form ("research"
/// finds "researching", "activities" finds "activity"), and `explain` names
/// the form it matched; a form no note holds weighs nothing.
#[tokio::test]
async fn a_question_finds_its_words_in_other_forms() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let research = add(
        &mut c,
        "chat",
        "Researching adoption agencies, it has been a dream to have a family.",
    )
    .await;
    let activity = add(&mut c, "chat", "Pottery is my favourite activity lately.").await;
    for i in 0..10 {
        add(
            &mut c,
            "chat",
            &format!("Thanks for the chat ({i}), talk soon!"),
        )
        .await;
    }
    let r = ok(
        &mut c,
        "search",
        json!({"query": "what did caroline research?", "mode": "text", "pad": "chat", "explain": true}),
    )
    .await;
    assert_eq!(hit_ids(&r)[0], research["id"].as_str().unwrap(), "{r}");
    let words: Vec<&str> = r["explain"]["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["word"].as_str().unwrap())
        .collect();
    assert!(words.contains(&"researching"), "{words:?}");
    assert!(
        !words.contains(&"researched"),
        "a form no note holds weighs nothing: {words:?}"
    );
    let r = ok(
        &mut c,
        "search",
        json!({"query": "which activities does she like?", "mode": "text", "pad": "chat"}),
    )
    .await;
    assert_eq!(hit_ids(&r), [activity["id"].as_str().unwrap()], "{r}");
    h.stop().await;
}

/// A fragment searched across the store, with and without a filter, is
/// found whether it is rare or common. On PostgreSQL the two take different
/// roads (`PgStore::substring_hits`): a rare fragment's few matches come
/// from the trigram index, a common one's from the newest rows; here a
/// common fragment's only task is older than over a thousand matching
/// notes.
#[tokio::test]
async fn a_fragment_is_found_across_the_store_rare_or_common_with_any_filter() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "old", "content": "rebuild the quxbraluwyx cache", "kind": "task"}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "old", "content": "the braluwyxes are back", "author": "dana"}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "old", "content": "prune the azelkx hedge", "kind": "task"}),
    )
    .await;
    // Pipelined: over a thousand notes, each holding the fragment "zelk".
    for i in 0..1_100 {
        let pad = format!("bulk-{}", i % 3);
        let content = format!("note {i} about zelkova trees");
        c.send("entry.add", json!({"pad": pad, "content": content}))
            .await
            .unwrap();
    }
    c.flush().await.unwrap();
    for _ in 0..1_100 {
        c.response().await.unwrap().1.unwrap();
    }
    let search = |query: &str, filter: Value| {
        let mut p = json!({"query": query, "mode": "text", "limit": 10});
        p.as_object_mut()
            .unwrap()
            .extend(filter.as_object().unwrap().clone());
        p
    };
    // Rare: inside words only, so the word tiers miss it.
    let r = ok(&mut c, "search", search("raluwy", json!({}))).await;
    assert_eq!(hit_contents(&r).len(), 2, "{r}");
    let r = ok(&mut c, "search", search("raluwy", json!({"kind": "task"}))).await;
    assert_eq!(
        hit_contents(&r),
        vec!["rebuild the quxbraluwyx cache"],
        "{r}"
    );
    let r = ok(
        &mut c,
        "search",
        search("raluwy", json!({"author": "dana"})),
    )
    .await;
    assert_eq!(hit_contents(&r), vec!["the braluwyxes are back"], "{r}");
    let r = ok(&mut c, "search", search("raluwy", json!({"tags": ["x"]}))).await;
    assert!(hit_contents(&r).is_empty(), "{r}");
    // Common: the newest ten (a set cut at the cap would hold the oldest),
    // and the one task among 1,101 matches.
    let r = ok(&mut c, "search", search("elkov", json!({}))).await;
    let found = hit_contents(&r);
    assert_eq!(found.len(), 10, "{r}");
    assert!(found[0].contains("note 1099 "), "newest first: {r}");
    let r = ok(&mut c, "search", search("elk", json!({"kind": "task"}))).await;
    assert_eq!(hit_contents(&r), vec!["prune the azelkx hedge"], "{r}");
    let r = ok(&mut c, "search", search("elkov", json!({"pad": "old"}))).await;
    assert!(hit_contents(&r).is_empty(), "{r}");
    h.stop().await;
}

/// A question ranks its matches in the index first and reads the best few
/// with the filter checked (`store::text`); when the best are all notes the
/// filter leaves out, the ones that pass are still found, in rank order.
#[tokio::test]
async fn a_questions_best_matches_left_out_by_the_filter_hide_nothing() {
    let clock = Clock::manual(1_900_000_000_000);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    // Forty notes saying "zebra" four times each, in a pad that is then
    // archived: the best matches, and every one left out.
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "old-zoo", "ttl_seconds": 60}),
    )
    .await;
    for i in 0..40 {
        add(
            &mut c,
            "old-zoo",
            &format!("zebra zebra zebra zebra pen {i}"),
        )
        .await;
    }
    clock.advance(std::time::Duration::from_secs(120));
    assert_eq!(h.engine.sweep().await.unwrap().archived, ["old-zoo"]);
    let current = add(&mut c, "zoo", "the zebra moved to the north field").await;
    let r = ok(
        &mut c,
        "search",
        json!({"query": "where did the zebra go?", "mode": "text", "limit": 1}),
    )
    .await;
    assert_eq!(hit_ids(&r), [current["id"].as_str().unwrap()], "{r}");
    // A kind filter: 250 better matches of another kind, then the two
    // tasks, best first.
    for i in 0..250 {
        add(&mut c, "yard", &format!("okapi okapi okapi sighting {i}")).await;
    }
    let mut tasks = Vec::new();
    for content in ["feed the okapi", "okapi okapi vet visit for the calf"] {
        let t = ok(
            &mut c,
            "entry.add",
            json!({"pad": "yard", "content": content, "kind": "task"}),
        )
        .await;
        tasks.push(t["entry"]["id"].as_str().unwrap().to_string());
    }
    let r = ok(
        &mut c,
        "search",
        json!({"query": "when is the okapi seen?", "mode": "text", "kind": "task", "limit": 5}),
    )
    .await;
    tasks.reverse();
    assert_eq!(hit_ids(&r), tasks, "the calf's task says okapi twice: {r}");
    h.stop().await;
}

/// A question filtered by kind or tag finds a note by the kind and tags it
/// has now: changing either after the note was written moves it in or out
/// (SQLite's word index holds both, and re-reads a note whose kind or tags
/// change).
#[tokio::test]
async fn a_question_filtered_by_kind_or_tag_follows_their_changes() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for i in 0..30 {
        let text = format!("the staging database backup ran {i}");
        add(&mut c, "ops", &text).await;
    }
    let note = add(&mut c, "ops", "the staging database moved to db-2").await;
    let id = note["id"].as_str().unwrap();
    let with = |mut base: Value, more: &Value| {
        let more = more.as_object().unwrap().clone();
        base.as_object_mut().unwrap().extend(more);
        base
    };
    let question = json!({"query": "where is the staging database?", "mode": "text", "limit": 5});
    let filed = [
        (
            json!({"tags": ["infra"]}),
            json!({"tags": ["infra", "db"]}),
            json!({"tags": []}),
        ),
        (
            json!({"kind": "insight"}),
            json!({"kind": "insight"}),
            json!({"kind": "note"}),
        ),
    ];
    for (filter, change, undo) in filed {
        let ask = with(question.clone(), &filter);
        let r = ok(&mut c, "search", ask.clone()).await;
        assert!(hit_ids(&r).is_empty(), "nothing is filed so yet: {r}");
        ok(&mut c, "entry.update", with(json!({"id": id}), &change)).await;
        let r = ok(&mut c, "search", ask.clone()).await;
        assert_eq!(hit_ids(&r), [id], "filed so now: {r}");
        ok(&mut c, "entry.update", with(json!({"id": id}), &undo)).await;
        let r = ok(&mut c, "search", ask).await;
        assert!(
            !hit_ids(&r).contains(&id.to_string()),
            "no longer filed so: {r}"
        );
    }
    h.stop().await;
}

/// A question in a small pad whose words are common elsewhere: PostgreSQL
/// reads the pad rather than gathering the words' matches across the store
/// (`PgStore::any_word_hits`); either way the pad's matches, and only they,
/// come back ranked.
#[tokio::test]
async fn a_question_in_a_small_pad_finds_its_words_common_elsewhere() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for i in 0..80 {
        add(
            &mut c,
            "orchard",
            &format!("kiwi crate {i} packed for the market"),
        )
        .await;
    }
    let twice = add(&mut c, "tiny", "the kiwi crate is by the kiwi vines").await;
    let once = add(&mut c, "tiny", "one crate of kiwi left").await;
    add(&mut c, "tiny", "nothing about fruit here").await;
    if common::postgres::wanted() {
        // As autovacuum would have: PostgreSQL's statistics now name the
        // words common in the store, so the pad is read.
        let url = std::fs::read_to_string(h.dir.path().join("database-url")).unwrap();
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        sqlx::query("ANALYZE entries").execute(&pool).await.unwrap();
        pool.close().await;
    }
    let r = ok(
        &mut c,
        "search",
        json!({"query": "where is the kiwi crate now?", "mode": "text", "pad": "tiny"}),
    )
    .await;
    assert_eq!(
        hit_ids(&r),
        [twice["id"].as_str().unwrap(), once["id"].as_str().unwrap()],
        "{r}"
    );
    h.stop().await;
}

/// A word in few notes (under a hundredth) of a store whose statistics are
/// current: whole, by
/// its beginning, beside a common word, alone and filtered. PostgreSQL
/// looks such a word up in its index first (`PgStore::word_hits`: walking
/// the newest rows for it read every row, 453 ms at a million notes); the
/// answers are those of any other store.
#[tokio::test]
async fn a_rare_word_is_found_among_common_ones_whole_and_by_its_beginning() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for i in 0..300 {
        add(
            &mut c,
            "orchard",
            &format!("kiwi crate {i} packed for the market"),
        )
        .await;
    }
    let older = add(
        &mut c,
        "orchard",
        "the kiwi crate 7731 went to zephyrine farm",
    )
    .await;
    let newer = ok(
        &mut c,
        "entry.add",
        json!({"pad": "sheds", "content": "zephyrine farm asked for ticket 7731", "tags": ["farm"]}),
    )
    .await["entry"]
        .clone();
    if common::postgres::wanted() {
        let url = std::fs::read_to_string(h.dir.path().join("database-url")).unwrap();
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        sqlx::query("ANALYZE entries").execute(&pool).await.unwrap();
        pool.close().await;
    }
    let (older, newer) = (older["id"].as_str().unwrap(), newer["id"].as_str().unwrap());
    for (query, filter, expected) in [
        ("zephyrine", json!({}), vec![newer, older]),
        ("7731", json!({}), vec![newer, older]),
        ("zephyr", json!({}), vec![newer, older]),
        ("kiwi zephyrine", json!({}), vec![older]),
        ("zephyrine", json!({"tags": ["farm"]}), vec![newer]),
        ("zephyrine", json!({"pad": "orchard"}), vec![older]),
        ("zephy", json!({"pad": "sheds"}), vec![newer]),
    ] {
        // As many as expected: the tiers after the one that finds them
        // (any of the words) would add the common word's notes.
        let mut p = json!({"query": query, "mode": "text", "limit": expected.len()});
        p.as_object_mut()
            .unwrap()
            .extend(filter.as_object().unwrap().clone());
        p["explain"] = json!(true);
        let r = ok(&mut c, "search", p).await;
        assert_eq!(hit_ids(&r), expected, "{query} {filter}: {r}");
        // Found by the word index, ranked (the substring tier after it
        // would find them too, unranked: score 0).
        for hit in r["hits"].as_array().unwrap() {
            let score = hit["explain"]["text"]["score"].as_f64().unwrap();
            assert!(score > 0.0, "{query} {filter}: not by the word index: {r}");
        }
    }
    h.stop().await;
}
