//! The second hostile pass (issue 53), each finding as a test on a real
//! engine, on both stores (`PAD_TEST_BACKEND=postgres`): a token holder
//! does not answer the person's questions, change the person's pads, see
//! word counts or waiting questions from pads outside its grant, nor pass
//! look-alike agent names.

mod common;

use common::{add, err, ok, Harness};
use scratchpad::client::Client;
use scratchpad::error::code;
use serde_json::{json, Value};

async fn token(h: &Harness, owner: &mut Client, name: &str, pads: &[&str]) -> Client {
    let r = ok(owner, "token.create", json!({"name": name, "pads": pads})).await;
    let mut c = Client::connect(&h.socket).await.unwrap();
    ok(&mut c, "hello", json!({"token": r["secret"]})).await;
    c
}

fn id(v: &Value) -> String {
    v["id"]
        .as_str()
        .or(v["entry"]["id"].as_str())
        .unwrap()
        .to_owned()
}

/// Finding 3: an agent's question is the person's to answer; another
/// agent's reply is a reply, and the question stays in the person's inbox.
#[tokio::test]
async fn another_agents_reply_is_not_the_answer_to_an_agents_question() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    ok(&mut owner, "hello", json!({"author": "user"})).await;
    let mut asker = token(&h, &mut owner, "agent-a", &["inbox"]).await;
    let mut other = token(&h, &mut owner, "agent-b", &["inbox"]).await;

    let asked = ok(
        &mut asker,
        "ask",
        json!({"content": "drop the staging DB?", "choices": ["approve", "deny"], "wait_seconds": 0}),
    )
    .await;
    let q = id(&asked["question"]);
    ok(
        &mut other,
        "entry.add",
        json!({"pad": "inbox", "content": "approve", "reply_to": q}),
    )
    .await;
    let waited = ok(&mut asker, "ask", json!({"id": q, "wait_seconds": 0})).await;
    assert!(
        waited["answer"].is_null(),
        "another agent answered: {waited}"
    );
    let now = ok(&mut owner, "entry.get", json!({"id": q})).await;
    assert!(now["entry"]["answer"].is_null(), "{now}");
    assert!(
        now["entry"]["tags"]
            .as_array()
            .unwrap()
            .contains(&json!("needs_eyes")),
        "the question left the person's inbox: {now}"
    );
    let thread = ok(&mut owner, "entry.thread", json!({"id": q})).await;
    assert_eq!(thread["replies"].as_array().unwrap().len(), 1, "{thread}");

    // The person's reply is the answer.
    let mine = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "inbox", "content": "deny", "reply_to": q}),
    )
    .await;
    let waited = ok(&mut asker, "ask", json!({"id": q, "wait_seconds": 0})).await;
    assert_eq!(waited["answer"]["id"], mine["entry"]["id"]);

    // Unless the asker says otherwise: answer_from names who else may.
    let asked = ok(
        &mut asker,
        "ask",
        json!({"content": "which region?", "answer_from": ["agent-b"], "wait_seconds": 0}),
    )
    .await;
    let q = id(&asked["question"]);
    let theirs = ok(
        &mut other,
        "entry.add",
        json!({"pad": "inbox", "content": "eu-west", "reply_to": q}),
    )
    .await;
    let waited = ok(&mut asker, "ask", json!({"id": q, "wait_seconds": 0})).await;
    assert_eq!(waited["answer"]["id"], theirs["entry"]["id"]);
    h.stop().await;
}

/// Finding 7: a pad's limits and lifetime are the person's; the inbox
/// never expires.
#[tokio::test]
async fn a_token_does_not_change_the_persons_pads_and_the_inbox_never_expires() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    for i in 0..5 {
        add(&mut owner, "shared", &format!("the person's note {i}")).await;
    }
    let mut agent = token(&h, &mut owner, "agent-a", &["shared", "inbox"]).await;
    for (name, change) in [
        ("shared", json!({"max_entries": 1})),
        ("shared", json!({"ttl_seconds": 1})),
        ("inbox", json!({"ttl_seconds": 1})),
    ] {
        let mut p = change.clone();
        p["name"] = json!(name);
        let (msg, _) = err(&mut agent, "pad.configure", p, code::FORBIDDEN).await;
        assert!(msg.contains("only the owner"), "{msg}");
    }
    let listed = ok(&mut owner, "entry.list", json!({"pad": "shared"})).await;
    assert_eq!(listed["entries"].as_array().unwrap().len(), 5);

    // The owner neither: the inbox keeps what waits for the person.
    for field in ["ttl_seconds", "max_entries"] {
        let (msg, data) = err(
            &mut owner,
            "pad.configure",
            json!({"name": "inbox", field: 1}),
            code::INVALID_PARAMS,
        )
        .await;
        assert_eq!(data["field"], field, "{msg}");
        assert!(msg.contains("never expires"), "{msg}");
    }
    ok(
        &mut owner,
        "pad.configure",
        json!({"name": "shared", "max_entries": 3}),
    )
    .await;
    h.stop().await;
}

/// Findings 2 and 12: an explanation's word counts and `stats` are over
/// the token's pads.
#[tokio::test]
async fn explain_and_stats_count_only_the_tokens_pads() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    for i in 0..30 {
        add(&mut owner, "private", &format!("harbor crane {i}")).await;
    }
    add(&mut owner, "proj-a", "harbor lights").await;
    let waiting = ok(
        &mut owner,
        "ask",
        json!({"pad": "private", "content": "harbor?", "wait_seconds": 0}),
    )
    .await;
    let mut agent = token(&h, &mut owner, "agent-a", &["proj-*"]).await;

    let r = ok(
        &mut agent,
        "search",
        json!({"query": "harbor", "mode": "text", "explain": true}),
    )
    .await;
    let words = &r["explain"]["words"];
    assert_eq!(words[0]["word"], "harbor", "{r}");
    assert_eq!(words[0]["entries"], 1, "counted outside the grant: {r}");
    let theirs = ok(
        &mut owner,
        "search",
        json!({"query": "harbor", "mode": "text", "explain": true}),
    )
    .await;
    assert!(theirs["explain"]["words"][0]["entries"].as_u64().unwrap() >= 31);
    // A question's words and their forms ("harbors" → "harbor", "cranes" →
    // "crane"), counted in the token's pads alone: "crane" is held only
    // outside them.
    let r = ok(
        &mut agent,
        "search",
        json!({"query": "where are the harbors with cranes and light?", "mode": "text", "explain": true}),
    )
    .await;
    let counted: Vec<(&str, u64)> = r["explain"]["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["word"].as_str().unwrap(), w["entries"].as_u64().unwrap()))
        .collect();
    assert!(counted.contains(&("harbor", 1)), "{counted:?}");
    assert!(counted.contains(&("lights", 1)), "{counted:?}");
    assert!(
        !counted.iter().any(|(w, _)| w.starts_with("crane")),
        "counted outside the grant: {counted:?}"
    );

    // A question waited on outside the grant is not the token's to see.
    let asking = tokio::spawn({
        let socket = h.socket.clone();
        let q = id(&waiting["question"]);
        async move {
            let mut c = Client::connect(&socket).await.unwrap();
            c.call("ask", json!({"id": q, "wait_seconds": 5})).await
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while h.engine.waiting_asks() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let stats = ok(&mut agent, "stats", json!({})).await;
    assert_eq!(stats["waiting_questions"], json!([]), "{stats}");
    assert_eq!(stats["waiting_asks"], 0, "{stats}");
    assert_eq!(stats["entries"], 1, "{stats}");
    for store_wide in [
        "db_bytes",
        "pid",
        "embed_queue",
        "index_queue",
        "journal_queue",
    ] {
        assert_eq!(stats[store_wide], 0, "{store_wide}: {stats}");
    }
    assert_eq!(stats["data_dir"], "", "{stats}");
    let mine = ok(&mut owner, "stats", json!({})).await;
    assert_eq!(mine["waiting_questions"].as_array().unwrap().len(), 1);
    asking.abort();
    h.stop().await;
}

/// Finding 16: an agent's name is one `to` can reach and no look-alike of
/// another's.
#[tokio::test]
async fn an_agents_name_is_plain_ascii_not_reserved_and_without_its_at() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    for (name, says) in [
        ("\u{430}gent-zero", "U+0430"),
        ("engine", "reserved"),
        ("User", "reserved"),
        ("@helper", "leave out the '@'"),
        ("-helper", "start with a letter"),
    ] {
        let (msg, data) = err(
            &mut owner,
            "agent.add",
            json!({"name": name, "url": "http://127.0.0.1:9/"}),
            code::INVALID_PARAMS,
        )
        .await;
        assert_eq!(data["field"], "name", "{msg}");
        assert!(msg.contains(says), "{name}: {msg}");
    }
    h.stop().await;
}

/// Finding 13: a note superseded by one in a pad the token cannot read is
/// current to the token, and names no id it cannot read.
#[tokio::test]
async fn a_note_superseded_from_a_pad_the_token_cannot_read_stays_in_its_list() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    let mut agent = token(&h, &mut owner, "agent-a", &["proj-*"]).await;
    let mine = add(&mut agent, "proj-a", "the cache TTL is 60 s").await;
    let newer = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "private", "content": "the cache TTL is 30 s", "supersedes": mine["id"]}),
    )
    .await;
    let newer = id(&newer);
    let listed = ok(&mut agent, "entry.list", json!({"pad": "proj-a"})).await;
    let entries = listed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{listed}");
    assert!(entries[0]["superseded_by"].is_null(), "{listed}");
    let got = ok(&mut agent, "entry.get", json!({"id": mine["id"]})).await;
    assert!(!got.to_string().contains(&newer), "{got}");
    let found = ok(
        &mut agent,
        "search",
        json!({"query": "cache TTL", "mode": "text"}),
    )
    .await;
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");
    let md = ok(&mut agent, "pad.export", json!({"name": "proj-a"})).await;
    assert!(
        md["text"].as_str().unwrap().contains("60 s") && !md.to_string().contains(&newer),
        "{md}"
    );
    // To the owner it is superseded, as before.
    let theirs = ok(&mut owner, "entry.list", json!({"pad": "proj-a"})).await;
    assert!(theirs["entries"].as_array().unwrap().is_empty(), "{theirs}");
    h.stop().await;
}

/// Finding 5: bringing a note back never closes a loop of supersessions
/// (every note of it hidden: the pad's list empty).
#[tokio::test]
async fn restoring_a_note_that_would_close_a_supersede_loop_is_refused() {
    let h = Harness::start().await;
    let mut me = h.client().await;
    let x = id(&add(&mut me, "ops", "the DB is db-1").await);
    let b = ok(
        &mut me,
        "entry.add",
        json!({"pad": "ops", "content": "the DB is db-2", "supersedes": x}),
    )
    .await;
    let b = id(&b);
    let a = ok(
        &mut me,
        "entry.add",
        json!({"pad": "ops", "content": "the DB is db-3", "supersedes": b}),
    )
    .await;
    let a = id(&a);
    ok(&mut me, "entry.delete", json!({"id": b})).await;
    ok(&mut me, "entry.update", json!({"id": x, "supersedes": a})).await;
    let (msg, data) = err(
        &mut me,
        "entry.restore",
        json!({"id": b}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("loop"), "{msg}");
    assert_eq!(data["field"], "id");
    let listed = ok(&mut me, "entry.list", json!({"pad": "ops"})).await;
    let ids: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![x.as_str()], "{listed}");
    let found = ok(
        &mut me,
        "search",
        json!({"query": "DB", "pad": "ops", "mode": "text"}),
    )
    .await;
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");
    h.stop().await;
}

/// Finding 6: a token brings back no version of its note that would hide
/// a note it may not write.
#[tokio::test]
async fn a_token_cannot_rehide_a_note_by_restoring_an_old_version_of_its_own() {
    let h = Harness::start().await;
    let mut me = h.client().await;
    let mut agent = token(&h, &mut me, "agent-a", &["proj-*"]).await;
    let theirs = id(&add(&mut me, "private", "the person's plan").await);
    let mine = id(&add(&mut agent, "proj-a", "my plan").await);
    ok(
        &mut me,
        "entry.update",
        json!({"id": mine, "supersedes": theirs}),
    )
    .await;
    let unlinked = ok(
        &mut me,
        "entry.update",
        json!({"id": mine, "supersedes": null}),
    )
    .await;
    assert_eq!(unlinked["entry"]["version"], 3);

    let (msg, _) = err(
        &mut agent,
        "entry.restore",
        json!({"id": mine, "version": 2}),
        code::FORBIDDEN,
    )
    .await;
    assert!(msg.contains("hide that note again"), "{msg}");
    let changes = ok(&mut agent, "entry.changes", json!({"pad": "proj-a"})).await;
    let last = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == mine.as_str() && c["what"] == "edit")
        .map(|c| c["change"].clone())
        .max_by_key(|c| c.as_i64())
        .unwrap();
    let undone = ok(&mut agent, "entry.restore", json!({"change": last})).await;
    assert!(
        undone["restored"].as_array().unwrap().is_empty(),
        "{undone}"
    );
    assert_eq!(undone["skipped"][0]["id"], mine.as_str(), "{undone}");
    let private = ok(&mut me, "entry.list", json!({"pad": "private"})).await;
    assert_eq!(private["entries"][0]["id"], theirs.as_str(), "{private}");
    // The owner may.
    ok(&mut me, "entry.restore", json!({"id": mine, "version": 2})).await;
    let private = ok(&mut me, "entry.list", json!({"pad": "private"})).await;
    assert!(
        private["entries"].as_array().unwrap().is_empty(),
        "{private}"
    );
    h.stop().await;
}

/// A token's scores weigh its words over its own pads: BM25's counts of
/// notes (each word's, and all) are the notes it may read, so a score says
/// nothing of how many notes lie elsewhere or hold its words. (The foreign
/// notes are as long as its own: the mean note length is the store's.)
#[tokio::test]
async fn a_tokens_scores_weigh_words_over_its_pads_alone() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    for i in 0..6 {
        let word = if i % 2 == 0 { "harbor" } else { "meadow" };
        add(&mut owner, "proj-a", &format!("{word} cranes note n{i}")).await;
    }
    let mut agent = token(&h, &mut owner, "agent-a", &["proj-*"]).await;
    let queries = [
        // A keyword (ranked by FTS5's own BM25 on SQLite) and a question
        // (the ranked tier, told its counts).
        "harbor",
        "which harbor cranes were noted?",
    ];
    let scores = |r: &Value| -> Vec<(String, f64)> {
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (id(h), h["score"].as_f64().unwrap()))
            .collect()
    };
    let mut before = Vec::new();
    for q in queries {
        let r = ok(&mut agent, "search", json!({"query": q, "mode": "text"})).await;
        assert!(!scores(&r).is_empty(), "{q}: {r}");
        before.push(scores(&r));
    }
    for i in 0..150 {
        let word = if i % 3 == 0 { "harbor" } else { "quarry" };
        add(&mut owner, "private", &format!("{word} tunnels entry p{i}")).await;
    }
    for (q, before) in queries.iter().zip(before) {
        let r = ok(&mut agent, "search", json!({"query": q, "mode": "text"})).await;
        let after = scores(&r);
        assert_eq!(after.len(), before.len(), "{q}: {r}");
        for ((a, x), (b, y)) in before.iter().zip(&after) {
            assert_eq!(a, b, "{q}");
            assert!(
                (x - y).abs() < 1e-9,
                "{q}: the score of {a} moved with notes outside the grant: {x} -> {y}"
            );
        }
    }
    h.stop().await;
}

/// Anything that removes, hides or rewrites someone else's notes is the
/// owner's unless the grant says otherwise (`others`): a token deletes,
/// clears, supersedes and rewords its own notes, and files the person's
/// (tags, status) without touching their words.
#[tokio::test]
async fn a_token_removes_and_hides_its_own_notes_unless_its_grant_says_others() {
    let h = Harness::start().await;
    let mut me = h.client().await;
    let persons = id(&add(&mut me, "shared", "the person's plan").await);
    let mut agent = token(&h, &mut me, "agent-a", &["shared"]).await;
    let mine = id(&add(&mut agent, "shared", "my draft").await);
    for (method, params) in [
        ("entry.delete", json!({"id": persons})),
        (
            "entry.add",
            json!({"pad": "shared", "content": "a better plan", "supersedes": persons}),
        ),
        ("entry.update", json!({"id": mine, "supersedes": persons})),
        (
            "entry.update",
            json!({"id": persons, "content": "the agent's plan now"}),
        ),
        ("pad.clear", json!({"name": "shared"})),
    ] {
        let (msg, _) = err(&mut agent, method, params, code::FORBIDDEN).await;
        assert!(msg.contains("--others"), "{method}: {msg}");
    }
    let listed = ok(&mut me, "entry.list", json!({"pad": "shared"})).await;
    assert_eq!(listed["entries"].as_array().unwrap().len(), 2, "{listed}");
    let plan = ok(&mut me, "entry.get", json!({"id": persons})).await;
    assert_eq!(plan["entry"]["content"], "the person's plan", "{plan}");
    // Filing the person's note is a write, not a rewrite.
    let filed = ok(
        &mut agent,
        "entry.update",
        json!({"id": persons, "tags": ["triaged"]}),
    )
    .await;
    assert_eq!(filed["entry"]["tags"], json!(["triaged"]), "{filed}");
    // Its own: as before.
    ok(
        &mut agent,
        "entry.update",
        json!({"id": mine, "content": "my second draft"}),
    )
    .await;
    let newer = ok(
        &mut agent,
        "entry.add",
        json!({"pad": "shared", "content": "my final draft", "supersedes": mine}),
    )
    .await;
    ok(&mut agent, "entry.delete", json!({"id": id(&newer)})).await;
    // A grant that says others: the person's notes too.
    let r = ok(
        &mut me,
        "token.create",
        json!({"name": "janitor", "pads": ["shared"], "others": true}),
    )
    .await;
    assert_eq!(r["token"]["others"], true);
    let mut janitor = Client::connect(&h.socket).await.unwrap();
    ok(&mut janitor, "hello", json!({"token": r["secret"]})).await;
    ok(
        &mut janitor,
        "entry.update",
        json!({"id": persons, "content": "the person's plan, tidied"}),
    )
    .await;
    ok(&mut janitor, "entry.delete", json!({"id": persons})).await;
    ok(&mut janitor, "pad.clear", json!({"name": "shared"})).await;
    h.stop().await;
}
