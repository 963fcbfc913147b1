//! A pad rendered as markdown: working memory a person can read and an agent
//! can paste into its prompt.
//!
//! Entries are grouped by what they are — goal and plan, tasks, working notes,
//! results, insights, open questions — newest first within each section. With
//! a budget (in characters) the text never grows past it: pinned and
//! `important` entries go in first, then the rest from the newest down, and
//! the text ends by saying what was left out.

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
    (Kind::Question, "Open questions"),
];

pub struct Markdown {
    pub text: String,
    pub included: usize,
    pub left_out: usize,
}

pub fn markdown(pad: &Pad, entries: &[Entry], budget: Option<usize>) -> Markdown {
    let mut out = String::new();
    let _ = writeln!(out, "# Pad `{}`\n", pad.name);
    let expiry = match (&pad.archived_at, &pad.expires_at) {
        (Some(at), _) => format!("archived {at}"),
        (None, Some(at)) => format!("expires {at} if idle"),
        (None, None) => "never expires".into(),
    };
    let _ = writeln!(
        out,
        "{} {} · last write {} · {expiry}",
        entries.len(),
        if entries.len() == 1 {
            "entry"
        } else {
            "entries"
        },
        pad.last_write_at
    );
    let blocks: Vec<String> = entries.iter().map(block).collect();
    let section_of = |e: &Entry| SECTIONS.iter().position(|(k, _)| *k == e.kind).unwrap_or(2);
    let heading = |s: usize| format!("\n## {}\n", SECTIONS[s].1);

    // Which entries go in: everything, or what fits, keepers first.
    let mut keep = vec![budget.is_none(); entries.len()];
    if let Some(budget) = budget {
        let mut used = chars(&out) + NOTE_ROOM;
        let mut opened = [false; 6];
        let mut order: Vec<usize> = (0..entries.len()).collect();
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
            if !keep[i] || section_of(&entries[i]) != s {
                continue;
            }
            if first {
                out.push_str(&heading(s));
                first = false;
            }
            out.push_str(&blocks[i]);
        }
    }
    let included = keep.iter().filter(|k| **k).count();
    let left_out = entries.len() - included;
    if left_out > 0 {
        let mut by_kind: Vec<(Kind, usize)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if keep[i] {
                continue;
            }
            match by_kind.iter_mut().find(|(k, _)| *k == e.kind) {
                Some((_, n)) => *n += 1,
                None => by_kind.push((e.kind, 1)),
            }
        }
        let kinds = by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}{}", if *n == 1 { "" } else { "s" }))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(
            out,
            "\n---\n_Left out {left_out} {} ({kinds}; the oldest went first) to stay within {} characters; export without a budget for all of them._\n",
            if left_out == 1 { "entry" } else { "entries" },
            budget.unwrap_or_default()
        );
    }
    Markdown {
        text: out,
        included,
        left_out,
    }
}

/// Pinned and `important` entries are kept first.
fn is_keeper(e: &Entry) -> bool {
    e.pinned || e.has_tag("important")
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn block(e: &Entry) -> String {
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
    let _ = writeln!(out, "\n- {}", facts.join(" · "));
    for line in e.content.trim_end().lines() {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(r) = &e.resume {
        let _ = writeln!(out, "  _resume:_ {}", r.trim());
    }
    if let Some(err) = &e.error {
        let _ = writeln!(out, "  _last error:_ {}", err.trim());
    }
    out
}
