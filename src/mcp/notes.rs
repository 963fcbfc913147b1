//! The note tools' arguments and their work (`add_note`, `search_notes`,
//! `read_pad` …), before `PadTools` adds the inbox line. Each argument
//! struct is also the tool's input schema (schemars), rewritten for strict
//! function-calling converters by `schema::strict`.

use crate::model::{count, Kind, Status};
use crate::protocol::method as m;
use crate::protocol::{
    AddParams, DeleteParams, ExportFormat, ExportParams, ListParams, SearchMode, SearchParams,
    TagsParams, UpdateParams,
};
use rmcp::model::CallToolResult;
use rmcp::schemars;
use serde::Deserialize;
use serde_json::Value;

use super::text::{fail, line, not_embedded, ok, word};
use super::{Link, PadTools};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddNote {
    #[schemars(
        description = "The note: up to 4,000 characters. One idea, finding, plan or result per note."
    )]
    pub content: String,
    #[schemars(
        description = "Up to 10 tags, each 1-32 of a-z 0-9 _ -. Add `needs_eyes` to ask the person (or another agent) to look."
    )]
    #[serde(default)]
    pub tags: Vec<String>,
    #[schemars(
        description = "note (default), plan, task, result, insight or question.",
        extend("enum" = Kind::ALL)
    )]
    pub kind: Option<String>,
    #[schemars(description = "The pad to write to; defaults to this server's pad.")]
    pub pad: Option<String>,
    #[schemars(
        description = "The id of a note this one answers; its author sees the reply in their inbox."
    )]
    pub reply_to: Option<String>,
    #[schemars(
        description = "For tasks: ids of the tasks this one waits on; claim_task hands it out only after they are done."
    )]
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[schemars(
        description = "Agents this note is for, by name, e.g. [\"agent-zero\"]: it reaches their inbox line, and an agent the person registered with an A2A endpoint is sent it at once; what it answers comes back as replies to this note."
    )]
    #[serde(default)]
    pub to: Vec<String>,
    #[schemars(
        description = "The id of an older note this one replaces (a fact that changed: the database moved, the plan changed). The older note is kept, and searches and lists show this one instead unless asked for include_superseded."
    )]
    pub supersedes: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ScratchNote {
    #[schemars(description = "The note: up to 4,000 characters.")]
    pub content: String,
    #[schemars(description = "The pad to write to; defaults to this server's pad.")]
    pub pad: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchNotes {
    #[schemars(
        description = "What to look for, in words or meaning: 'docker login failures' also finds 'cannot authenticate to the registry'."
    )]
    pub query: String,
    #[schemars(description = "Only notes carrying all of these tags.")]
    #[serde(default)]
    pub tags: Vec<String>,
    #[schemars(
        description = "The pad to search; defaults to this server's pad. Use \"*\" for every pad."
    )]
    pub pad: Option<String>,
    #[schemars(
        description = "hybrid (default: words and meaning), text, or semantic.",
        extend("enum" = SearchMode::ALL)
    )]
    pub mode: Option<String>,
    #[schemars(
        description = "How many hits, 1-200 (default 10).",
        range(min = 1, max = 200)
    )]
    pub limit: Option<u32>,
    #[schemars(
        description = "Also show notes a newer note supersedes (marked SUPERSEDED); default false: current notes only."
    )]
    #[serde(default)]
    pub include_superseded: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListNotes {
    #[schemars(description = "The pad to list.")]
    pub pad: String,
    #[schemars(description = "Only notes carrying all of these tags.")]
    #[serde(default)]
    pub tags: Vec<String>,
    #[schemars(
        description = "Only notes of this kind: note, plan, task, result, insight, question.",
        extend("enum" = Kind::ALL)
    )]
    pub kind: Option<String>,
    #[schemars(
        description = "How many, newest first, 1-1000 (default 20).",
        range(min = 1, max = 1000)
    )]
    pub limit: Option<u32>,
    #[schemars(
        description = "Also show notes a newer note supersedes (marked SUPERSEDED); default false: current notes only."
    )]
    #[serde(default)]
    pub include_superseded: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UpdateNote {
    #[schemars(
        description = "The note's id (or a unique prefix of it), as add_note or search_notes gave it."
    )]
    pub id: String,
    #[schemars(description = "New content, replacing the old.")]
    pub content: Option<String>,
    #[schemars(description = "New tags, replacing the old ones ([] removes all).")]
    pub tags: Option<Vec<String>>,
    #[schemars(
        description = "For tasks: todo, doing, done, failed or blocked.",
        extend("enum" = Status::ALL)
    )]
    pub status: Option<String>,
    #[schemars(
        description = "The id of an older note this one replaces (a fact that changed: the database moved, the plan changed). The older note is kept, and searches and lists show this one instead unless asked for include_superseded."
    )]
    pub supersedes: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DeleteNote {
    #[schemars(description = "The note's id (or a unique prefix of it).")]
    pub id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct PadOnly {
    #[schemars(description = "The pad.")]
    pub pad: String,
}

/// `read_pad`'s budget when the caller names none: about 3,000 tokens.
pub const READ_PAD_CHARS: u64 = 12_000;
/// The most `read_pad` returns at once (about 50,000 tokens).
pub const READ_PAD_MAX_CHARS: u64 = 200_000;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadPad {
    #[schemars(description = "The pad.")]
    pub pad: String,
    #[schemars(
        description = "The most characters to return: 400-200000 (default 12000, about 3,000 tokens). Raise it only when the closing line says notes were left out and you need them."
    )]
    pub max_chars: Option<u64>,
}

/// The tools' work, before the inbox line is added.
impl PadTools {
    pub(super) async fn add_note_body(&self, link: &mut Link<'_>, p: AddNote) -> CallToolResult {
        let otherwise = "for a plain note";
        let kind = match word("add_note", "kind", p.kind, Kind::ALL, otherwise) {
            Ok(k) => k,
            Err(e) => return e,
        };
        let add = AddParams {
            pad: self.pad(p.pad),
            content: p.content,
            tags: p.tags,
            kind,
            depends_on: p.depends_on,
            reply_to: p.reply_to,
            to: p.to,
            supersedes: p.supersedes,
            ..AddParams::default()
        };
        self.saved(link, add).await
    }

    pub(super) async fn scratch_note_body(
        &self,
        link: &mut Link<'_>,
        p: ScratchNote,
    ) -> CallToolResult {
        let add = AddParams {
            pad: self.pad(p.pad),
            content: p.content,
            ..AddParams::default()
        };
        self.saved(link, add).await
    }

    pub(super) async fn search_notes_body(
        &self,
        link: &mut Link<'_>,
        p: SearchNotes,
    ) -> CallToolResult {
        let query = p.query.clone();
        let mode = match word(
            "search_notes",
            "mode",
            p.mode,
            SearchMode::ALL,
            "for hybrid",
        ) {
            Ok(m) => m.unwrap_or_default(),
            Err(e) => return e,
        };
        let search = SearchParams {
            query: p.query,
            mode,
            pad: match p.pad {
                Some(all) if all == "*" => None,
                other => Some(self.pad(other)),
            },
            tags: p.tags,
            kind: None,
            author: None,
            category: None,
            min_confidence: None,
            limit: Some(p.limit.unwrap_or(10)),
            include_superseded: p.include_superseded,
            explain: false,
        };
        match link.send::<m::Search>(search).await {
            Ok(r) => {
                let hits = r["hits"].as_array().cloned().unwrap_or_default();
                if hits.is_empty() {
                    return ok(format!(
                        "No notes match '{query}'. Try other words, drop a tag filter, or search every pad with pad \"*\".{}",
                        not_embedded(&r)
                    ));
                }
                let mut text = format!(
                    "{} ({} search):",
                    count(hits.len() as i64, "hit", "hits"),
                    r["mode"].as_str().unwrap_or("")
                );
                for h in &hits {
                    let by: Vec<&str> = h["found_by"]
                        .as_array()
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    text.push_str(&format!(
                        "\n\n{} [found by {}]",
                        line(&h["entry"]),
                        by.join("+")
                    ));
                }
                text.push_str(&not_embedded(&r));
                ok(text)
            }
            Err(e) => fail(e),
        }
    }

    pub(super) async fn list_notes_body(
        &self,
        link: &mut Link<'_>,
        p: ListNotes,
    ) -> CallToolResult {
        let pad = p.pad;
        let kind = match word("list_notes", "kind", p.kind, Kind::ALL, "for every kind") {
            Ok(k) => k,
            Err(e) => return e,
        };
        let list = ListParams {
            pad: Some(pad.clone()),
            tags: p.tags,
            kind,
            limit: Some(p.limit.unwrap_or(20)),
            include_superseded: p.include_superseded,
            ..ListParams::default()
        };
        match link.send::<m::EntryList>(list).await {
            Ok(r) => {
                let entries = r["entries"].as_array().cloned().unwrap_or_default();
                if entries.is_empty() {
                    return ok(format!("Pad '{pad}' has no matching notes."));
                }
                let more = if r["next_cursor"].is_null() {
                    ""
                } else {
                    " (more are older; raise limit to see them)"
                };
                let mut text = format!(
                    "{} in '{pad}', newest first{more}:",
                    count(entries.len() as i64, "note", "notes")
                );
                for e in &entries {
                    text.push_str(&format!("\n\n{}", line(e)));
                }
                ok(text)
            }
            Err(e) => fail(e),
        }
    }

    pub(super) async fn update_note_body(
        &self,
        link: &mut Link<'_>,
        p: UpdateNote,
    ) -> CallToolResult {
        let otherwise = "to keep the note's";
        let status: Option<Status> =
            match word("update_note", "status", p.status, Status::ALL, otherwise) {
                Ok(s) => s,
                Err(e) => return e,
            };
        if p.content.is_none() && p.tags.is_none() && status.is_none() && p.supersedes.is_none() {
            return fail(
                "Nothing to change: give content, tags, status or supersedes along with the id."
                    .into(),
            );
        }
        let update = UpdateParams {
            id: p.id,
            content: p.content,
            tags: p.tags,
            status: status.map(Some),
            supersedes: p.supersedes.map(Some),
            ..UpdateParams::default()
        };
        match link.send::<m::EntryUpdate>(update).await {
            Ok(r) => ok(format!(
                "Updated (version {}):\n{}",
                r["entry"]["version"],
                line(&r["entry"])
            )),
            Err(e) => fail(e),
        }
    }

    pub(super) async fn delete_note_body(
        &self,
        link: &mut Link<'_>,
        p: DeleteNote,
    ) -> CallToolResult {
        let delete = DeleteParams {
            id: p.id,
            if_version: None,
        };
        match link.send::<m::EntryDelete>(delete).await {
            Ok(r) => ok(format!(
                "Deleted {} (moved to the trash; the person can restore it).",
                r["id"].as_str().unwrap_or("")
            )),
            Err(e) => fail(e),
        }
    }

    pub(super) async fn list_tags_body(&self, link: &mut Link<'_>, p: PadOnly) -> CallToolResult {
        let pad = p.pad;
        match link
            .send::<m::TagsList>(TagsParams {
                pad: Some(pad.clone()),
            })
            .await
        {
            Ok(r) => {
                let tags = r["tags"].as_array().cloned().unwrap_or_default();
                if tags.is_empty() {
                    return ok(format!("No tags in pad '{pad}' yet."));
                }
                let list: Vec<String> = tags
                    .iter()
                    .map(|t| format!("#{} ({})", t["tag"].as_str().unwrap_or(""), t["count"]))
                    .collect();
                ok(format!(
                    "{} in '{pad}': {}",
                    count(tags.len() as i64, "tag", "tags"),
                    list.join(", ")
                ))
            }
            Err(e) => fail(e),
        }
    }

    pub(super) async fn read_pad_body(&self, link: &mut Link<'_>, p: ReadPad) -> CallToolResult {
        let budget = p.max_chars.unwrap_or(READ_PAD_CHARS);
        if !(crate::engine::export::MIN_BUDGET as u64..=READ_PAD_MAX_CHARS).contains(&budget) {
            return fail(format!(
                "read_pad: max_chars is {budget}; give {} to {READ_PAD_MAX_CHARS}, or leave it out for {READ_PAD_CHARS} (about 3,000 tokens).",
                crate::engine::export::MIN_BUDGET
            ));
        }
        let export = ExportParams {
            name: p.pad,
            format: ExportFormat::Markdown,
            budget: Some(budget as usize),
            include_superseded: false,
        };
        match link.send::<m::PadExport>(export).await {
            Ok(r) => {
                let mut text = r["text"].as_str().unwrap_or("").to_string();
                let left_out = r["left_out"].as_u64().unwrap_or(0);
                if left_out > 0 {
                    text.push_str(&format!(
                        "\n({} left out to stay within {budget} characters. read_pad with a larger max_chars (up to {READ_PAD_MAX_CHARS}) shows more; list_notes and search_notes find particular ones.)",
                        count(left_out as i64, "note", "notes")
                    ));
                }
                ok(text)
            }
            Err(e) => fail(e),
        }
    }
}
