//! The third hostile pass (issue 66), each finding as a test on a real
//! engine, on both stores (`PAD_TEST_BACKEND=postgres`): a token acts only
//! as itself, `null` is checked as what the engine does with it, rewording
//! through a restore follows `entry.update`'s rules, what makes a question
//! a question is the asker's, no delivery names a question the token may
//! not read, a revoked token's wait ends without the answer, and no token
//! takes a name the engine gives a meaning.

mod common;

use std::time::{Duration, Instant};

use common::{add, err, ok, Harness};
use scratchpad::client::Client;
use scratchpad::error::code;
use serde_json::{json, Value};

async fn token(h: &Harness, owner: &mut Client, grant: Value) -> (Client, String) {
    let r = ok(owner, "token.create", grant).await;
    let secret = r["secret"].as_str().unwrap().to_owned();
    let mut c = Client::connect(&h.socket).await.unwrap();
    ok(&mut c, "hello", json!({"token": secret})).await;
    (c, secret)
}

fn id(v: &Value) -> String {
    v["id"]
        .as_str()
        .or(v["entry"]["id"].as_str())
        .unwrap()
        .to_owned()
}

async fn person(h: &Harness) -> Client {
    let mut owner = h.client().await;
    ok(&mut owner, "hello", json!({"author": "user"})).await;
    owner
}

/// Finding 1 (high): a token claims, heartbeats and completes tasks as
/// itself, never as the person.
#[tokio::test]
async fn a_token_works_on_tasks_as_itself_alone() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut agent, _) = token(&h, &mut owner, json!({"name": "agent-a", "pads": ["proj"]})).await;
    for i in 0..3 {
        ok(
            &mut owner,
            "entry.add",
            json!({"pad": "proj", "content": format!("step {i}"), "kind": "task"}),
        )
        .await;
    }
    // The person holds one task.
    let mine = ok(&mut owner, "task.claim", json!({"pad": "proj"})).await;
    let mine = id(&mine["entry"]);
    assert_eq!(
        ok(&mut owner, "entry.get", json!({"id": mine})).await["entry"]["assignee"],
        "user"
    );

    for (method, params) in [
        ("task.claim", json!({"pad": "proj", "agent": "user"})),
        ("task.claim", json!({"pad": "proj", "agent": "USER "})),
        (
            "task.heartbeat",
            json!({"id": mine, "agent": "user", "resume": "mine now"}),
        ),
        ("task.complete", json!({"id": mine, "agent": "user"})),
        ("task.fail", json!({"id": mine, "agent": "user"})),
        (
            "entry.add",
            json!({"pad": "proj", "content": "as the person", "author": "user"}),
        ),
        ("inbox", json!({"author": "user"})),
    ] {
        let (message, _) = err(&mut agent, method, params, code::FORBIDDEN).await;
        assert!(
            message.contains("acts only as itself") && message.contains("agent-a"),
            "{method}: {message}"
        );
    }
    // Without `agent`, a heartbeat or an end is the token's: the person's
    // task is not its to touch.
    for method in ["task.heartbeat", "task.complete", "task.fail"] {
        err(
            &mut agent,
            method,
            json!({"id": mine, "resume": "mine now"}),
            code::CONFLICT,
        )
        .await;
    }
    // Nor by filing it: a task someone holds is finished by its holder, and
    // a token assigns a task to itself alone.
    for patch in [
        json!({"id": mine, "status": "done"}),
        json!({"id": mine, "assignee": "agent-a"}),
        json!({"id": mine, "resume": "mine now"}),
    ] {
        let (message, _) = err(&mut agent, "entry.update", patch, code::FORBIDDEN).await;
        assert!(message.contains("'user' holds it"), "{message}");
    }
    let free = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "proj", "content": "unclaimed", "kind": "note"}),
    )
    .await;
    let (message, _) = err(
        &mut agent,
        "entry.update",
        json!({"id": id(&free), "assignee": "user"}),
        code::FORBIDDEN,
    )
    .await;
    assert!(message.contains("only to itself"), "{message}");
    let held = ok(&mut owner, "entry.get", json!({"id": mine})).await["entry"].clone();
    assert_eq!(held["assignee"], "user", "{held}");
    assert_eq!(held["status"], "doing", "{held}");
    assert!(held["resume"].is_null(), "{held}");

    // Its own claim is in its own name, and so is its report.
    let claimed = ok(&mut agent, "task.claim", json!({"pad": "proj"})).await;
    assert_eq!(claimed["entry"]["assignee"], "agent-a", "{claimed}");
    let done = ok(
        &mut agent,
        "task.complete",
        json!({"id": id(&claimed["entry"]), "agent": "Agent-A"}),
    )
    .await;
    assert_eq!(done["entry"]["status"], "done", "{done}");
    assert_eq!(done["entry"]["assignee"], "agent-a", "{done}");
    h.stop().await;
}

/// Finding 2: `ask` with `"pad": null` or `"id": null` is a new question in
/// the inbox, and is checked as one.
#[tokio::test]
async fn a_null_pad_or_id_is_checked_as_what_the_engine_does_with_it() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut reader, _) = token(
        &h,
        &mut owner,
        json!({"name": "reader", "pads": ["proj"], "read_only": true}),
    )
    .await;
    let (mut writer, _) = token(&h, &mut owner, json!({"name": "writer", "pads": ["proj"]})).await;
    for c in [&mut reader, &mut writer] {
        for params in [
            json!({"content": "look at this?", "pad": null, "wait_seconds": 0}),
            json!({"content": "look at this?", "id": null, "wait_seconds": 0}),
            json!({"content": "look at this?", "pad": null, "id": null, "wait_seconds": 0}),
            json!({"content": "look at this?", "wait_seconds": 0}),
        ] {
            err(c, "ask", params, code::FORBIDDEN).await;
        }
    }
    let inbox = ok(&mut owner, "entry.list", json!({"pad": "inbox"})).await;
    assert_eq!(inbox["entries"], json!([]), "{inbox}");
    // Its own pad it may ask in, and a null there is the inbox's refusal.
    let asked = ok(
        &mut writer,
        "ask",
        json!({"content": "fine here?", "pad": "proj", "wait_seconds": 0}),
    )
    .await;
    assert_eq!(asked["question"]["pad"], "proj");
    err(
        &mut reader,
        "ask",
        json!({"content": "and here?", "pad": "proj", "wait_seconds": 0}),
        code::FORBIDDEN,
    )
    .await;
    h.stop().await;
}

/// Finding 3: a token without `others` rewords the person's note neither
/// by restoring an earlier version nor by undoing the person's edit.
#[tokio::test]
async fn a_restore_that_rewords_follows_the_rules_of_an_edit() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut agent, _) = token(&h, &mut owner, json!({"name": "agent-a", "pads": ["proj"]})).await;
    let note = id(&add(&mut owner, "proj", "the person's first words").await);
    ok(
        &mut owner,
        "entry.update",
        json!({"id": note, "content": "the person's second words"}),
    )
    .await;
    err(
        &mut agent,
        "entry.update",
        json!({"id": note, "content": "the token's words"}),
        code::FORBIDDEN,
    )
    .await;
    let (message, _) = err(
        &mut agent,
        "entry.restore",
        json!({"id": note, "version": 1}),
        code::FORBIDDEN,
    )
    .await;
    assert!(message.contains("may not rewrite"), "{message}");
    let changes = ok(
        &mut owner,
        "entry.changes",
        json!({"pad": "proj", "include_created": false}),
    )
    .await;
    let edit = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["what"] == "edit")
        .unwrap_or_else(|| panic!("no edit in {changes}"))["change"]
        .clone();
    let undone = ok(&mut agent, "entry.restore", json!({"change": edit})).await;
    assert_eq!(undone["restored"], json!([]), "{undone}");
    assert!(
        undone["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("may not rewrite"),
        "{undone}"
    );
    let now = ok(&mut owner, "entry.get", json!({"id": note})).await;
    assert_eq!(now["entry"]["content"], "the person's second words");
    assert_eq!(now["entry"]["version"], 2);

    // Its own note it may take back; filing the person's note it still may.
    let own = id(&add(&mut agent, "proj", "the token's first").await);
    ok(
        &mut agent,
        "entry.update",
        json!({"id": own, "content": "the token's second"}),
    )
    .await;
    ok(
        &mut agent,
        "entry.restore",
        json!({"id": own, "version": 1}),
    )
    .await;
    ok(
        &mut agent,
        "entry.update",
        json!({"id": note, "tags": ["filed"]}),
    )
    .await;
    // A token that may reword others' notes may restore them too.
    let (mut editor, _) = token(
        &h,
        &mut owner,
        json!({"name": "editor", "pads": ["proj"], "others": true}),
    )
    .await;
    let back = ok(
        &mut editor,
        "entry.restore",
        json!({"id": note, "version": 1}),
    )
    .await;
    assert_eq!(back["restored"][0]["content"], "the person's first words");
    h.stop().await;
}

/// Finding 4: another token cannot make its reply the answer to a question
/// an agent put to the person by first changing the question's kind or
/// `meta.answer_from`.
#[tokio::test]
async fn what_makes_a_question_a_question_is_the_askers() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut asker, _) = token(
        &h,
        &mut owner,
        json!({"name": "agent-a", "pads": ["inbox"]}),
    )
    .await;
    let (mut other, _) = token(
        &h,
        &mut owner,
        json!({"name": "agent-b", "pads": ["inbox"], "others": true}),
    )
    .await;
    let asked = ok(
        &mut asker,
        "ask",
        json!({"content": "drop the staging DB?", "wait_seconds": 0}),
    )
    .await;
    let q = id(&asked["question"]);
    for patch in [
        json!({"id": q, "kind": "note"}),
        json!({"id": q, "meta": {"answer_from": ["agent-b"]}}),
        json!({"id": q, "meta": {"answer_from": ["*"]}}),
        json!({"id": q, "meta": null}),
    ] {
        let (message, _) = err(&mut other, "entry.update", patch, code::FORBIDDEN).await;
        assert!(message.contains("a question"), "{message}");
    }
    // Nor may it turn the person's note into a question of its making.
    let note = id(&add(&mut owner, "inbox", "a plain note").await);
    err(
        &mut other,
        "entry.update",
        json!({"id": note, "kind": "question", "meta": {"answer_from": ["agent-b"]}}),
        code::FORBIDDEN,
    )
    .await;
    // Its reply stays a reply; the person's question stays the person's.
    ok(
        &mut other,
        "entry.add",
        json!({"pad": "inbox", "content": "yes, drop it", "reply_to": q}),
    )
    .await;
    let waited = ok(&mut asker, "ask", json!({"id": q, "wait_seconds": 0})).await;
    assert!(waited["answer"].is_null(), "{waited}");
    let now = ok(&mut owner, "entry.get", json!({"id": q})).await["entry"].clone();
    assert_eq!(now["kind"], "question");
    assert!(
        now["tags"]
            .as_array()
            .unwrap()
            .contains(&json!("needs_eyes")),
        "{now}"
    );
    // The asker may change its own question, and the person anyone's.
    ok(
        &mut asker,
        "entry.update",
        json!({"id": q, "meta": {"answer_from": ["agent-b"]}}),
    )
    .await;
    ok(
        &mut owner,
        "entry.update",
        json!({"id": note, "kind": "insight"}),
    )
    .await;
    h.stop().await;
}

/// Finding 5: a token's deliveries do not name the engine's give-up
/// question when it sits in a pad the token cannot read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_names_no_question_the_token_may_not_read() {
    let h = Harness::with(|c| c.agent_give_up = Duration::from_millis(300)).await;
    let mut owner = person(&h).await;
    // An agent that shows its card, then goes away for good.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let card = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(|| async {
            let card = json!({"name": "Stand-in", "description": "gone soon",
                              "version": "1", "protocolVersion": "0.3.0", "skills": []});
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                card.to_string(),
            )
        }),
    );
    let serving = tokio::spawn(async move { axum::serve(listener, card).await });
    ok(
        &mut owner,
        "agent.add",
        json!({"name": "helper", "url": url}),
    )
    .await;
    serving.abort();
    let _ = serving.await;
    let mine = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "secret", "content": "for the helper", "to": ["helper"]}),
    )
    .await;
    let mine = id(&mine);
    let question = wait_for_question(&mut owner, &mine).await;
    let (mut agent, _) = token(
        &h,
        &mut owner,
        json!({"name": "agent-a", "pads": ["proj"], "agents": ["helper"]}),
    )
    .await;
    let theirs = ok(
        &mut agent,
        "entry.add",
        json!({"pad": "proj", "content": "also for the helper", "to": ["helper"]}),
    )
    .await;
    let theirs = id(&theirs);
    // The owner sees the one question shared by both.
    assert_eq!(wait_for_question(&mut owner, &theirs).await, question);
    let seen = ok(&mut agent, "agent.deliveries", json!({})).await;
    assert!(!seen.to_string().contains(&question), "{seen}");
    let one = ok(&mut agent, "agent.deliveries", json!({"entry": theirs})).await;
    assert!(one["deliveries"][0]["question"].is_null(), "{one}");
    h.stop().await;
}

async fn wait_for_question(c: &mut Client, note: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let d = ok(c, "agent.deliveries", json!({"entry": note})).await;
        if let Some(q) = d["deliveries"][0]["question"].as_str() {
            return q.to_owned();
        }
        assert!(Instant::now() < deadline, "no give-up question: {d}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Finding 8: a token revoked while its `ask` waits gets the refusal, not
/// the answer the person writes after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_tokens_wait_ends_without_the_answer() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut agent, _) = token(
        &h,
        &mut owner,
        json!({"name": "agent-a", "pads": ["inbox"]}),
    )
    .await;
    let asked = ok(
        &mut agent,
        "ask",
        json!({"content": "may I?", "wait_seconds": 0}),
    )
    .await;
    let q = id(&asked["question"]);
    let waiting = tokio::spawn(async move {
        let started = Instant::now();
        let r = agent
            .call("ask", json!({"id": q, "wait_seconds": 60}))
            .await;
        (r, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    ok(&mut owner, "token.revoke", json!({"name": "agent-a"})).await;
    let q = id(&asked["question"]);
    ok(
        &mut owner,
        "entry.add",
        json!({"pad": "inbox", "content": "the secret answer", "reply_to": q}),
    )
    .await;
    let (r, took) = waiting.await.unwrap();
    let e = r.expect_err("the revoked token's wait answered");
    assert!(e.to_string().contains("revoked"), "{e}");
    assert!(!e.to_string().contains("secret answer"), "{e}");
    assert!(took < Duration::from_secs(30), "the wait ran on: {took:?}");
    h.stop().await;
}

/// Finding 8, the rest of what a token holds: its subscription ends at
/// the revocation, with no event to come (it once stayed open until the
/// next event of its pads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_tokens_subscription_ends_without_an_event() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut agent, _) = token(
        &h,
        &mut owner,
        json!({"name": "watcher", "pads": ["quiet"]}),
    )
    .await;
    ok(&mut agent, "subscribe", json!({"pads": ["quiet"]})).await;
    let subscribers = |s: &Value| s["subscribers"].as_u64().unwrap();
    let before = subscribers(&ok(&mut owner, "stats", json!({})).await);
    assert!(before >= 1, "{before}");
    ok(&mut owner, "token.revoke", json!({"name": "watcher"})).await;
    let started = Instant::now();
    loop {
        let now = subscribers(&ok(&mut owner, "stats", json!({})).await);
        if now < before {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the revoked token still subscribes ({now})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    h.stop().await;
}

/// The review of the typed seal: a shared copy's `meta.shared_from` and a
/// loop of dependencies through a note of another pad named that note to a
/// token (neither is a typed field: the one sits in free-form `meta`, the
/// other in an error). Both now say it as a note it may not read.
#[tokio::test]
async fn a_shared_copy_and_a_cycle_name_no_note_the_token_may_not_read() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut agent, _) = token(&h, &mut owner, json!({"name": "agent-o", "pads": ["open"]})).await;
    let hidden = id(&add(&mut owner, "secret", "the source").await);
    let shared = ok(
        &mut owner,
        "entry.share",
        json!({"id": hidden, "to": ["open"]}),
    )
    .await;
    let copy = id(&shared["copies"][0]);
    let seen = ok(&mut agent, "entry.get", json!({"id": copy})).await;
    assert!(!seen.to_string().contains(&hidden), "{seen}");
    assert!(seen["entry"]["meta"]["shared_from"].is_null(), "{seen}");
    // The owner still sees where it came from.
    let own = ok(&mut owner, "entry.get", json!({"id": copy})).await;
    assert_eq!(own["entry"]["meta"]["shared_from"]["id"], hidden.as_str());

    // s (secret) waits on o2; o1 waits on s; the token makes o2 wait on o1.
    let task = |pad: &str| json!({"pad": pad, "content": "step", "kind": "task"});
    let o1 = id(&ok(&mut owner, "entry.add", task("open")).await);
    let o2 = id(&ok(&mut owner, "entry.add", task("open")).await);
    let s = id(&ok(&mut owner, "entry.add", task("secret")).await);
    ok(
        &mut owner,
        "entry.update",
        json!({"id": s, "depends_on": [o2]}),
    )
    .await;
    ok(
        &mut owner,
        "entry.update",
        json!({"id": o1, "depends_on": [s]}),
    )
    .await;
    let (message, data) = err(
        &mut agent,
        "entry.update",
        json!({"id": o2, "depends_on": [o1]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(message.contains("would make a cycle"), "{message}");
    assert!(
        !message.contains(&s) && !data.to_string().contains(&s),
        "{message} {data}"
    );
    assert!(message.contains("(a note you cannot read)"), "{message}");
    // The owner is told the whole loop.
    let (message, _) = err(
        &mut owner,
        "entry.update",
        json!({"id": o2, "depends_on": [o1]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(message.contains(&s), "{message}");
    h.stop().await;
}

/// Finding 9: no token takes a name the engine gives a meaning.
#[tokio::test]
async fn a_token_cannot_take_the_persons_or_the_engines_name() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    // Look-alikes too: a Cyrillic 'е', punctuation about the name.
    for name in [
        "user",
        "User ",
        "engine",
        "anonymous",
        "owner",
        "system",
        "us\u{435}r",
        "user.",
        "_engine",
    ] {
        let (message, _) = err(
            &mut owner,
            "token.create",
            json!({"name": name, "pads": ["*"]}),
            code::INVALID_PARAMS,
        )
        .await;
        assert!(
            message.contains("cannot be a token's name") || message.contains("no look-alike"),
            "{message}"
        );
    }
    let tokens = ok(&mut owner, "token.list", json!({})).await;
    assert_eq!(tokens["tokens"], json!([]), "{tokens}");
    h.stop().await;
}

/// Finding 10: a token's subscription that falls behind is told how many
/// events of its own pads it missed, not how many the whole engine sent.
#[tokio::test]
async fn a_lagging_token_is_told_what_it_missed_in_its_pads_alone() {
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (mut slow, _) = token(&h, &mut owner, json!({"name": "agent-a", "pads": ["a-*"]})).await;
    ok(&mut slow, "subscribe", json!({})).await;
    // Far more events than the ring and the connection queue hold, one in
    // five in the token's pad, while the subscriber reads nothing.
    let chunks = (scratchpad::events::RING + 2000) / 500 + 1;
    let mut mine = 0;
    for chunk in 0..chunks {
        for i in 0..500 {
            let pad = if i % 5 == 0 { "a-proj" } else { "b-secret" };
            mine += usize::from(pad == "a-proj");
            owner
                .send(
                    "entry.add",
                    json!({"pad": pad, "content": format!("{chunk}-{i}")}),
                )
                .await
                .unwrap();
        }
        owner.flush().await.unwrap();
        for _ in 0..500 {
            let (_, r) = owner.response().await.unwrap();
            r.unwrap();
        }
    }
    // Everything it is sent, until it has been quiet for 2 s.
    let (mut missed, mut created) = (0, 0);
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_secs(2), slow.next_event())
        .await
        .unwrap_or(Ok(None))
    {
        match ev["type"].as_str().unwrap() {
            "lagged" => missed += ev["missed"].as_u64().unwrap() as usize,
            "created" => {
                assert_eq!(ev["pad"], "a-proj", "{ev}");
                created += 1
            }
            t => panic!("unexpected {t}"),
        }
    }
    assert!(missed > 0, "it never lagged");
    assert_eq!(
        created + missed,
        mine,
        "its pad's events are each delivered or counted as missed, and no other pad's"
    );
    h.stop().await;
}

/// Finding 9, for a token named so before such names were refused: it is
/// not accepted, and says how to replace it. (The rule is the engine's,
/// whatever the store; the name is changed in SQLite's file here.)
#[tokio::test]
async fn a_token_named_as_the_person_before_the_rule_is_not_accepted() {
    if common::postgres::wanted() {
        return;
    }
    let h = Harness::start().await;
    let mut owner = person(&h).await;
    let (_, secret) = token(&h, &mut owner, json!({"name": "agent-old", "pads": ["*"]})).await;
    let dir = h.stop().await;
    let db = rusqlite::Connection::open(dir.path().join("data").join("pad.db")).unwrap();
    let renamed = db
        .execute(
            "UPDATE tokens SET name = 'user' WHERE name = 'agent-old'",
            [],
        )
        .unwrap();
    assert_eq!(renamed, 1);
    drop(db);
    let h = Harness::restart_in(dir).await;
    let mut c = Client::connect(&h.socket).await.unwrap();
    let (message, _) = err(&mut c, "hello", json!({"token": secret}), code::FORBIDDEN).await;
    assert!(message.contains("pad token revoke user"), "{message}");
    h.stop().await;
}
