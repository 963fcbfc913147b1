//! The engine on PostgreSQL: two engines (two data directories, two
//! sockets, as on two machines) sharing one real database.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::postgres::Postgres;
use common::{err, ok, Harness};
use serde_json::{json, Value};

async fn engine(pg: &Postgres) -> Harness {
    let url = pg.url();
    Harness::with(move |c| c.database = Some(url)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_writers_over_two_engines_store_every_entry_once() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let mut tasks = Vec::new();
    for h in [&a, &b] {
        for w in 0..8 {
            let mut c = h.client().await;
            tasks.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..500 {
                    let r = ok(
                        &mut c,
                        "entry.add",
                        json!({"pad": "team", "content": format!("writer {w} note {i}")}),
                    )
                    .await;
                    ids.push(r["entry"]["id"].as_str().unwrap().to_string());
                }
                ids
            }));
        }
    }
    let mut acknowledged = HashSet::new();
    for t in tasks {
        acknowledged.extend(t.await.unwrap());
    }
    assert_eq!(acknowledged.len(), 8_000, "ids are unique across engines");
    let mut c = b.client().await;
    let stored = common::all_ids(&mut c, "team").await;
    assert_eq!(
        stored, acknowledged,
        "engine B lists exactly what both acknowledged"
    );
    let pads = ok(&mut c, "pad.list", json!({})).await;
    assert_eq!(pads["pads"][0]["entries"], 8_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_across_engines_take_every_task_once() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let mut c = a.client().await;
    for i in 0..120 {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "jobs", "kind": "task", "content": format!("job {i}")}),
        )
        .await;
    }
    let mut tasks = Vec::new();
    for (h, name) in [(&a, "a"), (&b, "b")] {
        for w in 0..8 {
            let mut c = h.client().await;
            let agent = format!("{name}{w}");
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let r = ok(&mut c, "task.claim", json!({"pad": "jobs", "agent": agent})).await;
                    match r["entry"]["id"].as_str() {
                        Some(id) => got.push(id.to_string()),
                        None => return got,
                    }
                }
            }));
        }
    }
    let mut claimed = Vec::new();
    for t in tasks {
        claimed.extend(t.await.unwrap());
    }
    let unique: HashSet<_> = claimed.iter().collect();
    assert_eq!(claimed.len(), 120, "every task claimed, none twice");
    assert_eq!(unique.len(), 120);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_on_one_engine_reaches_subscribers_of_the_other() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let mut watcher = b.client().await;
    ok(&mut watcher, "subscribe", json!({"pads": ["team"]})).await;
    let mut c = a.client().await;
    let added = ok(
        &mut c,
        "entry.add",
        json!({"pad": "team", "content": "deploy is green"}),
    )
    .await;
    // 8,000 bytes: more than one NOTIFY carries.
    let big = "é".repeat(4_000);
    let eyes = ok(
        &mut c,
        "entry.add",
        json!({"pad": "elsewhere", "content": big, "tags": ["needs_eyes"]}),
    )
    .await;
    let mut seen: Vec<Value> = Vec::new();
    // Its `created` is outside the watcher's pads; its `needs_eyes` is not.
    while seen.len() < 2 {
        let ev = tokio::time::timeout(Duration::from_secs(10), watcher.next_event())
            .await
            .expect("events from engine A reach engine B")
            .expect("the subscription stays open")
            .expect("an event");
        seen.push(ev);
    }
    assert_eq!(seen[0]["type"], "created");
    assert_eq!(seen[0]["entry"]["id"], added["entry"]["id"]);
    // A needs_eyes entry on a pad the watcher did not ask for still reaches
    // it (needs_eyes bypasses filters), with its whole text (the payload was
    // too large for one NOTIFY).
    let needs: Vec<_> = seen.iter().filter(|e| e["type"] == "needs_eyes").collect();
    assert_eq!(needs.len(), 1, "{seen:?}");
    assert_eq!(needs[0]["entry"]["id"], eyes["entry"]["id"]);
    assert_eq!(
        needs[0]["entry"]["content"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        4_000
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_contract_holds_across_engines() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    let e = ok(
        &mut ca,
        "entry.add",
        json!({"pad": "p", "content": "Docker login fails behind the proxy", "tags": ["infra"]}),
    )
    .await;
    let id = e["entry"]["id"].as_str().unwrap().to_string();
    // if_version: the second writer of version 1 gets a conflict, on either engine.
    ok(
        &mut cb,
        "entry.update",
        json!({"id": id, "content": "fixed", "if_version": 1}),
    )
    .await;
    let (msg, _) = err(
        &mut ca,
        "entry.update",
        json!({"id": id, "content": "mine", "if_version": 1}),
        -32002,
    )
    .await;
    assert!(msg.contains("version 2"), "{msg}");
    ok(
        &mut cb,
        "entry.update",
        json!({"id": id, "content": "Docker login fails behind the proxy"}),
    )
    .await;
    // Text search: whole words, word beginnings, then substrings.
    for (query, pad_hit) in [
        ("login", true),
        ("dock", true),
        ("ocker", true),
        ("LOGIN proxy", true),
        ("kubernetes", false),
    ] {
        let r = ok(&mut cb, "search", json!({"query": query, "mode": "text"})).await;
        assert_eq!(
            !r["hits"].as_array().unwrap().is_empty(),
            pad_hit,
            "{query}: {r}"
        );
    }
    let tags = ok(&mut cb, "tags.list", json!({})).await;
    assert_eq!(tags["tags"][0]["tag"], "infra");
    // A token made on A is honoured on B; revoked on A, refused on B.
    let t = ok(
        &mut ca,
        "token.create",
        json!({"name": "ci", "pads": ["p"]}),
    )
    .await;
    let secret = t["secret"].as_str().unwrap().to_string();
    let mut agent = scratchpad::client::Client::connect(&b.socket)
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match agent.call("hello", json!({"token": secret})).await {
            Ok(_) => break,
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("token from engine A refused on B: {e}"),
        }
    }
    ok(&mut agent, "entry.get", json!({"id": id})).await;
    err(
        &mut agent,
        "entry.add",
        json!({"pad": "other", "content": "x"}),
        -32003,
    )
    .await;
    // A thread across engines, and plans, reports, export, inbox.
    ok(
        &mut cb,
        "entry.add",
        json!({"pad": "p", "content": "try the mirror", "reply_to": id, "author": "helper"}),
    )
    .await;
    let thread = ok(&mut ca, "entry.thread", json!({"id": id})).await;
    assert_eq!(thread["replies"].as_array().unwrap().len(), 1);
    assert_eq!(thread["entry"]["replies"], 1);
    let md = ok(&mut ca, "pad.export", json!({"name": "p"})).await;
    assert!(md["text"].as_str().unwrap().contains("try the mirror"));
    ok(&mut ca, "report", json!({"pad": "p"})).await;
    ok(&mut ca, "plan.order", json!({"pad": "p"})).await;
    ok(&mut ca, "inbox", json!({"author": "tester"})).await;
    // A deletion on one engine is seen on the other.
    ok(&mut ca, "entry.delete", json!({"id": id})).await;
    err(&mut cb, "entry.get", json!({"id": id}), -32001).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_that_goes_away_is_unavailable_then_back_by_itself() {
    let pg = Postgres::start();
    let a = engine(&pg).await;
    let mut c = a.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "before"}),
    )
    .await;
    pg.ctl("stop");
    let started = std::time::Instant::now();
    let (msg, _) = err(
        &mut c,
        "entry.add",
        json!({"pad": "p", "content": "during"}),
        -32005,
    )
    .await;
    assert!(msg.contains("PostgreSQL"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered within a client's timeout"
    );
    pg.ctl("start");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match c
            .call("entry.add", json!({"pad": "p", "content": "after"}))
            .await
        {
            Ok(_) => break,
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("the engine did not reconnect: {e}"),
        }
    }
    let ids = common::all_ids(&mut c, "p").await;
    assert_eq!(
        ids.len(),
        2,
        "before and after are stored; the refused write is not"
    );
}

/// An engine on the shared database with meaning search on the test model;
/// `exact_max` small so filtered searches go through the index as they
/// would on a large store.
async fn semantic_engine(pg: &Postgres) -> Harness {
    let url = pg.url();
    Harness::with(move |c| {
        c.database = Some(url);
        let mut s = common::semantic_config(scratchpad::semantic::Precision::Int8);
        s.exact_max = 3;
        c.semantic = Some(s);
    })
    .await
}

async fn best_by_meaning(c: &mut scratchpad::client::Client, query: &str, params: Value) -> Value {
    let mut p = json!({"query": query, "mode": "semantic", "limit": 3});
    p.as_object_mut()
        .unwrap()
        .extend(params.as_object().unwrap().clone());
    // Read-your-writes across engines waits at most 2 s for the embedding;
    // on a busy machine a search may answer first, saying how many writes
    // it could not see yet (`not_embedded`). Such an answer is not the one
    // to judge: ask again until the engine says it saw everything.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let r = ok(c, "search", p.clone()).await;
        if r["not_embedded"].as_u64().unwrap_or(0) == 0 {
            return r["hits"][0]["entry"].clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still not embedded after 60 s: {r}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn meaning_search_follows_every_engine_and_embeds_each_entry_once() {
    let pg = Postgres::start();
    let (a, b) = (semantic_engine(&pg).await, semantic_engine(&pg).await);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    let notes = [
        ("ops", "the nightly database backup did not finish"),
        ("ops", "disk on the build server is almost full"),
        ("ops", "TLS certificate for the API expires next week"),
        ("dev", "flaky integration test in the payments suite"),
        (
            "dev",
            "refactor the login form to use the new design system",
        ),
        (
            "dev",
            "memory leak in the websocket handler after reconnects",
        ),
        ("notes", "lunch order: two pizzas and a salad"),
        ("notes", "the team offsite is in March"),
    ];
    for (i, (pad, text)) in notes.iter().enumerate() {
        let c = if i % 2 == 0 { &mut ca } else { &mut cb };
        ok(c, "entry.add", json!({"pad": pad, "content": text})).await;
    }
    let (sa, sb) = (
        common::embedded_all(&mut ca).await,
        common::embedded_all(&mut cb).await,
    );
    // Each entry embedded by one engine: the two engines' counts add up.
    let embedded = |s: &Value| s["semantic"]["embedded"].as_u64().unwrap();
    assert_eq!(
        embedded(&sa) + embedded(&sb),
        notes.len() as u64,
        "{sa} {sb}"
    );
    assert_eq!(sb["semantic"]["vectors"], notes.len());
    // Read-your-writes by meaning across engines: written on A, found on B
    // by other words at once.
    let written = ok(
        &mut ca,
        "entry.add",
        json!({"pad": "ops", "content": "docker push is rejected: the registry refuses our credentials"}),
    )
    .await;
    let hit = best_by_meaning(&mut cb, "cannot authenticate to the registry", json!({})).await;
    assert_eq!(hit["id"], written["entry"]["id"]);
    // Filtered: through the index (exact_max 3), only the pad asked for.
    let hit = best_by_meaning(
        &mut ca,
        "running out of storage space",
        json!({"pad": "ops"}),
    )
    .await;
    assert_eq!(hit["content"], "disk on the build server is almost full");
    let r = ok(
        &mut cb,
        "search",
        json!({"query": "a bug in the tests", "mode": "semantic", "pad": "notes", "limit": 5}),
    )
    .await;
    assert!(
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["entry"]["pad"] == "notes"),
        "{r}"
    );
    // An edit on B is searched by its new meaning on A; a deletion on A
    // leaves B's results.
    let lunch = best_by_meaning(&mut cb, "what are we eating", json!({})).await;
    ok(
        &mut cb,
        "entry.update",
        json!({"id": lunch["id"], "content": "the VPN drops every few minutes on the office wifi"}),
    )
    .await;
    let hit = best_by_meaning(&mut ca, "network connection keeps disconnecting", json!({})).await;
    assert_eq!(hit["id"], lunch["id"]);
    ok(&mut ca, "entry.delete", json!({"id": lunch["id"]})).await;
    let hit = best_by_meaning(&mut cb, "network connection keeps disconnecting", json!({})).await;
    assert_ne!(hit["id"], lunch["id"], "a deleted entry is not found");
    // Hybrid fuses both sides on PostgreSQL too.
    let r = ok(
        &mut cb,
        "search",
        json!({"query": "certificate expiry", "mode": "hybrid"}),
    )
    .await;
    assert_eq!(r["mode"], "hybrid");
    assert!(r["hits"][0]["entry"]["content"]
        .as_str()
        .unwrap()
        .contains("TLS certificate"));
    // Reindex on A: B sees the new generation, rebuilds, and still finds.
    ok(&mut ca, "reindex", json!({})).await;
    common::embedded_all(&mut cb).await;
    let hit = best_by_meaning(&mut cb, "the backup job failed last night", json!({})).await;
    assert_eq!(hit["content"], "the nightly database backup did not finish");
    // Stats and the activity view on PostgreSQL.
    let s = ok(&mut ca, "stats", json!({"activity": true})).await;
    assert_eq!(s["entries"], notes.len());
    assert!(s["db_bytes"].as_u64().unwrap() > 0);
    assert_eq!(s["activity"]["entries_last_hour"], notes.len());
    assert_eq!(s["activity"]["busiest_pads"][0]["name"], "ops");
    // Tombstones older than a day go, and the floor rises past them (an
    // index saved before it is rebuilt).
    let pool = sqlx::PgPool::connect(&pg.url()).await.unwrap();
    let buried: i64 = sqlx::query_scalar(
        "UPDATE vectors SET vec = NULL, version = 9223372036854775807, \
         buried_at = now() - interval '2 days' \
         WHERE seq = (SELECT min(seq) FROM vectors) RETURNING n",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let store = scratchpad::pg::PgStore::open(&pg.url(), None)
        .await
        .unwrap();
    let pruned = tokio::task::spawn_blocking(move || {
        use scratchpad::semantic::VectorSource;
        let v = scratchpad::pg::PgVectors::new(&store).unwrap();
        (v.prune_tombstones(0).unwrap(), v.floor().unwrap())
    })
    .await
    .unwrap();
    assert_eq!(pruned, (1, buried));
}

/// Writers that keep adding until told to stop; each returns the ids it
/// had acknowledged and the error codes it got.
fn writers(
    socket: &std::path::Path,
    n: usize,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<(Vec<String>, Vec<i64>)>> {
    (0..n)
        .map(|w| {
            let (socket, stop) = (socket.to_owned(), stop.clone());
            tokio::spawn(async move {
                let (mut acked, mut codes) = (Vec::new(), Vec::new());
                let Ok(mut c) = scratchpad::client::Client::connect(&socket).await else {
                    return (acked, codes);
                };
                let mut i = 0;
                while !*stop.borrow() {
                    i += 1;
                    let call = c.call(
                        "entry.add",
                        json!({"pad": "load", "content": format!("writer {w} note {i}")}),
                    );
                    match tokio::time::timeout(Duration::from_secs(10), call).await {
                        Err(_) => panic!("a write hung past a client's timeout"),
                        Ok(Ok(r)) => acked.push(r["entry"]["id"].as_str().unwrap().to_string()),
                        Ok(Err(scratchpad::client::ClientError::Rpc(e))) => {
                            codes.push(e.code);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        // The engine itself is gone (killed): stop here.
                        Ok(Err(_)) => break,
                    }
                }
                (acked, codes)
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_engine_killed_mid_stream_loses_no_acknowledged_write() {
    let pg = Postgres::start();
    let b = engine(&pg).await;
    let home = tempfile::tempdir().unwrap();
    let socket = home.path().join("pad.sock");
    let mut cmd = common::pad_semantic(home.path(), &socket);
    cmd.env("PAD_DATABASE_URL", pg.url());
    let a = common::spawn(cmd, &socket).await;
    // `pad serve --database` runs meaning search too.
    let mut probe = scratchpad::client::Client::connect(&socket).await.unwrap();
    let s = ok(&mut probe, "stats", json!({})).await;
    assert_ne!(s["semantic"]["status"], "off", "{s}");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let tasks = writers(&socket, 8, stopped);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    common::signal(&a.child, libc::SIGKILL);
    let mut acked = HashSet::new();
    for t in tasks {
        acked.extend(t.await.unwrap().0);
    }
    let _ = stop.send(true);
    assert!(
        acked.len() > 100,
        "the writers were writing: {}",
        acked.len()
    );
    let mut c = b.client().await;
    let stored = common::all_ids(&mut c, "load").await;
    let missing: Vec<_> = acked.difference(&stored).collect();
    assert!(
        missing.is_empty(),
        "acknowledged on A, missing: {missing:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_restarted_under_load_answers_unavailable_then_resumes() {
    let pg = Postgres::start();
    let a = engine(&pg).await;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let tasks = writers(&a.socket, 8, stopped);
    tokio::time::sleep(Duration::from_millis(700)).await;
    pg.ctl("stop");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    pg.ctl("start");
    // Service resumes by itself: a fresh write succeeds within 20 s.
    let mut c = a.client().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while c
        .call("entry.add", json!({"pad": "load", "content": "after"}))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the engine did not reconnect"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = stop.send(true);
    let (mut acked, mut codes) = (HashSet::new(), Vec::new());
    for t in tasks {
        let (a, c) = t.await.unwrap();
        acked.extend(a);
        codes.extend(c);
    }
    assert!(!codes.is_empty(), "writes during the outage were refused");
    // A write whose commit went out as the server stopped, and whose fate
    // the engine could not learn while it was down, is -32006 (outcome
    // unknown); every other is refused (tests/team_faults.rs checks that a
    // refused write is never stored).
    assert!(
        codes.iter().all(|c| [-32005, -32006].contains(c)),
        "every refusal is -32005 (unavailable) or -32006 (outcome unknown): {codes:?}"
    );
    let stored = common::all_ids(&mut c, "load").await;
    let missing: Vec<_> = acked.difference(&stored).collect();
    assert!(missing.is_empty(), "acknowledged, missing: {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn what_one_engine_deleted_another_restores_once() {
    let pg = Postgres::start();
    let (a, b) = (engine(&pg).await, engine(&pg).await);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    for i in 0..50 {
        common::add(&mut ca, "team", &format!("finding {i}")).await;
    }
    let before = common::all_ids(&mut cb, "team").await;
    let cleared = ok(&mut ca, "pad.clear", json!({"name": "team"})).await;
    assert_eq!(cleared["deleted"], 50);
    // Both engines undo the same clear at once: each entry comes back once.
    let undo = json!({"change": cleared["change"]});
    let (ra, rb) = tokio::join!(
        ok(&mut ca, "entry.restore", undo.clone()),
        ok(&mut cb, "entry.restore", undo.clone())
    );
    let restored = |r: &Value| r["restored"].as_array().unwrap().len();
    assert_eq!(restored(&ra) + restored(&rb), 50, "{ra} {rb}");
    assert_eq!(common::all_ids(&mut ca, "team").await, before);
    let pads = ok(&mut cb, "pad.list", json!({})).await;
    assert_eq!(pads["pads"][0]["entries"], 50);
    let trash = ok(&mut cb, "entry.trash", json!({})).await;
    assert!(trash["entries"].as_array().unwrap().is_empty(), "{trash}");
}

/// After a load, the planner's statistics are the engine's to refresh: it
/// runs `ANALYZE` itself (`last_analyze`; autovacuum's own would set
/// `last_autoanalyze`, a minute or more later) once it inserted a tenth of
/// the table, and the row estimate it plans with is the table's size.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_large_load_leaves_the_planner_statistics_current() {
    let pg = Postgres::start();
    let h = engine(&pg).await;
    let mut c = h.client().await;
    for i in 0..3_000 {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "bulk", "content": format!("loaded note {i} about the staging database")}),
        )
        .await;
    }
    let pool = sqlx::PgPool::connect(&pg.url()).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (analyzed, estimate): (bool, f32) = sqlx::query_as(
            "SELECT s.last_analyze IS NOT NULL, c.reltuples FROM pg_stat_user_tables s \
             JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'entries'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if analyzed && estimate >= 2_700.0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no ANALYZE by the engine after 3,000 inserts (analyzed: {analyzed}, planned rows: {estimate})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Transactions the cluster's database has seen (its statistics: each
/// session reports them within ~10 s while idle).
async fn transactions(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database \
         WHERE datname = current_database()",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

/// An idle engine on PostgreSQL asks it little: PostgreSQL cannot say
/// whether anything was written, so the embedding worker used to look for
/// new notes ten times a second for ever; a second after it last found one
/// it looks once a second (`clock::QUIET`), and a note written after the
/// quiet is still embedded and found by meaning.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_idle_engine_asks_postgres_little_and_still_embeds_the_next_note() {
    let pg = Postgres::start();
    let h = semantic_engine(&pg).await;
    let mut c = h.client().await;
    for i in 0..20 {
        common::add(&mut c, "quiet", &format!("note {i} about the harbour")).await;
    }
    common::embedded_all(&mut c).await;
    let pool = sqlx::PgPool::connect(&pg.url()).await.unwrap();
    // Past the quiet second, and past the sessions' statistics interval.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let before = transactions(&pool).await;
    let secs = 12;
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let asked = transactions(&pool).await - before;
    // Here ~5 a second now (reminders, leases, the worker's look), ~130
    // before (the tests' worker looks every 20 ms; `pad serve`'s every
    // 100 ms: ~15 against ~40); the bound sits between the two.
    assert!(
        asked <= 25 * secs as i64,
        "the idle engine ran {asked} transactions in {secs} s"
    );
    let e = common::add(&mut c, "quiet", "a lighthouse keeper rang the foghorn").await;
    let best = best_by_meaning(
        &mut c,
        "a ship's warning sound in fog",
        json!({"pad": "quiet"}),
    )
    .await;
    assert_eq!(best["id"], e["id"]);
}
