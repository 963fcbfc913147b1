//! The scope matrix, generated from the dispatch table: every method is
//! called by a token scoped to pad A (`a-*`), aimed at B (`b-secret`) as
//! its declaration says (each pad field names B, each note field a note of
//! B) and aimed at A, and every answer — result, error, explanation,
//! statistic — and every event the token receives is read for B's ids,
//! name, words and counts. B is unchanged at the end. A method the matrix
//! has no call for fails it: a new method is added here with its params.

mod common;

use std::time::Duration;

use common::{ok, Harness};
use scratchpad::client::Client;
use scratchpad::rpc::declared::{Answer, Role};
use serde_json::{json, Value};

/// How many notes B holds: a count no answer to the token may show.
const B_NOTES: usize = 41;
const A_NOTES: usize = 3;

/// Each method's params, with `$PAD` and `$NOTE` standing for the pad and a
/// note aimed at, `$ASK` for a question there, `$TASK` a task.
fn base(method: &str) -> Vec<Value> {
    match method {
        "search" => vec![
            json!({"query": "harbor", "pad": "$PAD", "explain": true, "mode": "text"}),
            json!({"query": "harbor notes", "explain": true, "mode": "text"}),
            json!({"query": "harbor", "explain": true}),
        ],
        "stats" => vec![json!({}), json!({"activity": true})],
        "entry.list" => vec![
            json!({"pad": "$PAD", "include_superseded": true}),
            json!({"tags": ["needs_eyes"]}),
        ],
        other => vec![one(other)],
    }
}

fn one(method: &str) -> Value {
    match method {
        "entry.add" => {
            json!({"pad": "$PAD", "content": "harbor from the token", "reply_to": "$NOTE"})
        }
        "entry.get" | "entry.delete" | "entry.history" | "entry.thread" => json!({"id": "$NOTE"}),
        "entry.update" => json!({"id": "$NOTE", "content": "harbor rewritten"}),
        "entry.trash" | "entry.changes" | "tags.list" | "report" | "plan.order" => {
            json!({"pad": "$PAD"})
        }
        "entry.restore" => json!({"id": "$NOTE", "version": 1}),
        "entry.purge" => json!({"id": "$NOTE"}),
        "pad.list" | "reindex" | "token.list" | "agent.list" | "inbox" => json!({}),
        "pad.configure" => json!({"name": "$PAD", "max_entries": 1}),
        "pad.touch" | "pad.export" => json!({"name": "$PAD"}),
        "pad.clear" => json!({"name": "$PAD"}),
        "subscribe" => json!({"pads": ["$PAD"]}),
        "unsubscribe" => json!({"subscription": 987654}),
        "task.claim" => json!({"pad": "$PAD"}),
        "task.heartbeat" | "task.complete" | "task.fail" => json!({"id": "$TASK"}),
        "entry.share" => json!({"id": "$NOTE", "to": ["$PAD"]}),
        "ask" => json!({"id": "$ASK", "wait_seconds": 0}),
        "token.create" => json!({"name": "evil", "pads": ["*"]}),
        "token.revoke" => json!({"name": "agent-a"}),
        "agent.add" => json!({"name": "helper", "url": "http://127.0.0.1:9/"}),
        "agent.remove" => json!({"name": "helper"}),
        "agent.deliveries" => json!({}),
        other => panic!(
            "the scope matrix has no call for '{other}': add its params to tests/scope.rs::base"
        ),
    }
}

/// One side of the store: its pad and the ids to aim at.
struct Side {
    pad: &'static str,
    note: String,
    ask: String,
    task: String,
}

fn fill(v: &Value, side: &Side) -> Value {
    match v {
        Value::String(s) => Value::String(match s.as_str() {
            "$PAD" => side.pad.to_owned(),
            "$NOTE" => side.note.clone(),
            "$ASK" => side.ask.clone(),
            "$TASK" => side.task.clone(),
            _ => s.clone(),
        }),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, side)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, side))).collect())
        }
        other => other.clone(),
    }
}

/// What the token may never see: B's name, ids, words and counts.
struct Secrets {
    ids: Vec<String>,
}

impl Secrets {
    /// `v` names nothing of B but what the call itself sent (`sent`).
    fn check(&self, what: &str, v: &Value, sent: &Value) {
        let mut text = v.to_string();
        for echo in strings(sent) {
            text = text.replace(&echo, "$SENT");
        }
        for needle in ["b-secret", "zanzibar"] {
            assert!(!text.contains(needle), "{what} names '{needle}': {text}");
        }
        for id in &self.ids {
            assert!(
                !text.contains(id.as_str()),
                "{what} names B's note {id}: {text}"
            );
        }
        numbers(v, &mut |n| {
            assert!(
                !(B_NOTES as i64 - 1..=(B_NOTES + A_NOTES) as i64 + 8).contains(&n),
                "{what} shows {n}, a count of B's notes: {text}"
            )
        });
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone(), s.to_lowercase()],
        Value::Array(a) => a.iter().flat_map(strings).collect(),
        Value::Object(m) => m.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// The answer with what the call sent put back as placeholders, to compare
/// an answer about B with one about nothing.
fn normal(v: &Value, side: &Side) -> String {
    let mut text = v.to_string();
    for (value, name) in [
        (&side.note, "$NOTE"),
        (&side.ask, "$ASK"),
        (&side.task, "$TASK"),
    ] {
        text = text.replace(value.as_str(), name);
    }
    text.replace(side.pad, "$PAD")
}

fn numbers(v: &Value, f: &mut impl FnMut(i64)) {
    match v {
        Value::Number(n) => {
            if let Some(n) = n.as_i64() {
                f(n)
            }
        }
        Value::Array(a) => a.iter().for_each(|x| numbers(x, f)),
        Value::Object(m) => m.values().for_each(|x| numbers(x, f)),
        _ => {}
    }
}

async fn call(c: &mut Client, method: &str, params: Value) -> Value {
    match c.call(method, params).await {
        Ok(v) => json!({"result": v}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

async fn fill_store(owner: &mut Client) -> (Side, Side, Vec<String>) {
    let mut b_ids = Vec::new();
    let add = |pad: &str, content: String, extra: Value| {
        let mut p = json!({"pad": pad, "content": content});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    let note_of = |r: Value| r["entry"]["id"].as_str().unwrap().to_owned();
    let mut sides = Vec::new();
    for (pad, n) in [("b-secret", B_NOTES), ("a-proj", A_NOTES)] {
        let mut ids = Vec::new();
        for i in 0..n - 2 {
            let word = if pad == "b-secret" {
                format!("zanzibar{i}")
            } else {
                format!("alpha{i}")
            };
            let r = ok(
                owner,
                "entry.add",
                add(
                    pad,
                    format!("harbor {word} notes"),
                    json!({"tags": ["needs_eyes"]}),
                ),
            )
            .await;
            ids.push(note_of(r));
        }
        let task = note_of(
            ok(
                owner,
                "entry.add",
                add(pad, format!("harbor task {pad}"), json!({"kind": "task"})),
            )
            .await,
        );
        // A question the person has not answered (ask returns at once).
        let ask = ok(
            owner,
            "ask",
            json!({"pad": pad, "content": format!("harbor question {pad}?"), "wait_seconds": 0}),
        )
        .await;
        let ask = ask["question"]["id"].as_str().unwrap().to_owned();
        ids.push(task.clone());
        ids.push(ask.clone());
        if pad == "b-secret" {
            b_ids = ids.clone();
        }
        sides.push(Side {
            pad,
            note: ids[0].clone(),
            ask,
            task,
        });
    }
    let a = sides.pop().unwrap();
    let b = sides.pop().unwrap();
    // Links across: a note of A replying to B's, a task of A waiting on
    // B's, a note of B superseding one of A's.
    let reply = json!({"pad": "a-proj", "content": "harbor reply across", "reply_to": b.note});
    ok(owner, "entry.add", reply).await;
    let waits = json!({"pad": "a-proj", "content": "harbor after theirs", "kind": "task", "depends_on": [b.task]});
    ok(owner, "entry.add", waits).await;
    let newer =
        json!({"pad": "b-secret", "content": "harbor zanzibar newer", "supersedes": a.note});
    b_ids.push(note_of(ok(owner, "entry.add", newer).await));
    (a, b, b_ids)
}

/// B as the owner sees it: every note's id and version, and the pad's settings.
async fn snapshot(owner: &mut Client) -> Value {
    let listed = ok(
        owner,
        "entry.list",
        json!({"pad": "b-secret", "limit": 1000, "include_superseded": true}),
    )
    .await;
    let mut notes: Vec<(String, i64)> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_owned(),
                e["version"].as_i64().unwrap(),
            )
        })
        .collect();
    notes.sort();
    let pads = ok(owner, "pad.list", json!({})).await;
    let b = pads["pads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "b-secret")
        .cloned();
    json!({"notes": notes, "settings": b.map(|p| json!([p["ttl_seconds"], p["max_entries"], p["archived"]]))})
}

#[tokio::test]
async fn no_answer_to_a_token_scoped_to_a_names_anything_of_b() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    let (a, b, b_ids) = fill_store(&mut owner).await;
    let secret = ok(
        &mut owner,
        "token.create",
        json!({"name": "agent-a", "pads": ["a-*"]}),
    )
    .await;
    let secret = secret["secret"].as_str().unwrap().to_owned();
    let hello = json!({"token": secret, "author": "agent-a"});
    let mut token = Client::connect(&h.socket).await.unwrap();
    ok(&mut token, "hello", hello.clone()).await;
    let mut watcher = Client::connect(&h.socket).await.unwrap();
    ok(&mut watcher, "hello", hello).await;
    ok(&mut watcher, "subscribe", json!({})).await;
    let before = snapshot(&mut owner).await;
    let secrets = Secrets { ids: b_ids };
    let nothing = Side {
        pad: "b-absent",
        note: "0000000000z1".into(),
        ask: "0000000000z2".into(),
        task: "0000000000z3".into(),
    };

    let methods: Vec<_> = scratchpad::rpc::declarations().collect();
    for (method, declared, fields) in &methods {
        for params in base(method) {
            let aimed = fill(&params, &b);
            let answer = call(&mut token, method, aimed.clone()).await;
            secrets.check(&format!("{method} {aimed} →"), &answer, &aimed);
            // Aimed at B, it answers as it does aimed at what does not exist.
            if aimed != params {
                let twin = fill(&params, &nothing);
                let absent = call(&mut token, method, twin.clone()).await;
                assert_eq!(
                    normal(&answer, &b),
                    normal(&absent, &nothing),
                    "{method} tells B from nothing"
                );
            }
            // A call whose own fields name B is refused outright.
            let names_b = fields
                .iter()
                .any(|f| matches!(f.role, Role::Pad(_) | Role::Note(_)));
            if names_b && declared.answer == Answer::Named {
                assert!(
                    answer.get("error").is_some(),
                    "{method} aimed at B was not refused: {answer}"
                );
            }
            let plain = fill(&params, &a);
            let answer = call(&mut token, method, plain.clone()).await;
            secrets.check(&format!("{method} {plain} →"), &answer, &plain);
        }
    }
    // The owner's own changes in B meanwhile reach no event of the token.
    let newer = ok(
        &mut owner,
        "entry.add",
        json!({"pad": "b-secret", "content": "harbor zanzibar newer", "supersedes": b.note}),
    )
    .await;
    ok(
        &mut owner,
        "entry.delete",
        json!({"id": newer["entry"]["id"]}),
    )
    .await;
    ok(
        &mut owner,
        "entry.add",
        json!({"pad": "a-proj", "content": "the last event"}),
    )
    .await;
    loop {
        match tokio::time::timeout(Duration::from_secs(2), watcher.next_event()).await {
            Ok(Ok(Some(event))) => {
                secrets.check("an event", &event, &Value::Null);
                if event.to_string().contains("the last event") {
                    break;
                }
            }
            other => panic!("the token's events stopped before the last one: {other:?}"),
        }
    }
    ok(
        &mut owner,
        "entry.add",
        json!({"pad": "b-secret", "content": "harbor zanzibar again"}),
    )
    .await;
    let after = snapshot(&mut owner).await;
    let mut before_notes = before["notes"].as_array().unwrap().clone();
    let after_notes = after["notes"].as_array().unwrap();
    before_notes.retain(|n| after_notes.contains(n));
    assert_eq!(
        before_notes.len(),
        before["notes"].as_array().unwrap().len(),
        "a note of B changed or went: {before} → {after}"
    );
    assert_eq!(
        before["settings"], after["settings"],
        "B's settings changed"
    );
    h.stop().await;
}

/// The params with `field` set to `v`, or taken out (`None`).
fn with(params: &Value, field: &str, v: Option<Value>) -> Value {
    let mut p = params.clone();
    let m = p.as_object_mut().unwrap();
    match v {
        Some(v) => m.insert(field.to_owned(), v),
        None => m.remove(field),
    };
    p
}

/// Every pad, note, agents and actor field every method declares, tried as
/// a hostile token would (the rest of the call aimed at its own pad A):
/// `null`, absent, a wrong type, B's pad or note (refused, whatever else
/// the call says), a prefix of B's note, and the person's name where the
/// field names who acts (refused). No answer names B, B is unchanged, and
/// nothing the token did is the person's.
#[tokio::test]
async fn every_declared_field_tried_null_absent_wrong_foreign_or_as_a_prefix() {
    let h = Harness::start().await;
    let mut owner = h.client().await;
    ok(&mut owner, "hello", json!({"author": "user"})).await;
    let (a, b, b_ids) = fill_store(&mut owner).await;
    let secret = ok(
        &mut owner,
        "token.create",
        json!({"name": "agent-a", "pads": ["a-*"]}),
    )
    .await;
    let mut token = Client::connect(&h.socket).await.unwrap();
    ok(&mut token, "hello", json!({"token": secret["secret"]})).await;
    let before = snapshot(&mut owner).await;
    // The notes the person wrote, and the tasks the person holds.
    let persons = |v: &Value| {
        let mut out = Vec::new();
        for e in v["entries"].as_array().unwrap() {
            for field in ["author", "assignee"] {
                if e[field] == "user" {
                    out.push(json!([e["id"], field]));
                }
            }
        }
        out
    };
    let everything = json!({"limit": 1000, "include_superseded": true});
    let persons_before = persons(&ok(&mut owner, "entry.list", everything.clone()).await);
    let secrets = Secrets { ids: b_ids };
    let mut tried = 0;
    for (method, _, fields) in scratchpad::rpc::declarations() {
        for params in base(method) {
            let plain = fill(&params, &a);
            for field in fields {
                let mut variants: Vec<(Option<Value>, bool)> = vec![
                    (Some(Value::Null), false),
                    (None, false),
                    (Some(json!(12345)), false),
                ];
                match field.role {
                    Role::Pad(_) => {
                        variants.push((Some(json!(b.pad)), true));
                        variants.push((Some(json!([b.pad])), true));
                    }
                    Role::Note(_) => {
                        variants.push((Some(json!(b.note)), true));
                        variants.push((Some(json!([b.note])), true));
                        variants.push((Some(json!(b.note[..7].to_owned())), false));
                    }
                    Role::Agents => variants.push((Some(json!(["helper"])), false)),
                    Role::Actor => variants.push((Some(json!("user")), true)),
                }
                for (v, refused) in variants {
                    let sent = with(&plain, field.name, v);
                    let answer = call(&mut token, method, sent.clone()).await;
                    tried += 1;
                    secrets.check(&format!("{method} {sent} →"), &answer, &sent);
                    if refused {
                        assert!(
                            answer.get("error").is_some(),
                            "{method} {sent} was not refused: {answer}"
                        );
                    }
                }
            }
        }
    }
    assert!(tried > 150, "only {tried} calls tried");
    let after = snapshot(&mut owner).await;
    assert_eq!(before, after, "B changed");
    let persons_after = persons(&ok(&mut owner, "entry.list", everything).await);
    assert!(
        persons_after.iter().all(|p| persons_before.contains(p)),
        "the token changed the person's notes or acted as the person: {persons_before:?} -> {persons_after:?}"
    );
    h.stop().await;
}
