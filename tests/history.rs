//! History, trash and undo over a real socket, on both stores: an agent's
//! edits, deletes and a clear of 300 entries are all undone by the person;
//! tokens see only their pads' history; retention empties the trash; a
//! killed engine leaves a restore all done or not begun.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{add, all_ids, embedded_all, err, hit_ids, ok, semantic_config, Harness};
use scratchpad::client::Client;
use scratchpad::clock::Clock;
use scratchpad::error::code;
use scratchpad::semantic::Precision;
use serde_json::{json, Value};

/// A token for an agent the person lets change everyone's notes in its
/// pads (`others`): what it deletes, clears or edits there is undone here.
async fn token(owner: &mut Client, name: &str, pads: &[&str], read_only: bool) -> String {
    let r = ok(
        owner,
        "token.create",
        json!({"name": name, "pads": pads, "read_only": read_only, "others": true}),
    )
    .await;
    r["secret"].as_str().unwrap().to_string()
}

async fn as_token(h: &Harness, secret: &str) -> Client {
    let mut c = Client::connect(&h.socket).await.unwrap();
    ok(&mut c, "hello", json!({"token": secret})).await;
    c
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[tokio::test]
async fn an_agents_edit_delete_and_clear_of_300_entries_are_all_undone() {
    let h = Harness::with(|c| c.semantic = Some(semantic_config(Precision::Int8))).await;
    let mut me = h.client().await;
    let secret = token(&mut me, "agent-x", &["proj-*"], false).await;
    let mut agent = as_token(&h, &secret).await;

    // The person's pad: 296 notes, a thread of a question and two replies,
    // a tagged note, and one about the staging database.
    for i in 0..296 {
        let tags = if i % 50 == 0 {
            json!(["build"])
        } else {
            json!([])
        };
        ok(
            &mut me,
            "entry.add",
            json!({"pad": "proj-x", "content": format!("note {i} about the build"), "tags": tags}),
        )
        .await;
    }
    let question = ok(
        &mut me,
        "entry.add",
        json!({"pad": "proj-x", "content": "which region for the replica?", "kind": "question", "tags": ["needs_eyes"]}),
    )
    .await["entry"]
        .clone();
    let qid = str_of(&question, "id").to_string();
    for answer in [
        "eu-west-1, close to the users",
        "and a read replica in us-east",
    ] {
        ok(
            &mut agent,
            "entry.add",
            json!({"pad": "proj-x", "content": answer, "reply_to": qid}),
        )
        .await;
    }
    let staging = add(
        &mut me,
        "proj-x",
        "The staging database password rotates every Friday at noon",
    )
    .await;
    let sid = str_of(&staging, "id").to_string();
    embedded_all(&mut me).await;
    let before = all_ids(&mut me, "proj-x").await;
    assert_eq!(before.len(), 300);

    // The agent overwrites the staging note and the question, deletes the
    // staging note, then clears the pad.
    ok(
        &mut agent,
        "entry.update",
        json!({"id": sid, "content": "obsolete", "tags": ["stale"]}),
    )
    .await;
    ok(
        &mut agent,
        "entry.update",
        json!({"id": qid, "content": "never mind"}),
    )
    .await;
    let deleted = ok(&mut agent, "entry.delete", json!({"id": sid})).await;
    let cleared = ok(&mut agent, "pad.clear", json!({"name": "proj-x"})).await;
    assert_eq!(cleared["deleted"], 299);
    assert!(all_ids(&mut me, "proj-x").await.is_empty());

    // Who did what: the audit names the agent for each change.
    let changes = ok(
        &mut me,
        "entry.changes",
        json!({"by": "agent-x", "limit": 1000}),
    )
    .await;
    let whats: Vec<&str> = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["what"].as_str().unwrap())
        .collect();
    assert_eq!(
        whats.iter().filter(|w| **w == "clear").count(),
        299,
        "{whats:?}"
    );
    assert_eq!(whats.iter().filter(|w| **w == "delete").count(), 1);
    assert_eq!(whats.iter().filter(|w| **w == "edit").count(), 2);
    assert_eq!(whats.iter().filter(|w| **w == "created").count(), 2);
    let edits_only = ok(
        &mut me,
        "entry.changes",
        json!({"by": "agent-x", "limit": 1000, "include_created": false}),
    )
    .await;
    assert_eq!(edits_only["changes"].as_array().unwrap().len(), 302);

    // The trash holds all 300, newest deletion first, paged.
    let mut trashed = HashSet::new();
    let mut cursor = Value::Null;
    loop {
        let page = ok(
            &mut me,
            "entry.trash",
            json!({"pad": "proj-x", "limit": 120, "cursor": cursor}),
        )
        .await;
        for v in page["entries"].as_array().unwrap() {
            assert!(trashed.insert(v["entry"]["id"].as_str().unwrap().to_string()));
        }
        cursor = page["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(trashed, before);

    // Undo the clear in one call, then the single delete.
    let back = ok(
        &mut me,
        "entry.restore",
        json!({"change": cleared["change"]}),
    )
    .await;
    assert_eq!(back["restored"].as_array().unwrap().len(), 299);
    let again = ok(
        &mut me,
        "entry.restore",
        json!({"change": cleared["change"]}),
    )
    .await;
    assert_eq!(again["restored"].as_array().unwrap().len(), 0);
    assert_eq!(again["skipped"].as_array().unwrap().len(), 299);
    ok(
        &mut me,
        "entry.restore",
        json!({"change": deleted["change"]}),
    )
    .await;
    assert_eq!(all_ids(&mut me, "proj-x").await, before);
    let trash = ok(&mut me, "entry.trash", json!({"pad": "proj-x"})).await;
    assert!(trash["entries"].as_array().unwrap().is_empty(), "{trash}");

    // The overwrites: the history shows the person's text, by whom it was
    // changed, and taking it back makes a new version.
    let hist = ok(&mut me, "entry.history", json!({"id": sid})).await;
    let versions = hist["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{hist}");
    assert_eq!(versions[0]["action"], "edit");
    assert_eq!(versions[0]["by"], "agent-x");
    assert_eq!(
        versions[0]["entry"]["content"],
        "The staging database password rotates every Friday at noon"
    );
    assert_eq!(versions[1]["action"], "delete");
    assert_eq!(versions[1]["restored_by"], "tester");
    assert_eq!(hist["entry"]["content"], "obsolete");
    let reverted = ok(&mut me, "entry.restore", json!({"id": sid, "version": 1})).await;
    let now = &reverted["restored"][0];
    assert_eq!(
        now["content"],
        "The staging database password rotates every Friday at noon"
    );
    assert_eq!(now["tags"], json!([]));
    assert_eq!(now["version"], 3);
    let edit = ok(
        &mut me,
        "entry.changes",
        json!({"by": "agent-x", "pad": "proj-x", "limit": 1000}),
    )
    .await;
    let question_edit = edit["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == qid.as_str() && c["what"] == "edit")
        .unwrap()
        .clone();
    ok(
        &mut me,
        "entry.restore",
        json!({"change": question_edit["change"]}),
    )
    .await;

    // Thread links, tags, and search by text and meaning are all back.
    let thread = ok(&mut me, "entry.thread", json!({"id": qid})).await;
    assert_eq!(thread["entry"]["content"], "which region for the replica?");
    assert_eq!(thread["entry"]["replies"], 2);
    assert_eq!(thread["replies"].as_array().unwrap().len(), 2);
    let tagged = ok(&mut me, "entry.list", json!({"tags": ["build"]})).await;
    assert_eq!(tagged["entries"].as_array().unwrap().len(), 6, "{tagged}");
    assert_eq!(thread["entry"]["answer"], thread["replies"][0]["id"]);
    let words = ok(
        &mut me,
        "search",
        json!({"query": "staging password", "mode": "text"}),
    )
    .await;
    assert_eq!(hit_ids(&words).first(), Some(&sid));
    embedded_all(&mut me).await;
    let meaning = ok(
        &mut me,
        "search",
        json!({"query": "when do the credentials of the test DB change?", "mode": "semantic", "limit": 3}),
    )
    .await;
    assert!(hit_ids(&meaning).contains(&sid), "{meaning}");
}

#[tokio::test]
async fn history_and_trash_are_scoped_to_a_tokens_pads() {
    let h = Harness::start().await;
    let mut me = h.client().await;
    let x = token(&mut me, "agent-x", &["proj-*"], false).await;
    let y = token(&mut me, "agent-y", &["other-*"], false).await;
    let reader = token(&mut me, "reader", &["proj-*"], true).await;
    let (mut x, mut y, mut reader) = (
        as_token(&h, &x).await,
        as_token(&h, &y).await,
        as_token(&h, &reader).await,
    );
    let note = add(&mut me, "proj-a", "the plan for proj-a").await;
    let id = str_of(&note, "id").to_string();
    ok(
        &mut x,
        "entry.update",
        json!({"id": id, "content": "x's plan"}),
    )
    .await;
    let gone = ok(&mut x, "entry.delete", json!({"id": id})).await;

    // Another token's view: no such entry, an empty trash, nothing to undo.
    err(&mut y, "entry.history", json!({"id": id}), code::NOT_FOUND).await;
    let t = ok(&mut y, "entry.trash", json!({})).await;
    assert!(t["entries"].as_array().unwrap().is_empty(), "{t}");
    err(
        &mut y,
        "entry.trash",
        json!({"pad": "proj-a"}),
        code::FORBIDDEN,
    )
    .await;
    err(
        &mut y,
        "entry.restore",
        json!({"change": gone["change"]}),
        code::NOT_FOUND,
    )
    .await;
    err(&mut y, "entry.restore", json!({"id": id}), code::NOT_FOUND).await;
    let c = ok(&mut y, "entry.changes", json!({})).await;
    assert!(c["changes"].as_array().unwrap().is_empty(), "{c}");

    // A read-only token sees the history but cannot restore.
    let hist = ok(&mut reader, "entry.history", json!({"id": &id[..8]})).await;
    assert_eq!(hist["versions"].as_array().unwrap().len(), 2);
    err(
        &mut reader,
        "entry.restore",
        json!({"id": id}),
        code::FORBIDDEN,
    )
    .await;
    // Purging is the owner's alone.
    err(&mut x, "entry.purge", json!({"all": true}), code::FORBIDDEN).await;

    // The token with write access restores it.
    let back = ok(&mut x, "entry.restore", json!({"id": id})).await;
    assert_eq!(back["restored"][0]["content"], "x's plan");

    // Instructive refusals.
    let (msg, _) = err(&mut me, "entry.restore", json!({}), code::INVALID_PARAMS).await;
    assert!(msg.contains("change"), "{msg}");
    let (msg, _) = err(
        &mut me,
        "entry.restore",
        json!({"id": id}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("version"), "{msg}");
    let (msg, _) = err(
        &mut me,
        "entry.restore",
        json!({"id": id, "version": 9}),
        code::NOT_FOUND,
    )
    .await;
    assert!(msg.contains("entry.history"), "{msg}");
}

/// One writer's burst rolls its own notes out, not everyone else's: an agent
/// that once answered with ~1,000 notes pushed all of the person's into the
/// trash of a pad with a window.
#[tokio::test]
async fn a_burst_by_one_writer_rolls_its_own_notes_out_of_the_window_first() {
    let h = Harness::start().await;
    let mut me = h.client().await;
    ok(
        &mut me,
        "pad.configure",
        json!({"name": "w", "max_entries": 10}),
    )
    .await;
    for i in 0..4 {
        add(&mut me, "w", &format!("mine {i}")).await;
    }
    let mut agent = Client::connect(&h.socket).await.unwrap();
    ok(&mut agent, "hello", json!({"author": "chatty"})).await;
    for i in 0..40 {
        add(&mut agent, "w", &format!("burst {i}")).await;
    }
    let listed = ok(&mut me, "entry.list", json!({"pad": "w"})).await;
    let contents: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents.len(), 10, "{contents:?}");
    for i in 0..4 {
        assert!(
            contents.contains(&format!("mine {i}").as_str()),
            "{contents:?}"
        );
    }
    assert!(contents.contains(&"burst 39") && !contents.contains(&"burst 33"));
    let trash = ok(&mut me, "entry.trash", json!({"pad": "w", "limit": 100})).await;
    assert_eq!(trash["entries"].as_array().unwrap().len(), 34);
    // A writer holding no more than half the window rolls the oldest of all
    // out, as a window does.
    add(&mut me, "w", "mine 4").await;
    let listed = ok(&mut me, "entry.list", json!({"pad": "w"})).await;
    let contents: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert!(
        !contents.contains(&"mine 0") && contents.contains(&"burst 34"),
        "{contents:?}"
    );
}

#[tokio::test]
async fn undoing_a_change_across_pads_shows_a_token_only_its_pads() {
    let clock = Clock::manual(1_800_000_000_000);
    let h = Harness::on_clock(&clock).await;
    let mut me = h.client().await;
    let mut foreign = Vec::new();
    for pad in ["mine", "theirs", "others"] {
        ok(
            &mut me,
            "pad.configure",
            json!({"name": pad, "ttl_seconds": 60}),
        )
        .await;
        let id = str_of(&add(&mut me, pad, &format!("in {pad}")).await, "id").to_string();
        if pad != "mine" {
            foreign.push(id);
        }
    }
    // One sweep archives all three; a week on, one change purges them all.
    clock.advance(Duration::from_secs(120));
    h.engine.sweep().await.unwrap();
    clock.advance(Duration::from_secs(8 * 86_400));
    h.engine.sweep().await.unwrap();
    let trash = ok(&mut me, "entry.trash", json!({})).await;
    let change = trash["entries"][0]["change"].clone();
    assert!(trash["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v["change"] == change));
    let secret = token(&mut me, "scoped", &["mine"], false).await;
    let mut t = as_token(&h, &secret).await;
    let back = ok(&mut t, "entry.restore", json!({"change": change})).await;
    assert_eq!(back["restored"][0]["content"], "in mine", "{back}");
    let said = back.to_string();
    for id in &foreign {
        assert!(!said.contains(id.as_str()), "a foreign id in {said}");
    }
    assert!(back["skipped"].as_array().unwrap().is_empty(), "{back}");
}

#[tokio::test]
async fn retention_empties_the_trash_and_the_window_keeps_what_it_drops() {
    let clock = Clock::manual(1_800_000_000_000);
    let c2 = clock.clone();
    let h = Harness::with(move |c| {
        c.clock = c2;
        c.history = Duration::from_secs(86_400);
    })
    .await;
    let mut me = h.client().await;
    ok(
        &mut me,
        "pad.configure",
        json!({"name": "log", "max_entries": 3}),
    )
    .await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(str_of(&add(&mut me, "log", &format!("line {i}")).await, "id").to_string());
    }
    let t = ok(&mut me, "entry.trash", json!({"pad": "log"})).await;
    let dropped: Vec<&str> = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            assert_eq!(v["action"], "window");
            assert_eq!(v["by"], "tester");
            v["entry"]["id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(dropped, [ids[1].as_str(), ids[0].as_str()]);
    let note = add(&mut me, "notes", "keep me").await;
    ok(
        &mut me,
        "entry.update",
        json!({"id": note["id"], "content": "kept?"}),
    )
    .await;

    // A day and a bit later the sweep drops every kept version.
    clock.advance(Duration::from_secs(86_400 + 60));
    h.engine.sweep().await.unwrap();
    let t = ok(&mut me, "entry.trash", json!({})).await;
    assert!(t["entries"].as_array().unwrap().is_empty(), "{t}");
    let hist = ok(&mut me, "entry.history", json!({"id": note["id"]})).await;
    assert!(hist["versions"].as_array().unwrap().is_empty(), "{hist}");
    err(
        &mut me,
        "entry.restore",
        json!({"id": ids[0]}),
        code::NOT_FOUND,
    )
    .await;

    // Purging for real is explicit, and says how much went.
    let gone = ok(&mut me, "entry.delete", json!({"id": ids[4]})).await;
    let p = ok(&mut me, "entry.purge", json!({"pad": "log"})).await;
    assert_eq!(p["purged"], 1);
    err(
        &mut me,
        "entry.restore",
        json!({"change": gone["change"]}),
        code::NOT_FOUND,
    )
    .await;
}

/// A restore is one transaction: an engine killed while it runs leaves
/// every entry back or none.
#[tokio::test]
async fn an_engine_killed_during_a_restore_leaves_all_or_nothing() {
    if common::postgres::wanted() {
        return; // a spawned `pad serve` runs on SQLite; PostgreSQL's own transactions are its guarantee
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let mut outcomes = HashSet::new();
    // Round 0 times a whole restore; the later rounds kill the engine at
    // fractions of that time after sending theirs.
    let mut took = Duration::ZERO;
    for round in 0..5u32 {
        let engine = common::spawn_engine(&home, &socket).await;
        let mut c = Client::connect(&socket).await.unwrap();
        ok(&mut c, "hello", json!({"author": "tester"})).await;
        let pad = format!("big-{round}");
        let notes: Vec<Value> = (0..3000)
            .map(|i| json!({"pad": pad, "content": format!("entry {i} of round {round}")}))
            .collect();
        for chunk in notes.chunks(500) {
            for n in chunk {
                ok(&mut c, "entry.add", n.clone()).await;
            }
        }
        let cleared = ok(&mut c, "pad.clear", json!({"name": pad})).await;
        if round == 0 {
            let t = std::time::Instant::now();
            ok(
                &mut c,
                "entry.restore",
                json!({"change": cleared["change"]}),
            )
            .await;
            took = t.elapsed();
            println!("a restore of 3,000 entries took {took:?}");
            ok(&mut c, "pad.clear", json!({"name": pad})).await;
            continue;
        }
        c.send("entry.restore", json!({"change": cleared["change"]}))
            .await
            .unwrap();
        c.flush().await.unwrap();
        tokio::time::sleep(took * (round - 1) / 3).await;
        common::signal(&engine.child, libc::SIGKILL);
        drop(engine);
        tokio::time::sleep(Duration::from_millis(100)).await;

        let engine = common::spawn_engine(&home, &socket).await;
        let mut c = Client::connect(&socket).await.unwrap();
        ok(&mut c, "hello", json!({"author": "tester"})).await;
        let live = all_ids(&mut c, &pad).await.len();
        let trash = ok(&mut c, "entry.trash", json!({"pad": pad, "limit": 1000})).await;
        let in_trash = trash["entries"].as_array().unwrap().len();
        assert!(
            (live == 3000 && in_trash == 0) || (live == 0 && in_trash == 1000),
            "round {round}: {live} live, {in_trash} in the trash's first page"
        );
        outcomes.insert(live);
        if live == 0 {
            let back = ok(
                &mut c,
                "entry.restore",
                json!({"change": cleared["change"]}),
            )
            .await;
            assert_eq!(back["restored"].as_array().unwrap().len(), 3000);
        }
        common::signal(&engine.child, libc::SIGTERM);
        let mut engine = engine;
        let _ = engine.child.wait();
    }
    println!("entries back after each kill: {outcomes:?}");
}

/// The command line: `pad history` shows diffs, `pad trash` lists what can
/// come back, `pad restore` brings it, `pad report --by` is the audit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_shows_history_trash_restore_and_the_audit() {
    let h = Harness::start().await;
    let pad = |author: &str, args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pad"));
        cmd.env("PAD_SOCKET", &h.socket)
            .env("PAD_NO_AUTOSTART", "1")
            .env("PAD_AUTHOR", author)
            .env_remove("PAD_PAD")
            .stdin(std::process::Stdio::null())
            .args(args);
        cmd
    };
    let run = |author: &str, args: &[&str]| {
        let o = pad(author, args).output().unwrap();
        assert!(
            o.status.success(),
            "pad {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let id = run("me", &["note", "-p", "plans", "ship on Friday\nthen rest"]);
    let id = id.split_whitespace().next().unwrap().to_string();
    run("agent-x", &["edit", &id, "ship on Monday\nthen rest"]);
    let hist = run("me", &["history", &id]);
    assert!(hist.contains("version 1 → 2: edited by agent-x"), "{hist}");
    assert!(
        hist.contains("- ship on Friday") && hist.contains("+ ship on Monday"),
        "{hist}"
    );
    assert!(hist.contains("  then rest"), "{hist}");

    let rm = run("agent-x", &["rm", &id]);
    assert!(rm.contains(&format!("pad restore {id}")), "{rm}");
    let trash = run("me", &["trash"]);
    assert!(
        trash.contains(&id) && trash.contains("delete by agent-x"),
        "{trash}"
    );
    let report = run("me", &["report", "--by", "agent-x", "--since", "1h"]);
    assert!(
        report.contains("edit") && report.contains("delete"),
        "{report}"
    );
    assert!(!report.contains("created"), "{report}");
    let back = run("me", &["restore", &id]);
    assert!(back.starts_with(&format!("restored {id}")), "{back}");
    let back = run("me", &["restore", &id, "--version", "1"]);
    assert!(back.contains("version 3"), "{back}");
    let shown = run("me", &["show", &id]);
    assert!(shown.contains("ship on Friday"), "{shown}");

    // Purging asks first; without a terminal it needs --yes.
    run("me", &["rm", &id]);
    let refused = pad("me", &["purge", &id]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(run("me", &["purge", &id, "--yes"]).contains("purged 4"));
    assert!(run("me", &["trash"]).contains("the trash is empty"));
}

/// `--history-days 0`: edits and deletions are final, as the person chose.
#[tokio::test]
async fn with_history_off_nothing_is_kept() {
    let h = Harness::with(|c| c.history = Duration::ZERO).await;
    let mut me = h.client().await;
    let note = add(&mut me, "p", "first").await;
    ok(
        &mut me,
        "entry.update",
        json!({"id": note["id"], "content": "second"}),
    )
    .await;
    let gone = ok(&mut me, "entry.delete", json!({"id": note["id"]})).await;
    assert_eq!(gone["deleted"], true);
    let t = ok(&mut me, "entry.trash", json!({})).await;
    assert!(t["entries"].as_array().unwrap().is_empty(), "{t}");
    err(
        &mut me,
        "entry.history",
        json!({"id": note["id"]}),
        code::NOT_FOUND,
    )
    .await;
    add(&mut me, "p", "another").await;
    let cleared = ok(&mut me, "pad.clear", json!({"name": "p"})).await;
    assert_eq!(cleared["deleted"], 1);
    assert!(
        cleared["change"].is_null(),
        "nothing kept to undo: {cleared}"
    );
    assert!(gone["change"].is_null(), "{gone}");
}
