//! Human-readable output of the CLI.
//!
//! What it prints comes from anyone who can write a note, a reply or an
//! agent card, so every string is made terminal-safe before it is shown
//! (`terminal_safe`): control characters appear escaped (`\u{1b}`), never
//! as a clipboard write, a title, a screen clear or a line overwritten by
//! `\r`. Line breaks and tabs stay.

use std::borrow::Cow;

use serde_json::Value;

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

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
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

/// "1 entry", "2 entries".
pub fn count(n: &Value, one: &str, many: &str) -> String {
    crate::model::count(n.as_i64().unwrap_or(0), one, many)
}

fn header(e: &Value) -> String {
    let mut line = format!(
        "{}  {:<8} {:<14} {:<10}",
        s(&e["id"]),
        s(&e["kind"]),
        s(&e["author"]),
        ago(s(&e["created_at"]))
    );
    if let Some(status) = e["status"].as_str() {
        line.push_str(&format!(" [{status}]"));
    }
    if e["pinned"].as_bool() == Some(true) {
        line.push_str(" (pinned)");
    }
    if e["kind"] == "question" {
        line.push_str(if e["answer"].is_string() {
            " [answered]"
        } else {
            " [open]"
        });
    }
    if let Some(parent) = e["reply_to"].as_str() {
        line.push_str(&format!(" ↳ {parent}"));
    }
    if let Some(older) = e["supersedes"].as_str() {
        line.push_str(&format!(" (supersedes {older})"));
    }
    if let Some(newer) = e["superseded_by"].as_str() {
        line.push_str(&format!(" [superseded by {newer}]"));
    }
    match e["replies"].as_i64() {
        Some(1) => line.push_str(" (1 reply)"),
        Some(n) if n > 1 => line.push_str(&format!(" ({n} replies)")),
        _ => {}
    }
    for t in e["tags"].as_array().into_iter().flatten() {
        line.push_str(&format!(" #{}", s(t)));
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

pub fn entry_list(r: &Value) {
    let entries = r["entries"].as_array().cloned().unwrap_or_default();
    if entries.is_empty() {
        println!("no entries");
        return;
    }
    for e in &entries {
        println!("{}", header(e));
        println!("    {}", preview(s(&e["content"])));
    }
    if r["next_cursor"].is_string() {
        println!("… more: add --all, or -n to show more");
    }
}

/// An author's inbox: what others flagged, replies, reminders come due.
pub fn inbox(r: &Value) {
    let mut empty = true;
    for (label, key) in [
        ("for you", "addressed"),
        ("needs your eyes", "needs_eyes"),
        ("replies", "replies"),
        ("reminders", "reminders"),
    ] {
        let entries = r[key].as_array().cloned().unwrap_or_default();
        if entries.is_empty() {
            continue;
        }
        empty = false;
        println!("{label} ({})", entries.len());
        for e in &entries {
            println!("{}", header(e));
            println!("    {}", preview(s(&e["content"])));
        }
    }
    if empty {
        println!("nothing new for {}", s(&r["author"]));
    }
}

pub fn entry_full(e: &Value) {
    println!("{}", header(e));
    println!(
        "pad {} · version {} · created {} · updated {}",
        s(&e["pad"]),
        e["version"],
        s(&e["created_at"]),
        s(&e["updated_at"])
    );
    if let Some(deps) = e["depends_on"].as_array().filter(|d| !d.is_empty()) {
        let ids: Vec<&str> = deps.iter().map(s).collect();
        println!("depends on {}", ids.join(", "));
    }
    if let Some(r) = e["remind_at"].as_str() {
        println!("reminder {r}");
    }
    if let Some(a) = e["assignee"].as_str() {
        let lease = e["lease_until"]
            .as_str()
            .map(|l| format!(", lease until {l}"))
            .unwrap_or_default();
        println!("held by {a}{lease} · attempt {}", e["attempts"]);
    }
    if let Some(r) = e["resume"].as_str() {
        println!("resume: {r}");
    }
    if let Some(err) = e["error"].as_str() {
        println!("last error: {err}");
    }
    if let Some(c) = e["category"].as_str() {
        let conf = e["confidence"]
            .as_f64()
            .map(|c| format!(", confidence {c:.2}"))
            .unwrap_or_default();
        println!("insight: {c}{conf}");
    }
    if let Some(choices) = e["choices"].as_array().filter(|c| !c.is_empty()) {
        let offered: Vec<&str> = choices.iter().map(s).collect();
        println!("choices: {}", offered.join(" / "));
    }
    if let Some(a) = e["answer"].as_str() {
        println!("answered by reply {a} (`pad thread {}`)", s(&e["id"]));
    }
    if e["meta"].is_object() {
        println!("meta {}", e["meta"]);
    }
    println!("\n{}", s(&e["content"]));
}

/// An entry, then its replies indented under what they answer.
pub fn thread(r: &Value) {
    entry_full(&r["entry"]);
    let replies = r["replies"].as_array().cloned().unwrap_or_default();
    let mut depth: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    depth.insert(s(&r["entry"]["id"]), 0);
    for e in &replies {
        let d = depth.get(s(&e["reply_to"])).map_or(1, |d| d + 1);
        depth.insert(s(&e["id"]), d);
        let indent = "    ".repeat(d);
        println!("\n{indent}{}", header(e));
        for line in s(&e["content"]).lines() {
            println!("{indent}    {line}");
        }
    }
    if replies.is_empty() {
        println!(
            "\n(no replies yet: `pad reply {} \"…\"`)",
            s(&r["entry"]["id"])
        );
    }
}

pub fn hits(r: &Value) {
    let hits = r["hits"].as_array().cloned().unwrap_or_default();
    if let Some(q) = r.get("explain") {
        super::explain::query(q);
    }
    if hits.is_empty() {
        println!("no matches");
        return;
    }
    for h in &hits {
        let by: Vec<&str> = h["found_by"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        println!(
            "{}  ({}; {})",
            header(&h["entry"]),
            s(&h["entry"]["pad"]),
            by.join("+")
        );
        println!("    {}", preview(s(&h["entry"]["content"])));
        if let Some(why) = h.get("explain") {
            super::explain::hit(why, h);
        }
    }
}

pub fn tags(r: &Value) {
    let tags = r["tags"].as_array().cloned().unwrap_or_default();
    if tags.is_empty() {
        println!("no tags");
    }
    for t in &tags {
        println!("{:>6}  #{}", t["count"], s(&t["tag"]));
    }
}

pub fn pads(r: &Value) {
    let pads = r["pads"].as_array().cloned().unwrap_or_default();
    if pads.is_empty() {
        println!("no pads");
    }
    for p in &pads {
        let state = if p["archived"].as_bool() == Some(true) {
            format!("archived {}", ago(s(&p["archived_at"])))
        } else if let Some(exp) = p["expires_at"].as_str() {
            format!("expires {}", ago(exp))
        } else {
            "never expires".into()
        };
        let window = p["max_entries"]
            .as_i64()
            .map(|m| format!(" · keeps newest {m}"))
            .unwrap_or_default();
        println!(
            "{:<24} {:>11} · last write {} · {state}{window}",
            s(&p["name"]),
            count(&p["entries"], "entry", "entries"),
            ago(s(&p["last_write_at"]))
        );
    }
}

pub fn event(e: &Value) {
    let kind = s(&e["type"]);
    match kind {
        "lagged" => println!(
            "! missed {} events (this terminal read too slowly)",
            e["missed"]
        ),
        "pad_expired" => println!("{kind:<11} pad {}", s(&e["pad"])),
        _ if e["entry"].is_object() => {
            println!("{kind:<11} {}  ({})", header(&e["entry"]), s(&e["pad"]));
            println!("            {}", preview(s(&e["entry"]["content"])));
        }
        _ => println!("{kind:<11} pad {}", s(&e["pad"])),
    }
}

pub fn stats(r: &Value) {
    println!(
        "scratchpad {} (pid {}), up {}",
        s(&r["version"]),
        r["pid"],
        human_secs(r["uptime_seconds"].as_i64().unwrap_or(0))
    );
    println!("entries      {}", r["entries"]);
    println!(
        "pads         {} live, {} archived",
        r["pads"], r["archived_pads"]
    );
    println!("tags         {}", r["tags"]);
    println!(
        "on disk      {:.1} MiB ({})",
        r["db_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
        s(&r["data_dir"])
    );
    println!(
        "connections  {} ({} subscribers)",
        r["connections"], r["subscribers"]
    );
    println!("journal queue {}", r["journal_queue"]);
    println!("index queue  {}", r["index_queue"]);
    let sem = &r["semantic"];
    match s(&sem["status"]) {
        "ready" => println!(
            "semantic     ready: {}, {} vectors ({:.1} MiB), embed queue {}",
            s(&sem["model"]),
            sem["vectors"],
            sem["index_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
            r["embed_queue"]
        ),
        "loading" => println!(
            "semantic     loading the model; embed queue {}",
            r["embed_queue"]
        ),
        other => println!("semantic     {other}: {}", s(&sem["reason"])),
    }
    println!("durability   {}", s(&r["durability"]));
    if let Some(url) = r["metrics"].as_str() {
        println!("metrics      {url}");
    }
    let a = &r["activity"];
    if !a.is_object() {
        return;
    }
    let per_minute: Vec<u64> = a["entries_per_minute"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    println!(
        "\nlast hour    {}  {}  (a minute per mark, oldest left)",
        count(&a["entries_last_hour"], "entry", "entries"),
        sparkline(&per_minute)
    );
    println!(
        "entry size   {:.0} bytes on average",
        a["avg_entry_bytes"].as_f64().unwrap_or(0.0)
    );
    let tags: Vec<String> = a["top_tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| format!("#{} {}", s(&t["tag"]), t["count"]))
        .collect();
    if !tags.is_empty() {
        println!("top tags     {}", tags.join(" · "));
    }
    for (label, key) in [("busiest", "busiest_pads"), ("stalest", "stalest_pads")] {
        let pads: Vec<String> = a[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "{} ({}, idle {})",
                    s(&p["name"]),
                    count(&p["entries"], "entry", "entries"),
                    human_secs(p["idle_seconds"].as_i64().unwrap_or(0))
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

pub fn plan(r: &Value) {
    for p in r["plans"].as_array().into_iter().flatten() {
        println!("plan  {}", preview(s(&p["content"])));
    }
    let steps = r["entries"].as_array().cloned().unwrap_or_default();
    if steps.is_empty() {
        println!("no tasks on pad {}", s(&r["pad"]));
        return;
    }
    for (i, step) in steps.iter().enumerate() {
        let e = &step["entry"];
        let mut line = format!(
            "{:>3}. {:<8} {}  {}",
            i + 1,
            s(&step["state"]),
            s(&e["id"]),
            preview(s(&e["content"]))
        );
        if let Some(a) = e["assignee"].as_str() {
            line.push_str(&format!("  ({a})"));
        }
        let waiting: Vec<&str> = step["waiting_on"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !waiting.is_empty() {
            line.push_str(&format!("  waits on {}", waiting.join(", ")));
        }
        println!("{line}");
        if let Some(r) = e["resume"].as_str() {
            println!("          resume: {}", preview(r));
        }
    }
    let n = &r["counts"];
    println!(
        "{} ready · {} running · {} blocked · {} done · {} failed",
        n["ready"], n["running"], n["blocked"], n["done"], n["failed"]
    );
}

pub fn report(r: &Value) {
    println!(
        "{:<20} {:>8} {:>6} {:>6} {:>7} {:>10}",
        "author", "entries", "done", "failed", "retries", "tokens"
    );
    let row = |a: &Value| {
        println!(
            "{:<20} {:>8} {:>6} {:>6} {:>7} {:>10}",
            s(&a["author"]),
            // Values as strings: JSON numbers ignore the column widths.
            a["entries"].to_string(),
            a["tasks_done"].to_string(),
            a["tasks_failed"].to_string(),
            a["retries"].to_string(),
            a["tokens"].to_string()
        )
    };
    for a in r["authors"].as_array().into_iter().flatten() {
        row(a);
    }
    row(&r["totals"]);
    let tasks = r["tasks"].as_array().cloned().unwrap_or_default();
    if tasks.is_empty() {
        return;
    }
    println!();
    for t in &tasks {
        let took = t["duration_seconds"]
            .as_f64()
            .map(|d| format!(" in {}", human_secs(d.round() as i64)))
            .unwrap_or_default();
        let retries = match t["retries"].as_i64() {
            Some(0) | None => String::new(),
            Some(_) => format!(", {}", count(&t["retries"], "retry", "retries")),
        };
        println!(
            "{}  {:<7} {:<14} {}{took}{retries}",
            s(&t["id"]),
            t["status"].as_str().unwrap_or("-"),
            t["assignee"].as_str().unwrap_or("-"),
            s(&t["title"])
        );
        if let Some(e) = t["error"].as_str() {
            println!("    error: {}", preview(e));
        }
    }
    if r["tasks_total"].as_u64() > Some(tasks.len() as u64) {
        println!("… the newest {} of {} tasks", tasks.len(), r["tasks_total"]);
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
        assert_eq!(count(&Value::from(1), "entry", "entries"), "1 entry");
        assert_eq!(count(&Value::from(2), "entry", "entries"), "2 entries");
    }
}
