//! `pad history`, `pad trash`, `pad restore`, `pad purge` and `pad report
//! --by/--since`: the command line of history, trash and undo.

use std::io::IsTerminal;

use clap::Args;
use serde_json::{json, Value};

use super::{duration_secs, Out, UsageError};
use crate::client::Client;

#[derive(Args, Debug)]
pub struct TrashArgs {
    #[arg(short, long)]
    pad: Option<String>,
    /// Only what this author (or token) deleted.
    #[arg(long)]
    by: Option<String>,
    #[arg(short = 'n', long, default_value_t = 50)]
    limit: u32,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// A deleted entry to bring back (or, with --version, a live one to take back).
    id: Option<String>,
    /// Take the entry back to this earlier version (see `pad history`).
    #[arg(long)]
    version: Option<i64>,
    /// Undo one change: everything a delete, clear or edit did (the number
    /// `pad rm`, `pad clear` and `pad trash` print).
    #[arg(long)]
    change: Option<i64>,
}

#[derive(Args, Debug)]
pub struct PurgeArgs {
    /// A deleted entry whose every kept version goes for good.
    id: Option<String>,
    /// Everything in this pad's trash.
    #[arg(short, long)]
    pad: Option<String>,
    /// The whole trash.
    #[arg(long)]
    all: bool,
    /// Do not ask for confirmation.
    #[arg(short, long)]
    yes: bool,
}

pub async fn history(id: String, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let r = c.call("entry.history", json!({ "id": id })).await?;
    out(&r, &|r| print_history(r));
    Ok(())
}

fn print_history(r: &Value) {
    let versions = r["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        println!(
            "{}: no earlier versions kept",
            r["id"].as_str().unwrap_or("")
        );
    }
    for (i, v) in versions.iter().enumerate() {
        let was = &v["entry"];
        let by = v["by"].as_str().unwrap_or("");
        let at = v["at"].as_str().unwrap_or("");
        let change = &v["change"];
        match v["action"].as_str().unwrap_or("") {
            "edit" => {
                // What replaced it: the next kept version, or the entry now.
                let next = versions
                    .get(i + 1)
                    .map(|n| &n["entry"])
                    .unwrap_or(&r["entry"]);
                println!(
                    "version {} → {}: edited by {by} at {at} (change {change})",
                    was["version"], next["version"]
                );
                print_diff(was, next);
            }
            action => {
                println!(
                    "version {}: deleted by {by} at {at} ({action}, change {change})",
                    was["version"]
                );
                if let Some(when) = v["restored_at"].as_str() {
                    println!(
                        "  restored by {} at {when}",
                        v["restored_by"].as_str().unwrap_or("")
                    );
                }
            }
        }
    }
    match r["entry"].is_null() {
        true => println!(
            "now: deleted (pad restore {} brings it back)",
            r["id"].as_str().unwrap_or("")
        ),
        false => println!("now: version {}", r["entry"]["version"]),
    }
}

/// The fields that changed between two versions, and the content as a
/// line diff.
fn print_diff(was: &Value, now: &Value) {
    if now.is_null() {
        return;
    }
    for field in [
        "kind",
        "status",
        "tags",
        "pinned",
        "assignee",
        "category",
        "remind_at",
    ] {
        if was[field] != now[field] {
            println!("  {field}: {} → {}", was[field], now[field]);
        }
    }
    let (a, b) = (
        was["content"].as_str().unwrap_or(""),
        now["content"].as_str().unwrap_or(""),
    );
    if a != b {
        for line in line_diff(a, b) {
            println!("  {line}");
        }
    }
}

/// A line diff of `a` to `b` (longest common subsequence): kept lines
/// indented, removed ones `-`, added ones `+`.
pub fn line_diff(a: &str, b: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(format!("  {}", a[i]));
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("+ {}", b[j]));
            j += 1;
        } else {
            out.push(format!("- {}", a[i]));
            i += 1;
        }
    }
    out
}

pub async fn trash(a: TrashArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let mut params = json!({"pad": a.pad, "by": a.by, "limit": a.limit});
    super::strip_nulls(&mut params);
    let r = c.call("entry.trash", params).await?;
    out(&r, &|r| {
        let items = r["entries"].as_array().cloned().unwrap_or_default();
        if items.is_empty() {
            println!("the trash is empty");
        }
        for v in &items {
            let e = &v["entry"];
            println!(
                "{}  {}  {} by {} at {} (change {})\n    {}",
                e["id"].as_str().unwrap_or(""),
                e["pad"].as_str().unwrap_or(""),
                v["action"].as_str().unwrap_or(""),
                v["by"].as_str().unwrap_or(""),
                v["at"].as_str().unwrap_or(""),
                v["change"],
                crate::storage::rules::preview(e["content"].as_str().unwrap_or(""))
            );
        }
        if !r["next_cursor"].is_null() {
            println!("… more: raise --limit (at most 1000), or narrow with --pad or --by");
        }
    });
    Ok(())
}

pub async fn restore(a: RestoreArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let mut params = json!({"id": a.id, "version": a.version, "change": a.change});
    super::strip_nulls(&mut params);
    let r = c.call("entry.restore", params).await?;
    out(&r, &|r| {
        let restored = r["restored"].as_array().cloned().unwrap_or_default();
        match restored.as_slice() {
            [one] => println!(
                "restored {} (version {}) in {}",
                one["id"].as_str().unwrap_or(""),
                one["version"],
                one["pad"].as_str().unwrap_or("")
            ),
            many => println!("restored {} entries", many.len()),
        }
        for s in r["skipped"].as_array().into_iter().flatten() {
            println!(
                "skipped {}: {}",
                s["id"].as_str().unwrap_or(""),
                s["reason"].as_str().unwrap_or("")
            );
        }
    });
    Ok(())
}

pub async fn purge(a: PurgeArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let what = match (&a.id, &a.pad, a.all) {
        (Some(id), None, false) => format!("every kept version of entry {id}"),
        (None, Some(pad), false) => format!("everything in pad '{pad}''s trash"),
        (None, None, true) => "the whole trash".to_owned(),
        _ => return Err(UsageError("give one of: an entry id, --pad PAD, or --all".into()).into()),
    };
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            return Err(UsageError(format!(
                "refusing to erase {what} for good without --yes (stdin is not a terminal to ask on)"
            ))
            .into());
        }
        eprint!("Erase {what} for good? It cannot be restored. [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("nothing purged");
            return Ok(());
        }
    }
    let mut params = json!({"id": a.id, "pad": a.pad, "all": a.all});
    super::strip_nulls(&mut params);
    let r = c.call("entry.purge", params).await?;
    out(&r, &|r| println!("purged {} kept versions", r["purged"]));
    Ok(())
}

/// `pad report --by/--since/--until`: what authors did in a time range.
pub async fn changes(
    by: Option<String>,
    pad: Option<String>,
    since: Option<String>,
    until: Option<String>,
    c: &mut Client,
    out: Out<'_>,
) -> anyhow::Result<()> {
    let when =
        |d: Option<String>| -> anyhow::Result<Option<String>> { d.map(|d| ago(&d)).transpose() };
    let mut params = json!({
        "by": by, "pad": pad, "since": when(since)?, "until": when(until)?, "limit": 1000
    });
    super::strip_nulls(&mut params);
    let r = c.call("entry.changes", params).await?;
    out(&r, &|r| {
        let changes = r["changes"].as_array().cloned().unwrap_or_default();
        if changes.is_empty() {
            println!("no changes in that range");
        }
        for ch in &changes {
            let undo = match &ch["change"] {
                Value::Null => String::new(),
                n => format!(" (change {n})"),
            };
            println!(
                "{}  {:<8} {:<8} {}  {}{undo}\n    {}",
                ch["at"].as_str().unwrap_or(""),
                ch["by"].as_str().unwrap_or(""),
                ch["what"].as_str().unwrap_or(""),
                ch["id"].as_str().unwrap_or(""),
                ch["pad"].as_str().unwrap_or(""),
                ch["preview"].as_str().unwrap_or("")
            );
        }
        if r["truncated"] == true {
            println!(
                "… only the newest {}: narrow with --since, --until or --pad",
                changes.len()
            );
        }
    });
    Ok(())
}

/// A time as given: an RFC 3339 time as is, or a duration (`2h`, `3d`)
/// meaning that long ago.
fn ago(s: &str) -> anyhow::Result<String> {
    if s.contains('T') {
        return Ok(s.to_owned());
    }
    let secs = duration_secs(s)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    Ok(crate::model::fmt_time(now - secs * 1000))
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn a_line_diff_marks_removed_and_added_lines() {
        assert_eq!(
            line_diff("a\nb\nc", "a\nx\nc\nd"),
            ["  a", "+ x", "- b", "  c", "+ d"]
        );
        assert_eq!(line_diff("same", "same"), ["  same"]);
    }
}
