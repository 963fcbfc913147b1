//! `pad ask`, `pad reply` and `pad thread`, and a late answer reaching
//! `pad inbox`, from the command line against a real engine.

mod common;

use common::cli::{json_out, pad, run, stdout};
use common::Harness;

/// `pad ask` prints the answer and exits 0; without one in time it says
/// where the answer will go and exits 8. `pad reply` and `pad thread` are
/// the person's side.
#[tokio::test]
async fn ask_reply_and_thread() {
    let h = Harness::start().await;
    let asking = pad(&h)
        .args([
            "ask",
            "Drop the staging DB?",
            "--choice",
            "approve",
            "--choice",
            "deny",
            "--wait",
            "30",
            "-p",
            "ops",
        ])
        .env("PAD_AUTHOR", "agent-0")
        .output();
    let answering = async {
        let mut c = h.client().await;
        let question = loop {
            let r = common::ok(
                &mut c,
                "entry.list",
                serde_json::json!({"pad": "ops", "kind": "question"}),
            )
            .await;
            if let Some(q) = r["entries"].as_array().unwrap().first() {
                break q.clone();
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        let id = question["id"].as_str().unwrap().to_string();
        let o = run(&h, &["reply", &id[..6], "approve"]).await;
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (id, stdout(&o).trim().to_string())
    };
    let (asked, (question, reply)) = tokio::join!(asking, answering);
    let asked = asked.unwrap();
    assert_eq!(
        asked.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&asked.stderr)
    );
    assert_eq!(stdout(&asked), "approve\n");
    assert!(String::from_utf8_lossy(&asked.stderr).contains("answered by user"));

    let o = run(&h, &["thread", &question]).await;
    let text = stdout(&o);
    assert!(
        text.contains("[answered]") && text.contains("choices: approve / deny"),
        "{text}"
    );
    assert!(
        text.contains("user ") && text.contains(&format!("↳ {question}")),
        "{text}"
    );
    let t = json_out(&run(&h, &["--json", "thread", &question]).await);
    assert_eq!(t["replies"][0]["id"], reply.as_str());
    assert_eq!(
        t["replies"][0]["pad"], "ops",
        "a reply goes to its parent's pad"
    );

    let o = run(&h, &["ask", "Which region?", "--wait", "0"]).await;
    assert_eq!(o.status.code(), Some(8));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no answer yet") && err.contains("pad thread"),
        "{err}"
    );
    let o = run(&h, &["reply", "zzzzzzzzzzzz", "hello?"]).await;
    assert_eq!(o.status.code(), Some(3));
    h.stop().await;
}

/// Issue 28: `pad ask` gives up (exit 8), the person answers later, and the
/// asker — which never read its inbox — finds the answer with `pad inbox`.
#[tokio::test]
async fn a_late_answer_to_pad_ask_reaches_pad_inbox() {
    let h = Harness::start().await;
    let o = pad(&h)
        .args(["ask", "Ship it?", "--wait", "1", "-p", "ops"])
        .env("PAD_AUTHOR", "agent-late")
        .output()
        .await
        .unwrap();
    assert_eq!(o.status.code(), Some(8));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("pad inbox --author agent-late"), "{err}");
    let q = json_out(&run(&h, &["--json", "ls", "-p", "ops"]).await)["entries"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = run(&h, &["reply", &q, "not today"]).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = pad(&h)
        .args(["inbox"])
        .env("PAD_AUTHOR", "agent-late")
        .output()
        .await
        .unwrap();
    let text = stdout(&o);
    assert!(
        text.contains("replies (1)") && text.contains("not today"),
        "{text}"
    );
    let o = run(&h, &["inbox", "--author", "agent-late"]).await;
    assert!(
        stdout(&o).contains("nothing new for agent-late"),
        "{}",
        stdout(&o)
    );
    h.stop().await;
}
