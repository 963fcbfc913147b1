//! Human-readable output of the CLI.
//!
//! What it prints comes from anyone who can write a note, a reply or an
//! agent card, so every string is made terminal-safe before it is shown
//! (`terminal_safe`): control characters appear escaped (`\u{1b}`), never
//! as a clipboard write, a title, a screen clear or a line overwritten by
//! `\r`. Line breaks and tabs stay.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{Entry, Pad};
use crate::protocol::*;

/// `text` with every control character but a line break or a tab shown as
/// an escape: the C0 set, DEL, the C1 set (a lone 0x9b starts a CSI
/// sequence in some terminals), and the line and paragraph separators.
pub fn safe_text(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}')
    };
    if !text.contains(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if unsafe_char(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// An answer with every string in it made terminal-safe: the one walk over
/// everything it holds (`terminal_safe`), whatever its type.
pub fn safe<T: Serialize + DeserializeOwned>(answer: &T) -> serde_json::Result<T> {
    serde_json::from_value(terminal_safe(&serde_json::to_value(answer)?))
}

/// A reply with every string in it (keys too) made terminal-safe.
pub fn terminal_safe(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(safe_text(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(terminal_safe).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (safe_text(k).into_owned(), terminal_safe(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// "3m ago" for an RFC 3339 time, falling back to the time itself.
fn ago(t: &str) -> String {
    let Ok(ms) = crate::model::parse_time("t", t) else {
        return t.to_string();
    };
    let secs = (crate::clock::system_now_ms() - ms) / 1000;
    match secs {
        // A time to come is rounded up (1 h 59 m left is "in 2h"), so an
        // expiry is never sooner than said; a time past is rounded down.
        i64::MIN..=-1 => format!("in {}", human_secs_up(-secs)),
        0..=59 => "just now".into(),
        _ => format!("{} ago", human_secs(secs)),
    }
}

fn human_secs(secs: i64) -> String {
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

/// How long a backlog (a reindex, a restart behind, a flood) has left at
/// the encoders' pace, when there is one.
fn encoding_left(queue: i64, per_second: f64) -> String {
    if queue <= 0 || per_second <= 0.0 {
        return String::new();
    }
    let secs = (queue as f64 / per_second).ceil() as i64;
    format!(
        " (about {} left at {per_second:.0} notes/s while writes pause)",
        human_secs_up(secs)
    )
}

/// `human_secs`, rounded up to its unit (119 min is "2h"; 23 h 59 m "1d").
fn human_secs_up(secs: i64) -> String {
    let up = |unit: i64| (secs + unit - 1) / unit * unit;
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 if up(60) < 3600 => human_secs(up(60)),
        60..=86399 if up(3600) < 86400 => human_secs(up(3600)),
        _ => human_secs(up(86400)),
    }
}

fn header(e: &Entry) -> String {
    let mut line = format!(
        "{}  {:<8} {:<14} {:<10}",
        e.id,
        e.kind.as_str(),
        e.author,
        ago(&e.created_at)
    );
    if let Some(status) = e.status {
        line.push_str(&format!(" [{}]", status.as_str()));
    }
    if e.pinned {
        line.push_str(" (pinned)");
    }
    if e.kind == crate::model::Kind::Question {
        line.push_str(if e.answer.is_some() {
            " [answered]"
        } else {
            " [open]"
        });
    }
    if let Some(parent) = &e.reply_to {
        line.push_str(&format!(" ↳ {parent}"));
    }
    if let Some(older) = &e.supersedes {
        line.push_str(&format!(" (supersedes {older})"));
    }
    if let Some(newer) = &e.superseded_by {
        line.push_str(&format!(" [superseded by {newer}]"));
    }
    match e.replies {
        1 => line.push_str(" (1 reply)"),
        n if n > 1 => line.push_str(&format!(" ({n} replies)")),
        _ => {}
    }
    for t in &e.tags {
        line.push_str(&format!(" #{t}"));
    }
    line
}

pub(super) fn preview(content: &str) -> String {
    let one_line: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 100 {
        format!("{}…", one_line.chars().take(99).collect::<String>())
    } else {
        one_line
    }
}

/// A list of entries, each a header and a one-line preview.
fn entries(entries: &[Entry], indent: &str) {
    for e in entries {
        println!("{indent}{}", header(e));
        println!("{indent}    {}", preview(&e.content));
    }
}

pub fn entry_list(r: &ListResult) {
    if r.entries.is_empty() {
        println!("no entries");
        return;
    }
    entries(&r.entries, "");
    if r.next_cursor.is_some() {
        println!("… more: add --all, or -n to show more");
    }
}

/// An author's inbox: what others flagged, replies, reminders come due.
pub fn inbox(r: &InboxResult) {
    let mut empty = true;
    for (label, list) in [
        ("for you", &r.addressed),
        ("needs your eyes", &r.needs_eyes),
        ("replies", &r.replies),
        ("reminders", &r.reminders),
    ] {
        if list.is_empty() {
            continue;
        }
        empty = false;
        println!("{label} ({})", list.len());
        entries(list, "");
    }
    if empty {
        println!("nothing new for {}", r.author);
    }
}

pub fn entry_full(e: &Entry) {
    println!("{}", header(e));
    println!(
        "pad {} · version {} · created {} · updated {}",
        e.pad, e.version, e.created_at, e.updated_at
    );
    if !e.depends_on.is_empty() {
        println!("depends on {}", e.depends_on.join(", "));
    }
    if let Some(r) = &e.remind_at {
        println!("reminder {r}");
    }
    if let Some(a) = &e.assignee {
        let lease = e
            .lease_until
            .as_ref()
            .map(|l| format!(", lease until {l}"))
            .unwrap_or_default();
        println!("held by {a}{lease} · attempt {}", e.attempts);
    }
    if let Some(r) = &e.resume {
        println!("resume: {r}");
    }
    if let Some(err) = &e.error {
        println!("last error: {err}");
    }
    if let Some(c) = e.category {
        let conf = e
            .confidence
            .map(|c| format!(", confidence {c:.2}"))
            .unwrap_or_default();
        println!("insight: {}{conf}", c.as_str());
    }
    if !e.choices.is_empty() {
        println!("choices: {}", e.choices.join(" / "));
    }
    if let Some(a) = &e.answer {
        println!("answered by reply {a} (`pad thread {}`)", e.id);
    }
    if let Some(meta) = &e.meta {
        println!("meta {}", Value::Object(meta.clone()));
    }
    println!("\n{}", e.content);
}

/// An entry, then its replies indented under what they answer.
pub fn thread(r: &ThreadResult) {
    entry_full(&r.entry);
    let mut depth: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    depth.insert(&r.entry.id, 0);
    for e in &r.replies {
        let d = e
            .reply_to
            .as_deref()
            .and_then(|p| depth.get(p))
            .map_or(1, |d| d + 1);
        depth.insert(&e.id, d);
        let indent = "    ".repeat(d);
        println!("\n{indent}{}", header(e));
        for line in e.content.lines() {
            println!("{indent}    {line}");
        }
    }
    if r.replies.is_empty() {
        println!("\n(no replies yet: `pad reply {} \"…\"`)", r.entry.id);
    }
}

pub fn hits(r: &SearchResult) {
    if let Some(q) = &r.explain {
        super::explain::query(q);
    }
    if r.hits.is_empty() {
        println!("no matches");
        return;
    }
    for h in &r.hits {
        println!(
            "{}  ({}; {})",
            header(&h.entry),
            h.entry.pad,
            h.found_by.join("+")
        );
        println!("    {}", preview(&h.entry.content));
        if let Some(why) = &h.explain {
            super::explain::hit(why, h);
        }
    }
}

pub fn tags(r: &TagsResult) {
    if r.tags.is_empty() {
        println!("no tags");
    }
    for t in &r.tags {
        println!("{:>6}  #{}", t.count, t.tag);
    }
}

pub fn pads(pads: &[Pad]) {
    if pads.is_empty() {
        println!("no pads");
    }
    for p in pads {
        let state = if p.archived {
            format!("archived {}", ago(p.archived_at.as_deref().unwrap_or("")))
        } else if let Some(exp) = &p.expires_at {
            format!("expires {}", ago(exp))
        } else {
            "never expires".into()
        };
        let window = p
            .max_entries
            .map(|m| format!(" · keeps newest {m}"))
            .unwrap_or_default();
        println!(
            "{:<24} {:>11} · last write {} · {state}{window}",
            p.name,
            crate::model::count(p.entries, "entry", "entries"),
            ago(&p.last_write_at)
        );
    }
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

pub fn event(e: &Value) {
    let kind = s(&e["type"]);
    match kind {
        "lagged" => println!(
            "! missed {} events (this terminal read too slowly)",
            e["missed"]
        ),
        "pad_expired" => println!("{kind:<11} pad {}", s(&e["pad"])),
        _ if e["entry"].is_object() => match Entry::deserialize(&e["entry"]) {
            Ok(entry) => {
                println!("{kind:<11} {}  ({})", header(&entry), s(&e["pad"]));
                println!("            {}", preview(&entry.content));
            }
            Err(_) => println!("{kind:<11} pad {}", s(&e["pad"])),
        },
        _ => println!("{kind:<11} pad {}", s(&e["pad"])),
    }
}

pub fn stats(r: &StatsResult) {
    println!(
        "scratchpad {} (pid {}), up {}",
        r.version,
        r.pid,
        human_secs(r.uptime_seconds as i64)
    );
    println!("entries      {}", r.entries);
    println!("pads         {} live, {} archived", r.pads, r.archived_pads);
    println!("tags         {}", r.tags);
    println!(
        "on disk      {:.1} MiB ({})",
        r.db_bytes as f64 / 1048576.0,
        r.data_dir
    );
    println!(
        "connections  {} ({} subscribers)",
        r.connections, r.subscribers
    );
    println!("journal queue {}", r.journal_queue);
    println!("index queue  {}", r.index_queue);
    let sem = &r.semantic;
    match sem.status.as_str() {
        "ready" => println!(
            "semantic     ready: {}, {} vectors ({:.1} MiB), embed queue {}{}",
            sem.model.as_deref().unwrap_or(""),
            sem.vectors,
            sem.index_bytes as f64 / 1048576.0,
            r.embed_queue,
            encoding_left(r.embed_queue, sem.embed_per_second)
        ),
        "loading" => println!(
            "semantic     loading the model; embed queue {}",
            r.embed_queue
        ),
        other => println!(
            "semantic     {other}: {}",
            sem.reason.as_deref().unwrap_or("")
        ),
    }
    println!("durability   {}", r.durability);
    if let Some(url) = &r.metrics {
        println!("metrics      {url}");
    }
    let Some(a) = &r.activity else {
        return;
    };
    println!(
        "\nlast hour    {}  {}  (a minute per mark, oldest left)",
        crate::model::count(a.entries_last_hour as i64, "entry", "entries"),
        sparkline(&a.entries_per_minute)
    );
    println!("entry size   {:.0} bytes on average", a.avg_entry_bytes);
    let tags: Vec<String> = a
        .top_tags
        .iter()
        .map(|t| format!("#{} {}", t.tag, t.count))
        .collect();
    if !tags.is_empty() {
        println!("top tags     {}", tags.join(" · "));
    }
    for (label, list) in [("busiest", &a.busiest_pads), ("stalest", &a.stalest_pads)] {
        let pads: Vec<String> = list
            .iter()
            .map(|p| {
                format!(
                    "{} ({}, idle {})",
                    p.name,
                    crate::model::count(p.entries, "entry", "entries"),
                    human_secs(p.idle_seconds)
                )
            })
            .collect();
        if !pads.is_empty() {
            println!("{label:<12} {}", pads.join(" · "));
        }
    }
}

/// A row of block characters, one per value, scaled to the largest.
pub fn sparkline(values: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&v| {
            let level = (v * 7 + max / 2).checked_div(max).unwrap_or(0);
            BARS[level.min(7) as usize]
        })
        .collect()
}

pub fn plan(r: &PlanResult) {
    for p in &r.plans {
        println!("plan  {}", preview(&p.content));
    }
    if r.entries.is_empty() {
        println!("no tasks on pad {}", r.pad);
        return;
    }
    for (i, step) in r.entries.iter().enumerate() {
        let e = &step.entry;
        let mut line = format!(
            "{:>3}. {:<8} {}  {}",
            i + 1,
            step.state.as_str(),
            e.id,
            preview(&e.content)
        );
        if let Some(a) = &e.assignee {
            line.push_str(&format!("  ({a})"));
        }
        if !step.waiting_on.is_empty() {
            line.push_str(&format!("  waits on {}", step.waiting_on.join(", ")));
        }
        println!("{line}");
        if let Some(r) = &e.resume {
            println!("          resume: {}", preview(r));
        }
    }
    let n = &r.counts;
    println!(
        "{} ready · {} running · {} blocked · {} done · {} failed",
        n.ready, n.running, n.blocked, n.done, n.failed
    );
}

pub fn report(r: &ReportResult) {
    println!(
        "{:<20} {:>8} {:>6} {:>6} {:>7} {:>10}",
        "author", "entries", "done", "failed", "retries", "tokens"
    );
    let row = |a: &AuthorReport| {
        println!(
            "{:<20} {:>8} {:>6} {:>6} {:>7} {:>10}",
            a.author, a.entries, a.tasks_done, a.tasks_failed, a.retries, a.tokens
        )
    };
    for a in &r.authors {
        row(a);
    }
    row(&r.totals);
    if r.tasks.is_empty() {
        return;
    }
    println!();
    for t in &r.tasks {
        let took = t
            .duration_seconds
            .map(|d| format!(" in {}", human_secs(d.round() as i64)))
            .unwrap_or_default();
        let retries = match t.retries {
            0 => String::new(),
            n => format!(", {}", crate::model::count(n, "retry", "retries")),
        };
        println!(
            "{}  {:<7} {:<14} {}{took}{retries}",
            t.id,
            t.status.map_or("-", |s| s.as_str()),
            t.assignee.as_deref().unwrap_or("-"),
            t.title
        );
        if let Some(e) = &t.error {
            println!("    error: {}", preview(e));
        }
    }
    if r.tasks_total > r.tasks.len() {
        println!("… the newest {} of {} tasks", r.tasks.len(), r.tasks_total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped_and_line_breaks_kept() {
        let hostile =
            "ok\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\rfake\u{9b}31m\u{7f}\u{2028}\nnext\tcol";
        let shown = safe_text(hostile);
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{shown}"
        );
        assert_eq!(
            shown,
            "ok\\u{1b}]52;c;ZXZpbA==\\u{7}\\u{1b}[2J\\u{d}fake\\u{9b}31m\\u{7f}\\u{2028}\nnext\tcol"
        );
        assert!(matches!(safe_text("plain\ntext"), Cow::Borrowed(_)));
        let reply = serde_json::json!({"entries": [{"content": "a\u{1b}[31m", "meta": {"k\u{7}": ["\r"]}}]});
        let safe = terminal_safe(&reply);
        assert_eq!(safe["entries"][0]["content"], "a\\u{1b}[31m");
        assert_eq!(safe["entries"][0]["meta"]["k\\u{7}"][0], "\\u{d}");
    }

    #[test]
    fn times_to_come_round_up_and_counts_agree_in_number() {
        assert_eq!(human_secs_up(119 * 60), "2h");
        assert_eq!(human_secs_up(2 * 3600), "2h");
        assert_eq!(human_secs_up(23 * 3600 + 59 * 60), "1d");
        assert_eq!(human_secs_up(61), "2m");
        assert_eq!(human_secs_up(3599), "1h");
        assert_eq!(human_secs(119 * 60), "1h");
    }

    #[test]
    fn a_backlog_says_how_long_it_has_left() {
        assert_eq!(
            encoding_left(12_000, 100.0),
            " (about 2m left at 100 notes/s while writes pause)"
        );
        assert_eq!(encoding_left(0, 100.0), "", "nothing queued");
        assert_eq!(encoding_left(50, 0.0), "", "no pace known yet");
    }
}
