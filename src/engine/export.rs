//! A pad rendered as markdown, for a person to read or an agent to paste.

use std::fmt::Write;

use crate::model::{Entry, Pad};

pub fn markdown(pad: &Pad, entries: &[Entry]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Pad `{}`\n", pad.name);
    let expiry = match (&pad.archived_at, &pad.expires_at) {
        (Some(at), _) => format!("archived {at}"),
        (None, Some(at)) => format!("expires {at} if idle"),
        (None, None) => "never expires".into(),
    };
    let _ = writeln!(
        out,
        "{} {} · last write {} · {expiry}\n",
        entries.len(),
        if entries.len() == 1 {
            "entry"
        } else {
            "entries"
        },
        pad.last_write_at
    );
    for e in entries {
        let _ = writeln!(
            out,
            "---\n\n### {} · {} · {} · `{}`",
            e.kind, e.author, e.created_at, e.id
        );
        let mut facts = Vec::new();
        if !e.tags.is_empty() {
            facts.push(
                e.tags
                    .iter()
                    .map(|t| format!("#{t}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        if let Some(s) = e.status {
            facts.push(format!("status: {s}"));
        }
        if e.pinned {
            facts.push("pinned".into());
        }
        if !e.depends_on.is_empty() {
            facts.push(format!("depends on: {}", e.depends_on.join(", ")));
        }
        if e.version > 1 {
            facts.push(format!("edited {}", e.updated_at));
        }
        if !facts.is_empty() {
            let _ = writeln!(out, "{}", facts.join(" · "));
        }
        let _ = writeln!(out, "\n{}\n", e.content.trim_end());
    }
    out
}
