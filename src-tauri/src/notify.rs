//! A tap on the shoulder: an entry tagged `needs_eyes` by anyone but the
//! person raises a desktop notification (freedesktop, over D-Bus). A
//! question's buttons are its choices (up to three), which answer it
//! without opening anything; other entries offer Reply (the quick box in
//! reply mode); every notification offers Open. A question's notification
//! is withdrawn once someone else answers it anywhere — in the app, the
//! terminal, or the agent's own MCP client — so the person is never asked
//! twice. When someone else deletes several of the person's entries at
//! once — a cleared pad, a burst of deletes — one notification says so,
//! with Undo.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::Value;
use tauri::{AppHandle, Emitter, Manager};

/// Questions with a notification on screen: entry id → (the daemon's
/// notification id, who asked).
static SHOWN: LazyLock<Mutex<HashMap<String, (u32, String)>>> = LazyLock::new(Default::default);

/// Whether an event deserves a notification for `me`: an entry newly
/// needing eyes, or the result an agent the person handed work to sent
/// back (over A2A: it carries `meta.a2a`), by anyone but the person.
pub fn wanted(event: &Value, me: &str) -> bool {
    let by_other = event["entry"]["author"]
        .as_str()
        .is_some_and(|a| !a.eq_ignore_ascii_case(me));
    by_other
        && (event["type"] == "needs_eyes"
            || (event["type"] == "created" && handed_back(&event["entry"])))
}

/// A result an agent sent back for work handed to it.
fn handed_back(e: &Value) -> bool {
    e["kind"] == "result" && e["meta"]["a2a"].is_object()
}

/// What clicking a notification's button asks for.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Bring the app up on the entry.
    Open,
    /// Open the quick box in reply mode on the entry.
    Reply,
    /// Answer the question with this choice, without opening anything.
    Answer(String),
    /// Stop the Agent Zero chat the entry belongs to (its plugin marks its
    /// notes with `meta.agent_zero.chat`): a reply carrying `meta.control`.
    Stop,
}

/// Whether the entry was written in an Agent Zero chat its plugin runs.
fn in_agent_zero_chat(entry: &Value) -> bool {
    entry["meta"]["agent_zero"]["chat"].is_string()
}

/// The most choices a notification shows as buttons; a question with more
/// offers Reply (the quick box lists them) and Open.
pub const MAX_CHOICE_BUTTONS: usize = 3;

/// The buttons of an entry's notification, as (action key, label): one per
/// choice of a question (up to three) or Reply, then Open.
pub fn buttons(entry: &Value) -> Vec<(String, String)> {
    let choices: Vec<&str> = entry["choices"]
        .as_array()
        .map(|c| c.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out: Vec<(String, String)> =
        if entry["kind"] == "question" && (1..=MAX_CHOICE_BUTTONS).contains(&choices.len()) {
            choices
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("choice:{i}"), (*c).to_owned()))
                .collect()
        } else {
            vec![("reply".to_owned(), "Reply".to_owned())]
        };
    if in_agent_zero_chat(entry) {
        out.push(("stop".to_owned(), "Stop Agent Zero".to_owned()));
    }
    out.push(("open".to_owned(), "Open".to_owned()));
    out
}

/// The action a button's key stands for (`default` is a click on the body).
pub fn action(entry: &Value, key: &str) -> Option<Action> {
    match key {
        "default" | "open" => Some(Action::Open),
        "reply" => Some(Action::Reply),
        "stop" if in_agent_zero_chat(entry) => Some(Action::Stop),
        _ => {
            let i: usize = key.strip_prefix("choice:")?.parse().ok()?;
            let choice = entry["choices"].get(i)?.as_str()?;
            Some(Action::Answer(choice.to_owned()))
        }
    }
}

/// "agent-0 asks in inbox" (a question) or "agent-0 needs your eyes in
/// proj-x", and the first 200 characters of the entry, after what it is
/// about (`about`: the title of the entry it replies to) when it is a reply.
pub fn text(event: &Value, about: Option<&str>) -> (String, String) {
    let e = &event["entry"];
    let author = e["author"].as_str().unwrap_or("someone");
    let pad = e["pad"].as_str().unwrap_or("a pad");
    let summary = if e["kind"] == "question" {
        format!("{author} asks in {pad}")
    } else if handed_back(e) {
        format!("{author} finished in {pad}")
    } else {
        format!("{author} needs your eyes in {pad}")
    };
    let content = e["content"].as_str().unwrap_or("");
    let mut body: String = about.map(|t| format!("about “{t}”\n")).unwrap_or_default();
    body.extend(content.chars().take(200));
    if content.chars().count() > 200 {
        body.push('…');
    }
    (summary, body)
}

/// The longest title, in characters, before it is cut with "…" (the
/// window's `TITLE_CHARS`).
const TITLE_CHARS: usize = 60;

/// An entry's title: its first line, at most `TITLE_CHARS` characters.
pub fn title_of(content: &str) -> String {
    let first = content.trim().lines().next().unwrap_or("").trim();
    if first.chars().count() <= TITLE_CHARS {
        return first.to_owned();
    }
    let cut: String = first.chars().take(TITLE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// Needs-eyes notes waiting to be shown, per (author, pad): a burst is one
/// notification, and while one is on screen the next wait for it to close.
#[derive(Default)]
struct Eyes {
    pending: Vec<Value>,
    /// A thread is gathering, or showing this group's notification.
    busy: bool,
}

static EYES: LazyLock<Mutex<HashMap<(String, String), Eyes>>> = LazyLock::new(Default::default);

/// What a summary notification's buttons ask for.
#[derive(Debug, PartialEq)]
pub enum Group {
    /// Show Needs eyes.
    Open,
    /// Take `needs_eyes` off these entries.
    DoneLooking(Vec<String>),
}

/// "agent-2: 8 notes need your eyes in inbox".
pub fn group_text(author: &str, pad: &str, n: usize) -> String {
    format!("{author}: {n} notes need your eyes in {pad}")
}

/// Shows an agent's needs_eyes entry: a question at once (it carries its
/// choices, and someone may be waiting); notes gathered per (author, pad)
/// for `GATHER`, one alone as itself, several as one summary, and at most
/// one of a group on screen: what comes while it shows waits for it.
pub fn needs_eyes(
    app: &AppHandle,
    event: &Value,
    on_action: fn(&AppHandle, &Value, Action),
    on_group: fn(&AppHandle, Group),
) {
    let e = &event["entry"];
    if e["kind"] == "question" {
        return show(app, event, on_action);
    }
    let key = (
        e["author"].as_str().unwrap_or("someone").to_owned(),
        e["pad"].as_str().unwrap_or("a pad").to_owned(),
    );
    {
        let mut eyes = EYES.lock().unwrap_or_else(|p| p.into_inner());
        let group = eyes.entry(key.clone()).or_default();
        group.pending.push(event.clone());
        if group.busy {
            return;
        }
        group.busy = true;
    }
    let app = app.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(GATHER);
        let batch = {
            let mut eyes = EYES.lock().unwrap_or_else(|p| p.into_inner());
            let group = eyes.entry(key.clone()).or_default();
            let batch = std::mem::take(&mut group.pending);
            if batch.is_empty() {
                group.busy = false;
                return;
            }
            batch
        };
        if let [one] = batch.as_slice() {
            show_now(&app, one, on_action);
            continue;
        }
        let ids: Vec<String> = batch
            .iter()
            .filter_map(|e| e["entry"]["id"].as_str().map(str::to_owned))
            .collect();
        let latest = batch
            .iter()
            .rev()
            .take(3)
            .filter_map(|e| e["entry"]["content"].as_str())
            .map(|c| format!("• {}", c.chars().take(80).collect::<String>()))
            .collect::<Vec<_>>()
            .join("\n");
        let mut n = notify_rust::Notification::new();
        n.appname("Scratchpad")
            .summary(&group_text(&key.0, &key.1, batch.len()))
            .body(
                &latest
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;"),
            )
            .icon("dialog-information")
            .action("default", "Open")
            .action("done", "Done looking")
            .action("open", "Open");
        match n.show() {
            Ok(handle) => {
                let id = handle.id();
                handle.wait_for_action(|action| match action {
                    "done" => {
                        on_group(&app, Group::DoneLooking(ids.clone()));
                        close(id, "a used Done looking");
                    }
                    "default" | "open" => on_group(&app, Group::Open),
                    _ => {}
                });
            }
            Err(e) => tracing::warn!("cannot show a notification: {e}"),
        }
    });
}

/// Shows the notification and waits (on its own thread) for a button;
/// `on_action` gets what it asked for.
pub fn show(
    app: &AppHandle,
    event: &Value,
    on_action: impl FnOnce(&AppHandle, &Value, Action) + Send + 'static,
) {
    let (app, event) = (app.clone(), event.clone());
    std::thread::spawn(move || show_now(&app, &event, on_action));
}

/// `show`, on this thread: returns when the notification is closed.
fn show_now(
    app: &AppHandle,
    event: &Value,
    on_action: impl FnOnce(&AppHandle, &Value, Action) + Send + 'static,
) {
    let entry = event["entry"].clone();
    let about = entry["reply_to"]
        .as_str()
        .and_then(|id| crate::entry_title(app, id));
    let (summary, body) = text(event, about.as_deref());
    let app = app.clone();
    {
        let mut n = notify_rust::Notification::new();
        if entry["kind"] == "question" {
            // Someone may wait for the answer: the daemon keeps it on
            // screen until it is answered (here or elsewhere) or closed.
            n.urgency(notify_rust::Urgency::Critical)
                .hint(notify_rust::Hint::Resident(true))
                .timeout(notify_rust::Timeout::Never);
        }
        n.appname("Scratchpad")
            .summary(&summary)
            // The body is plain text to the daemon: escape markup it may parse.
            .body(
                &body
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;"),
            )
            .icon("dialog-information")
            .action("default", "Open");
        for (key, label) in buttons(&entry) {
            n.action(&key, &label);
        }
        match n.show() {
            Ok(handle) => {
                let id = entry["id"].as_str().unwrap_or("").to_owned();
                if entry["kind"] == "question" {
                    let asker = entry["author"].as_str().unwrap_or("").to_owned();
                    shown().insert(id.clone(), (handle.id(), asker));
                }
                handle.wait_for_action(|key| {
                    if let Some(a) = action(&entry, key) {
                        on_action(&app, &entry, a);
                    }
                });
                shown().remove(&id);
            }
            Err(e) => tracing::warn!("cannot show a notification: {e}"),
        }
    }
}

fn shown() -> std::sync::MutexGuard<'static, HashMap<String, (u32, String)>> {
    SHOWN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Withdraws a question's notification when `event` is its answer: a new
/// reply to it by someone other than who asked.
pub fn withdraw_if_answered(event: &Value) {
    let e = &event["entry"];
    let (Some(parent), Some(author)) = (e["reply_to"].as_str(), e["author"].as_str()) else {
        return;
    };
    let id = {
        let mut shown = shown();
        match shown.get(parent) {
            Some((_, asker)) if !asker.eq_ignore_ascii_case(author) => {
                shown.remove(parent).map(|(id, _)| id)
            }
            _ => None,
        }
    };
    let Some(id) = id else { return };
    std::thread::spawn(move || close(id, "an answered question's"));
}

/// Takes notification `id` off the screen (freedesktop `CloseNotification`):
/// once its question is answered elsewhere, or once its button did its
/// work (a daemon may leave a notification up after an action).
fn close(id: u32, what: &str) {
    let closed = tauri::async_runtime::block_on(async move {
        let bus = zbus::Connection::session().await?;
        bus.call_method(
            Some("org.freedesktop.Notifications"),
            "/org/freedesktop/Notifications",
            Some("org.freedesktop.Notifications"),
            "CloseNotification",
            &(id,),
        )
        .await?;
        Ok::<_, zbus::Error>(())
    });
    if let Err(e) = closed {
        tracing::warn!("cannot close {what} notification: {e}");
    }
}

/// Deletions of the person's entries by someone else, gathered per (who,
/// pad) for `GATHER` so a burst of deletes is one notification.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Deleted {
    /// The changes to undo (one per `entry.delete`, one for a clear).
    pub changes: Vec<i64>,
    /// How many entries went, and how many of them were the person's.
    pub count: usize,
    pub mine: usize,
}

static GATHERING: LazyLock<Mutex<HashMap<(String, String), Deleted>>> =
    LazyLock::new(Default::default);

/// How long deletions by one agent in one pad are gathered into one
/// notification.
pub const GATHER: std::time::Duration = std::time::Duration::from_millis(1500);

/// The fewest of the person's entries one notification is about: one
/// deleted note shows in the feed; several at once get a notification.
pub const SEVERAL: usize = 2;

/// Who deleted, where, and what, when `event` is a `trashed` event by
/// someone other than `me` that took some of `me`'s entries.
pub fn trashed_by_other(event: &Value, me: &str) -> Option<(String, String, Deleted)> {
    let t = &event["trashed"];
    let by = t["by"].as_str()?;
    if event["type"] != "trashed" || by.eq_ignore_ascii_case(me) {
        return None;
    }
    let mine = t["authors"]
        .as_object()?
        .iter()
        .filter(|(a, _)| a.eq_ignore_ascii_case(me))
        .filter_map(|(_, n)| n.as_u64())
        .sum::<u64>() as usize;
    if mine == 0 {
        return None;
    }
    let pad = event["pad"].as_str().unwrap_or("a pad").to_owned();
    let d = Deleted {
        changes: vec![t["change"].as_i64()?],
        count: t["count"].as_u64().unwrap_or(0) as usize,
        mine,
    };
    Some((by.to_owned(), pad, d))
}

/// "agent-x deleted 40 of your notes in proj-x" and what the body says.
pub fn deleted_text(by: &str, pad: &str, d: &Deleted) -> (String, String) {
    let summary = format!("{by} deleted {} of your notes in {pad}", d.mine);
    let others = d.count - d.mine;
    let body = if others > 0 {
        format!("And {others} more. All are in the pad's trash; Undo brings them back.")
    } else {
        "They are in the pad's trash; Undo brings them back.".to_owned()
    };
    (summary, body)
}

/// Adds a deletion to its (who, pad) gathering; the first of a gathering
/// shows the notification `GATHER` later, with Undo, when the person's
/// entries among them are `SEVERAL` or more. `undo` gets the changes.
pub fn gather(
    app: &AppHandle,
    (by, pad, d): (String, String, Deleted),
    undo: impl FnOnce(&AppHandle, &str, &[i64]) + Send + 'static,
) {
    let key = (by.clone(), pad.clone());
    {
        let mut g = GATHERING.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(have) = g.get_mut(&key) {
            have.changes.extend(d.changes);
            have.count += d.count;
            have.mine += d.mine;
            return;
        }
        g.insert(key.clone(), d);
    }
    let app = app.clone();
    std::thread::spawn(move || {
        std::thread::sleep(GATHER);
        let d = GATHERING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key)
            .unwrap_or_default();
        if d.mine < SEVERAL {
            return;
        }
        let (summary, body) = deleted_text(&by, &pad, &d);
        let mut n = notify_rust::Notification::new();
        n.appname("Scratchpad")
            .summary(&summary)
            .body(&body)
            .icon("edit-undo")
            .action("undo", "Undo");
        match n.show() {
            Ok(handle) => {
                let id = handle.id();
                handle.wait_for_action(|key| {
                    if key == "undo" {
                        undo(&app, &pad, &d.changes);
                        close(id, "a used Undo");
                    }
                });
            }
            Err(e) => tracing::warn!("cannot show a notification: {e}"),
        }
    });
}

/// Brings the main window up and tells it to show `entry`.
pub fn open_entry(app: &AppHandle, entry: &Value) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.show();
        let _ = w.unminimize();
        let _ = w.set_focus();
    }
    let _ = app.emit_to("main", "focus-entry", entry.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_others_needs_eyes_entries_notify() {
        let ev = |t: &str, a: &str| json!({"type": t, "entry": {"author": a, "pad": "p", "content": "x"}});
        assert!(wanted(&ev("needs_eyes", "agent-0"), "user"));
        assert!(!wanted(&ev("needs_eyes", "user"), "user"));
        assert!(!wanted(&ev("needs_eyes", "User"), "user"));
        assert!(!wanted(&ev("created", "agent-0"), "user"));
        // What an agent handed work sends back notifies, as itself.
        let done = json!({"type": "created", "entry": {"author": "agent-zero", "kind": "result",
            "pad": "ops", "content": "all tidy", "meta": {"a2a": {"task": "t", "state": "completed"}}}});
        assert!(wanted(&done, "user"));
        assert_eq!(text(&done, None).0, "agent-zero finished in ops");
        let own = json!({"type": "created", "entry": {"author": "agent-zero", "kind": "result", "meta": null}});
        assert!(!wanted(&own, "user"));
    }

    #[test]
    fn a_question_offers_its_choices_and_open() {
        let q = json!({"kind": "question", "choices": ["approve", "deny"]});
        let keys: Vec<_> = buttons(&q)
            .into_iter()
            .map(|(k, l)| format!("{k}={l}"))
            .collect();
        assert_eq!(keys, ["choice:0=approve", "choice:1=deny", "open=Open"]);
        assert_eq!(action(&q, "choice:1"), Some(Action::Answer("deny".into())));
        assert_eq!(action(&q, "choice:7"), None);
        assert_eq!(action(&q, "default"), Some(Action::Open));
    }

    #[test]
    fn other_entries_and_questions_with_many_choices_offer_reply() {
        let note = json!({"kind": "note", "choices": []});
        let many = json!({"kind": "question", "choices": ["a", "b", "c", "d"]});
        let open = json!({"kind": "question", "choices": []});
        for e in [note, many, open] {
            let keys: Vec<_> = buttons(&e).into_iter().map(|(k, _)| k).collect();
            assert_eq!(keys, ["reply", "open"]);
            assert_eq!(action(&e, "reply"), Some(Action::Reply));
        }
    }

    #[test]
    fn a_note_of_an_agent_zero_chat_offers_stop() {
        let q = json!({"kind": "question", "choices": ["approve", "deny"],
                       "meta": {"agent_zero": {"chat": "c1"}}});
        let keys: Vec<_> = buttons(&q).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["choice:0", "choice:1", "stop", "open"]);
        assert_eq!(action(&q, "stop"), Some(Action::Stop));
        let other = json!({"kind": "note", "choices": [], "meta": {"source": "ci"}});
        assert_eq!(action(&other, "stop"), None);
        assert!(!buttons(&other).iter().any(|(k, _)| k == "stop"));
    }

    #[test]
    fn a_question_says_who_asks_and_what_about() {
        let q = json!({"entry": {"author": "agent-0", "pad": "inbox", "kind": "question", "content": "ok?"}});
        let (summary, body) = text(&q, None);
        assert_eq!(summary, "agent-0 asks in inbox");
        assert_eq!(body, "ok?");
        let (_, body) = text(&q, Some("deploy the fix (PR #4821)"));
        assert_eq!(body, "about “deploy the fix (PR #4821)”\nok?");
    }

    #[test]
    fn a_title_is_the_first_line_cut_to_sixty_characters() {
        assert_eq!(title_of("  deploy it\nthen tell me"), "deploy it");
        let long = "ü".repeat(100);
        let t = title_of(&long);
        assert_eq!(t.chars().count(), TITLE_CHARS);
        assert!(t.ends_with('…'));
        assert_eq!(title_of(""), "");
    }

    #[test]
    fn an_agents_clear_of_my_notes_is_undoable_and_mine_are_not() {
        let ev = |by: &str| {
            json!({"type": "trashed", "pad": "proj-x", "trashed": {
                "change": 8, "by": by, "action": "clear", "count": 42,
                "authors": {"user": 40, "agent-x": 2}}})
        };
        let (by, pad, d) = trashed_by_other(&ev("agent-x"), "user").unwrap();
        assert_eq!(
            (by.as_str(), pad.as_str(), d.mine, d.count),
            ("agent-x", "proj-x", 40, 42)
        );
        assert_eq!(d.changes, [8]);
        assert_eq!(
            deleted_text(&by, &pad, &d).0,
            "agent-x deleted 40 of your notes in proj-x"
        );
        // The person's own clear, and a clear of nothing of theirs, say nothing.
        assert!(trashed_by_other(&ev("user"), "user").is_none());
        assert!(trashed_by_other(&ev("agent-x"), "someone-else").is_none());
        assert!(trashed_by_other(&json!({"type": "deleted", "pad": "p"}), "user").is_none());
    }

    #[test]
    fn a_burst_of_notes_reads_as_one_line() {
        assert_eq!(
            group_text("agent-2", "inbox", 8),
            "agent-2: 8 notes need your eyes in inbox"
        );
    }

    #[test]
    fn long_content_is_shortened() {
        let long = "é".repeat(300);
        let (summary, body) = text(
            &json!({"entry": {"author": "a", "pad": "p", "content": long}}),
            None,
        );
        assert_eq!(summary, "a needs your eyes in p");
        assert_eq!(body.chars().count(), 201);
    }
}
