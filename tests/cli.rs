//! The `pad` command line against a real engine: output, --json, env vars
//! and exit codes.

mod common;

use std::process::Stdio;

use common::cli::{json_out, pad, run, stdout};
use common::Harness;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn note_ls_show_search_edit_rm() {
    let h = Harness::start().await;
    let o = run(
        &h,
        &[
            "note",
            "deploy is blocked",
            "-t",
            "needs_eyes",
            "-t",
            "Deploy",
            "-p",
            "ops",
            "-k",
            "question",
        ],
    )
    .await;
    assert!(o.status.success());
    let id = stdout(&o).trim().to_string();
    assert_eq!(id.len(), 12, "note prints the new id: {id}");

    // Content from stdin, author from PAD_AUTHOR.
    let mut child = pad(&h)
        .args(["note", "-p", "ops"])
        .env("PAD_AUTHOR", "agent-7")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"from a pipe\n")
        .await
        .unwrap();
    assert!(child.wait_with_output().await.unwrap().status.success());

    let ls = json_out(&run(&h, &["--json", "ls", "-p", "ops"]).await);
    let entries = ls["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0]["content"], "from a pipe",
        "trailing newline of the pipe dropped"
    );
    assert_eq!(entries[0]["author"], "agent-7");
    assert_eq!(
        entries[1]["author"], "user",
        "the CLI writes as 'user' by default"
    );
    assert_eq!(entries[1]["kind"], "question");

    let human = stdout(&run(&h, &["ls", "-p", "ops", "-t", "deploy"]).await);
    assert!(
        human.contains(&id)
            && human.contains("#needs_eyes #deploy")
            && human.contains("deploy is blocked"),
        "{human}"
    );
    assert!(!human.contains("from a pipe"));

    let show = stdout(&run(&h, &["show", &id[..10]]).await);
    assert!(
        show.contains("pad ops")
            && show.contains("version 1")
            && show.contains("deploy is blocked"),
        "{show}"
    );

    let found = json_out(&run(&h, &["--json", "search", "BLOCK"]).await);
    assert_eq!(found["hits"][0]["entry"]["id"], id.as_str());
    assert!(stdout(&run(&h, &["search", "nothing-like-this"]).await).contains("no matches"));

    assert!(run(
        &h,
        &[
            "edit",
            &id,
            "deploy unblocked",
            "--if-version",
            "1",
            "--pin"
        ]
    )
    .await
    .status
    .success());
    let stale = run(&h, &["edit", &id, "again", "--if-version", "1"]).await;
    assert_eq!(stale.status.code(), Some(4), "conflict");
    assert!(String::from_utf8_lossy(&stale.stderr).contains("version 2, not 1"));
    let shown = json_out(&run(&h, &["--json", "show", &id]).await);
    assert_eq!(shown["entry"]["content"], "deploy unblocked");
    assert_eq!(shown["entry"]["pinned"], true);
    assert_eq!(
        run(&h, &["edit", &id]).await.status.code(),
        Some(2),
        "nothing to change is a usage error"
    );

    assert!(run(&h, &["rm", &id]).await.status.success());
    let gone = run(&h, &["show", &id]).await;
    assert_eq!(gone.status.code(), Some(3), "not found");
    assert_eq!(
        run(&h, &["show", "not/an/id"]).await.status.code(),
        Some(2),
        "bad input"
    );
}

#[tokio::test]
async fn tags_pads_configure_clear_export_stats() {
    let h = Harness::start().await;
    for (pad, tag) in [("a", "x"), ("a", "y"), ("b", "x")] {
        assert!(run(&h, &["note", "hello", "-p", pad, "-t", tag])
            .await
            .status
            .success());
    }
    let tags = stdout(&run(&h, &["tags"]).await);
    assert!(tags.contains("2  #x") && tags.contains("1  #y"), "{tags}");
    let pads = stdout(&run(&h, &["pads"]).await);
    assert!(
        pads.contains("a ") && pads.contains("2 entries") && pads.contains("expires in"),
        "{pads}"
    );

    let conf = json_out(
        &run(
            &h,
            &[
                "--json",
                "configure",
                "a",
                "--ttl",
                "30m",
                "--max-entries",
                "100",
            ],
        )
        .await,
    );
    assert_eq!(conf["pad"]["ttl_seconds"], 1800);
    assert_eq!(conf["pad"]["max_entries"], 100);
    let conf = json_out(&run(&h, &["--json", "configure", "a", "--ttl", "never"]).await);
    assert_eq!(conf["pad"]["ttl_seconds"], Value::Null);

    let md = stdout(&run(&h, &["export", "a"]).await);
    assert!(md.starts_with("# Pad `a`") && md.contains("#x"), "{md}");
    let js = json_out(&run(&h, &["--json", "export", "a", "-f", "json"]).await);
    assert_eq!(js["entries"], 2);

    // Clearing asks first; without a terminal to ask on it needs --yes.
    let refused = run(&h, &["clear", "a"]).await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    let cleared = stdout(&run(&h, &["clear", "a", "--yes"]).await);
    assert!(
        cleared.starts_with("deleted 2 entries (pad restore --change "),
        "{cleared}"
    );

    let stats = json_out(&run(&h, &["--json", "stats"]).await);
    assert_eq!(stats["entries"], 1);
    let human = stdout(&run(&h, &["stats"]).await);
    assert!(human.contains("entries      1"), "{human}");
    assert!(
        !human.contains(" 1 entries") && !human.contains(" 1 pads"),
        "{human}"
    );
}

#[tokio::test]
async fn watch_prints_events_as_they_happen() {
    let h = Harness::start().await;
    let mut watch = pad(&h)
        .args(["--json", "watch", "-p", "live"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    // Write until the watcher (which may still be subscribing) reports one.
    let mut c = h.client().await;
    let event = loop {
        common::add(&mut c, "live", "hello watcher").await;
        if let Ok(Ok(Some(line))) =
            tokio::time::timeout(std::time::Duration::from_millis(200), lines.next_line()).await
        {
            break serde_json::from_str::<Value>(&line).unwrap();
        }
    };
    assert_eq!(event["type"], "created");
    assert_eq!(event["entry"]["content"], "hello watcher");
    watch.kill().await.unwrap();
}

#[tokio::test]
async fn errors_have_meaningful_exit_codes() {
    let h = Harness::with(|c| c.max_content_chars = 10).await;
    let big = run(&h, &["note", "far more than ten characters"]).await;
    assert_eq!(big.status.code(), Some(6), "too large");
    assert!(String::from_utf8_lossy(&big.stderr).contains("limit is 10"));
    let bad = run(&h, &["--json", "note", "x", "-t", "no spaces"]).await;
    assert_eq!(bad.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&bad.stderr).unwrap();
    assert_eq!(err["error"]["code"], -32602);
    assert_eq!(err["error"]["data"]["field"], "tags");

    let nowhere = Command::new(env!("CARGO_BIN_EXE_pad"))
        .args(["ls"])
        .env("PAD_SOCKET", h.dir.path().join("nothing-here.sock"))
        .env("PAD_NO_AUTOSTART", "1")
        .output()
        .await
        .unwrap();
    assert_eq!(nowhere.status.code(), Some(7), "engine unavailable");
    let said = String::from_utf8_lossy(&nowhere.stderr);
    assert_eq!(
        said.matches("no engine is running").count(),
        1,
        "the reason once: {said}"
    );
}

#[tokio::test]
async fn with_no_engine_the_cli_starts_one_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run/pad.sock");
    let cli = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pad"));
        cmd.args(args)
            .env("PAD_SOCKET", &socket)
            .env("PAD_HOME", dir.path().join("data"))
            .env("PAD_NO_SEMANTIC", "1")
            .env_remove("PAD_NO_AUTOSTART")
            .env_remove("PAD_AUTHOR")
            .stdin(Stdio::null());
        cmd
    };
    let out = cli(&["note", "-p", "auto", "the engine was not running"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(&["ls", "-p", "auto"]).output().await.unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("the engine was not running"));
    // It runs detached, logging into the data dir; stop it.
    let pid: i32 = std::fs::read_to_string(format!("{}.lock", socket.display()))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(dir.path().join("data/engine.log").exists());
    // SAFETY: signalling the engine this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    for _ in 0..200 {
        if !socket.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!socket.exists(), "the started engine stops on SIGTERM");
    let out = cli(&["--no-autostart", "ls"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(7));
}

#[tokio::test]
async fn tasks_plan_remind_share_report_and_tokens_from_the_command_line() {
    let h = Harness::start().await;
    let first = stdout(&run(&h, &["task", "add", "design it", "-p", "plan"]).await)
        .trim()
        .to_string();
    let o = run(
        &h,
        &["task", "add", "build it", "-p", "plan", "--after", &first],
    )
    .await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan = stdout(&run(&h, &["plan", "-p", "plan"]).await);
    assert!(
        plan.contains("1. ready") && plan.contains("2. blocked"),
        "{plan}"
    );
    assert!(plan.contains(&format!("waits on {first}")), "{plan}");

    let claimed = json_out(
        &run(
            &h,
            &[
                "--json",
                "task",
                "claim",
                "-p",
                "plan",
                "--agent",
                "cli-agent",
                "--lease",
                "10m",
            ],
        )
        .await,
    );
    assert_eq!(claimed["entry"]["id"], first.as_str());
    assert_eq!(claimed["entry"]["assignee"], "cli-agent");
    let o = run(
        &h,
        &[
            "task",
            "heartbeat",
            &first,
            "--resume",
            "half way",
            "--agent",
            "cli-agent",
        ],
    )
    .await;
    assert!(stdout(&o).contains("resume: half way"), "{}", stdout(&o));
    // Nothing else is ready while the first runs: exit 3.
    let o = run(&h, &["task", "claim", "-p", "plan", "--agent", "other"]).await;
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stdout(&o).contains("nothing ready: 1 running"),
        "{}",
        stdout(&o)
    );
    assert!(run(&h, &["task", "done", &first]).await.status.success());
    let second = json_out(
        &run(
            &h,
            &["--json", "task", "claim", "-p", "plan", "--agent", "other"],
        )
        .await,
    );
    let second = second["entry"]["id"].as_str().unwrap().to_string();
    let o = run(&h, &["task", "fail", &second, "--error", "disk full"]).await;
    assert!(
        stdout(&o).contains("last error: disk full"),
        "{}",
        stdout(&o)
    );

    let o = run(
        &h,
        &["remind", "look at the logs", "--in", "30m", "-p", "plan"],
    )
    .await;
    assert!(stdout(&o).contains("reminds user at"), "{}", stdout(&o));
    assert_eq!(
        run(&h, &["remind", "when?", "-p", "plan"])
            .await
            .status
            .code(),
        Some(2)
    );

    let shared = json_out(&run(&h, &["--json", "share", &first, "--to", "elsewhere"]).await);
    assert_eq!(
        shared["copies"][0]["meta"]["shared_from"]["id"],
        first.as_str()
    );

    let report = stdout(&run(&h, &["report", "-p", "plan"]).await);
    assert!(
        report.contains("cli-agent") && report.contains("error: disk full"),
        "{report}"
    );
    let md = stdout(&run(&h, &["export", "plan", "--budget", "400"]).await);
    assert!(md.chars().count() <= 400 && md.contains("Left out"), "{md}");

    // Tokens: create, use through PAD_TOKEN, list, revoke.
    let o = run(
        &h,
        &[
            "token",
            "create",
            "--name",
            "bot",
            "--pads",
            "bot-*,shared",
            "--read-only",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let secret = stdout(&o).trim().to_string();
    assert!(secret.starts_with("padt_"), "{secret}");
    let o = pad(&h)
        .env("PAD_TOKEN", &secret)
        .args(["ls", "-p", "plan"])
        .output()
        .await
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(5),
        "forbidden: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("bot-*, shared"));
    let o = pad(&h)
        .env("PAD_TOKEN", &secret)
        .args(["ls", "-p", "shared"])
        .output()
        .await
        .unwrap();
    assert!(o.status.success());
    let list = stdout(&run(&h, &["token", "list"]).await);
    assert!(
        list.contains("bot") && list.contains("read-only") && !list.contains(&secret),
        "{list}"
    );
    assert!(run(&h, &["token", "revoke", "bot"]).await.status.success());
    let o = pad(&h)
        .env("PAD_TOKEN", &secret)
        .args(["ls", "-p", "shared"])
        .output()
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(5));
}

#[tokio::test]
async fn stats_shows_recent_activity() {
    let h = Harness::start().await;
    for (pad, text, tag) in [
        ("busy", "one", "perf"),
        ("busy", "two", "perf"),
        ("quiet", "three", "db"),
    ] {
        assert!(run(&h, &["note", text, "-p", pad, "-t", tag])
            .await
            .status
            .success());
    }
    let human = stdout(&run(&h, &["stats"]).await);
    assert!(human.contains("last hour    3 entries"), "{human}");
    assert!(human.contains("top tags     #perf 2 · #db 1"), "{human}");
    assert!(human.contains("busiest      busy (2 entries"), "{human}");
    let s = json_out(&run(&h, &["--json", "stats"]).await);
    let per_minute = s["activity"]["entries_per_minute"].as_array().unwrap();
    assert_eq!(per_minute.len(), 60);
    assert_eq!(per_minute.iter().filter_map(Value::as_u64).sum::<u64>(), 3);
    assert_eq!(per_minute[59], 3, "the current minute is last");
    assert_eq!(s["activity"]["busiest_pads"][0]["name"], "busy");
    assert_eq!(s["activity"]["stalest_pads"][0]["name"], "busy");
    assert!((s["activity"]["avg_entry_bytes"].as_f64().unwrap() - 11.0 / 3.0).abs() < 0.06);
}

/// MCP clients start `pad mcp` with only HOME, LOGNAME, PATH, SHELL, TERM and
/// USER: it must still reach the engine the user runs (whose socket is under
/// XDG_RUNTIME_DIR), at once and without starting a second one.
#[tokio::test]
async fn pad_mcp_with_a_stripped_environment_reaches_the_running_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let runtime = tmp.path().join("run");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(&runtime)
        .unwrap();
    let socket = runtime.join("scratchpad/pad.sock");
    let mut serve = std::process::Command::new(env!("CARGO_BIN_EXE_pad"));
    serve
        .env_clear()
        .env("PAD_NO_SEMANTIC", "1")
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    let mut engine = common::spawn(serve, &socket).await;
    let mcp = Command::new(env!("CARGO_BIN_EXE_pad"))
        .arg("mcp")
        .env_clear()
        .env("HOME", &home)
        .env("LOGNAME", "tester")
        .env("USER", "tester")
        .env("SHELL", "/bin/sh")
        .env("TERM", "dumb")
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PAD_AUTHOR", "agent-stripped")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let mut mcp = mcp;
    let mut stdin = mcp.stdin.take().unwrap();
    let mut lines = BufReader::new(mcp.stdout.take().unwrap()).lines();
    for msg in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"content":"written from a stripped environment"}}}"#,
    ] {
        stdin
            .write_all(format!("{msg}\n").as_bytes())
            .await
            .unwrap();
    }
    stdin.flush().await.unwrap();
    let mut answer = Value::Null;
    while let Some(line) = lines.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            answer = v;
            break;
        }
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.starts_with("Saved note "), "{answer}");
    drop(stdin);
    let _ = mcp.wait().await;
    // The note is in the one engine; no second engine was started beside it.
    let mut c = scratchpad::client::Client::connect(&socket).await.unwrap();
    let r = common::ok(
        &mut c,
        "entry.list",
        serde_json::json!({"author": "agent-stripped"}),
    )
    .await;
    assert_eq!(r["entries"].as_array().unwrap().len(), 1);
    let log = home.join(".local/share/scratchpad/engine.log");
    assert!(
        !log.exists(),
        "pad mcp started an engine: {:?}",
        std::fs::read_to_string(&log)
    );
    common::signal(&engine.child, libc::SIGTERM);
    engine.child.wait().unwrap();
}

#[tokio::test]
async fn a_newcomers_terminal_a_closed_pipe_fallbacks_counts_and_errors_in_cli_words() {
    let h = Harness::start().await;
    // Enough output to fill a pipe: the reader goes after one line.
    let long = "x".repeat(3900);
    for _ in 0..24 {
        assert!(run(&h, &["note", &long, "-p", "big"])
            .await
            .status
            .success());
    }
    let mut child = pad(&h)
        .args(["export", "big"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.next_line().await.unwrap().is_some());
    drop(lines); // `| head -1`
    let out = child.wait_with_output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a closed pipe is success: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    // The harness engine has no model: a search says it searched words only.
    let found = run(&h, &["search", "database upgrade stuck"]).await;
    let err = String::from_utf8_lossy(&found.stderr);
    assert!(
        err.contains("searched words only") && err.contains("Semantic search"),
        "{err}"
    );
    let words = run(&h, &["search", "-m", "text", "anything"]).await;
    assert!(words.stderr.is_empty(), "asked for words: no note");

    // Counts agree in number; a time to come is rounded up.
    run(&h, &["note", "one", "-p", "solo"]).await;
    run(&h, &["configure", "solo", "--ttl", "2h"]).await;
    let pads = stdout(&run(&h, &["pads"]).await);
    let solo = pads.lines().find(|l| l.starts_with("solo")).unwrap();
    assert!(
        solo.contains(" 1 entry ·") && solo.contains("expires in 2h"),
        "{solo}"
    );

    // Errors name commands and flags, not protocol methods.
    let id = stdout(&run(&h, &["note", "v1", "-p", "solo"]).await)
        .trim()
        .to_string();
    let stale = run(&h, &["edit", &id, "v2", "--if-version", "5"]).await;
    let err = String::from_utf8_lossy(&stale.stderr);
    assert_eq!(stale.status.code(), Some(4));
    assert!(
        err.contains("pad show <id>") && err.contains("--if-version 1"),
        "{err}"
    );
    // The report's numbers stand under their headers.
    let report = stdout(&run(&h, &["report", "-p", "solo"]).await);
    let table: Vec<&str> = report.lines().take_while(|l| !l.is_empty()).collect();
    assert!(table.len() >= 2, "{report}");
    assert!(
        table.iter().all(|l| l.len() == table[0].len()),
        "columns line up:\n{report}"
    );
    let missing = run(&h, &["show", "zzzzzzzzzzzz"]).await;
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("(pad ls)") && !err.contains("entry."), "{err}");
}

#[tokio::test]
async fn what_anyone_wrote_reaches_the_terminal_escaped() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let hostile = "fine\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\rforged line\u{9b}0m";
    let e = common::add(&mut c, "esc", hostile).await;
    let id = e["id"].as_str().unwrap();
    common::ok(
        &mut c,
        "entry.add",
        serde_json::json!({"pad": "esc", "content": "ok", "reply_to": id}),
    )
    .await;
    for args in [
        vec!["ls", "-p", "esc"],
        vec!["show", id],
        vec!["thread", id],
        vec!["search", "-m", "text", "forged"],
        vec!["export", "esc"],
    ] {
        let out = stdout(&run(&h, &args).await);
        assert!(out.contains("forged line"), "{args:?}: {out}");
        assert!(
            !out.contains(['\u{1b}', '\u{7}', '\r', '\u{9b}']),
            "{args:?}: {out:?}"
        );
        assert!(
            out.contains("\\u{1b}]52"),
            "{args:?} shows the escape: {out}"
        );
    }
    // An error that quotes what was sent.
    let refused = run(&h, &["note", "x", "-t", "t\u{1b}[2Jx"]).await;
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("t\\u{1b}[2Jx") && !err.contains('\u{1b}'),
        "{err:?}"
    );
    // --json is JSON: its strings escape control characters already.
    let raw = run(&h, &["show", id, "--json"]).await;
    assert_eq!(json_out(&raw)["entry"]["content"], hostile);
}
