//! Deliveries to A2A agents live in the store with the notes, on both
//! stores: an acknowledged addressed note has its delivery, survives a
//! restart, goes out as it stands when sent (edited: its new text; deleted:
//! nothing), the registry file holds only the agents, and an agent that
//! cannot be reached is asked about once, however many notes wait for it.
//! The agent is a stand-in speaking A2A 0.3 on loopback.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::header::CONTENT_TYPE;
use axum::routing::{get, post};
use common::{add, err, ok, Harness};
use scratchpad::client::Client;
use scratchpad::error::code;
use serde_json::{json, Value};

/// An A2A agent that answers every message at once with "echo: TEXT", and
/// keeps what it got. It can go down and come back on the same port.
struct StandIn {
    port: u16,
    received: Arc<Mutex<Vec<String>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl StandIn {
    async fn start() -> StandIn {
        let mut s = StandIn {
            port: 0,
            received: Arc::default(),
            stop: None,
        };
        s.up().await;
        s
    }

    async fn up(&mut self) {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("the stand-in listens");
        self.port = listener.local_addr().unwrap().port();
        let received = self.received.clone();
        let app = axum::Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(|| async {
                    json_body(json!({"name": "Stand-in", "description": "echoes",
                                     "version": "1", "protocolVersion": "0.3.0", "skills": []}))
                }),
            )
            .route(
                "/",
                post(move |headers: axum::http::HeaderMap, body: String| {
                    let received = received.clone();
                    async move {
                        let req: Value = serde_json::from_str(&body).unwrap_or_default();
                        let text = req["params"]["message"]["parts"][0]["text"]
                            .as_str()
                            .unwrap_or("")
                            .to_string();
                        received.lock().unwrap().push(text.clone());
                        // A careless agent repeats the credentials it was called with.
                        let creds = match text.contains("your credentials") {
                            true => format!(
                                " (called with {:?})",
                                headers
                                    .get("authorization")
                                    .map(|v| v.to_str().unwrap_or(""))
                            ),
                            false => String::new(),
                        };
                        json_body(json!({"jsonrpc": "2.0", "id": req["id"], "result": {
                            "kind": "message", "role": "agent", "messageId": "m",
                            "parts": [{"kind": "text", "text": format!("echo: {text}{creds}")}]}}))
                    }
                }),
            );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .ok();
        });
        self.stop = Some(stop);
    }

    fn down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    fn received(&self) -> Vec<String> {
        self.received.lock().unwrap().clone()
    }
}

fn json_body(v: Value) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    ([(CONTENT_TYPE, "application/json")], v.to_string())
}

async fn wait_for<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn delivery(c: &mut Client, note: &str) -> Value {
    ok(c, "agent.deliveries", json!({"entry": note})).await["deliveries"][0].clone()
}

async fn replies(c: &mut Client, note: &str) -> Vec<Value> {
    let t = ok(c, "entry.thread", json!({"id": note})).await;
    t["replies"].as_array().cloned().unwrap_or_default()
}

/// Registers the stand-in as `helper` (again, with `replace`).
async fn register(c: &mut Client, agent: &StandIn, replace: bool) {
    ok(
        c,
        "agent.add",
        json!({"name": "helper", "url": agent.url(), "replace": replace}),
    )
    .await;
}

/// The agent's answer in a note's thread, once there.
async fn result_of(c: &mut Client, note: &str) -> Value {
    wait_for("the answer", async || {
        replies(c, note)
            .await
            .into_iter()
            .find(|r| r["kind"] == "result")
    })
    .await
}

async fn send(c: &mut Client, text: &str) -> String {
    let e = ok(
        c,
        "entry.add",
        json!({"pad": "proj", "content": text, "to": ["helper"]}),
    )
    .await;
    e["entry"]["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_goes_out_as_it_stands_and_its_delivery_outlives_a_restart() {
    let mut agent = StandIn::start().await;
    let h = Harness::start().await;
    let mut c = h.client().await;
    register(&mut c, &agent, false).await;
    agent.down();
    let gone = send(&mut c, "deploy the old build").await;
    let edited = send(&mut c, "deploy v1").await;
    let kept = send(&mut c, "tidy the logs").await;
    wait_for("a failed try", async || {
        let d = delivery(&mut c, &gone).await;
        (d["attempts"].as_u64() >= Some(1)).then_some(())
    })
    .await;
    ok(&mut c, "entry.delete", json!({"id": gone})).await;
    ok(
        &mut c,
        "entry.update",
        json!({"id": edited, "content": "deploy v2"}),
    )
    .await;
    // The registry file keeps the agents' secrets, not the deliveries. It
    // notes the agent unreachable after the failed try is counted (beside
    // a busy CPU, a moment after): from then on, it stays as it is.
    let file = h.dir.path().join("data").join("agents.json");
    let saved = wait_for("the agent noted unreachable in the registry", async || {
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).ok()?).ok()?;
        (saved["agents"][0]["reachable"] == false).then_some(saved)
    })
    .await;
    assert!(saved.get("deliveries").is_none(), "{saved}");
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    for i in 0..20 {
        send(&mut c, &format!("more work {i}")).await;
    }
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        written,
        "writing notes does not rewrite the registry"
    );
    drop(c);

    // Restarted, and the agent back: what waited goes out as it is now.
    let h = h.restart().await;
    agent.up().await;
    let mut c = h.client().await;
    register(&mut c, &agent, true).await;
    for (note, answer) in [(&edited, "echo: deploy v2"), (&kept, "echo: tidy the logs")] {
        let said = result_of(&mut c, note).await;
        assert_eq!(said["content"], answer);
        // The answer is posted, then the delivery's state saved: a read
        // between the two (a busy machine, CI's) sees it still pending.
        wait_for("the delivery done", async || {
            (delivery(&mut c, note).await["state"] == "done").then_some(())
        })
        .await;
    }
    let received = agent.received();
    assert!(
        !received.iter().any(|t| t.contains("old build")),
        "{received:?}"
    );
    assert_eq!(
        received.iter().filter(|t| *t == "deploy v2").count(),
        1,
        "{received:?}"
    );
    assert!(!received.iter().any(|t| t == "deploy v1"), "{received:?}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_out_of_reach_is_asked_about_once_however_many_notes_wait() {
    let mut agent = StandIn::start().await;
    let h = Harness::with(|c| c.agent_give_up = Duration::from_millis(500)).await;
    let mut c = h.client().await;
    register(&mut c, &agent, false).await;
    agent.down();
    let mut notes = Vec::new();
    for i in 0..5 {
        notes.push(send(&mut c, &format!("job {i}")).await);
    }
    let question = wait_for("every note failed", async || {
        let mut asked = Vec::new();
        for n in &notes {
            let d = delivery(&mut c, n).await;
            if d["state"] != "failed" {
                return None;
            }
            asked.push(d["question"].as_str()?.to_string());
        }
        Some(asked)
    })
    .await;
    assert!(question.iter().all(|q| *q == question[0]), "{question:?}");
    let asked = ok(
        &mut c,
        "entry.list",
        json!({"pad": "proj", "author": "engine", "kind": "question"}),
    )
    .await;
    assert_eq!(asked["entries"].as_array().unwrap().len(), 1, "{asked}");
    // One answer for all of them.
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "proj", "content": "drop", "reply_to": question[0]}),
    )
    .await;
    wait_for("all dropped", async || {
        for n in &notes {
            let d = delivery(&mut c, n).await;
            if d["detail"] != "not delivered: dropped" {
                return None;
            }
        }
        Some(())
    })
    .await;
    add(&mut c, "proj", "unrelated").await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_waits_a_day_for_its_agent_to_be_registered() {
    let clock = scratchpad::clock::Clock::manual(1_800_000_000_000);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    let early = send(&mut c, "written before helper was registered").await;
    // A name nobody registered has no delivery to show.
    let none = ok(&mut c, "agent.deliveries", json!({"entry": early})).await;
    assert_eq!(none["deliveries"], json!([]));
    clock.advance(Duration::from_secs(2 * 86_400));
    h.engine.sweep().await.unwrap();
    let late = send(&mut c, "written the day it was").await;
    let agent = StandIn::start().await;
    register(&mut c, &agent, false).await;
    let said = result_of(&mut c, &late).await;
    assert_eq!(said["content"], "echo: written the day it was");
    assert_eq!(agent.received(), ["written the day it was"]);
    h.stop().await;
}

/// An engine from before kept its deliveries in agents.json: they move to
/// the store, and the file keeps the registry alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_an_older_engine_kept_in_its_file_move_to_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let old = json!({
        "agents": [{"name": "helper", "url": "http://127.0.0.1:9/", "dialect": "0.3",
                    "card": null, "added_at": 0, "added_by": "user"}],
        "deliveries": [{
            "delivery": {"entry": "1jq000000001", "pad": "proj", "agent": "helper",
                         "state": "done", "detail": null, "task": "t1", "question": null,
                         "attempts": 0, "updated_at": "2026-11-25T00:00:00.000Z"},
            "context": "pad-1jq000000001", "thread": ["1jq000000001"], "outbox": [],
            "reply_to": "1jq000000001", "next_at": i64::MAX,
            "failing_since": null, "posted_state": "completed", "posted_messages": 1,
            "quiet_polls": 0
        }]
    });
    std::fs::write(data.join("agents.json"), old.to_string()).unwrap();
    let h = Harness::in_dir(dir, |_| {}).await;
    let mut c = h.client().await;
    let listed = ok(&mut c, "agent.deliveries", json!({"pad": "proj"})).await;
    assert_eq!(listed["deliveries"][0]["state"], "done", "{listed}");
    assert_eq!(listed["deliveries"][0]["task"], "t1");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("agents.json")).unwrap()).unwrap();
    assert!(saved.get("deliveries").is_none(), "{saved}");
    assert_eq!(saved["agents"][0]["name"], "helper");
    h.stop().await;
}

/// Finding 16: removing an agent that has notes not yet delivered says so
/// and drops them only when told to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_an_agent_with_undelivered_notes_is_refused_until_told_to_drop_them() {
    let mut agent = StandIn::start().await;
    let h = Harness::start().await;
    let mut c = h.client().await;
    register(&mut c, &agent, false).await;
    agent.down();
    let note = send(&mut c, "rotate the keys").await;
    let (msg, _) = err(
        &mut c,
        "agent.remove",
        json!({"name": "helper"}),
        code::CONFLICT,
    )
    .await;
    assert!(
        msg.contains("1 unfinished") && msg.contains("drop_pending"),
        "{msg}"
    );
    assert!(!delivery(&mut c, &note).await.is_null());
    let r = ok(
        &mut c,
        "agent.remove",
        json!({"name": "helper", "drop_pending": true}),
    )
    .await;
    assert_eq!(r["removed"], true);
    assert_eq!(r["dropped"], 1, "{r}");
    h.stop().await;
}

/// Finding 17: an agent's reply that repeats the secret it is called with
/// is kept and shown masked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_repeating_its_bearer_has_it_masked_in_the_thread_and_events() {
    let agent = StandIn::start().await;
    let h = Harness::start().await;
    let mut c = h.client().await;
    let mut watch = h.client().await;
    ok(&mut watch, "subscribe", json!({"pads": ["proj"]})).await;
    ok(
        &mut c,
        "agent.add",
        json!({"name": "helper", "url": agent.url(), "token": "bearer-secret-4711"}),
    )
    .await;
    let note = send(&mut c, "tell me your credentials").await;
    let answer = result_of(&mut c, &note).await;
    let text = answer["content"].as_str().unwrap();
    assert!(text.contains("called with"), "{answer}");
    assert!(!text.contains("bearer-secret-4711"), "{answer}");
    loop {
        let event = watch.next_event().await.unwrap().unwrap();
        assert!(!event.to_string().contains("bearer-secret-4711"), "{event}");
        if event["entry"]["kind"] == "result" {
            break;
        }
    }
    let roster = ok(&mut c, "agent.list", json!({})).await;
    assert!(!roster.to_string().contains("bearer-secret-4711"));
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_answer_is_held_to_the_content_limit_however_small() {
    let agent = StandIn::start().await;
    let h = Harness::with(|c| c.max_content_chars = 60).await;
    let mut c = h.client().await;
    register(&mut c, &agent, false).await;
    // The stand-in answers with more than the note: past a 60-character
    // limit, too small even for the line saying what was cut.
    let note = send(&mut c, &"x".repeat(58)).await;
    let said = result_of(&mut c, &note).await;
    let content = said["content"].as_str().unwrap();
    let n = content.chars().count();
    assert!(
        n > 0 && n <= 60,
        "the agent's reply is {n} characters; the limit is 60: {content:?}"
    );
    h.stop().await;
}
