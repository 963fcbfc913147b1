//! Faults of a team on a real PostgreSQL, with engines as real processes:
//! the database restarted hard or frozen under writers, an engine frozen
//! mid-write, claimants on two engines. Each checks what a client relies
//! on: nothing acknowledged lost, nothing stored twice, nothing refused
//! that was stored, every call answered within its bound, and recovery
//! without a restart. The figures each prints are the ones docs/teams.md
//! quotes ("When the database goes away").

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::postgres::Postgres;
use common::{ok, Proc};
use scratchpad::client::{Client, ClientError};
use serde_json::{json, Value};

/// What a call may take while the database is away: the engine's deadline
/// (3 s) and, for a write whose commit went unanswered, the look at whether
/// it committed (1 s), with room for a busy machine. A call still waiting
/// past it is held by the fault, which each test makes last far longer.
const CALL_BOUND: Duration = Duration::from_secs(8);

/// An engine process on `pg`, in a data directory of its own, logging to
/// `engine.log` there (printed if it does not come up).
async fn engine(pg: &Postgres) -> (Proc, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run").join("pad.sock");
    let log = std::fs::File::create(dir.path().join("engine.log")).unwrap();
    let child = common::pad(&dir.path().join("data"), &socket)
        .env("PAD_DATABASE_URL", pg.url())
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("pad serve starts");
    let engine = Proc { child, socket };
    let waited = engine.socket.clone();
    let up = tokio::spawn(async move { common::wait_for_socket(&waited).await });
    if up.await.is_err() {
        let log = std::fs::read_to_string(dir.path().join("engine.log")).unwrap_or_default();
        panic!("the engine did not come up; its log:\n{log}");
    }
    (engine, dir)
}

/// How one write was answered.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Stored,
    /// `-32005`: surely not stored.
    Refused,
    /// `-32006`: may be stored.
    Unknown,
}

/// Each write's content, how it was answered, and the slowest answer.
#[derive(Default)]
struct Tally {
    outcomes: Vec<(String, Outcome)>,
    slowest: Duration,
    /// Answers `-32005` and `-32006` a write retried with its key had.
    retried: [usize; 2],
}

/// How writers treat a write that was not acknowledged.
#[derive(Clone, Copy, PartialEq)]
enum Writers {
    /// Move on to the next note.
    GiveUp,
    /// Send it again, with its idempotency key, until it is acknowledged.
    RetryWithKey,
}

/// `writers` clients of `socket` adding distinct notes to `pad` until
/// `stop` is set; each answer checked against `CALL_BOUND` unless `frozen`
/// (the engine itself stopped: its clients wait with it).
fn start_writers(
    socket: &std::path::Path,
    pad: &'static str,
    writers: usize,
    stop: Arc<AtomicBool>,
    frozen: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Tally>> {
    writing(&[socket], pad, writers, stop, frozen, Writers::GiveUp)
}

/// `start_writers` on the first of `sockets`, writing `how` says; a writer
/// retrying with its key whose engine goes away (killed) goes on on the
/// next engine, sending the write it had in flight again with its key.
fn writing(
    sockets: &[&std::path::Path],
    pad: &'static str,
    writers: usize,
    stop: Arc<AtomicBool>,
    frozen: Arc<AtomicBool>,
    how: Writers,
) -> Vec<tokio::task::JoinHandle<Tally>> {
    (0..writers)
        .map(|w| {
            let sockets: Vec<_> = sockets.iter().map(|s| s.to_path_buf()).collect();
            let (stop, frozen) = (stop.clone(), frozen.clone());
            tokio::spawn(async move {
                let mut at = 0;
                let mut c = Client::connect(&sockets[at]).await.unwrap();
                let mut tally = Tally::default();
                let tag = fastrand::u32(..);
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let content = format!("{pad} writer {w} note {i} ({tag})");
                    let mut params = json!({"pad": pad, "content": content});
                    if how == Writers::RetryWithKey {
                        params["idempotency_key"] = json!(format!("{tag}-{w}-{i}"));
                    }
                    let mut tries = 0;
                    let outcome = loop {
                        let was_frozen = frozen.load(Ordering::Relaxed);
                        let started = Instant::now();
                        let answer = c.call("entry.add", params.clone()).await;
                        let took = started.elapsed();
                        if !was_frozen && !frozen.load(Ordering::Relaxed) {
                            assert!(
                                took < CALL_BOUND,
                                "a write took {took:?} to answer; the bound is {CALL_BOUND:?}"
                            );
                            tally.slowest = tally.slowest.max(took);
                        }
                        let outcome = match answer {
                            Ok(_) => Outcome::Stored,
                            Err(ClientError::Rpc(e)) if e.code == -32005 => Outcome::Refused,
                            Err(ClientError::Rpc(e)) if e.code == -32006 => Outcome::Unknown,
                            // Its engine is gone, with the answer: the next one.
                            Err(ClientError::Io(_) | ClientError::Protocol(_))
                                if how == Writers::RetryWithKey && sockets.len() > 1 =>
                            {
                                at = (at + 1) % sockets.len();
                                c = Client::connect(&sockets[at]).await.unwrap();
                                Outcome::Unknown
                            }
                            Err(e) => panic!("a write got {e:?}"),
                        };
                        if outcome != Outcome::Stored {
                            // As a client would: not in a tight loop.
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        if outcome == Outcome::Stored || how == Writers::GiveUp {
                            break outcome;
                        }
                        tally.retried[(outcome == Outcome::Unknown) as usize] += 1;
                        tries += 1;
                        assert!(
                            tries < 1500,
                            "{content:?} was not acknowledged in 30 s of retries"
                        );
                    };
                    tally.outcomes.push((content, outcome));
                }
                tally
            })
        })
        .collect()
}

/// Every content of `pad`, with how many times each is stored.
async fn stored(c: &mut Client, pad: &str) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    let mut params = json!({"pad": pad, "limit": 1000});
    loop {
        let r = ok(c, "entry.list", params.clone()).await;
        for e in r["entries"].as_array().unwrap() {
            *seen
                .entry(e["content"].as_str().unwrap().to_string())
                .or_insert(0) += 1;
        }
        match r["next_cursor"].as_str() {
            Some(cur) => params["cursor"] = json!(cur),
            None => return seen,
        }
    }
}

/// Checks the promises against what is stored: every acknowledged write
/// stored once, every refused one absent, nothing stored twice. Prints
/// and returns the counts of each answer.
async fn check(c: &mut Client, pad: &str, tallies: Vec<Tally>, what: &str) -> [usize; 3] {
    let stored = stored(c, pad).await;
    let mut counts = [0; 3];
    let mut slowest = Duration::ZERO;
    let mut retried = [0; 2];
    for t in tallies {
        slowest = slowest.max(t.slowest);
        retried = [retried[0] + t.retried[0], retried[1] + t.retried[1]];
        for (content, outcome) in t.outcomes {
            let n = stored.get(&content).copied().unwrap_or(0);
            assert!(n <= 1, "{content:?} is stored {n} times");
            match outcome {
                Outcome::Stored => {
                    counts[0] += 1;
                    assert_eq!(n, 1, "acknowledged {content:?} is lost");
                }
                Outcome::Refused => {
                    counts[1] += 1;
                    assert_eq!(n, 0, "{content:?} was refused (-32005), yet it is stored");
                }
                Outcome::Unknown => counts[2] += 1,
            }
        }
    }
    println!(
        "{what}: {} acknowledged, {} refused, {} outcome unknown; slowest answer {slowest:?}",
        counts[0], counts[1], counts[2]
    );
    if retried != [0, 0] {
        println!(
            "{what}: retried with their keys after {} refusals and {} unknown outcomes",
            retried[0], retried[1]
        );
    }
    counts
}

/// Waits (within `limit`) until a write on `c` is acknowledged again;
/// returns how long that took.
async fn recovered(c: &mut Client, pad: &str, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let left = limit.saturating_sub(started.elapsed());
        let call = c.call(
            "entry.add",
            json!({"pad": pad, "content": "after the fault"}),
        );
        if let Ok(Ok(_)) = tokio::time::timeout(left, call).await {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "the engine did not recover within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_restarted_hard_under_writers_loses_doubles_and_misrefuses_nothing() {
    let pg = Postgres::start();
    let (a, _dir) = engine(&pg).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writers = start_writers(&a.socket, "restart", 6, stop.clone(), Default::default());
    tokio::time::sleep(Duration::from_millis(800)).await;
    pg.crash();
    tokio::time::sleep(Duration::from_secs(2)).await;
    pg.ctl("start");
    let mut c = Client::connect(&a.socket).await.unwrap();
    let back = recovered(&mut c, "restart", Duration::from_secs(30)).await;
    println!("writes acknowledged again {back:?} after PostgreSQL started");
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    let mut tallies = Vec::new();
    for w in writers {
        tallies.push(w.await.unwrap());
    }
    let [stored, _, _] = check(&mut c, "restart", tallies, "PostgreSQL restarted hard").await;
    assert!(stored > 0);
}

/// What idempotency keys are for: writers that send each note with a key
/// and, answered `-32005` or `-32006`, send it again with the same key
/// until it is acknowledged, end with every note they meant stored exactly
/// once, though some commits' answers were lost in the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_retrying_with_their_keys_store_every_note_once_across_a_restart_and_a_freeze() {
    let pg = Postgres::start();
    let (a, _dir) = engine(&pg).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writers = writing(
        &[&a.socket],
        "keyed",
        6,
        stop.clone(),
        Default::default(),
        Writers::RetryWithKey,
    );
    // A hard restart, then a freeze: a commit in flight when the server
    // stopped answering is `-32006`, and, the server thawed, stored.
    tokio::time::sleep(Duration::from_millis(800)).await;
    pg.crash();
    tokio::time::sleep(Duration::from_secs(2)).await;
    pg.ctl("start");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    pg.freeze();
    tokio::time::sleep(Duration::from_secs(6)).await;
    pg.thaw();
    let mut c = Client::connect(&a.socket).await.unwrap();
    recovered(&mut c, "keyed", Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    let mut tallies = Vec::new();
    for w in writers {
        tallies.push(w.await.unwrap());
    }
    let retried: usize = tallies.iter().map(|t| t.retried[0] + t.retried[1]).sum();
    let [stored, refused, unknown] = check(
        &mut c,
        "keyed",
        tallies,
        "PostgreSQL restarted and frozen under writers retrying with their keys",
    )
    .await;
    assert_eq!(
        (refused, unknown),
        (0, 0),
        "every note acknowledged in the end"
    );
    assert!(
        stored > 0 && retried > 0,
        "the restarts refused some writes"
    );
}

/// An engine killed (`kill -9`) under writers and with an agent's task
/// held: the writers, retrying with their keys on the other engine, end
/// with every note stored exactly once (what the killed engine committed
/// before it died included); the dead agent's task goes back to `todo`
/// when its lease lapses, with its resume note, and a claimant on the
/// other engine takes it up where it stood.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_engine_killed_under_writers_loses_and_doubles_nothing_and_its_agents_task_returns() {
    let pg = Postgres::start();
    let (mut a, _da) = engine(&pg).await;
    let (b, _db) = engine(&pg).await;
    let mut ca = Client::connect(&a.socket).await.unwrap();
    let task = ok(
        &mut ca,
        "entry.add",
        json!({"pad": "plan", "content": "migrate the orders table", "kind": "task"}),
    )
    .await;
    let id = task["entry"]["id"].as_str().unwrap().to_string();
    let claim = json!({"pad": "plan", "agent": "worker-a", "lease_seconds": 2});
    assert_eq!(
        ok(&mut ca, "task.claim", claim).await["entry"]["id"],
        json!(id)
    );
    let beat = json!({"id": id, "agent": "worker-a", "resume": "rows 1-4000 copied"});
    ok(&mut ca, "task.heartbeat", beat).await;

    let stop = Arc::new(AtomicBool::new(false));
    let writers = writing(
        &[&a.socket, &b.socket],
        "killed",
        4,
        stop.clone(),
        Default::default(),
        Writers::RetryWithKey,
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    common::signal(&a.child, libc::SIGKILL);
    let killed = Instant::now();
    a.child.wait().unwrap();

    // The task: nothing to claim while the dead agent's lease holds, then
    // the task itself, with where the work stood.
    let mut cb = Client::connect(&b.socket).await.unwrap();
    let taken = loop {
        let r = ok(
            &mut cb,
            "task.claim",
            json!({"pad": "plan", "agent": "worker-b"}),
        )
        .await;
        if !r["entry"].is_null() {
            break r["entry"].clone();
        }
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "the task never came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let back = killed.elapsed();
    assert_eq!(taken["id"], json!(id));
    assert_eq!(taken["resume"], "rows 1-4000 copied");
    assert_eq!(taken["attempts"], 2);
    println!("the killed engine's agent's task (a 2 s lease) claimed on engine B {back:?} after the kill");

    stop.store(true, Ordering::Relaxed);
    let mut tallies = Vec::new();
    for w in writers {
        tallies.push(w.await.unwrap());
    }
    let moved: usize = tallies.iter().map(|t| t.retried[1]).sum();
    let [stored, refused, unknown] = check(
        &mut cb,
        "killed",
        tallies,
        "engine A killed -9 under writers going on on engine B with their keys",
    )
    .await;
    assert_eq!(
        (refused, unknown),
        (0, 0),
        "every note acknowledged in the end"
    );
    assert!(stored > 0 && moved > 0, "the writers moved to engine B");
}

/// The outcome the engine cannot tell, made certain: PostgreSQL told to
/// wait, on commit, for a standby that does not exist holds a write's
/// commit past the engine's deadline, in progress, so the engine answers
/// `-32006`; let go, the commit completes. Sent again with its key, the
/// write answers as stored, and is stored once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_whose_outcome_was_unknown_is_stored_once_when_retried_with_its_key() {
    let pg = Postgres::start();
    let (a, _dir) = engine(&pg).await;
    let mut c = Client::connect(&a.socket).await.unwrap();
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "unknown", "content": "before"}),
    )
    .await;
    let admin = sqlx::PgPool::connect(&pg.url()).await.unwrap();
    let standby = async |wait: bool| {
        let set = match wait {
            true => "ALTER SYSTEM SET synchronous_standby_names = 'nobody'",
            false => "ALTER SYSTEM RESET synchronous_standby_names",
        };
        sqlx::query(set).execute(&admin).await.unwrap();
        sqlx::query("SELECT pg_reload_conf()")
            .execute(&admin)
            .await
            .unwrap();
        // The server's processes read it before their next statement.
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    standby(true).await;
    let write = json!({"pad": "unknown", "content": "the one", "idempotency_key": "u-1"});
    let started = Instant::now();
    let e = c.call("entry.add", write.clone()).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.code(), Some(-32006), "{e}");
    assert!(
        e.to_string().contains("same idempotency_key is safe"),
        "{e}"
    );
    assert!(took < CALL_BOUND, "answered in {took:?}");
    standby(false).await;
    let started = Instant::now();
    let again = loop {
        match c.call("entry.add", write.clone()).await {
            Ok(v) => break v,
            // The first call may still hold its key a moment: retry.
            Err(e) if e.code() == Some(-32005) => {
                assert!(started.elapsed() < Duration::from_secs(30), "{e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("the retry got {e}"),
        }
    };
    assert_eq!(again["entry"]["content"], "the one");
    let stored = stored(&mut c, "unknown").await;
    assert_eq!(stored.get("the one"), Some(&1), "{stored:?}");
    println!("a write answered -32006 after {took:?}; its retry with the key answered with the stored note");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_database_is_answered_within_the_bound_and_recovered_from() {
    let pg = Postgres::start();
    let (a, _dir) = engine(&pg).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writers = start_writers(&a.socket, "frozen", 4, stop.clone(), Default::default());
    // A reader too: reads are bounded as writes are.
    let reader = {
        let (socket, stop) = (a.socket.clone(), stop.clone());
        tokio::spawn(async move {
            let mut c = Client::connect(&socket).await.unwrap();
            let mut slowest = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                let r = c
                    .call("entry.list", json!({"pad": "frozen", "limit": 5}))
                    .await;
                let took = started.elapsed();
                assert!(took < CALL_BOUND, "a read took {took:?}");
                if let Err(e) = r {
                    assert!(
                        matches!(&e, ClientError::Rpc(r) if r.code == -32005),
                        "a read got {e:?}"
                    );
                }
                slowest = slowest.max(took);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            slowest
        })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    // Frozen far longer than a call may wait.
    pg.freeze();
    tokio::time::sleep(Duration::from_secs(12)).await;
    pg.thaw();
    let mut c = Client::connect(&a.socket).await.unwrap();
    let back = recovered(&mut c, "frozen", Duration::from_secs(30)).await;
    println!("writes acknowledged again {back:?} after PostgreSQL thawed");
    stop.store(true, Ordering::Relaxed);
    let mut tallies = Vec::new();
    for w in writers {
        tallies.push(w.await.unwrap());
    }
    let slowest_read = reader.await.unwrap();
    println!("slowest read {slowest_read:?}");
    let [_, refused, unknown] = check(&mut c, "frozen", tallies, "PostgreSQL frozen 12 s").await;
    assert!(
        refused + unknown > 0,
        "writes during the freeze were answered, not left waiting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_engine_frozen_mid_write_holds_no_pad_hostage() {
    let pg = Postgres::start();
    let (a, _da) = engine(&pg).await;
    let (b, _db) = engine(&pg).await;
    let stop = Arc::new(AtomicBool::new(false));
    let frozen = Arc::new(AtomicBool::new(false));
    // A's writers keep the pad's row busy: frozen at any moment, A is
    // likely to hold it.
    let a_writers = start_writers(&a.socket, "shared", 4, stop.clone(), frozen.clone());
    tokio::time::sleep(Duration::from_millis(800)).await;
    // Frozen as it holds a transaction open (its session idle in
    // transaction, the pad's row likely locked): thawed and frozen again
    // until it is caught so.
    frozen.store(true, Ordering::Relaxed);
    let mut caught = false;
    for _ in 0..50 {
        common::signal(&a.child, libc::SIGSTOP);
        tokio::time::sleep(Duration::from_millis(100)).await;
        if pg.idle_in_transaction() > 0 {
            caught = true;
            break;
        }
        common::signal(&a.child, libc::SIGCONT);
        tokio::time::sleep(Duration::from_millis(fastrand::u64(5..50))).await;
    }
    assert!(caught, "engine A was never frozen mid-transaction");
    let started = Instant::now();
    let b_writers = start_writers(&b.socket, "shared", 2, stop.clone(), Default::default());
    let mut c = Client::connect(&b.socket).await.unwrap();
    let freed = recovered(&mut c, "shared", Duration::from_secs(10)).await;
    println!("engine B writes to the pad {freed:?} after engine A froze");
    // Frozen well past its sessions' idle-in-transaction limit.
    while started.elapsed() < Duration::from_secs(8) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    common::signal(&a.child, libc::SIGCONT);
    tokio::time::sleep(Duration::from_millis(100)).await;
    frozen.store(false, Ordering::Relaxed);
    let mut ca = Client::connect(&a.socket).await.unwrap();
    let back = recovered(&mut ca, "shared", Duration::from_secs(30)).await;
    println!("engine A writes again {back:?} after it woke");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let mut tallies = Vec::new();
    for w in a_writers.into_iter().chain(b_writers) {
        tallies.push(w.await.unwrap());
    }
    check(&mut c, "shared", tallies, "engine A frozen 8 s").await;
}

/// Two engines' claimants never hear "nothing is ready" while tasks are:
/// a claim holds only the task it takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claimants_on_two_engines_find_work_while_there_is_work() {
    const TASKS: usize = 300;
    let pg = Postgres::start();
    let (a, _da) = engine(&pg).await;
    let (b, _db) = engine(&pg).await;
    let mut c = Client::connect(&a.socket).await.unwrap();
    for i in 0..TASKS {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "jobs", "kind": "task", "content": format!("job {i}")}),
        )
        .await;
    }
    let claimed = Arc::new(AtomicUsize::new(0));
    let mut claimants = Vec::new();
    for (socket, name) in [(&a.socket, "a"), (&b.socket, "b")] {
        for n in 0..2 {
            let (socket, claimed) = (socket.clone(), claimed.clone());
            let agent = format!("{name}{n}");
            claimants.push(tokio::spawn(async move {
                let mut c = Client::connect(&socket).await.unwrap();
                let mut got = Vec::new();
                loop {
                    let r: Value = ok(
                        &mut c,
                        "task.claim",
                        json!({"pad": "jobs", "agent": agent.clone()}),
                    )
                    .await;
                    match r["entry"]["id"].as_str() {
                        Some(id) => {
                            got.push(id.to_string());
                            claimed.fetch_add(1, Ordering::SeqCst);
                        }
                        // How many were claimed when this one heard "none".
                        None => return (got, claimed.load(Ordering::SeqCst)),
                    }
                }
            }));
        }
    }
    let mut all = HashSet::new();
    for t in claimants {
        let (got, claimed_at_none) = t.await.unwrap();
        for id in got {
            assert!(all.insert(id), "a task was claimed twice");
        }
        // The other three claimants may each hold one task, taken and not
        // yet counted, when this one hears "none".
        assert!(
            claimed_at_none + 3 >= TASKS,
            "a claim answered \"none\" with {} of {TASKS} tasks unclaimed",
            TASKS - claimed_at_none
        );
    }
    assert_eq!(all.len(), TASKS);
}

/// Across a hard restart of PostgreSQL, what engine A does reaches engine
/// B though B could not hear it for a while: B's subscriber is told it
/// lagged (and hears new events again), an `ask` waiting on B ends with
/// the answer given on A, and a token revoked on A is refused on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn what_one_engine_did_during_a_restart_reaches_the_other() {
    let pg = Postgres::start();
    let (a, _da) = engine(&pg).await;
    let (b, _db) = engine(&pg).await;
    let mut on_a = Client::connect(&a.socket).await.unwrap();
    let secret = ok(
        &mut on_a,
        "token.create",
        json!({"name": "helper", "pads": ["team"]}),
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let mut watcher = Client::connect(&b.socket).await.unwrap();
    ok(&mut watcher, "subscribe", json!({"pads": ["team"]})).await;
    let asking = {
        let socket = b.socket.clone();
        tokio::spawn(async move {
            let mut c = Client::connect(&socket).await.unwrap();
            ok(
                &mut c,
                "ask",
                json!({"content": "ship it?", "pad": "team", "wait_seconds": 60, "author": "agent"}),
            )
            .await
        })
    };
    // Once B's ask waits (B's `stats` lists its question).
    let mut on_b = Client::connect(&b.socket).await.unwrap();
    let question = loop {
        let r = ok(&mut on_b, "stats", json!({})).await;
        if let Some(id) = r["waiting_questions"][0].as_str() {
            break id.to_string();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Its one look at the database (an answer given before it waited)
    // follows at once; the restart is to come while it only waits.
    tokio::time::sleep(Duration::from_millis(300)).await;
    pg.crash();
    tokio::time::sleep(Duration::from_secs(1)).await;
    pg.ctl("start");
    recovered(&mut on_a, "elsewhere", Duration::from_secs(30)).await;
    let restarted = Instant::now();
    // Right away, as B may still be deaf.
    ok(
        &mut on_a,
        "entry.add",
        json!({"pad": "team", "content": "yes, ship it", "reply_to": question, "author": "user"}),
    )
    .await;
    ok(&mut on_a, "token.revoke", json!({"name": "helper"})).await;

    let answered = tokio::time::timeout(Duration::from_secs(20), asking)
        .await
        .expect("the ask on B ended")
        .unwrap();
    assert_eq!(answered["answer"]["content"], "yes, ship it");
    println!(
        "the ask on B ended {:?} after the restart",
        restarted.elapsed()
    );

    // B tells its subscriber it may have missed events.
    let lagged = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let ev = watcher.next_event().await.unwrap().unwrap();
            if ev["type"] == "lagged" {
                return ev;
            }
        }
    })
    .await
    .expect("B's subscriber is told it lagged");
    assert!(lagged["missed"].as_u64().unwrap() >= 1, "{lagged}");

    // The revoked token is refused on B.
    let refused_after = Instant::now();
    loop {
        let mut c = Client::connect(&b.socket).await.unwrap();
        match c.call("hello", json!({"token": secret})).await {
            Err(ClientError::Rpc(e)) if e.code == -32003 => break,
            _ => {
                assert!(
                    refused_after.elapsed() < Duration::from_secs(20),
                    "a token revoked on A still works on B"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    println!(
        "the token revoked on A is refused on B {:?} after the restart",
        restarted.elapsed()
    );

    // And B hears A's events again.
    ok(
        &mut on_a,
        "entry.add",
        json!({"pad": "team", "content": "after"}),
    )
    .await;
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let ev = watcher.next_event().await.unwrap().unwrap();
            if ev["entry"]["content"] == "after" {
                return;
            }
        }
    })
    .await
    .expect("B's subscriber hears A again");
}
