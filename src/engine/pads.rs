//! Pads: listing, configuring, touching, clearing, exporting; and tags.

use super::{export, Engine};
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::guard::Guard;
use crate::model::{self, Entry, Pad};
use crate::protocol::*;

impl Engine {
    pub async fn tags(&self, p: TagsParams, guard: &Guard) -> Result<TagsResult> {
        let filter = guard.pad_scope(p.pad.as_deref())?;
        let tags = {
            let _turn = self.turn().await?;
            self.db().tags(&filter).await?
        };
        Ok(TagsResult {
            tags: tags
                .into_iter()
                .map(|(tag, count)| TagCount { tag, count })
                .collect(),
        })
    }

    pub async fn pads(&self, p: PadListParams, guard: &Guard) -> Result<Vec<Pad>> {
        let mut pads = self.db().pads(p.include_archived).await?;
        pads.retain(|pad| guard.covers(&pad.name));
        Ok(pads)
    }

    pub async fn configure(&self, p: ConfigureParams) -> Result<Pad> {
        let name = model::pad_name("name", &p.name)?;
        // What waits for the person (questions, notes addressed to them)
        // never expires and is never rolled out of the inbox.
        if name == model::INBOX {
            let field = match (p.ttl_seconds, p.max_entries) {
                (Some(Some(_)), _) => Some("ttl_seconds"),
                (_, Some(Some(_))) => Some("max_entries"),
                _ => None,
            };
            if let Some(field) = field {
                return Err(Error::invalid(
                    field,
                    format!("the inbox never expires and keeps every note: it holds what waits for the person (questions, notes addressed to them). Leave {field} out (or null), or set it on another pad."),
                ));
            }
        }
        if let Some(Some(ttl)) = p.ttl_seconds {
            if !(1..=model::MAX_FUTURE_SECONDS).contains(&ttl) {
                return Err(Error::over_limit(
                    "ttl_seconds",
                    format!("ttl_seconds is {ttl}; give 1 to {} seconds (7200 = 2 hours; the most is ten years), or null to never expire.", model::MAX_FUTURE_SECONDS),
                    model::MAX_FUTURE_SECONDS,
                    ttl,
                ));
            }
        }
        if let Some(Some(max)) = p.max_entries {
            if !(1..=model::MAX_WINDOW_ENTRIES).contains(&max) {
                return Err(Error::over_limit(
                    "max_entries",
                    format!(
                        "max_entries is {max}; give 1 to {}, or null for no limit.",
                        model::MAX_WINDOW_ENTRIES
                    ),
                    model::MAX_WINDOW_ENTRIES,
                    max,
                ));
            }
        }
        let now = self.now();
        self.db()
            .configure(&name, p.ttl_seconds, p.max_entries, now)
            .await
    }

    pub async fn touch(&self, p: PadNameParams) -> Result<Pad> {
        let name = model::pad_name("name", &p.name)?;
        let now = self.now();
        self.db().touch(&name, now).await
    }

    /// Moves a pad's entries to the trash; returns how many, and the change.
    pub async fn clear(&self, p: ClearParams, by: &str) -> Result<(usize, i64)> {
        let name = model::pad_name("name", &p.name)?;
        let now = self.now();
        let (authors, change) = {
            let (name, by) = (name.clone(), by.to_owned());
            self.db().clear(&name, p.keep_pinned, now, &by).await?
        };
        let count = authors.values().sum();
        self.0.bus.publish(EventType::Deleted, &name, None);
        if count > 0 && change > 0 {
            self.0.bus.trashed(
                &name,
                crate::events::Trashed {
                    change,
                    by: by.to_owned(),
                    action: crate::protocol::Action::Clear,
                    count,
                    authors,
                },
            );
        }
        Ok((count, change))
    }

    pub async fn export(&self, p: ExportParams, guard: &Guard) -> Result<ExportResult> {
        let name = model::pad_name("name", &p.name)?;
        match (p.format, p.budget) {
            (ExportFormat::Json, Some(_)) => {
                return Err(Error::invalid(
                    "budget",
                    "a budget applies to markdown exports only; drop 'budget' or use format 'markdown'.",
                ))
            }
            (_, Some(b)) if !(export::MIN_BUDGET..=model::MAX_BUDGET).contains(&b) => {
                return Err(Error::over_limit(
                    "budget",
                    format!(
                        "budget is {b} characters; give {} to {} (at least room for the header and the note on what was left out), or leave it out for the whole pad.",
                        export::MIN_BUDGET,
                        model::MAX_BUDGET
                    ),
                    export::MIN_BUDGET,
                    b,
                ))
            }
            _ => {}
        }
        let max_bytes = self.0.config.max_export_bytes;
        // One turn for loading and rendering both: exports at once would
        // otherwise each hold a whole pad and its text.
        let _turn = self.turn().await?;
        let (pad, (mut entries, unloaded, bytes)) = {
            let name = name.clone();
            self.db().pad_with_entries(&name, max_bytes).await?
        };
        if guard.grant().is_some() {
            // Sealed as every answer to a token is (`Guard::seal`): its
            // markdown names no note it may not read.
            let v = crate::seal::to_value(guard, self.db(), &entries).await?;
            entries = serde_json::from_value(v).map_err(|e| Error::Internal(e.to_string()))?;
        }
        if !p.include_superseded {
            entries.retain(|e| e.superseded_by.is_none());
        }
        let render = move || {
            if unloaded > 0 && p.budget.is_none() {
                return Err(Error::TooLarge {
                    field: Some("name".into()),
                    message: format!(
                        "pad '{name}' holds {} MiB of text, more than one export may answer ({} MiB). Give a 'budget' (markdown: pinned and important entries first, then the newest that fit), or page through it with entry.list (limit 1000, next_cursor).",
                        bytes >> 20,
                        max_bytes >> 20
                    ),
                    limit: max_bytes as u64,
                    got: bytes as u64,
                });
            }
            Ok(match p.format {
                ExportFormat::Json => ExportResult {
                    // Straight from the entries, not through a `Value` tree
                    // (which costs several times the text).
                    text: serde_json::to_string_pretty(&JsonExport {
                        pad: &pad,
                        entries: &entries,
                    })
                    .expect("json serializes"),
                    entries: entries.len(),
                    left_out: 0,
                },
                ExportFormat::Markdown => {
                    let md = export::markdown(&pad, &entries, p.budget, unloaded);
                    ExportResult {
                        text: md.text,
                        entries: md.included,
                        left_out: md.left_out,
                    }
                }
            })
        };
        // Rendering a large pad is work too: off the runtime's threads.
        tokio::task::spawn_blocking(render)
            .await
            .map_err(|e| Error::Internal(format!("export failed: {e}")))?
    }
}

#[derive(serde::Serialize)]
struct JsonExport<'a> {
    pad: &'a crate::model::Pad,
    entries: &'a [Entry],
}
