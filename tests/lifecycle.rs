//! The engine as a process: durability across SIGKILL, one engine per socket,
//! stale sockets, signals, permissions, restarts.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::{ok, pad, signal, spawn_engine, Harness};
use scratchpad::client::Client;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_write_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut engine = spawn_engine(&home, &socket).await;

    // Four writers stream entries; each records what the engine acknowledged.
    let mut writers = Vec::new();
    for w in 0..4 {
        let socket = socket.clone();
        writers.push(tokio::spawn(async move {
            let mut c = Client::connect(&socket).await.unwrap();
            let mut acked = Vec::new();
            for i in 0.. {
                match c
                    .call(
                        "entry.add",
                        json!({"pad": "crash", "content": format!("w{w} #{i}")}),
                    )
                    .await
                {
                    Ok(r) => acked.push(r["entry"]["id"].as_str().unwrap().to_string()),
                    Err(_) => break, // the engine died mid-request
                }
            }
            acked
        }));
    }
    // Kill it in the middle of the stream, once a good number are in.
    let mut probe = Client::connect(&socket).await.unwrap();
    loop {
        let s = probe.call("stats", json!({})).await.unwrap();
        if s["entries"].as_i64().unwrap() >= 2000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    signal(&engine.child, libc::SIGKILL);
    engine.child.wait().unwrap();
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    assert!(acked.len() >= 2000);
    assert!(
        socket.exists(),
        "a killed engine leaves its socket file behind"
    );

    // Restart: the stale socket is replaced, and every acknowledged entry is there.
    let mut engine = spawn_engine(&home, &engine.socket).await;
    let mut c = Client::connect(&socket).await.unwrap();
    let present = common::all_ids(&mut c, "crash").await;
    let lost: Vec<_> = acked.iter().filter(|id| !present.contains(*id)).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged writes lost, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(3)]
    );
    // And the text index caught up with them after the crash.
    let hits = c
        .call(
            "search",
            json!({"query": "w3 #1", "mode": "text", "limit": 5}),
        )
        .await
        .unwrap();
    assert!(!hits["hits"].as_array().unwrap().is_empty());
    signal(&engine.child, libc::SIGTERM);
    assert!(engine.child.wait().unwrap().success());
}

#[tokio::test]
async fn a_second_engine_names_the_first_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut first = spawn_engine(&home, &socket).await;
    let out = pad(&home, &socket).arg("serve").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already serving") && err.contains(&format!("pid {}", first.child.id())),
        "{err}"
    );
    // Same data directory, another socket: refused too (one engine per store).
    let out = pad(&home, &dir.path().join("run/other.sock"))
        .arg("serve")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("in use by another engine")
            && err.contains(&format!("pid {}", first.child.id())),
        "{err}"
    );
    // The first engine is unharmed.
    let mut c = Client::connect(&socket).await.unwrap();
    ok(&mut c, "stats", json!({})).await;
    signal(&first.child, libc::SIGINT);
    assert!(first.child.wait().unwrap().success());
}

#[tokio::test]
async fn sigterm_drains_connections_and_removes_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut engine = spawn_engine(&home, &socket).await;
    let mut c = Client::connect(&socket).await.unwrap();
    // Requests already sent when the signal lands are still answered.
    for i in 0..200 {
        c.send(
            "entry.add",
            json!({"pad": "drain", "content": format!("{i}")}),
        )
        .await
        .unwrap();
    }
    c.flush().await.unwrap();
    signal(&engine.child, libc::SIGTERM);
    let mut answered = 0;
    while let Ok((_, r)) = c.response().await {
        r.unwrap();
        answered += 1;
    }
    assert_eq!(
        answered, 200,
        "every request sent before the signal was answered"
    );
    assert!(engine.child.wait().unwrap().success());
    assert!(!socket.exists(), "socket removed on shutdown");
    let engine = spawn_engine(&home, &socket).await;
    let mut c = Client::connect(&socket).await.unwrap();
    assert_eq!(ok(&mut c, "stats", json!({})).await["entries"], 200);
    signal(&engine.child, libc::SIGTERM);
}

#[tokio::test]
async fn socket_directory_and_socket_are_private() {
    let h = Harness::start().await;
    let dir_mode = std::fs::metadata(h.socket.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    let sock_mode = std::fs::metadata(&h.socket).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    assert_eq!(sock_mode & 0o777, 0o600);

    // A directory others can enter is refused, with how to fix it.
    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = scratchpad::server::bind(&open.path().join("pad.sock"))
        .err()
        .expect("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("not private") && msg.contains("chmod 700"),
        "{msg}"
    );
}

#[tokio::test]
async fn other_users_are_refused_by_peer_uid() {
    if scratchpad::paths::uid() != 0 {
        eprintln!("skipped: needs root to connect as another uid");
        return;
    }
    let h = Harness::start().await;
    // Loosen the permissions as a misconfiguration would, so only the peer
    // check stands between another user and the engine.
    // (The temp directory above it too: engines opened earlier in this test
    // process set its umask to 077.)
    for dir in [
        h.socket.parent().unwrap(),
        h.socket.parent().unwrap().parent().unwrap(),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&h.socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    // Our own clients refuse another user's engine before sending anything
    // (client::connect_own), so the other user speaks raw JSON-RPC here.
    // tokio's Command: the engine under test runs on this same runtime.
    let raw = "import socket, sys\n\
               s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n\
               s.sendall(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stats\"}\\n')\n\
               print(s.makefile().readline())";
    let out = tokio::process::Command::new("python3")
        .args(["-c", raw])
        .arg(&h.socket)
        .uid(65534)
        .gid(65534)
        .output()
        .await
        .unwrap();
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains("-32003") && answer.contains("other users are refused"),
        "{answer} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And our CLI, as that user, does not even try: the engine is not its own.
    let cli = tokio::process::Command::new(env!("CARGO_BIN_EXE_pad"))
        .args(["stats"])
        .env("PAD_SOCKET", &h.socket)
        .uid(65534)
        .gid(65534)
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&cli.stderr);
    assert!(err.contains("not your engine"), "{err}");
}

#[tokio::test]
async fn a_restart_keeps_everything() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let e = ok(
        &mut c,
        "entry.add",
        json!({"pad": "keep", "content": "remember the kraken", "tags": ["sea"], "meta": {"k": 1}}),
    )
    .await["entry"]
        .clone();
    ok(
        &mut c,
        "pad.configure",
        json!({"name": "keep", "ttl_seconds": 999}),
    )
    .await;
    let upd = ok(
        &mut c,
        "entry.update",
        json!({"id": e["id"], "pinned": true}),
    )
    .await["entry"]
        .clone();
    drop(c);
    let h = h.restart().await;
    let mut c = h.client().await;
    assert_eq!(
        ok(&mut c, "entry.get", json!({"id": e["id"]})).await["entry"],
        upd
    );
    assert_eq!(
        ok(&mut c, "pad.list", json!({})).await["pads"][0]["ttl_seconds"],
        999
    );
    assert_eq!(
        ok(&mut c, "search", json!({"query": "kraken"})).await["hits"][0]["entry"]["id"],
        e["id"]
    );
    assert_eq!(
        ok(&mut c, "tags.list", json!({})).await["tags"],
        json!([{"tag": "sea", "count": 1}])
    );
    // New ids still sort after old ones.
    let next = common::add(&mut c, "keep", "later").await;
    assert!(next["id"].as_str().unwrap() > e["id"].as_str().unwrap());
}

#[tokio::test]
async fn a_missing_or_corrupt_text_index_is_rebuilt() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    for i in 0..50 {
        common::add(&mut c, "idx", &format!("needle {i}")).await;
    }
    ok(&mut c, "search", json!({"query": "needle"})).await;
    drop(c);
    let dir = h.stop().await;
    let search_db = dir.path().join("data/search.db");
    std::fs::write(&search_db, b"this is not a database").unwrap();
    let _ = std::fs::remove_file(dir.path().join("data/search.db-wal"));
    let h = Harness::restart_in(dir).await;
    let mut c = h.client().await;
    let hits = ok(&mut c, "search", json!({"query": "needle", "limit": 100})).await;
    assert_eq!(
        hits["hits"].as_array().unwrap().len(),
        50,
        "rebuilt from the store"
    );
    drop(c);
    let dir = h.stop().await;
    std::fs::remove_file(dir.path().join("data/search.db")).unwrap();
    let h = Harness::restart_in(dir).await;
    let mut c = h.client().await;
    let hits = ok(&mut c, "search", json!({"query": "needle 4", "limit": 100})).await;
    // "4" is a substring match: needle 4, 14, 24, 34 and 40-49 first; then
    // the notes with some of the words.
    let hits = hits["hits"].as_array().unwrap();
    let with_4 = hits
        .iter()
        .take_while(|h| h["entry"]["content"].as_str().unwrap().contains('4'))
        .count();
    assert_eq!(with_4, 14, "{hits:?}");
    assert_eq!(hits.len(), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_stays_bounded_under_a_steady_write_stream() {
    // Empty the WAL past 4 MiB (1024 pages) rather than the default 32 MiB.
    let h = Harness::with(|c| c.wal_restart_pages = 1024).await;
    let mut c = h.client().await;
    // A writer that never pauses: ~24 MiB of WAL frames (about twice that
    // reaches the WAL file when nothing reuses it).
    let writer = tokio::spawn(async move {
        let big = "x".repeat(3900);
        for i in 0..2400 {
            c.call(
                "entry.add",
                json!({"pad": "wal", "content": format!("{i} {big}")}),
            )
            .await
            .unwrap();
        }
    });
    // Checkpoints alongside it, as the background task runs them; a passive
    // checkpoint alone never catches the newest frames of a busy writer.
    let store_engine = h.engine.clone();
    let mut max_wal = 0;
    while !writer.is_finished() {
        let e = store_engine.clone();
        tokio::task::spawn_blocking(move || e.sqlite_store().expect("SQLite").checkpoint_passive())
            .await
            .unwrap()
            .unwrap();
        max_wal = max_wal.max(h.engine.sqlite_store().expect("SQLite").wal_bytes());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    writer.await.unwrap();
    assert!(
        max_wal < 20 * 1024 * 1024,
        "the WAL is reused instead of growing: it reached {} MiB",
        max_wal / 1024 / 1024
    );
}

/// Each thread's voluntary context switches (its wake-ups), by name.
fn wakeups(pid: u32) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        let switches = status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .map_or(0, |n| n.trim().parse().unwrap());
        out.push((
            format!("{}/{}", name.trim(), task.file_name().to_string_lossy()),
            switches,
        ));
    }
    out
}

/// An engine nobody uses sleeps: after a burst of writes, once a quiet
/// second has passed, the journal thread waits for the next entry instead
/// of looking four times a second, and the text index's tick and the
/// embedding worker look once a second instead of ten times (`clock::QUIET`).
/// It used to wake ~45 times a second with nothing to do; the work left is
/// a few timers a second (checkpoints, reminders and leases, agents).
#[tokio::test]
async fn an_idle_engine_sleeps_and_wakes_for_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("home"), dir.path().join("run/pad.sock"));
    // With semantic search on, as a person runs it.
    let engine = common::spawn(common::pad_semantic(&home, &socket), &socket).await;
    let mut c = Client::connect(&socket).await.unwrap();
    for i in 0..50 {
        common::add(&mut c, "quiet", &format!("note {i} about the lighthouse")).await;
    }
    ok(&mut c, "search", json!({"query": "lighthouse"})).await;
    common::embedded_all(&mut c).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let pid = engine.child.id();
    let before = wakeups(pid);
    let secs = 4;
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let after = wakeups(pid);
    let woke = |name: &str| -> u64 {
        after
            .iter()
            .filter(|(n, _)| n.starts_with(name))
            .map(|(n, a)| a - before.iter().find(|(b, _)| b == n).map_or(0, |(_, b)| *b))
            .sum()
    };
    let journal = woke("pad-journal/");
    let embedding = woke("pad-embed");
    let total = woke("");
    // The journal thread needs none; it took ~32 in these four seconds before.
    assert!(
        journal <= 2,
        "the idle journal thread woke {journal} times in {secs} s: {after:?}"
    );
    // The embedding worker's threads: ~1.4 a second now, ~10.5 before.
    assert!(
        embedding <= 4 * secs,
        "the idle embedding worker woke {embedding} times in {secs} s: {after:?}"
    );
    // ~10 a second now, ~45 before: the bound sits between the two.
    assert!(
        total <= 20 * secs,
        "the idle engine woke {total} times in {secs} s: {after:?}"
    );

    // The next write wakes it: stored, found, and indexed in the background.
    let e = common::add(&mut c, "quiet", "the keeper rang the foghorn").await;
    let hits = ok(&mut c, "search", json!({"query": "foghorn"})).await;
    assert_eq!(hits["hits"][0]["entry"]["id"], e["id"]);
    common::add(&mut c, "quiet", "a second bell after the quiet").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let s = ok(&mut c, "stats", json!({})).await;
        if s["journal_queue"] == 0 && s["index_queue"] == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never caught up: {s}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
