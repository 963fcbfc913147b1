//! Superseding, on both stores: a note that replaces an older one is what
//! lists, searches and exports show; the older note is kept as it was,
//! marked, and one call away (`include_superseded`); chains, loops, deletes
//! and a token's grant.

mod common;

use common::{add, err, hit_ids, ok, Harness};
use scratchpad::client::Client;
use scratchpad::error::code;
use serde_json::{json, Value};

fn ids(entries: &Value) -> Vec<String> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

fn id(entry: &Value) -> String {
    entry["id"].as_str().unwrap().to_string()
}

async fn listed(c: &mut Client, pad: &str, include: bool) -> Value {
    ok(
        c,
        "entry.list",
        json!({"pad": pad, "include_superseded": include}),
    )
    .await["entries"]
        .clone()
}

async fn found(c: &mut Client, query: &str, include: bool) -> Vec<String> {
    let r = ok(
        c,
        "search",
        json!({"query": query, "pad": "ops", "mode": "text", "include_superseded": include}),
    )
    .await;
    hit_ids(&r)
}

#[tokio::test]
async fn the_current_note_is_shown_and_the_older_one_is_kept_marked_one_call_away() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let old = add(
        &mut c,
        "ops",
        "the staging database is on db-1.internal port 5432",
    )
    .await;
    // Ids are time-sortable: a few milliseconds apart, a 10-character
    // prefix names one note (in the same millisecond it may name two).
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let other = add(&mut c, "ops", "deploys go out on Tuesdays").await;
    let mut watcher = h.client().await;
    ok(&mut watcher, "subscribe", json!({"pads": ["ops"]})).await;
    let new = ok(
        &mut c,
        "entry.add",
        json!({"pad": "ops", "content": "the staging database moved to db-2.internal port 5433",
               "supersedes": &id(&old)[..10]}),
    )
    .await["entry"]
        .clone();
    assert_eq!(
        new["supersedes"], old["id"],
        "a prefix resolves to the full id"
    );
    assert!(new["superseded_by"].is_null());

    // Subscribers hear the new note, then the older one as superseded.
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let e = watcher.next_event().await.unwrap().unwrap();
        heard.push((
            e["type"].clone(),
            e["entry"]["id"].clone(),
            e["entry"]["superseded_by"].clone(),
        ));
    }
    assert_eq!(heard[0].1, new["id"]);
    assert_eq!(
        heard[1],
        (json!("updated"), old["id"].clone(), new["id"].clone())
    );

    // Lists: the current note; the older one only when asked, marked.
    assert_eq!(
        ids(&listed(&mut c, "ops", false).await),
        [id(&new), id(&other)]
    );
    let all = listed(&mut c, "ops", true).await;
    assert_eq!(ids(&all), [id(&new), id(&other), id(&old)]);
    assert_eq!(all[2]["superseded_by"], new["id"]);

    // Search: both match "staging database"; only the current one shows.
    assert_eq!(found(&mut c, "staging database", false).await, [id(&new)]);
    let both = found(&mut c, "staging database", true).await;
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.contains(&id(&old)));
    // A query only the older note matches finds nothing current.
    assert!(found(&mut c, "5432", false).await.is_empty());
    assert_eq!(found(&mut c, "5432", true).await, [id(&old)]);

    // The export and read_pad's markdown: the current note, saying an older
    // one exists; the older one only when asked.
    let md = ok(&mut c, "pad.export", json!({"name": "ops"})).await;
    let text = md["text"].as_str().unwrap();
    assert!(text.contains("db-2.internal"), "{text}");
    assert!(!text.contains("db-1.internal"), "{text}");
    assert!(
        text.contains(&format!("supersedes `{}`", id(&old))),
        "{text}"
    );
    assert_eq!(md["entries"], 2);
    let md = ok(
        &mut c,
        "pad.export",
        json!({"name": "ops", "include_superseded": true}),
    )
    .await;
    let text = md["text"].as_str().unwrap();
    assert!(text.contains("db-1.internal"), "{text}");
    assert!(
        text.contains(&format!("**superseded** by `{}`", id(&new))),
        "{text}"
    );

    // The older note itself is untouched: the same version, its history
    // one version long, and it says what replaced it.
    let got = ok(&mut c, "entry.get", json!({"id": id(&old)})).await["entry"].clone();
    assert_eq!(got["version"], 1);
    assert_eq!(got["content"], old["content"]);
    assert_eq!(got["superseded_by"], new["id"]);
    let history = ok(&mut c, "entry.history", json!({"id": id(&old)})).await;
    assert_eq!(history["entry"]["version"], 1, "{history}");
    h.stop().await;
}

#[tokio::test]
async fn a_chain_of_three_shows_the_newest_and_a_delete_brings_the_one_before_back() {
    let h = Harness::start().await;
    let mut c = h.client().await;
    let a = add(&mut c, "ops", "the release branch is release-1").await;
    let mut chain = vec![a];
    for n in 2..=3 {
        let prev = id(chain.last().unwrap());
        let next = ok(
            &mut c,
            "entry.add",
            json!({"pad": "ops", "content": format!("the release branch is release-{n}"), "supersedes": prev}),
        )
        .await["entry"]
            .clone();
        chain.push(next);
    }
    let [a, b, cc] = [id(&chain[0]), id(&chain[1]), id(&chain[2])];
    assert_eq!(ids(&listed(&mut c, "ops", false).await), [cc.as_str()]);
    let all = listed(&mut c, "ops", true).await;
    assert_eq!(ids(&all), [cc.as_str(), b.as_str(), a.as_str()]);
    assert_eq!(all[1]["superseded_by"], json!(cc));
    assert_eq!(all[2]["superseded_by"], json!(b));
    assert_eq!(found(&mut c, "release branch", false).await, [cc.as_str()]);

    // A loop is refused: the oldest cannot supersede the newest, nor a
    // note itself.
    let (msg, data) = err(
        &mut c,
        "entry.update",
        json!({"id": a, "supersedes": cc}),
        code::INVALID_PARAMS,
    )
    .await;
    assert_eq!(data["field"], "supersedes");
    assert!(msg.contains("already supersedes"), "{msg}");
    let (msg, _) = err(
        &mut c,
        "entry.update",
        json!({"id": b, "supersedes": b}),
        code::INVALID_PARAMS,
    )
    .await;
    assert!(msg.contains("cannot supersede itself"), "{msg}");

    // Deleting the newest makes the one before current; restoring it
    // supersedes again.
    let gone = ok(&mut c, "entry.delete", json!({"id": cc})).await;
    assert_eq!(ids(&listed(&mut c, "ops", false).await), [b.as_str()]);
    ok(&mut c, "entry.restore", json!({"change": gone["change"]})).await;
    assert_eq!(ids(&listed(&mut c, "ops", false).await), [cc.as_str()]);

    // An edit can say it, or take it back (null): both come back.
    let e = ok(
        &mut c,
        "entry.update",
        json!({"id": cc, "supersedes": null}),
    )
    .await;
    assert!(e["entry"]["supersedes"].is_null());
    assert_eq!(
        ids(&listed(&mut c, "ops", false).await),
        [cc.as_str(), b.as_str()]
    );
    let e = ok(&mut c, "entry.update", json!({"id": cc, "supersedes": b})).await;
    assert_eq!(e["entry"]["supersedes"], json!(b));
    assert_eq!(ids(&listed(&mut c, "ops", false).await), [cc.as_str()]);
    // The history keeps each version's field.
    let history = ok(&mut c, "entry.history", json!({"id": cc})).await;
    let kept: Vec<Value> = history["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["entry"]["supersedes"].clone())
        .collect();
    assert_eq!(kept[kept.len() - 2..], [json!(b), Value::Null], "{history}");
    h.stop().await;
}

#[tokio::test]
async fn superseding_asks_for_a_note_that_exists_and_that_the_caller_may_write() {
    let h = Harness::start().await;
    let mut me = h.client().await;
    let theirs = add(&mut me, "ops", "on-call is alice").await;
    let shared = add(&mut me, "proj-b", "the API base is /v1").await;
    let r = ok(
        &mut me,
        "token.create",
        // It may hide others' notes too (`others`): superseding asks only
        // for write access here.
        json!({"name": "agent-x", "pads": ["proj-*"], "others": true}),
    )
    .await;
    let mut agent = Client::connect(&h.socket).await.unwrap();
    ok(&mut agent, "hello", json!({"token": r["secret"]})).await;

    // A pad outside the grant: as unknown as it is to the token.
    let (msg, data) = err(
        &mut agent,
        "entry.add",
        json!({"pad": "proj-a", "content": "on-call is bob", "supersedes": id(&theirs)}),
        code::NOT_FOUND,
    )
    .await;
    assert_eq!(data["field"], "supersedes", "{msg}");
    // Within the grant, across pads: allowed.
    let e = ok(
        &mut agent,
        "entry.add",
        json!({"pad": "proj-a", "content": "the API base is /v2", "supersedes": id(&shared)}),
    )
    .await;
    assert_eq!(e["entry"]["supersedes"], shared["id"]);
    assert!(ids(&listed(&mut me, "proj-b", false).await).is_empty());

    // A read-only token reads both but supersedes neither.
    let r = ok(
        &mut me,
        "token.create",
        json!({"name": "reader", "pads": ["proj-*"], "read_only": true}),
    )
    .await;
    let mut reader = Client::connect(&h.socket).await.unwrap();
    ok(&mut reader, "hello", json!({"token": r["secret"]})).await;
    err(
        &mut reader,
        "entry.update",
        json!({"id": id(&e["entry"]), "supersedes": null}),
        code::FORBIDDEN,
    )
    .await;

    // Nothing by that id: said in the field's terms.
    let (msg, data) = err(
        &mut me,
        "entry.add",
        json!({"pad": "ops", "content": "x", "supersedes": "zzzzzzzzzzzz"}),
        code::NOT_FOUND,
    )
    .await;
    assert_eq!(data["field"], "supersedes", "{msg}");

    // The duplicate hint offers the older note to supersede, and says
    // nothing of the note being superseded.
    let r = ok(
        &mut me,
        "entry.add",
        json!({"pad": "ops", "content": "on-call is alice", "check_duplicates": true}),
    )
    .await;
    assert_eq!(r["looks_like"]["id"], theirs["id"], "{r}");
    ok(&mut me, "entry.delete", json!({"id": id(&r["entry"])})).await;
    let r = ok(
        &mut me,
        "entry.add",
        json!({"pad": "ops", "content": "on-call is alice", "check_duplicates": true,
               "supersedes": id(&theirs)}),
    )
    .await;
    assert!(r["looks_like"].is_null(), "{r}");
    h.stop().await;
}

/// `pad` with the engine of `h` (which runs on this test's runtime: the
/// command is awaited, never blocked on).
async fn pad(h: &Harness, args: &[&str]) -> String {
    let o = tokio::process::Command::new(env!("CARGO_BIN_EXE_pad"))
        .args(args)
        .env("PAD_SOCKET", &h.socket)
        .env("PAD_NO_AUTOSTART", "1")
        .env_remove("PAD_AUTHOR")
        .env_remove("PAD_PAD")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        o.status.success(),
        "pad {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test]
async fn the_command_line_supersedes_and_shows_both_only_when_asked() {
    let h = Harness::start().await;
    let old = pad(
        &h,
        &["note", "-p", "ops", "the build cache lives in /var/cache/a"],
    )
    .await;
    let old = old.trim();
    let new = pad(
        &h,
        &[
            "note",
            "-p",
            "ops",
            "the build cache moved to /srv/cache",
            "--supersedes",
            old,
        ],
    )
    .await;
    let new = new.trim();
    let ls = pad(&h, &["ls", "-p", "ops"]).await;
    assert!(ls.contains(new) && !ls.contains(&format!("{old} ")), "{ls}");
    assert!(ls.contains(&format!("(supersedes {old})")), "{ls}");
    let all = pad(&h, &["ls", "-p", "ops", "--include-superseded"]).await;
    assert!(all.contains(&format!("[superseded by {new}]")), "{all}");
    let hits = pad(&h, &["search", "build cache", "-p", "ops", "-m", "text"]).await;
    assert!(
        hits.contains("/srv/cache") && !hits.contains("/var/cache/a"),
        "{hits}"
    );
    let hits = pad(
        &h,
        &[
            "search",
            "build cache",
            "-p",
            "ops",
            "-m",
            "text",
            "--include-superseded",
        ],
    )
    .await;
    assert!(hits.contains("/var/cache/a"), "{hits}");
    let md = pad(&h, &["export", "ops"]).await;
    assert!(
        !md.contains("/var/cache/a") && md.contains("supersedes"),
        "{md}"
    );
    // Taken back: both current.
    pad(&h, &["edit", new, "--supersedes", "none"]).await;
    let ls = pad(&h, &["ls", "-p", "ops"]).await;
    assert!(ls.contains("/var/cache/a"), "{ls}");
    h.stop().await;
}
