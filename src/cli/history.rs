//! `pad history`, `pad trash`, `pad restore`, `pad purge` and `pad report
//! --by/--since`: the command line of history, trash and undo.

use std::io::IsTerminal;

use clap::Args;

use super::args::since_arg;
use super::{Show, UsageError};
use crate::client::Client;
use crate::model::Entry;
use crate::protocol::method as m;
use crate::protocol::*;

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

pub async fn history(id: String, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::EntryHistory>(&HistoryParams { id }).await?;
    show.print(&r, print_history)
}

fn print_history(r: &HistoryResult) {
    if r.versions.is_empty() {
        println!("{}: no earlier versions kept", r.id);
    }
    for (i, v) in r.versions.iter().enumerate() {
        let (was, by, at, change) = (&v.entry, &v.by, &v.at, v.change);
        match v.action {
            Action::Edit => {
                // What replaced it: the next kept version, or the entry now.
                let next = r.versions.get(i + 1).map(|n| &n.entry).or(r.entry.as_ref());
                let now = next.map_or_else(|| "deleted".into(), |n| n.version.to_string());
                println!(
                    "version {} → {now}: edited by {by} at {at} (change {change})",
                    was.version
                );
                if let Some(next) = next {
                    print_diff(was, next);
                }
            }
            action => {
                println!(
                    "version {}: deleted by {by} at {at} ({}, change {change})",
                    was.version,
                    action.as_str()
                );
                if let Some(when) = &v.restored_at {
                    println!(
                        "  restored by {} at {when}",
                        v.restored_by.as_deref().unwrap_or("")
                    );
                }
            }
        }
    }
    match &r.entry {
        None => println!("now: deleted (pad restore {} brings it back)", r.id),
        Some(e) => println!("now: version {}", e.version),
    }
}

/// The fields a person changes, each shown as it was and is, then the
/// text line by line.
fn print_diff(was: &Entry, now: &Entry) {
    let (a, b) = (
        serde_json::to_value(was).unwrap_or_default(),
        serde_json::to_value(now).unwrap_or_default(),
    );
    for field in [
        "kind",
        "status",
        "tags",
        "pinned",
        "assignee",
        "category",
        "remind_at",
    ] {
        if a[field] != b[field] {
            println!("  {field}: {} → {}", a[field], b[field]);
        }
    }
    if was.content != now.content {
        for line in line_diff(&was.content, &now.content) {
            println!("  {line}");
        }
    }
}

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

pub async fn trash(a: TrashArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = TrashParams {
        pad: a.pad,
        by: a.by,
        limit: Some(a.limit),
        cursor: None,
    };
    let r = c.request::<m::EntryTrash>(&params).await?;
    show.print(&r, |r| {
        if r.entries.is_empty() {
            println!("the trash is empty");
        }
        for v in &r.entries {
            let e = &v.entry;
            println!(
                "{}  {}  {} by {} at {} (change {})\n    {}",
                e.id,
                e.pad,
                v.action.as_str(),
                v.by,
                v.at,
                v.change,
                crate::storage::rules::preview(&e.content)
            );
        }
        if r.next_cursor.is_some() {
            println!("… more: raise --limit (at most 1000), or narrow with --pad or --by");
        }
    })
}

pub async fn restore(a: RestoreArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = RestoreParams {
        id: a.id,
        version: a.version,
        change: a.change,
    };
    let r = c.request::<m::EntryRestore>(&params).await?;
    show.print(&r, |r| {
        match r.restored.as_slice() {
            [one] => println!(
                "restored {} (version {}) in {}",
                one.id, one.version, one.pad
            ),
            many => println!("restored {} entries", many.len()),
        }
        for s in &r.skipped {
            println!("skipped {}: {}", s.id, s.reason);
        }
    })
}

pub async fn purge(a: PurgeArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
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
    let params = PurgeParams {
        id: a.id,
        pad: a.pad,
        all: a.all,
    };
    let r = c.request::<m::EntryPurge>(&params).await?;
    show.print(&r, |r| println!("purged {} kept versions", r.purged))
}

pub async fn changes(
    by: Option<String>,
    pad: Option<String>,
    since: Option<String>,
    until: Option<String>,
    c: &mut Client,
    show: Show,
) -> anyhow::Result<()> {
    let params = ChangesParams {
        by,
        pad,
        since: since.as_deref().map(since_arg).transpose()?,
        until: until.as_deref().map(since_arg).transpose()?,
        limit: Some(1000),
        include_created: true,
    };
    let r = c.request::<m::EntryChanges>(&params).await?;
    show.print(&r, |r| {
        if r.changes.is_empty() {
            println!("no changes in that range");
        }
        for ch in &r.changes {
            let undo = ch
                .change
                .map(|n| format!(" (change {n})"))
                .unwrap_or_default();
            println!(
                "{}  {:<8} {:<8} {}  {}{undo}\n    {}",
                ch.at, ch.by, ch.what, ch.id, ch.pad, ch.preview
            );
        }
        if r.truncated {
            println!(
                "… only the newest {}: narrow with --since, --until or --pad",
                r.changes.len()
            );
        }
    })
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
