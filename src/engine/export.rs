//! A pad rendered as markdown: working memory a person can read and an agent
//! can paste into its prompt.
//!
//! Entries are grouped by what they are — goal and plan, tasks, working notes,
//! results, insights, open questions — newest first within each section. With
//! a budget (in characters) the text never grows past it: pinned and
//! `important` entries and open questions go in first, then the rest from
//! the newest down, and
//! the text ends by saying what was left out. Replies sit under the entry
//! they answer (at any depth), in the order written, and go in or out with
//! it; a reply to an entry on another pad stands on its own and says so.

use std::fmt::Write;

use crate::model::{Entry, Kind, Pad};

/// The smallest budget that leaves room for the header and the closing note.
pub const MIN_BUDGET: usize = 400;
/// Characters kept free for the note saying what a budget left out.
const NOTE_ROOM: usize = 260;

const SECTIONS: &[(Kind, &str)] = &[
    (Kind::Plan, "Goal and plan"),
    (Kind::Task, "Tasks"),
    (Kind::Note, "Working notes"),
    (Kind::Result, "Results"),
    (Kind::Insight, "Insights"),
    (Kind::Question, "Questions"),
];

pub struct Markdown {
    pub text: String,
    pub included: usize,
    pub left_out: usize,
}

/// `unloaded`: entries of the pad not in `entries` (too many to hold at
/// once); they count as left out.
pub fn markdown(pad: &Pad, entries: &[Entry], budget: Option<usize>, unloaded: usize) -> Markdown {
    let mut out = header(pad, entries.len() + unloaded);
    // Replies whose parent is on this pad are drawn inside the parent's block.
    let index: std::collections::HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let parent_of = |e: &Entry| e.reply_to.as_deref().and_then(|p| index.get(p).copied());
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    for (i, e) in entries.iter().enumerate() {
        if let Some(p) = parent_of(e) {
            children[p].push(i);
        }
    }
    let mut blocks: Vec<String> = Vec::with_capacity(entries.len());
    let mut sizes = vec![1usize; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        let mut text = block(e, "");
        sizes[i] = 1 + replies(entries, &children, i, 1, &mut text);
        blocks.push(text);
    }
    let top: Vec<bool> = entries.iter().map(|e| parent_of(e).is_none()).collect();
    let section_of = |e: &Entry| SECTIONS.iter().position(|(k, _)| *k == e.kind).unwrap_or(2);
    let heading = |s: usize| format!("\n## {}\n", SECTIONS[s].1);

    // Which entries go in: everything, or what fits, keepers first.
    let mut keep = vec![budget.is_none(); entries.len()];
    if let Some(budget) = budget {
        let mut used = chars(&out) + NOTE_ROOM;
        let mut opened = [false; 6];
        let mut order: Vec<usize> = (0..entries.len()).filter(|&i| top[i]).collect();
        // Keepers first, then newest first (entries come oldest first).
        order.sort_by_key(|&i| (!is_keeper(&entries[i]), std::cmp::Reverse(i)));
        for i in order {
            let s = section_of(&entries[i]);
            let cost = chars(&blocks[i]) + if opened[s] { 0 } else { chars(&heading(s)) };
            if used + cost <= budget {
                used += cost;
                opened[s] = true;
                keep[i] = true;
            }
        }
    }
    for (s, _) in SECTIONS.iter().enumerate() {
        let mut first = true;
        // Newest first within a section.
        for i in (0..entries.len()).rev() {
            if !keep[i] || !top[i] || section_of(&entries[i]) != s {
                continue;
            }
            if first {
                out.push_str(&heading(s));
                first = false;
            }
            out.push_str(&blocks[i]);
        }
    }
    let included: usize = (0..entries.len())
        .filter(|&i| keep[i] && top[i])
        .map(|i| sizes[i])
        .sum();
    let left_out = entries.len() - included + unloaded;
    if left_out > 0 {
        let dropped = (0..entries.len()).filter(|&i| !keep[i] && top[i]);
        let kinds = dropped.map(|i| entries[i].kind);
        out.push_str(&left_out_note(
            left_out,
            kinds,
            unloaded,
            budget.unwrap_or_default(),
        ));
    }
    Markdown {
        text: out,
        included,
        left_out,
    }
}

/// The title and the pad's line: how many entries, its last write, when it
/// expires.
fn header(pad: &Pad, entries: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Pad `{}`\n", pad.name);
    let expiry = match (&pad.archived_at, &pad.expires_at) {
        (Some(at), _) => format!("archived {at}"),
        (None, Some(at)) => format!("expires {at} if idle"),
        (None, None) => "never expires".into(),
    };
    let _ = writeln!(
        out,
        "{entries} {} · last write {} · {expiry}",
        if entries == 1 { "entry" } else { "entries" },
        pad.last_write_at
    );
    out
}

/// What a budget left out, by kind (`unloaded`: older entries never read).
fn left_out_note(
    left_out: usize,
    kinds: impl Iterator<Item = Kind>,
    unloaded: usize,
    budget: usize,
) -> String {
    let mut by_kind: Vec<(Kind, usize)> = Vec::new();
    for kind in kinds {
        match by_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => by_kind.push((kind, 1)),
        }
    }
    let mut said = by_kind
        .iter()
        .map(|(k, n)| format!("{n} {k}{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>();
    if unloaded > 0 {
        said.push(format!("{unloaded} older"));
    }
    format!(
        "\n---\n_Left out {left_out} {} ({}; the oldest went first) to stay within {budget} characters; a larger budget shows more._\n",
        if left_out == 1 { "entry" } else { "entries" },
        said.join(", ")
    )
}

/// Pinned and `important` entries, and questions nobody answered yet, are
/// kept first.
fn is_keeper(e: &Entry) -> bool {
    e.pinned || e.has_tag("important") || (e.kind == Kind::Question && e.answer.is_none())
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Appends the replies under `i` to `out`, indented by depth; returns how
/// many entries that was.
fn replies(
    entries: &[Entry],
    children: &[Vec<usize>],
    i: usize,
    depth: usize,
    out: &mut String,
) -> usize {
    let mut n = 0;
    for &c in &children[i] {
        out.push_str(&block(&entries[c], &"  ".repeat(depth)));
        n += 1 + replies(entries, children, c, depth + 1, out);
    }
    n
}

/// One entry as a list item, indented by `indent` (replies nest).
fn block(e: &Entry, indent: &str) -> String {
    let mut out = String::new();
    let mut facts = vec![
        e.author.clone(),
        e.created_at.clone(),
        format!("`{}`", e.id),
    ];
    if let Some(s) = e.status {
        let holder = match (&e.assignee, s) {
            (Some(a), crate::model::Status::Doing | crate::model::Status::Done) => {
                format!(" ({a})")
            }
            _ => String::new(),
        };
        facts.insert(0, format!("**{s}**{holder}"));
    }
    if let Some(c) = e.category {
        let confidence = e
            .confidence
            .map(|c| format!(", confidence {c:.2}"))
            .unwrap_or_default();
        facts.insert(0, format!("**{c}**{confidence}"));
    }
    if e.pinned {
        facts.push("pinned".into());
    }
    if !e.tags.is_empty() {
        facts.push(
            e.tags
                .iter()
                .map(|t| format!("#{t}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    if !e.depends_on.is_empty() {
        facts.push(format!("after {}", e.depends_on.join(", ")));
    }
    if e.version > 1 {
        facts.push(format!("edited {}", e.updated_at));
    }
    if e.kind == Kind::Question {
        facts.insert(
            0,
            match &e.answer {
                Some(a) => format!("**answered** (`{a}`)"),
                None => "**open**".into(),
            },
        );
    }
    if !e.choices.is_empty() {
        facts.push(format!("choices: {}", e.choices.join(" / ")));
    }
    let marker = if indent.is_empty() { "-" } else { "- ↳" };
    if let (Some(parent), true) = (&e.reply_to, indent.is_empty()) {
        facts.push(format!("reply to `{parent}`"));
    }
    if let Some(older) = &e.supersedes {
        facts.push(format!("supersedes `{older}` (older, kept)"));
    }
    if let Some(newer) = &e.superseded_by {
        facts.push(format!("**superseded** by `{newer}`"));
    }
    let _ = writeln!(out, "\n{indent}{marker} {}", facts.join(" · "));
    for line in e.content.trim_end().lines() {
        let _ = writeln!(out, "{indent}  {line}");
    }
    if let Some(r) = &e.resume {
        let _ = writeln!(out, "{indent}  _resume:_ {}", r.trim());
    }
    if let Some(err) = &e.error {
        let _ = writeln!(out, "{indent}  _last error:_ {}", err.trim());
    }
    out
}
