//! Idempotency keys over a real socket (on PostgreSQL too, with
//! `PAD_TEST_BACKEND=postgres`): a write sent again with its key is stored
//! once and answered as the first time; keys are their caller's own; a key
//! sent with another call is refused; concurrent calls with one key store
//! one note; a day later the key is free again.

mod common;

use std::time::Duration;

use common::{err, ok, Harness};
use scratchpad::client::Client;
use scratchpad::clock::Clock;
use scratchpad::error::code;
use serde_json::json;

async fn count(c: &mut Client, pad: &str) -> usize {
    let r = ok(c, "entry.list", json!({"pad": pad, "limit": 1000})).await;
    r["entries"].as_array().unwrap().len()
}

async fn token_client(h: &Harness, owner: &mut Client, name: &str) -> Client {
    let r = ok(
        owner,
        "token.create",
        json!({"name": name, "pads": ["shared"]}),
    )
    .await;
    let mut c = Client::connect(&h.socket).await.unwrap();
    ok(
        &mut c,
        "hello",
        json!({"author": name, "token": r["secret"].as_str().unwrap()}),
    )
    .await;
    c
}

#[tokio::test]
async fn the_same_key_twice_stores_one_note_and_answers_the_same() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let mut watch = h.client().await;
    ok(&mut watch, "subscribe", json!({"pads": ["p"]})).await;
    let call = json!({"pad": "p", "content": "deploy is blocked", "tags": ["ops"], "idempotency_key": "k-1"});
    let first = ok(&mut c, "entry.add", call.clone()).await;
    // The retry comes on another connection, as a client that reconnected.
    let mut again = h.client().await;
    let second = ok(&mut again, "entry.add", call.clone()).await;
    assert_eq!(
        first["entry"], second["entry"],
        "the first answer, as it was"
    );
    assert_eq!(count(&mut c, "p").await, 1);

    // A new key is a new note; so is the same call with no key.
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "deploy is blocked", "tags": ["ops"], "idempotency_key": "k-2"}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "deploy is blocked", "tags": ["ops"]}),
    )
    .await;
    assert_eq!(count(&mut c, "p").await, 3);

    // Three notes; the retry told again of the first (its engine may have
    // died before telling): four `created` events, three ids.
    let mut created = Vec::new();
    while created.len() < 4 {
        let e = tokio::time::timeout(Duration::from_secs(5), watch.next_event())
            .await
            .expect("an event within 5 s")
            .unwrap()
            .unwrap();
        created.push(e["entry"]["id"].as_str().unwrap().to_string());
    }
    let more = tokio::time::timeout(Duration::from_millis(300), watch.next_event()).await;
    assert!(more.is_err(), "no fifth event: {more:?}");
    let first_id = first["entry"]["id"].as_str().unwrap();
    assert_eq!(created[..2], [first_id, first_id]);
    let ids: std::collections::HashSet<_> = created.iter().collect();
    assert_eq!(ids.len(), 3, "{created:?}");

    // Replies are keyed alike (they take the database on either store).
    let parent = first["entry"]["id"].as_str().unwrap();
    let reply =
        json!({"pad": "p", "content": "on it", "reply_to": parent, "idempotency_key": "r-1"});
    let r1 = ok(&mut c, "entry.add", reply.clone()).await;
    let r2 = ok(&mut c, "entry.add", reply).await;
    assert_eq!(r1["entry"]["id"], r2["entry"]["id"]);
    let thread = ok(&mut c, "entry.thread", json!({"id": parent})).await;
    assert_eq!(thread["replies"].as_array().unwrap().len(), 1);
    assert_eq!(thread["entry"]["replies"], 1);

    // The retry answers with the entry as a get reads it now: its reply counted.
    let third = ok(&mut c, "entry.add", call).await;
    let now = ok(&mut c, "entry.get", json!({"id": parent})).await;
    assert_eq!(third["entry"], now["entry"]);
    h.stop().await;
}

#[tokio::test]
async fn a_key_sent_with_another_call_is_refused_and_bad_keys_are_explained() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "first", "idempotency_key": "same"}),
    )
    .await;
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "second", "idempotency_key": "same"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "idempotency_key", "{data}");
    assert!(msg.contains("fresh key"), "{msg}");
    // Another method with the key is another call too.
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "a task", "kind": "task"}),
    )
    .await;
    err(
        &mut c,
        "task.claim",
        json!({"pad": "p", "agent": "a", "idempotency_key": "same"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(count(&mut c, "p").await, 2, "nothing stored by a refusal");

    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "x", "idempotency_key": "k".repeat(129)}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["limit"], 128, "{data}");
    assert!(msg.contains("UUID"), "{msg}");
    let (msg, _) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "x", "idempotency_key": "two words"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("without spaces"), "{msg}");
    h.stop().await;
}

#[tokio::test]
async fn keys_belong_to_their_caller() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    let mut a = token_client(&h, &mut owner, "agent-a").await;
    let mut b = token_client(&h, &mut owner, "agent-b").await;
    let note = |who: &str| json!({"pad": "shared", "content": format!("from {who}"), "idempotency_key": "k"});
    let from_a = ok(&mut a, "entry.add", note("a")).await;
    // The same key from another token is its own write: never a's answer.
    let from_b = ok(&mut b, "entry.add", note("b")).await;
    let from_owner = ok(&mut owner, "entry.add", note("owner")).await;
    assert_ne!(from_a["entry"]["id"], from_b["entry"]["id"]);
    assert_ne!(from_a["entry"]["id"], from_owner["entry"]["id"]);
    assert_eq!(from_b["entry"]["content"], "from b");
    // And each caller's retry is answered with its own note.
    let again = ok(&mut b, "entry.add", note("b")).await;
    assert_eq!(again["entry"]["id"], from_b["entry"]["id"]);
    assert_eq!(count(&mut owner, "shared").await, 3);
    h.stop().await;
}

#[tokio::test]
async fn a_token_made_again_under_a_revoked_name_does_not_inherit_its_keys() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    let mut first = token_client(&h, &mut owner, "agent-a").await;
    let note = json!({"pad": "shared", "content": "one", "idempotency_key": "k"});
    let before = ok(&mut first, "entry.add", note.clone()).await;
    ok(&mut owner, "token.revoke", json!({"name": "agent-a"})).await;
    // A new secret under the old name is another caller: its keys start
    // empty — neither answered with the revoked token's note nor refused
    // as that key sent with another call.
    let mut second = token_client(&h, &mut owner, "agent-a").await;
    let after = ok(&mut second, "entry.add", note.clone()).await;
    assert_ne!(after["entry"]["id"], before["entry"]["id"]);
    assert_eq!(count(&mut owner, "shared").await, 2);
    h.stop().await;
}

#[tokio::test]
async fn concurrent_calls_with_one_key_store_one_note() {
    let h = Harness::start().await;
    let mut calls = Vec::new();
    for _ in 0..8 {
        let mut c = h.client().await;
        calls.push(tokio::spawn(async move {
            let r = c
                .call(
                    "entry.add",
                    json!({"pad": "race", "content": "once", "idempotency_key": "race-1"}),
                )
                .await;
            r.map(|v| v["entry"]["id"].as_str().unwrap().to_string())
        }));
    }
    let mut ids = Vec::new();
    for call in calls {
        match call.await.unwrap() {
            Ok(id) => ids.push(id),
            // A call that waited on the first past the lock's bound is told
            // to retry: allowed, never a second note.
            Err(e) => assert_eq!(e.code(), Some(code::UNAVAILABLE), "{e}"),
        }
    }
    assert!(!ids.is_empty());
    assert!(ids.iter().all(|id| *id == ids[0]), "one answer: {ids:?}");
    let mut c = h.client().await;
    assert_eq!(count(&mut c, "race").await, 1);
    h.stop().await;
}

#[tokio::test]
async fn a_claim_sent_again_with_its_key_takes_no_second_task() {
    let clock = Clock::manual(1_900_000_000_000);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    for t in ["one", "two"] {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "plan", "content": t, "kind": "task"}),
        )
        .await;
    }
    let claim = json!({"pad": "plan", "agent": "w", "idempotency_key": "c-1"});
    let first = ok(&mut c, "task.claim", claim.clone()).await;
    let second = ok(&mut c, "task.claim", claim.clone()).await;
    assert_eq!(first["entry"], second["entry"]);
    let plan = ok(&mut c, "plan.order", json!({"pad": "plan"})).await;
    let doing = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"]["status"] == "doing")
        .count();
    assert_eq!(doing, 1, "{plan}");

    // A day on, the key is free again (the sweep deletes its row; one it
    // has not reached yet is taken as new): the same call writes anew.
    let note = json!({"pad": "plan", "content": "daily", "idempotency_key": "d-1"});
    let before = ok(&mut c, "entry.add", note.clone()).await;
    clock.advance(Duration::from_secs(24 * 3600 + 60));
    let after = ok(&mut c, "entry.add", note).await;
    assert_ne!(after["entry"]["id"], before["entry"]["id"]);
    h.stop().await;
}

#[tokio::test]
async fn an_ask_sent_again_with_its_key_puts_one_question_and_waits_for_its_answer() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let ask = json!({"content": "drop the staging DB?", "pad": "q", "choices": ["yes", "no"], "wait_seconds": 0, "idempotency_key": "a-1"});
    let first = ok(&mut c, "ask", ask.clone()).await;
    let qid = first["question"]["id"].as_str().unwrap().to_string();
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "q", "content": "no", "reply_to": qid, "author": "user"}),
    )
    .await;
    // The retry asks nothing new: it is that question, now answered.
    let again = ok(&mut c, "ask", ask).await;
    assert_eq!(again["question"]["id"], json!(qid));
    assert_eq!(again["answer"]["content"], "no");
    let questions = ok(
        &mut c,
        "entry.list",
        json!({"pad": "q", "kind": "question"}),
    )
    .await;
    assert_eq!(questions["entries"].as_array().unwrap().len(), 1);
    h.stop().await;
}

#[tokio::test]
async fn a_keyed_claim_that_found_nothing_keeps_no_key() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let claim = json!({"pad": "idle", "agent": "w", "idempotency_key": "poll-1"});
    let empty = ok(&mut c, "task.claim", claim.clone()).await;
    assert!(empty["entry"].is_null(), "{empty}");
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "idle", "content": "now ready", "kind": "task"}),
    )
    .await;
    // Nothing was claimed, so nothing was kept: the retry claims anew.
    let again = ok(&mut c, "task.claim", claim).await;
    assert_eq!(again["entry"]["content"], "now ready", "{again}");
    assert_eq!(again["entry"]["status"], "doing");
    h.stop().await;
}

#[tokio::test]
async fn a_key_keeps_only_its_entry_id_and_a_retry_reads_the_entry_as_it_is_now() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let call =
        json!({"pad": "p", "content": "the vault code is 4711", "idempotency_key": "gone-1"});
    let first = ok(&mut c, "entry.add", call.clone()).await;
    let id = first["entry"]["id"].as_str().unwrap().to_string();
    ok(
        &mut c,
        "entry.update",
        json!({"id": id, "content": "redacted"}),
    )
    .await;
    // Replayed, the entry is read as it is now, not as it was written.
    let again = ok(&mut c, "entry.add", call.clone()).await;
    assert_eq!(again["entry"]["id"], json!(id));
    assert_eq!(again["entry"]["content"], "redacted");
    ok(&mut c, "entry.delete", json!({"id": id})).await;
    // Deleted, it is gone for the retry as for a get; nothing is written.
    let (gone, _) = err(&mut c, "entry.add", call, code::NOT_FOUND).await;
    assert!(gone.contains(&id[..8]), "{gone}");
    assert_eq!(count(&mut c, "p").await, 0);
    let dir = h.stop().await;
    if common::postgres::wanted() {
        return;
    }
    // The key's row names the entry and holds none of its content.
    let db = rusqlite::Connection::open(dir.path().join("data").join("pad.db")).unwrap();
    let kept: Vec<String> = db
        .prepare("SELECT entry FROM idempotency")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(kept, vec![id]);
}

#[tokio::test]
async fn a_claim_retried_after_its_lease_ran_out_says_who_holds_the_task() {
    let clock = Clock::manual(1_900_000_000_000);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "plan", "content": "migrate", "kind": "task"}),
    )
    .await;
    let claim =
        json!({"pad": "plan", "agent": "w1", "lease_seconds": 60, "idempotency_key": "c-late"});
    let first = ok(&mut c, "task.claim", claim.clone()).await;
    let id = first["entry"]["id"].as_str().unwrap().to_string();
    // Within its lease, the retry is the task, still w1's.
    let again = ok(&mut c, "task.claim", claim.clone()).await;
    assert_eq!(again["entry"]["id"], json!(id));

    // An outage longer than the lease: the lease ran out ...
    clock.advance(Duration::from_secs(120));
    let (lapsed, _) = err(&mut c, "task.claim", claim.clone(), code::CONFLICT).await;
    assert!(
        lapsed.contains(&id) && lapsed.contains("lease ran out"),
        "{lapsed}"
    );
    // ... and another agent took the task.
    let other = ok(&mut c, "task.claim", json!({"pad": "plan", "agent": "w2"})).await;
    assert_eq!(other["entry"]["id"], json!(id));
    let (taken, _) = err(&mut c, "task.claim", claim, code::CONFLICT).await;
    assert!(taken.contains("w2 holds it"), "{taken}");
    h.stop().await;
}

#[tokio::test]
async fn a_stored_reply_retried_after_its_parent_went_is_answered_from_its_key() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    let mut bot = token_client(&h, &mut owner, "bot").await;
    let parent = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "shared", "content": "who takes the release?"}),
    )
    .await;
    let parent = parent["entry"]["id"].as_str().unwrap().to_string();
    let reply = json!({"pad": "shared", "content": "I do", "reply_to": parent, "idempotency_key": "r-gone"});
    let first = ok(&mut bot, "entry.add", reply.clone()).await;
    // The answer was lost; meanwhile the parent was deleted.
    ok(&mut owner, "entry.delete", json!({"id": parent})).await;
    // The scope check no longer finds the parent, but the write is stored:
    // the retry is answered with it, and writes nothing.
    let again = ok(&mut bot, "entry.add", reply).await;
    assert_eq!(again["entry"]["id"], first["entry"]["id"]);
    // A new write naming the deleted parent is refused as before.
    err(
        &mut bot,
        "entry.add",
        json!({"pad": "shared", "content": "me too", "reply_to": parent, "idempotency_key": "r-new"}),
        code::NOT_FOUND,
    )
    .await;
    assert_eq!(count(&mut owner, "shared").await, 1);
    h.stop().await;
}
