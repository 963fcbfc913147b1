//! How tool results read: one entry, the inbox line, the word on notes
//! not yet embedded.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::model::count;

/// "Inbox: …" when others wrote something for this author since its last
/// call; `None` when there is nothing new.
pub(super) fn inbox_line(r: &Value) -> Option<String> {
    let list = |key: &str| r[key].as_array().cloned().unwrap_or_default();
    let (eyes, replies, reminders) = (list("needs_eyes"), list("replies"), list("reminders"));
    let addressed = list("addressed");
    if eyes.is_empty() && replies.is_empty() && reminders.is_empty() && addressed.is_empty() {
        return None;
    }
    let brief = |e: &Value| {
        let content = e["content"].as_str().unwrap_or("");
        let short: String = content.chars().take(60).collect();
        let more = if content.chars().count() > 60 {
            "…"
        } else {
            ""
        };
        format!(
            "[{}] {}: {short}{more}",
            e["id"].as_str().unwrap_or(""),
            e["author"].as_str().unwrap_or("")
        )
    };
    let mut parts = Vec::new();
    if !addressed.is_empty() {
        let shown: Vec<String> = addressed.iter().take(5).map(brief).collect();
        parts.push(format!(
            "{} for you: {}",
            count(addressed.len() as i64, "note", "notes"),
            shown.join("; ")
        ));
    }
    if !eyes.is_empty() {
        let shown: Vec<String> = eyes.iter().take(5).map(brief).collect();
        parts.push(format!(
            "{} new needs_eyes: {}",
            eyes.len(),
            shown.join("; ")
        ));
    }
    if !replies.is_empty() {
        let shown: Vec<String> = replies.iter().take(5).map(brief).collect();
        parts.push(format!(
            "{} to your notes: {}",
            count(replies.len() as i64, "reply", "replies"),
            shown.join("; ")
        ));
    }
    if !reminders.is_empty() {
        let shown: Vec<String> = reminders.iter().take(5).map(brief).collect();
        parts.push(format!(
            "{} due: {}",
            count(reminders.len() as i64, "reminder", "reminders"),
            shown.join("; ")
        ));
    }
    Some(format!("Inbox: {}.", parts.join(" | ")))
}

pub(super) fn ok(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

pub(super) fn fail(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The search result's word on notes meaning search could not see yet.
pub(super) fn not_embedded(r: &Value) -> String {
    match r["not_embedded"].as_u64().unwrap_or(0) {
        0 => String::new(),
        n => format!(
            "\n\n({} written moments ago {} not yet searchable by meaning: the engine is embedding a burst of writes. Words find them now (mode \"text\"); meaning in a moment.)",
            count(n as i64, "note", "notes"),
            if n == 1 { "is" } else { "are" }
        ),
    }
}

pub(super) fn line(e: &Value) -> String {
    let tags: Vec<String> = e["tags"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .map(|t| format!("#{t}"))
                .collect()
        })
        .unwrap_or_default();
    let mut head = format!(
        "[{}] {} by {} in {}",
        e["id"].as_str().unwrap_or(""),
        e["kind"].as_str().unwrap_or("note"),
        e["author"].as_str().unwrap_or(""),
        e["pad"].as_str().unwrap_or("")
    );
    if let Some(s) = e["status"].as_str() {
        head.push_str(&format!(" ({s})"));
    }
    if let Some(parent) = e["reply_to"].as_str() {
        head.push_str(&format!(", reply to [{parent}]"));
    }
    if let Some(older) = e["supersedes"].as_str() {
        head.push_str(&format!(", supersedes [{older}] (older, kept)"));
    }
    if let Some(newer) = e["superseded_by"].as_str() {
        head.push_str(&format!(", SUPERSEDED by [{newer}]"));
    }
    match e["replies"].as_i64() {
        Some(1) => head.push_str(", 1 reply"),
        Some(n) if n > 1 => head.push_str(&format!(", {n} replies")),
        _ => {}
    }
    if !tags.is_empty() {
        head.push_str(&format!(" {}", tags.join(" ")));
    }
    format!("{head}\n{}", e["content"].as_str().unwrap_or(""))
}

/// A tool's word (`kind`, `status`, `mode`) as its method's type, or the
/// tool's own error naming the words it takes (`words`) and how to leave it
/// out (`otherwise`).
pub(super) fn word<T: DeserializeOwned>(
    tool: &str,
    field: &str,
    raw: Option<String>,
    words: &[&str],
    otherwise: &str,
) -> Result<Option<T>, CallToolResult> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let folded = raw.trim().to_lowercase();
    serde_json::from_value(Value::String(folded))
        .map(Some)
        .map_err(|_| {
            fail(format!(
                "{tool}: {field} '{raw}' is not one of {}. Give one of them, or leave {field} out {otherwise}.",
                words.join(", ")
            ))
        })
}
