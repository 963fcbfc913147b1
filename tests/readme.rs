//! The README's CLI examples, run in the order written against a fresh
//! engine (with meaning search), each output checked for its shape: if the
//! README drifts from what `pad` does, this fails.
//!
//! Lines run through bash with `pad` on PATH. The README's placeholders get
//! real values: `2k9xe4mr` (an id prefix) is the newest entry the examples
//! made, `<id>` the last note's id, `padt_…` the token just created.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use regex::Regex;

/// Every CLI line of the README's shell blocks, in order, without comments.
fn examples() -> Vec<String> {
    let readme = include_str!("../README.md");
    let mut out = Vec::new();
    let mut in_block = false;
    let comment = Regex::new(r"\s{2,}#.*$").unwrap();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_block = matches!(line, "```sh" | "```console");
            continue;
        }
        let line = line.strip_prefix("$ ").unwrap_or(line);
        let code = comment.replace(line, "").trim().to_string();
        if in_block
            && !code.is_empty()
            && !code.starts_with('#')
            && !code.starts_with("./scripts")
            && [
                r"pad ",
                r"echo ",
                r"a=$(",
                r"b=$(",
                r"PAD_TOKEN=",
                r"PAD_AUTHOR=",
            ]
            .iter()
            .any(|p| code.starts_with(p))
        {
            out.push(code);
        }
    }
    out
}

/// What each example's standard output must look like (first match wins).
fn shapes() -> Vec<(&'static str, Regex)> {
    let id = r"[0-9a-z]{12}";
    [
        ("pad note", format!(r"^{id}\n$")),
        ("echo ", format!(r"^{id}\n$")),
        ("a=$(", String::new()),
        ("b=$(", String::new()),
        ("pad search \"database upgrade stuck\"", format!(r"(?s)^{id}  note .*#needs_eyes  \(proj-x; (semantic|text\+semantic)\)\n    deploy is blocked on the DB migration\n")),
        (
            "pad search \"staging db\" -p ops --explain",
            format!(r"(?s)^query read as keywords\n.*notes a newer note supersedes left out.*\n  fused: 0\.60 × words \+ 0\.40 × meaning .*\n{id}  note .*\(supersedes {id}\).*\n    the staging DB moved to db-2\n    why: score .*words #1 .*\n    holds: .*staging .*\n$"),
        ),
        ("pad search", format!(r"(?s)^(no matches|{id}  .*)\n$")),
        ("pad ls -p research", format!(r"^{id}  note .*#findings\n    long text\n$")),
        (
            "pad show",
            format!(r"(?s)^{id}  note .*#findings\npad research · version 1 .*\n\nlong text\n$"),
        ),
        ("pad edit", format!(r"^{id} is now version 2\n$")),
        ("pad pads", r"(?m)^research +1 entry · last write just now · expires in 2h$".into()),
        ("pad configure", r"^research +1 entry · .* expires in 1d · keeps newest 500\n$".into()),
        ("pad export research", String::new()),
        ("pad stats", r"(?m)^semantic +ready: all-MiniLM-L6-v2/int8".into()),
        ("pad reindex", r"\d+ entr".into()),
        ("pad reply", format!(r"^{id}\n$")),
        ("pad thread", r"(?s)About to drop the staging DB.*approve".into()),
        (
            "PAD_AUTHOR=deploy-bot pad inbox",
            r"(?s)^replies \(1\)\n[0-9a-z]{12}  note +user .*\n +approve\n$".into(),
        ),
        ("pad plan", r"(?s)ready.*inventory the endpoints.*blocked.*port the handlers".into()),
        ("pad task claim -p port --agent worker-1 --lease", r"inventory the endpoints".into()),
        ("pad task heartbeat", String::new()),
        ("pad task done", String::new()),
        ("pad task claim -p port --agent worker-2", r"port the handlers".into()),
        ("pad task fail", String::new()),
        ("pad task claim -p port --agent worker-1", r"(?s)attempt 2\n.*port the handlers".into()),
        ("pad remind", format!(r"^{id} reminds user at \S+Z\n$")),
        ("pad share", format!(r"^{id} on other-project\n$")),
        ("pad rm", format!(r"^deleted {id} \(pad restore {id} brings it back\)\n$")),
        ("pad trash", format!(r"^{id}  \S+  delete by user at \S+ \(change \d+\)\n")),
        ("pad restore", format!(r"^restored {id} \(version \d+\) in \S+\n$")),
        (
            "pad history",
            r"(?s)deleted by user at .*\n  restored by user at .*\nnow: version \d+\n$".into(),
        ),
        (
            "pad report --by",
            format!(r"(?m)^\S+  user +restored +{id}  \S+"),
        ),
        (
            "pad report",
            r"(?s)\nworker-1 +0 +1 +0 +1 .*  port the handlers, 1 retry\n".into(),
        ),
        ("pad export port", r"(?s)^# Pad `port`.*idempotency key".into()),
        ("pad token create", r"padt_\S+".into()),
        // The token sees its pads (proj-*) only.
        (
            "PAD_TOKEN=",
            format!(r"^{id}  note .*#needs_eyes\n    deploy is blocked on the DB migration\n$"),
        ),
        ("pad token list", r"agent-x .*proj-\*".into()),
        ("pad token revoke", r"agent-x".into()),
    ]
    .into_iter()
    .map(|(p, r)| (p, Regex::new(&r).unwrap()))
    .collect()
}

struct Shell {
    dir: PathBuf,
    home: PathBuf,
    socket: PathBuf,
    vars: HashMap<String, String>,
}

impl Shell {
    fn command(&self, line: &str) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_pad")).parent().unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["-c", line])
            .current_dir(&self.dir)
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .env("PAD_HOME", &self.home)
            .env("PAD_SOCKET", &self.socket)
            .env("PAD_NO_AUTOSTART", "1")
            .env_remove("PAD_AUTHOR")
            .env_remove("PAD_TOKEN")
            .envs(&self.vars);
        cmd
    }

    /// Runs one line; returns its stdout (panics, with stderr, if it fails).
    fn run(&self, line: &str) -> String {
        let out = self.command(line).output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        assert!(
            out.status.success(),
            "README: `{line}` failed ({}): {stderr}{stdout}",
            out.status
        );
        stdout
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_cli_examples_work_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let (home, socket) = (dir.path().join("data"), dir.path().join("run/pad.sock"));
    let _engine = spawn(pad_semantic(&home, &socket), &socket).await;
    let mut sh = Shell {
        dir: dir.path().to_owned(),
        home,
        socket,
        vars: HashMap::new(),
    };
    // As in the README, the engine has loaded its model.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !sh.run("pad stats").contains("semantic     ready") {
        assert!(
            Instant::now() < deadline,
            "the model never loaded: {}",
            sh.run("pad stats")
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let id = Regex::new(r"\b[0-9a-z]{12}\b").unwrap();
    let token = Regex::new(r"padt_\S+").unwrap();
    let shapes = shapes();
    let mut newest = String::new();
    let mut asking = None;
    let lines = examples();
    assert!(lines.len() > 30, "the README's examples: {lines:?}");
    for line in lines {
        let mut line = line
            .replace("2k9xe4mr", newest.get(..8).unwrap_or_default())
            .replace("<id>", &newest)
            .replace(" [--read-only]", "");
        if let Some(secret) = sh.vars.get("TOKEN") {
            line = line.replace("padt_…", secret);
        }
        if line.starts_with("pad watch") {
            // Runs until stopped: it must still be running a moment later.
            let mut watch = sh.command(&line).stdout(Stdio::null()).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(500));
            assert!(watch.try_wait().unwrap().is_none(), "`pad watch` ended");
            watch.kill().unwrap();
            watch.wait().unwrap();
            continue;
        }
        if line.starts_with("pad serve") {
            // A second engine is not what this test runs; the flag exists.
            let flag = line.split_whitespace().nth(2).unwrap();
            assert!(sh.run("pad serve --help").contains(flag), "{line}");
            continue;
        }
        if line.contains("pad ask") {
            // It waits for the person: answered by the README's next lines.
            let child = sh.command(&line).stdout(Stdio::piped()).spawn().unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            newest = loop {
                let listed: serde_json::Value =
                    serde_json::from_str(&sh.run("pad ls -k question --json")).unwrap();
                if let Some(id) = listed["entries"][0]["id"].as_str() {
                    break id.to_string();
                }
                assert!(Instant::now() < deadline, "the question never appeared");
                std::thread::sleep(Duration::from_millis(50));
            };
            asking = Some(child);
            continue;
        }
        if let Some((var, command)) = line
            .split_once("=$(")
            .filter(|(v, _)| v.chars().all(|c| c.is_ascii_alphanumeric()))
        {
            let value = sh.run(command.trim_end_matches(')')).trim().to_string();
            assert!(id.is_match(&value), "{line}: {value}");
            sh.vars.insert(var.to_string(), value);
            continue;
        }
        if line.starts_with("pad search") {
            // A person types the search seconds after the note; a search
            // answers within 2 s whatever the embedding backlog, and on a
            // busy machine that can be before the note is embedded.
            let deadline = Instant::now() + Duration::from_secs(120);
            loop {
                let stats: serde_json::Value =
                    serde_json::from_str(&sh.run("pad stats --json")).unwrap();
                if stats["embed_queue"] == 0 {
                    break;
                }
                assert!(Instant::now() < deadline, "never embedded: {stats}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let out = sh.run(&line);
        if let Some((_, shape)) = shapes.iter().find(|(p, _)| line.starts_with(p)) {
            assert!(
                shape.is_match(&out),
                "README: `{line}` printed:\n{out}\nexpected /{shape}/"
            );
        } else {
            panic!("README: no expected shape for `{line}` (add one to this test):\n{out}");
        }
        if line.starts_with("pad note") || line.starts_with("echo ") {
            newest = out.trim().to_string();
        }
        if line.starts_with("pad token create") {
            let secret = token.find(&out).unwrap();
            sh.vars.insert("TOKEN".into(), secret.as_str().to_string());
        }
        if line.starts_with("pad thread") {
            let ask = asking
                .take()
                .expect("`pad ask` ran before")
                .wait_with_output()
                .unwrap();
            assert!(ask.status.success(), "pad ask: {:?}", ask.status);
            assert_eq!(String::from_utf8_lossy(&ask.stdout), "approve\n");
        }
    }
    assert!(dir.path().join("research.md").metadata().unwrap().len() > 0);
}
