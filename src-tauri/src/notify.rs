//! A tap on the shoulder: an entry tagged `needs_eyes` by anyone but the
//! person raises a desktop notification (freedesktop, over D-Bus) whose
//! "Open" action brings the app up on that entry.

use serde_json::Value;
use tauri::{AppHandle, Emitter, Manager};

/// Whether an event deserves a notification for `me`.
pub fn wanted(event: &Value, me: &str) -> bool {
    event["type"] == "needs_eyes"
        && event["entry"]["author"]
            .as_str()
            .is_some_and(|a| !a.eq_ignore_ascii_case(me))
}

/// "agent-0 in proj-x" and the first 200 characters of the entry.
pub fn text(event: &Value) -> (String, String) {
    let e = &event["entry"];
    let summary = format!(
        "{} needs your eyes in {}",
        e["author"].as_str().unwrap_or("someone"),
        e["pad"].as_str().unwrap_or("a pad")
    );
    let content = e["content"].as_str().unwrap_or("");
    let mut body: String = content.chars().take(200).collect();
    if content.chars().count() > 200 {
        body.push('…');
    }
    (summary, body)
}

/// Shows the notification and waits (on its own thread) for its action.
pub fn show(app: &AppHandle, event: &Value) {
    let (summary, body) = text(event);
    let entry = event["entry"].clone();
    let app = app.clone();
    std::thread::spawn(move || {
        let shown = notify_rust::Notification::new()
            .appname("Scratchpad")
            .summary(&summary)
            // The body is plain text to the daemon: escape markup it may parse.
            .body(
                &body
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;"),
            )
            .icon("dialog-information")
            .action("default", "Open")
            .action("open", "Open")
            .show();
        match shown {
            Ok(handle) => handle.wait_for_action(|action| {
                if action == "default" || action == "open" {
                    open_entry(&app, &entry);
                }
            }),
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
    }

    #[test]
    fn long_content_is_shortened() {
        let long = "é".repeat(300);
        let (summary, body) = text(&json!({"entry": {"author": "a", "pad": "p", "content": long}}));
        assert_eq!(summary, "a needs your eyes in p");
        assert_eq!(body.chars().count(), 201);
    }
}
