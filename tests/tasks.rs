//! Plans and tasks over a real socket: concurrent claims, leases that run out
//! (on a test clock, no sleeping), failures and retries, dependency order,
//! reminders, restarts in the middle of a plan, and reports (insights,
//! sharing, the export and the window: tests/memory.rs).

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use common::{add, err, ok, Harness};
use scratchpad::clock::Clock;
use scratchpad::error::code;
use serde_json::{json, Value};

const START: i64 = 1_900_000_000_000;

async fn task(
    c: &mut scratchpad::client::Client,
    pad: &str,
    content: &str,
    after: &[&str],
) -> String {
    let r = ok(
        c,
        "entry.add",
        json!({"pad": pad, "content": content, "kind": "task", "depends_on": after}),
    )
    .await;
    assert_eq!(r["entry"]["status"], "todo", "a new task is todo");
    r["entry"]["id"].as_str().unwrap().to_string()
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

/// 200 tasks in 20 chains of 10 (each waits on the one before it), claimed
/// and completed by `agents` agents at once.
async fn claim_all(agents: usize) {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let pad = format!("swarm-{agents}");
    let mut deps: HashMap<String, Vec<String>> = HashMap::new();
    let mut previous: Vec<Option<String>> = vec![None; 20];
    for step in 0..10 {
        for (chain, last) in previous.iter_mut().enumerate() {
            let after: Vec<&str> = last.iter().map(String::as_str).collect();
            let t = task(&mut c, &pad, &format!("chain {chain} step {step}"), &after).await;
            deps.insert(t.clone(), after.iter().map(|s| s.to_string()).collect());
            *last = Some(t);
        }
    }
    let deps = Arc::new(deps);
    let mut handles = Vec::new();
    for a in 0..agents {
        let mut client = h.client().await;
        let pad = pad.clone();
        let deps = deps.clone();
        handles.push(tokio::spawn(async move {
            let agent = format!("agent-{a}");
            let mut mine = Vec::new();
            loop {
                let r = ok(
                    &mut client,
                    "task.claim",
                    json!({"pad": pad, "agent": agent}),
                )
                .await;
                if r["entry"].is_null() {
                    let n = &r["counts"];
                    if n["running"] == 0 && n["ready"] == 0 {
                        return mine;
                    }
                    // Others still hold tasks that unblock more: ask again soon.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                let e = &r["entry"];
                assert_eq!(e["status"], "doing");
                assert_eq!(e["assignee"], agent.as_str());
                let t = id(e);
                // Everything it waits on was done before it was handed out.
                for d in &deps[&t] {
                    let dep = ok(&mut client, "entry.get", json!({ "id": d })).await;
                    assert_eq!(
                        dep["entry"]["status"], "done",
                        "{t} was claimed before {d} was done"
                    );
                }
                ok(
                    &mut client,
                    "task.complete",
                    json!({"id": t, "agent": agent}),
                )
                .await;
                mine.push(t);
            }
        }));
    }
    let mut claimed: Vec<String> = Vec::new();
    let mut per_agent = Vec::new();
    for handle in handles {
        let mine = handle.await.unwrap();
        per_agent.push(mine.len());
        claimed.extend(mine);
    }
    let unique: HashSet<&String> = claimed.iter().collect();
    assert_eq!(claimed.len(), 200, "every task claimed once: {per_agent:?}");
    assert_eq!(unique.len(), 200, "no task claimed twice");
    let plan = ok(&mut c, "plan.order", json!({ "pad": pad })).await;
    assert_eq!(plan["counts"]["done"], 200);
    for e in plan["entries"].as_array().unwrap() {
        assert_eq!(e["entry"]["attempts"], 1, "no task was handed out twice");
    }
}

/// An engine on a manual clock whose reminders and leases are looked at
/// only when a test sweeps (its background tick an hour away).
async fn on_a_manual_clock() -> (Clock, Harness) {
    let clock = Clock::manual(START);
    let c2 = clock.clone();
    let h = Harness::with(move |c| {
        c.clock = c2;
        c.work_every = Duration::from_secs(3600);
    })
    .await;
    (clock, h)
}

#[tokio::test]
async fn two_agents_claim_every_task_exactly_once_in_dependency_order() {
    claim_all(2).await;
}

#[tokio::test]
async fn eight_agents_claim_every_task_exactly_once_in_dependency_order() {
    claim_all(8).await;
}

#[tokio::test]
async fn a_dead_agents_task_goes_to_the_next_claimant_with_its_resume_note() {
    let (clock, h) = on_a_manual_clock().await;
    let mut a = h.client().await;
    let mut b = h.client().await;
    let t = task(&mut a, "job", "migrate the 40 tables", &[]).await;

    let r = ok(
        &mut a,
        "task.claim",
        json!({"pad": "job", "agent": "agent-a", "lease_seconds": 60}),
    )
    .await;
    assert_eq!(id(&r["entry"]), t);
    assert_eq!(
        r["entry"]["lease_until"],
        scratchpad::model::fmt_time(START + 60_000)
    );
    clock.advance(Duration::from_secs(30));
    let r = ok(
        &mut a,
        "task.heartbeat",
        json!({"id": t, "agent": "agent-a", "resume": "28 of 40 tables done; next: orders", "lease_seconds": 60}),
    )
    .await;
    assert_eq!(
        r["entry"]["lease_until"],
        scratchpad::model::fmt_time(START + 90_000)
    );
    drop(a); // agent-a dies here.

    // While the lease holds, nobody else gets the task.
    let r = ok(
        &mut b,
        "task.claim",
        json!({"pad": "job", "agent": "agent-b"}),
    )
    .await;
    assert!(r["entry"].is_null());
    assert_eq!(r["counts"]["running"], 1);

    // The lease runs out: the next claimant gets it, with the note.
    clock.advance(Duration::from_secs(61));
    let r = ok(
        &mut b,
        "task.claim",
        json!({"pad": "job", "agent": "agent-b"}),
    )
    .await;
    let e = &r["entry"];
    assert_eq!(id(e), t);
    assert_eq!(e["assignee"], "agent-b");
    assert_eq!(e["resume"], "28 of 40 tables done; next: orders");
    assert_eq!(e["attempts"], 2);

    // agent-a, back from the dead, is told to stop.
    let mut a = h.client().await;
    let (msg, _) = err(
        &mut a,
        "task.heartbeat",
        json!({"id": t, "agent": "agent-a"}),
        code::CONFLICT,
    )
    .await;
    assert!(msg.contains("held by agent-b"), "{msg}");
    let (msg, _) = err(
        &mut a,
        "task.complete",
        json!({"id": t, "agent": "agent-a"}),
        code::CONFLICT,
    )
    .await;
    assert!(msg.contains("agent-b"), "{msg}");
    let r = ok(
        &mut b,
        "task.complete",
        json!({"id": t, "agent": "agent-b", "resume": "all 40 done"}),
    )
    .await;
    assert_eq!(r["entry"]["status"], "done");
    assert!(r["entry"]["lease_until"].is_null());
    err(&mut b, "task.complete", json!({ "id": t }), code::CONFLICT).await;
}

#[tokio::test]
async fn the_lease_sweep_requeues_tasks_and_tells_subscribers() {
    let (clock, h) = on_a_manual_clock().await;
    let mut c = h.client().await;
    let mut watcher = h.client().await;
    let t = task(&mut c, "job", "index the docs", &[]).await;
    ok(
        &mut c,
        "task.claim",
        json!({"pad": "job", "agent": "agent-a", "lease_seconds": 10}),
    )
    .await;
    ok(&mut watcher, "subscribe", json!({"pads": ["job"]})).await;
    assert_eq!(
        h.engine.release_leases().await.unwrap(),
        0,
        "the lease still holds"
    );
    clock.advance(Duration::from_secs(11));
    assert_eq!(h.engine.release_leases().await.unwrap(), 1);
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "updated");
    assert_eq!(ev["entry"]["id"], t.as_str());
    assert_eq!(ev["entry"]["status"], "todo");
    assert_eq!(
        ev["entry"]["assignee"], "agent-a",
        "the last holder is kept"
    );
    let plan = ok(&mut c, "plan.order", json!({"pad": "job"})).await;
    assert_eq!(plan["entries"][0]["state"], "ready");
    // Heartbeat after the sweep: the lease is gone, claim again.
    let (msg, _) = err(
        &mut c,
        "task.heartbeat",
        json!({"id": t, "agent": "agent-a"}),
        code::CONFLICT,
    )
    .await;
    assert!(msg.contains("lease ran out"), "{msg}");
}

#[tokio::test]
async fn failures_count_as_retries_and_block_what_depends_on_them() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let fetch = task(&mut c, "etl", "fetch the data", &[]).await;
    let load = task(&mut c, "etl", "load it", &[&fetch]).await;

    let r = ok(&mut c, "task.claim", json!({"pad": "etl", "agent": "w1"})).await;
    assert_eq!(id(&r["entry"]), fetch, "load waits on fetch");
    let r = ok(
        &mut c,
        "task.fail",
        json!({"id": fetch, "agent": "w1", "error": "HTTP 503 from the API", "retry": true, "resume": "pages 1-3 saved"}),
    )
    .await;
    assert_eq!(
        r["entry"]["status"], "todo",
        "retry puts it back in the queue"
    );
    assert_eq!(r["entry"]["error"], "HTTP 503 from the API");

    let r = ok(&mut c, "task.claim", json!({"pad": "etl", "agent": "w2"})).await;
    assert_eq!(id(&r["entry"]), fetch);
    assert_eq!(r["entry"]["attempts"], 2);
    assert_eq!(r["entry"]["resume"], "pages 1-3 saved");
    let r = ok(
        &mut c,
        "task.fail",
        json!({"id": fetch, "agent": "w2", "error": "API gone"}),
    )
    .await;
    assert_eq!(r["entry"]["status"], "failed");

    let r = ok(&mut c, "task.claim", json!({"pad": "etl", "agent": "w3"})).await;
    assert!(r["entry"].is_null(), "load's dependency failed");
    assert_eq!(r["counts"]["blocked"], 1);
    assert_eq!(r["counts"]["failed"], 1);
    let plan = ok(&mut c, "plan.order", json!({"pad": "etl"})).await;
    assert_eq!(plan["entries"][1]["waiting_on"], json!([fetch]));
    assert_eq!(plan["entries"][1]["entry"]["id"], load.as_str());

    // task.* on something that is not a task, and bad leases.
    let note = id(&add(&mut c, "etl", "just a note").await);
    let (msg, _) = err(
        &mut c,
        "task.complete",
        json!({ "id": note }),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("not a task"), "{msg}");
    let (msg, _) = err(
        &mut c,
        "task.claim",
        json!({"pad": "etl", "agent": "w", "lease_seconds": 0}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("lease_seconds"), "{msg}");
    let mut nobody = scratchpad::client::Client::connect(&h.socket)
        .await
        .unwrap();
    let (msg, _) = err(
        &mut nobody,
        "task.claim",
        json!({"pad": "etl"}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("agent"), "{msg}");
}

#[tokio::test]
async fn plan_order_puts_dependencies_first_and_refuses_cycles() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "Goal: ship v2", "kind": "plan"}),
    )
    .await;
    let deploy = task(&mut c, "p", "deploy", &[]).await;
    let build = task(&mut c, "p", "build", &[]).await;
    let test = task(&mut c, "p", "test", &[]).await;
    ok(
        &mut c,
        "entry.update",
        json!({"id": deploy, "depends_on": [test]}),
    )
    .await;
    ok(
        &mut c,
        "entry.update",
        json!({"id": test, "depends_on": [build]}),
    )
    .await;

    let plan = ok(&mut c, "plan.order", json!({"pad": "p"})).await;
    let order: Vec<String> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| id(&s["entry"]))
        .collect();
    assert_eq!(order, vec![build.clone(), test.clone(), deploy.clone()]);
    let states: Vec<&str> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, vec!["ready", "blocked", "blocked"]);
    assert_eq!(plan["plans"][0]["content"], "Goal: ship v2");
    assert_eq!(plan["counts"]["ready"], 1);

    // deploy → test → build → deploy would be a loop.
    let (msg, _) = err(
        &mut c,
        "entry.update",
        json!({"id": build, "depends_on": [deploy]}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("cycle"), "{msg}");
    assert!(
        msg.contains(&format!("{build} → {deploy} → {test} → {build}")),
        "{msg}"
    );

    let r = ok(&mut c, "task.claim", json!({"pad": "p", "agent": "x"})).await;
    assert_eq!(id(&r["entry"]), build);
    let plan = ok(&mut c, "plan.order", json!({"pad": "p"})).await;
    assert_eq!(plan["entries"][0]["state"], "running");
}

/// `plan.order` says since when each task stands where it stands: a
/// running task since its claim (not its last heartbeat), a finished one
/// since its finish (not a later edit), the others nothing.
#[tokio::test]
async fn plan_order_says_since_when_a_task_runs_or_finished() {
    let (clock, h) = on_a_manual_clock().await;
    let mut c = h.client().await;
    let first = task(&mut c, "since", "cut the branch", &[]).await;
    let second = task(&mut c, "since", "build it", &[&first]).await;
    clock.advance(Duration::from_secs(60));
    let claim = json!({"pad": "since", "agent": "worker", "lease_seconds": 600});
    ok(&mut c, "task.claim", claim.clone()).await;
    clock.advance(Duration::from_secs(30));
    ok(
        &mut c,
        "task.heartbeat",
        json!({"id": first, "agent": "worker", "resume": "half"}),
    )
    .await;
    let since = |plan: &Value, i: usize| plan["entries"][i]["since"].clone();
    let plan = ok(&mut c, "plan.order", json!({"pad": "since"})).await;
    assert_eq!(plan["entries"][0]["state"], "running");
    assert_eq!(since(&plan, 0), scratchpad::model::fmt_time(START + 60_000));
    assert_eq!(since(&plan, 1), Value::Null, "waiting: nothing to say");

    clock.advance(Duration::from_secs(30));
    ok(
        &mut c,
        "task.complete",
        json!({"id": first, "agent": "worker"}),
    )
    .await;
    clock.advance(Duration::from_secs(300));
    ok(
        &mut c,
        "entry.update",
        json!({"id": first, "tags": ["shipped"]}),
    )
    .await;
    ok(&mut c, "task.claim", claim).await;
    ok(
        &mut c,
        "task.fail",
        json!({"id": second, "agent": "worker", "error": "disk full"}),
    )
    .await;
    let plan = ok(&mut c, "plan.order", json!({"pad": "since"})).await;
    assert_eq!(
        since(&plan, 0),
        scratchpad::model::fmt_time(START + 120_000)
    );
    assert_eq!(plan["entries"][1]["state"], "failed");
    assert_eq!(
        since(&plan, 1),
        scratchpad::model::fmt_time(START + 420_000)
    );

    // Reopened (todo: nothing to say), then marked done by hand later:
    // done since then, not since it failed.
    let at = |plan: &Value, id: &str| {
        let steps = plan["entries"].as_array().unwrap();
        let step = steps.iter().find(|s| s["entry"]["id"] == id).unwrap();
        (step["state"].clone(), step["since"].clone())
    };
    let update = |id: &str, status: &str| json!({"id": id, "status": status});
    ok(&mut c, "entry.update", update(&second, "todo")).await;
    let plan = ok(&mut c, "plan.order", json!({"pad": "since"})).await;
    assert_eq!(at(&plan, &second).1, Value::Null, "reopened: no finish");
    clock.advance(Duration::from_secs(7200));
    ok(&mut c, "entry.update", update(&second, "done")).await;
    let plan = ok(&mut c, "plan.order", json!({"pad": "since"})).await;
    let marked = scratchpad::model::fmt_time(START + 7_620_000);
    assert_eq!(at(&plan, &second), (json!("done"), json!(marked)));

    // A claim whose lease ran out (back in the queue), written `doing`
    // again later: claimed then, not when the lapsed claim was taken.
    let third = task(&mut c, "since", "ship it", &[]).await;
    let short = json!({"pad": "since", "agent": "worker", "lease_seconds": 60});
    ok(&mut c, "task.claim", short).await;
    clock.advance(Duration::from_secs(7200));
    assert_eq!(h.engine.release_leases().await.unwrap(), 1);
    let doing = json!({"id": third, "status": "doing", "assignee": "worker"});
    ok(&mut c, "entry.update", doing).await;
    let plan = ok(&mut c, "plan.order", json!({"pad": "since"})).await;
    let again = scratchpad::model::fmt_time(START + 14_820_000);
    assert_eq!(at(&plan, &third).1, json!(again));

    // Written `doing` or `done` from the start (Agent Zero's delegations).
    let doing = ok(
        &mut c,
        "entry.add",
        json!({"pad": "since", "kind": "task", "content": "delegated", "status": "doing",
            "assignee": "worker"}),
    )
    .await;
    let done = ok(
        &mut c,
        "entry.add",
        json!({"pad": "since", "kind": "task", "content": "already", "status": "done"}),
    )
    .await;
    let plan = ok(&mut c, "plan.order", json!({"pad": "since"})).await;
    let id = |v: &Value| v["entry"]["id"].as_str().unwrap().to_string();
    assert_eq!(at(&plan, &id(&doing)).1, json!(again));
    assert_eq!(at(&plan, &id(&done)), (json!("done"), json!(again)));
}

/// Reminders due while the engine was down fire once after it comes back;
/// task order, statuses and leases survive the restart.
#[tokio::test]
async fn a_restart_mid_plan_loses_nothing_and_fires_missed_reminders_once() {
    let (clock, h) = on_a_manual_clock().await;
    let mut c = h.client().await;
    let a = task(&mut c, "plan", "design", &[]).await;
    let b = task(&mut c, "plan", "build", &[&a]).await;
    let t3 = task(&mut c, "plan", "review", &[&b]).await;
    ok(
        &mut c,
        "task.claim",
        json!({"pad": "plan", "agent": "agent-1", "lease_seconds": 7200}),
    )
    .await;
    ok(
        &mut c,
        "task.heartbeat",
        json!({"id": a, "resume": "sketch done"}),
    )
    .await;
    let soon = ok(
        &mut c,
        "entry.add",
        json!({"pad": "plan", "content": "check the CI run", "remind_in": 1800}),
    )
    .await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "plan", "content": "tomorrow's standup", "remind_in": 86400}),
    )
    .await;
    let before = ok(&mut c, "plan.order", json!({"pad": "plan"})).await;
    assert_eq!(
        h.engine.deliver_reminders().await.unwrap(),
        0,
        "nothing due yet"
    );
    drop(c);

    // Down for an hour: the first reminder comes due meanwhile.
    let dir = h.stop().await;
    clock.advance(Duration::from_secs(3600));
    let c3 = clock.clone();
    let h = Harness::restart_in_with(dir, move |c| {
        c.clock = c3;
        c.work_every = Duration::from_secs(3600);
    })
    .await;
    let mut c = h.client().await;
    let mut watcher = h.client().await;
    ok(&mut watcher, "subscribe", json!({"pads": ["plan"]})).await;
    let after = ok(&mut c, "plan.order", json!({"pad": "plan"})).await;
    assert_eq!(after, before, "order, statuses and leases survive");
    assert_eq!(
        after["entries"][0]["state"], "running",
        "the 2 h lease still holds"
    );
    assert_eq!(after["entries"][0]["entry"]["resume"], "sketch done");
    assert_eq!(id(&after["entries"][2]["entry"]), t3);

    assert_eq!(h.engine.deliver_reminders().await.unwrap(), 1);
    let ev = watcher.next_event().await.unwrap().unwrap();
    assert_eq!(ev["type"], "reminder");
    assert_eq!(ev["entry"]["id"], soon["entry"]["id"]);
    assert_eq!(h.engine.deliver_reminders().await.unwrap(), 0, "once");
    let inbox = ok(&mut c, "inbox", json!({"author": "tester"})).await;
    assert_eq!(inbox["reminders"].as_array().unwrap().len(), 1);
    assert_eq!(inbox["reminders"][0]["content"], "check the CI run");
    let inbox = ok(&mut c, "inbox", json!({"author": "tester"})).await;
    assert!(
        inbox["reminders"].as_array().unwrap().is_empty(),
        "the inbox shows it once"
    );

    // Another restart does not fire it again.
    drop((c, watcher));
    let dir = h.stop().await;
    let c4 = clock.clone();
    let h = Harness::restart_in_with(dir, move |c| {
        c.clock = c4;
        c.work_every = Duration::from_secs(3600);
    })
    .await;
    assert_eq!(h.engine.deliver_reminders().await.unwrap(), 0);
    clock.advance(Duration::from_secs(86400));
    assert_eq!(
        h.engine.deliver_reminders().await.unwrap(),
        1,
        "the second comes due"
    );
}

#[tokio::test]
async fn reminders_fire_on_their_own_and_moving_one_rearms_it() {
    let h = Harness::with(|c| c.work_every = Duration::from_millis(50)).await;
    let mut c = h.client().await;
    let mut watcher = h.client().await;
    ok(&mut watcher, "subscribe", json!({})).await;
    let r = ok(
        &mut c,
        "entry.add",
        json!({"pad": "r", "content": "ping me", "remind_in": 0}),
    )
    .await;
    let ev = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let ev = watcher.next_event().await.unwrap().unwrap();
            if ev["type"] == "reminder" {
                return ev;
            }
        }
    })
    .await
    .expect("the background tick delivers the reminder");
    assert_eq!(ev["entry"]["id"], r["entry"]["id"]);
    // A new remind_at arms it again.
    let at = scratchpad::model::fmt_time(scratchpad::clock::system_now_ms());
    ok(
        &mut c,
        "entry.update",
        json!({"id": r["entry"]["id"], "remind_at": at}),
    )
    .await;
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let ev = watcher.next_event().await.unwrap().unwrap();
            if ev["type"] == "reminder" {
                return;
            }
        }
    })
    .await
    .expect("the moved reminder fires again");
}

#[tokio::test]
async fn the_report_counts_per_author_and_task() {
    let clock = Clock::manual(START);
    let h = Harness::on_clock(&clock).await;
    let mut c = h.client().await;
    let t1 = task(&mut c, "w", "one", &[]).await;
    let t2 = task(&mut c, "w", "two", &[]).await;
    let t3 = task(&mut c, "w", "three", &[]).await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "w", "author": "agent-a", "content": "found it", "meta": {"tokens": 1200}}),
    )
    .await;
    ok(&mut c, "entry.add", json!({"pad": "w", "author": "agent-a", "content": "more", "meta": {"tokens": {"input": 300, "output": 200}}})).await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "other", "author": "agent-a", "content": "elsewhere"}),
    )
    .await;

    ok(
        &mut c,
        "task.claim",
        json!({"pad": "w", "agent": "agent-a"}),
    )
    .await; // t1
    clock.advance(Duration::from_secs(90));
    ok(&mut c, "task.complete", json!({"id": t1})).await;
    ok(
        &mut c,
        "task.claim",
        json!({"pad": "w", "agent": "agent-b"}),
    )
    .await; // t2
    ok(
        &mut c,
        "task.fail",
        json!({"id": t2, "error": "timeout", "retry": true}),
    )
    .await;
    ok(
        &mut c,
        "task.claim",
        json!({"pad": "w", "agent": "agent-b"}),
    )
    .await; // t2 again
    clock.advance(Duration::from_secs(30));
    ok(
        &mut c,
        "entry.update",
        json!({"id": t2, "meta": {"tokens": 5000}}),
    )
    .await;
    ok(
        &mut c,
        "task.fail",
        json!({"id": t2, "error": "timeout again"}),
    )
    .await;
    ok(
        &mut c,
        "task.claim",
        json!({"pad": "w", "agent": "agent-a"}),
    )
    .await; // t3
    ok(&mut c, "task.complete", json!({"id": t3})).await;

    let r = ok(&mut c, "report", json!({"pad": "w"})).await;
    let by: HashMap<&str, &Value> = r["authors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["author"].as_str().unwrap(), a))
        .collect();
    let a = by["agent-a"];
    assert_eq!(
        (
            a["entries"].as_u64(),
            a["tasks_done"].as_u64(),
            a["tasks_failed"].as_u64()
        ),
        (Some(2), Some(2), Some(0))
    );
    assert_eq!(a["tokens"], 1700);
    let b = by["agent-b"];
    assert_eq!(
        (
            b["entries"].as_u64(),
            b["tasks_done"].as_u64(),
            b["tasks_failed"].as_u64(),
            b["retries"].as_u64()
        ),
        (Some(0), Some(0), Some(1), Some(1))
    );
    assert_eq!(
        by["tester"]["entries"], 3,
        "the tester wrote the three tasks"
    );
    assert_eq!(
        by["tester"]["tokens"], 5000,
        "tokens count for the entry's author"
    );
    assert_eq!(r["totals"]["entries"], 5);
    assert_eq!(r["totals"]["tasks_done"], 2);
    let tasks: HashMap<&str, &Value> = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t))
        .collect();
    assert_eq!(tasks[t1.as_str()]["duration_seconds"], 90.0);
    assert_eq!(tasks[t2.as_str()]["attempts"], 2);
    assert_eq!(tasks[t2.as_str()]["retries"], 1);
    assert_eq!(tasks[t2.as_str()]["error"], "timeout again");
    assert_eq!(tasks[t2.as_str()]["duration_seconds"], 30.0);
    assert_eq!(tasks[t2.as_str()]["tokens"], 5000);
    assert_eq!(r["tasks_total"], 3);
    // Without a pad: every pad.
    let all = ok(&mut c, "report", json!({})).await;
    assert_eq!(all["totals"]["entries"], 6);
}
