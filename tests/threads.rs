//! Threads and questions: `reply_to`, `entry.thread`, and `ask` waiting for
//! the person's answer — against a real engine on a real socket.

mod common;

use std::time::{Duration, Instant};

use common::*;
use scratchpad::access::Access;
use scratchpad::client::Client;
use scratchpad::protocol::AskParams;
use scratchpad::storage::once::Key;
use serde_json::{json, Value};

async fn as_author(h: &Harness, author: &str) -> Client {
    let mut c = Client::connect(&h.socket).await.unwrap();
    ok(&mut c, "hello", json!({"author": author})).await;
    c
}

/// Waits (bounded) until the engine holds `n` waiting asks.
async fn waiting(h: &Harness, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.engine.waiting_asks() != n {
        assert!(
            Instant::now() < deadline,
            "expected {n} waiting asks, have {}",
            h.engine.waiting_asks()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn ask_returns_the_persons_answer_as_soon_as_it_is_committed() {
    let h = Harness::start().await;
    let mut person = as_author(&h, "user").await;
    ok(&mut person, "subscribe", json!({"pads": ["ops"]})).await;
    let mut agent = as_author(&h, "agent-0").await;
    let asking = tokio::spawn(async move {
        let r = agent
            .call(
                "ask",
                json!({"content": "drop the staging DB?", "pad": "ops", "choices": ["approve", "deny"], "wait_seconds": 30}),
            )
            .await
            .unwrap();
        (r, Instant::now())
    });
    // The person hears of the question (needs_eyes) and answers it.
    let question = loop {
        let event = person.next_event().await.unwrap().unwrap();
        if event["type"] == "needs_eyes" {
            break event["entry"].clone();
        }
    };
    assert_eq!(question["kind"], "question");
    assert_eq!(question["choices"], json!(["approve", "deny"]));
    waiting(&h, 1).await;
    let reply = ok(
        &mut person,
        "entry.add",
        json!({"pad": "ops", "content": "approve", "reply_to": question["id"]}),
    )
    .await["entry"]
        .clone();
    let committed = Instant::now();
    let (r, returned) = asking.await.unwrap();
    let lag = returned.saturating_duration_since(committed);
    assert!(
        lag < Duration::from_millis(50),
        "ask returned {lag:?} after the reply"
    );
    assert_eq!(r["answer"]["id"], reply["id"]);
    assert_eq!(r["answer"]["content"], "approve");
    assert_eq!(r["answer"]["author"], "user");
    assert_eq!(r["question"]["id"], question["id"]);
    assert_eq!(h.engine.waiting_asks(), 0);

    // Answered: it shows so, and it has left the person's needs-eyes view.
    let q = ok(&mut person, "entry.get", json!({"id": question["id"]})).await["entry"].clone();
    assert_eq!(q["answer"], reply["id"]);
    assert_eq!(q["replies"], 1);
    assert!(!q["tags"].as_array().unwrap().contains(&json!("needs_eyes")));
    let eyes = ok(&mut person, "entry.list", json!({"tags": ["needs_eyes"]})).await;
    assert!(eyes["entries"].as_array().unwrap().is_empty(), "{eyes}");
    // Subscribers saw the question change.
    let updated = loop {
        let event = person.next_event().await.unwrap().unwrap();
        if event["type"] == "updated" && event["entry"]["id"] == question["id"] {
            break event["entry"].clone();
        }
    };
    assert_eq!(updated["answer"], reply["id"]);
    // Already answered: a new ask's waiter would see it, and the asker's
    // inbox reports nothing twice once read.
    let mut agent = as_author(&h, "agent-0").await;
    let inbox = ok(&mut agent, "inbox", json!({})).await;
    assert!(inbox["replies"].as_array().unwrap().len() <= 1);
    h.stop().await;
}

/// Issue 28: an agent that never read its inbox asks, gives up waiting, and
/// the person answers later — the answer is in the agent's first inbox read.
/// Its inbox starts just before its first write, so needs_eyes notes from
/// others since then are there too; an author that has written nothing
/// starts empty.
#[tokio::test]
async fn a_late_answer_reaches_an_asker_that_never_read_its_inbox() {
    let h = Harness::start().await;
    let mut person = as_author(&h, "user").await;
    ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "before the agent came", "tags": ["needs_eyes"]}),
    )
    .await;
    let mut agent = as_author(&h, "agent-late").await;
    let r = ok(
        &mut agent,
        "ask",
        json!({"content": "drop the staging DB?", "choices": ["approve", "deny"], "wait_seconds": 1}),
    )
    .await;
    assert!(r["answer"].is_null(), "{r}");
    let qid = r["question"]["id"].as_str().unwrap().to_string();
    let flagged = ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "look at this", "tags": ["needs_eyes"]}),
    )
    .await["entry"]["id"]
        .clone();
    let answer = ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "deny", "reply_to": qid}),
    )
    .await["entry"]["id"]
        .clone();
    let peeked = ok(&mut agent, "inbox", json!({"peek": true})).await;
    assert_eq!(ids(&peeked["replies"]), vec![answer.as_str().unwrap()]);
    let inbox = ok(&mut agent, "inbox", json!({})).await;
    assert_eq!(
        ids(&inbox["replies"]),
        vec![answer.as_str().unwrap()],
        "{inbox}"
    );
    assert_eq!(
        ids(&inbox["needs_eyes"]),
        vec![flagged.as_str().unwrap()],
        "needs_eyes since the agent's first write, not before: {inbox}"
    );
    let again = ok(&mut agent, "inbox", json!({})).await;
    assert!(again["replies"].as_array().unwrap().is_empty(), "{again}");
    // An author that wrote nothing starts empty.
    let fresh = ok(&mut person, "inbox", json!({"author": "agent-new"})).await;
    assert!(
        fresh["replies"].as_array().unwrap().is_empty()
            && fresh["needs_eyes"].as_array().unwrap().is_empty(),
        "{fresh}"
    );
    h.stop().await;
}

/// `ask` with `id` waits for the answer to a question asked before (how
/// `pad mcp` waits while it also asks in the agent's client).
#[tokio::test]
async fn ask_with_an_id_waits_for_an_earlier_questions_answer() {
    let h = Harness::start().await;
    let mut agent = as_author(&h, "agent-id").await;
    let q = ok(
        &mut agent,
        "ask",
        json!({"content": "ship it?", "choices": ["yes", "no"], "wait_seconds": 0}),
    )
    .await["question"]
        .clone();
    let qid = q["id"].as_str().unwrap().to_string();
    let waiter = {
        let socket = h.socket.clone();
        let qid = qid.clone();
        tokio::spawn(async move {
            let mut c = Client::connect(&socket).await.unwrap();
            ok(&mut c, "ask", json!({"id": &qid[..8], "wait_seconds": 30})).await
        })
    };
    waiting(&h, 1).await;
    let mut person = as_author(&h, "user").await;
    let answer = ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "yes", "reply_to": qid}),
    )
    .await["entry"]["id"]
        .clone();
    let r = waiter.await.unwrap();
    assert_eq!(r["answer"]["id"], answer, "{r}");
    assert_eq!(r["question"]["id"], qid.as_str());
    // Answered already: at once.
    let again = ok(&mut agent, "ask", json!({"id": qid, "wait_seconds": 30})).await;
    assert_eq!(again["answer"]["id"], answer);
    let (msg, _) = err(
        &mut agent,
        "ask",
        json!({"id": qid, "content": "again?"}),
        -32602,
    )
    .await;
    assert!(msg.contains("not both"), "{msg}");
    let (msg, _) = err(&mut agent, "ask", json!({"id": answer}), -32602).await;
    assert!(msg.contains("not a question"), "{msg}");
    h.stop().await;
}

#[tokio::test]
async fn an_unanswered_ask_returns_null_and_the_later_answer_reaches_the_inbox_once() {
    let h = Harness::start().await;
    let mut agent = as_author(&h, "agent-0").await;
    ok(&mut agent, "inbox", json!({})).await; // the agent's inbox starts here
    let started = Instant::now();
    let r = ok(
        &mut agent,
        "ask",
        json!({"content": "which region?", "choices": ["eu", "us"], "wait_seconds": 1}),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(r["answer"].is_null(), "{r}");
    assert_eq!(
        r["question"]["pad"], "inbox",
        "questions go to the person's pad by default"
    );
    let qid = r["question"]["id"].as_str().unwrap().to_string();

    // The asker's own follow-up is not an answer.
    ok(
        &mut agent,
        "entry.add",
        json!({"pad": "inbox", "content": "(either is fine, eu preferred)", "reply_to": qid}),
    )
    .await;
    let q = ok(&mut agent, "entry.get", json!({"id": qid})).await["entry"].clone();
    assert!(q["answer"].is_null() && q["replies"] == 1, "{q}");
    assert!(q["tags"].as_array().unwrap().contains(&json!("needs_eyes")));

    let mut person = as_author(&h, "user").await;
    let answer = ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "eu", "reply_to": &qid[..8]}),
    )
    .await["entry"]
        .clone();
    assert_eq!(
        answer["reply_to"],
        qid.as_str(),
        "a prefix names the parent"
    );
    let inbox = ok(&mut agent, "inbox", json!({})).await;
    assert_eq!(ids(&inbox["replies"]), vec![answer["id"].as_str().unwrap()]);
    let again = ok(&mut agent, "inbox", json!({})).await;
    assert!(again["replies"].as_array().unwrap().is_empty(), "{again}");

    // A second reply by the person does not replace the answer.
    ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "actually us", "reply_to": qid}),
    )
    .await;
    let q = ok(&mut agent, "entry.get", json!({"id": qid})).await["entry"].clone();
    assert_eq!(q["answer"], answer["id"]);
    assert_eq!(q["replies"], 3);
    h.stop().await;
}

#[tokio::test]
async fn the_askers_own_reply_never_wakes_its_ask() {
    let h = Harness::start().await;
    let mut agent = as_author(&h, "agent-0").await;
    let asking = tokio::spawn(async move {
        ok(
            &mut agent,
            "ask",
            json!({"content": "ok to deploy?", "wait_seconds": 2}),
        )
        .await
    });
    waiting(&h, 1).await;
    let mut same = as_author(&h, "agent-0").await;
    let q = ok(
        &mut same,
        "entry.list",
        json!({"pad": "inbox", "kind": "question"}),
    )
    .await["entries"][0]
        .clone();
    ok(
        &mut same,
        "entry.add",
        json!({"pad": "inbox", "content": "yes", "reply_to": q["id"]}),
    )
    .await;
    let r = asking.await.unwrap();
    assert!(r["answer"].is_null(), "{r}");
    assert!(r["waited_seconds"].as_f64().unwrap() >= 2.0);
    h.stop().await;
}

/// A reply in another pad joins the thread but does not answer: the
/// question's `answer` is shown to whoever reads its pad, and must not
/// name an entry they cannot read.
#[tokio::test]
async fn only_a_reply_in_the_questions_own_pad_answers_it() {
    let h = Harness::start().await;
    let mut agent = as_author(&h, "agent-0").await;
    let q = ok(
        &mut agent,
        "ask",
        json!({"content": "which region?", "pad": "shared", "wait_seconds": 0}),
    )
    .await["question"]
        .clone();
    let mut me = h.client().await;
    ok(
        &mut me,
        "entry.add",
        json!({"pad": "private", "content": "eu-west, says my notes", "reply_to": q["id"]}),
    )
    .await;
    let got = ok(&mut me, "entry.get", json!({"id": q["id"]})).await["entry"].clone();
    assert!(got["answer"].is_null(), "{got}");
    assert_eq!(got["replies"], 1);
    assert!(
        got["tags"].to_string().contains("needs_eyes"),
        "still waits: {got}"
    );
    let answer = ok(
        &mut me,
        "entry.add",
        json!({"pad": "shared", "content": "eu-west", "reply_to": q["id"]}),
    )
    .await["entry"]["id"]
        .clone();
    let got = ok(&mut me, "entry.get", json!({"id": q["id"]})).await["entry"].clone();
    assert_eq!(got["answer"], answer);
    h.stop().await;
}

/// A thousand asks wait on one engine as parked futures: the process gains
/// no thread per waiter, and each gets its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_waiting_asks_hold_no_thread_each_and_all_get_their_answers() {
    let h = Harness::start().await;
    let threads = || {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse::<usize>()
            .unwrap()
    };
    let before = threads();
    let mut asks = Vec::new();
    for i in 0..1000 {
        let engine = h.engine.clone();
        asks.push(tokio::spawn(async move {
            let p = || AskParams {
                content: Some(format!("question {i}")),
                id: None,
                pad: Some("many".into()),
                choices: vec!["yes".into(), "no".into()],
                wait_seconds: Some(100),
                author: Some(format!("agent-{i}")),
                answer_from: Vec::new(),
                idempotency_key: None,
            };
            let owner = scratchpad::guard::Guard::owner();
            // A busy database may answer -32005 within its bound (the
            // team store's 3 s deadline): retried with the ask's key, as
            // clients do, it is asked once.
            let key = Key::of(&Access::Owner, "ask", Some(&format!("ask-{i}")), &p()).unwrap();
            loop {
                match engine.ask(p(), None, &owner, key.clone()).await {
                    Err(scratchpad::Error::Unavailable(_)) => {
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await
                    }
                    answered => break answered.unwrap(),
                }
            }
        }));
    }
    waiting(&h, 1000).await;
    let during = threads();
    assert!(
        during <= before + 4,
        "threads went from {before} to {during} with 1,000 asks waiting"
    );
    let mut person = as_author(&h, "user").await;
    let mut cursor: Option<String> = None;
    let mut questions = Vec::new();
    loop {
        let mut params = json!({"pad": "many", "kind": "question", "limit": 1000});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let page = ok(&mut person, "entry.list", params).await;
        questions.extend(page["entries"].as_array().unwrap().clone());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(questions.len(), 1000);
    for q in &questions {
        let n = q["content"]
            .as_str()
            .unwrap()
            .trim_start_matches("question ");
        ok(
            &mut person,
            "entry.add",
            json!({"pad": "many", "content": format!("answer {n}"), "reply_to": q["id"]}),
        )
        .await;
    }
    for (i, ask) in asks.into_iter().enumerate() {
        let r = tokio::time::timeout(Duration::from_secs(30), ask)
            .await
            .expect("every ask returns once answered")
            .unwrap();
        let answer = r.answer.expect("answered");
        assert_eq!(answer.content, format!("answer {i}"));
        assert_eq!(answer.reply_to.as_deref(), Some(r.question.id.as_str()));
    }
    assert_eq!(h.engine.waiting_asks(), 0);
    h.stop().await;
}

#[tokio::test]
async fn threads_keep_their_order_and_answers_across_a_restart() {
    let h = Harness::start().await;
    let mut agent = as_author(&h, "agent-0").await;
    let mut person = as_author(&h, "user").await;
    let root = add(&mut agent, "proj", "the cache misses on cold start").await;
    let first = ok(
        &mut person,
        "entry.add",
        json!({"pad": "proj", "content": "which cache?", "reply_to": root["id"]}),
    )
    .await["entry"]
        .clone();
    let second = ok(
        &mut agent,
        "entry.add",
        json!({"pad": "proj", "content": "the token cache", "reply_to": first["id"]}),
    )
    .await["entry"]
        .clone();
    // A reply may live on another pad than its parent.
    let third = ok(
        &mut person,
        "entry.add",
        json!({"pad": "inbox", "content": "noted", "reply_to": root["id"]}),
    )
    .await["entry"]
        .clone();
    drop((agent, person));
    let h = h.restart().await;
    let mut c = h.client().await;
    let t = ok(&mut c, "entry.thread", json!({"id": root["id"]})).await;
    assert_eq!(t["entry"]["id"], root["id"]);
    assert_eq!(t["entry"]["replies"], 2, "direct replies");
    assert_eq!(t["entry"]["answer"], first["id"]);
    assert_eq!(
        ids(&t["replies"]),
        vec![
            first["id"].as_str().unwrap(),
            second["id"].as_str().unwrap(),
            third["id"].as_str().unwrap()
        ]
    );
    assert_eq!(t["replies"][1]["reply_to"], first["id"]);
    // A reply's own thread starts at the reply.
    let sub = ok(&mut c, "entry.thread", json!({"id": first["id"]})).await;
    assert_eq!(ids(&sub["replies"]), vec![second["id"].as_str().unwrap()]);

    // The markdown export draws replies under their parent.
    let md = ok(&mut c, "pad.export", json!({"name": "proj"})).await["text"]
        .as_str()
        .unwrap()
        .to_string();
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("{s} missing:\n{md}"));
    assert!(at("the cache misses") < at("which cache?"));
    assert!(at("which cache?") < at("the token cache"));
    assert!(md.contains("  - ↳ user"), "{md}");
    assert!(md.contains("    - ↳ agent-0"), "nested deeper:\n{md}");
    let inbox_md = ok(&mut c, "pad.export", json!({"name": "inbox"})).await["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        inbox_md.contains(&format!("reply to `{}`", root["id"].as_str().unwrap())),
        "{inbox_md}"
    );
    h.stop().await;
}

#[tokio::test]
async fn replies_and_asks_refuse_what_they_cannot_do_with_clear_errors() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "re", "reply_to": "2k9xe4mr07cb"}),
        -32001,
    )
    .await;
    assert_eq!(data["field"], "reply_to", "{msg}");
    assert!(msg.contains("2k9xe4mr07cb"), "{msg}");
    let (msg, data) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "re", "reply_to": "not an id!"}),
        -32602,
    )
    .await;
    assert_eq!(data["field"], "reply_to", "{msg}");
    let (msg, data) = err(
        &mut c,
        "ask",
        json!({"content": "q", "wait_seconds": 111}),
        -32602,
    )
    .await;
    assert_eq!(
        (data["field"].clone(), data["limit"].clone()),
        (json!("wait_seconds"), json!(110))
    );
    assert!(
        msg.contains("inbox"),
        "says where a late answer goes: {msg}"
    );
    let eleven: Vec<String> = (0..11).map(|i| format!("c{i}")).collect();
    let (_, data) = err(
        &mut c,
        "ask",
        json!({"content": "q", "choices": eleven}),
        -32602,
    )
    .await;
    assert_eq!(data["limit"], 10);
    let (msg, _) = err(
        &mut c,
        "ask",
        json!({"content": "q", "choices": ["Yes", "yes"]}),
        -32602,
    )
    .await;
    assert!(msg.contains("twice"), "{msg}");
    let (msg, _) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "q", "kind": "task", "choices": ["a", "b"]}),
        -32602,
    )
    .await;
    assert!(msg.contains("question"), "{msg}");
    // Choices alone make a question.
    let q = ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "tabs or spaces?", "choices": [" tabs ", "spaces"]}),
    )
    .await["entry"]
        .clone();
    assert_eq!(
        (q["kind"].clone(), q["choices"].clone()),
        (json!("question"), json!(["tabs", "spaces"]))
    );

    // A token may reply only to what it can read, and ask only where it may write.
    let secret = ok(
        &mut c,
        "token.create",
        json!({"name": "agent-x", "pads": ["agents-*"]}),
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let private = add(&mut c, "private", "payroll numbers").await;
    let mut x = Client::connect(&h.socket).await.unwrap();
    ok(
        &mut x,
        "hello",
        json!({"token": secret, "author": "agent-x"}),
    )
    .await;
    // What it cannot read does not exist for it: the error names no pad.
    let (msg, data) = err(
        &mut x,
        "entry.add",
        json!({"pad": "agents-1", "content": "re", "reply_to": private["id"]}),
        -32001,
    )
    .await;
    assert!(
        !msg.contains("private") && data["field"] == "reply_to",
        "{msg} {data}"
    );
    err(&mut x, "entry.thread", json!({"id": private["id"]}), -32001).await;
    err(
        &mut x,
        "ask",
        json!({"content": "may I?", "wait_seconds": 0}),
        -32003,
    )
    .await;
    let r = ok(
        &mut x,
        "ask",
        json!({"content": "may I?", "pad": "agents-1", "wait_seconds": 0}),
    )
    .await;
    assert!(r["answer"].is_null());
    // The thread of an entry it can read leaves out replies it cannot.
    let mine = r["question"]["id"].clone();
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "private", "content": "answer kept private", "reply_to": mine}),
    )
    .await;
    let t = ok(&mut x, "entry.thread", json!({"id": mine})).await;
    assert!(t["replies"].as_array().unwrap().is_empty(), "{t}");
    h.stop().await;
}

/// The person can tell whether an agent still waits: `waiting` when an
/// `ask` begins, `stopped_waiting` when the last one gives up (never after
/// an answer), and `stats` lists the questions waited on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_hears_when_an_agent_starts_and_stops_waiting() {
    let h = Harness::start().await;
    let mut person = as_author(&h, "user").await;
    ok(&mut person, "subscribe", json!({"pads": ["ops"]})).await;
    let next = async |c: &mut Client, want: &str| -> Value {
        loop {
            let e = tokio::time::timeout(Duration::from_secs(20), c.next_event())
                .await
                .expect("an event in time")
                .unwrap()
                .unwrap();
            if e["type"] == want {
                return e;
            }
            assert_ne!(e["type"], "stopped_waiting", "unexpected {e}");
        }
    };

    // Unanswered: waiting, then stopped_waiting when the ask times out.
    let mut agent = as_author(&h, "agent-0").await;
    let asked = tokio::spawn(async move {
        ok(
            &mut agent,
            "ask",
            json!({"content": "which region?", "pad": "ops", "wait_seconds": 2}),
        )
        .await
    });
    let w = next(&mut person, "waiting").await;
    let qid = w["entry"]["id"].as_str().unwrap().to_string();
    let stats = ok(&mut person, "stats", json!({})).await;
    assert_eq!(stats["waiting_questions"], json!([qid]));
    let s = next(&mut person, "stopped_waiting").await;
    assert_eq!(s["entry"]["id"], qid.as_str());
    assert!(asked.await.unwrap()["answer"].is_null());
    let stats = ok(&mut person, "stats", json!({})).await;
    assert_eq!(stats["waiting_questions"], json!([]));

    // Answered: waiting, then the answer, and no stopped_waiting.
    let mut agent = as_author(&h, "agent-0").await;
    let asked = tokio::spawn(async move {
        ok(
            &mut agent,
            "ask",
            json!({"content": "go ahead?", "pad": "ops", "wait_seconds": 30}),
        )
        .await
    });
    let w = next(&mut person, "waiting").await;
    let qid = w["entry"]["id"].as_str().unwrap().to_string();
    ok(
        &mut person,
        "entry.add",
        json!({"pad": "ops", "content": "yes", "reply_to": qid}),
    )
    .await;
    assert_eq!(asked.await.unwrap()["answer"]["content"], "yes");
    ok(
        &mut person,
        "entry.add",
        json!({"pad": "ops", "content": "marker"}),
    )
    .await;
    let m = next(&mut person, "created").await;
    let m = if m["entry"]["content"] == "marker" {
        m
    } else {
        next(&mut person, "created").await
    };
    assert_eq!(
        m["entry"]["content"], "marker",
        "no stopped_waiting came before it"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_note_addressed_to_an_agent_reaches_its_inbox_once_on_both_stores() {
    let h = Harness::start().await;
    let mut person = as_author(&h, "user").await;
    let note = ok(
        &mut person,
        "entry.add",
        json!({"pad": "proj", "content": "look at the flaky test", "to": ["@Coder", "coder", "reviewer"]}),
    )
    .await;
    // `@` dropped, case folded, each name once.
    assert_eq!(note["entry"]["to"], json!(["coder", "reviewer"]));
    let got = ok(&mut person, "entry.get", json!({"id": note["entry"]["id"]})).await;
    assert_eq!(got["entry"]["to"], json!(["coder", "reviewer"]));
    // An agent that never wrote still gets what was addressed to it.
    let mut coder = as_author(&h, "coder").await;
    let inbox = ok(&mut coder, "inbox", json!({})).await;
    assert_eq!(
        ids(&inbox["addressed"]),
        [note["entry"]["id"].as_str().unwrap()]
    );
    let again = ok(&mut coder, "inbox", json!({})).await;
    assert!(again["addressed"].as_array().unwrap().is_empty());
    // Not to someone else, and not to the author itself.
    let mut other = as_author(&h, "agent-z").await;
    ok(
        &mut other,
        "entry.add",
        json!({"pad": "proj", "content": "x", "to": ["agent-z"]}),
    )
    .await;
    let theirs = ok(&mut other, "inbox", json!({})).await;
    assert!(theirs["addressed"].as_array().unwrap().is_empty());
    let (_, data) = err(
        &mut person,
        "entry.add",
        json!({"pad": "proj", "content": "x", "to": ["bad name!"]}),
        -32602,
    )
    .await;
    assert_eq!(data["field"], "to");
}
