//! History, trash and undo: `entry.history`, `entry.trash`,
//! `entry.restore`, `entry.purge` and `entry.changes` (docs/protocol.md).
//! The stores keep the versions (`store::history`, `pg::history`); here
//! are the rules: what a token may see and undo, and reverting an edit.

use super::{limit, Engine};
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::guard::Guard;
use crate::id;
use crate::model::{self, Entry};
use crate::protocol::{
    Action, ChangesParams, ChangesResult, DeleteParams, HistoryParams, HistoryResult, PurgeParams,
    PurgeResult, RestoreParams, RestoreResult, Skipped, TrashParams, TrashResult, UpdateParams,
    Version,
};
use crate::storage::{HistoryFilter, Purge, Restore};

const DEFAULT_TRASH_LIMIT: u32 = 50;
const DEFAULT_CHANGES_LIMIT: u32 = 100;
const MAX_HISTORY_LIMIT: u32 = 1000;

impl Engine {
    /// Moves an entry to the trash; returns it and the change that did.
    pub async fn delete(&self, p: DeleteParams, by: &str) -> Result<(Entry, i64)> {
        let now = self.now();
        let (gone, change) = self.db().delete(&p.id, p.if_version, now, by).await?;
        self.0
            .bus
            .publish(EventType::Deleted, &gone.pad, Some(gone.clone()));
        if change > 0 {
            let trashed = crate::events::Trashed {
                change,
                by: by.to_owned(),
                action: crate::protocol::Action::Delete,
                count: 1,
                authors: [(gone.author.clone(), 1)].into(),
            };
            self.0.bus.trashed(&gone.pad, trashed);
        }
        self.superseded_changed(vec![gone.supersedes.clone()]).await;
        Ok((gone, change))
    }

    /// The seq and pad of an entry, live or deleted, whose id starts with
    /// `id`, among the pads the caller may read.
    pub async fn kept_id(&self, id: &str, guard: &Guard) -> Result<(i64, String)> {
        let visible = |pad: &str| guard.covers(pad);
        match self.db().kept_matches(id, &visible).await?.as_slice() {
            [] => Err(Error::NotFound {
                field: "id",
                message: format!(
                    "no entry with id '{}', live or kept in the history; entry.trash lists deleted entries (kept {} days).",
                    id.trim().to_lowercase(),
                    self.0.config.history.as_secs() / 86400
                ),
            }),
            [one] => Ok(one.clone()),
            _ => Err(crate::storage::rules::ambiguous("id", id)),
        }
    }

    pub async fn history(&self, p: HistoryParams, guard: &Guard) -> Result<HistoryResult> {
        let (seq, _) = self.kept_id(&p.id, guard).await?;
        let (entry, versions) = self.db().history(seq).await?;
        Ok(HistoryResult {
            id: id::encode(seq),
            entry,
            versions,
        })
    }

    pub async fn trash(&self, p: TrashParams, guard: &Guard) -> Result<TrashResult> {
        let limit = limit("limit", p.limit, DEFAULT_TRASH_LIMIT, MAX_HISTORY_LIMIT)?;
        let cursor = super::cursor(p.cursor.as_deref())?;
        let filter = self.history_filter(p.pad.as_deref(), p.by.as_deref(), guard)?;
        let (entries, next) = self.db().trash(&filter, limit, cursor).await?;
        Ok(TrashResult {
            entries,
            next_cursor: next.map(|n| n.to_string()),
        })
    }

    /// Brings back deleted entries, or takes entries back to an earlier
    /// version (as a new version, so that too can be undone).
    pub async fn restore(
        &self,
        p: RestoreParams,
        by: &str,
        guard: &Guard,
    ) -> Result<RestoreResult> {
        let writable = |pad: &str| guard.may_write(pad).is_ok();
        let now = self.now();
        let out = match (p.id, p.version, p.change) {
            (Some(id), version, None) => {
                let (seq, pad) = self.kept_id(&id, guard).await?;
                guard.may_write(&pad)?;
                match version {
                    None => {
                        let (live, versions) = self.db().history(seq).await?;
                        if let Some(live) = live {
                            return Err(Error::invalid(
                                "id",
                                format!(
                                    "entry {} is not deleted; to take it back to an earlier version give version too (entry.history lists them, the current one is {}).",
                                    live.id, live.version
                                ),
                            ));
                        }
                        if let Some(gone) = versions.iter().rev().find(|v| v.action != Action::Edit) {
                            self.may_bring_back(&gone.entry, None, guard).await?;
                        }
                        self.db().restore(Restore::Seq(seq), by, now, &writable).await?
                    }
                    Some(v) => self.revert_to(seq, v, by, guard).await?,
                }
            }
            (None, None, Some(change)) => {
                let versions = self.db().change(change).await?;
                let visible: Vec<Version> = versions
                    .into_iter()
                    .filter(|v| guard.covers(&v.entry.pad))
                    .collect();
                if visible.is_empty() {
                    return Err(Error::NotFound {
                        field: "change",
                        message: format!(
                            "no change {change} is kept (or it touched no pad you may read); entry.changes and entry.trash list the changes you can undo."
                        ),
                    });
                }
                let shown: Vec<String> = visible.iter().map(|v| v.entry.id.clone()).collect();
                let (restored, mut skipped) = if visible.iter().any(|v| v.action != Action::Edit)
                {
                    for v in visible.iter().filter(|v| v.action != Action::Edit) {
                        self.may_bring_back(&v.entry, None, guard).await?;
                    }
                    self.db().restore(Restore::Change(change), by, now, &writable).await?
                } else {
                    self.undo_edits(visible, by, guard).await?
                };
                // What the change did in pads the caller may not read is
                // not its to see, skipped or not.
                skipped.retain(|s| shown.contains(&s.id));
                (restored, skipped)
            }
            (None, Some(_), _) => {
                return Err(Error::invalid(
                    "version",
                    "version needs the id of the entry to take back to it; add id.",
                ))
            }
            (Some(_), _, Some(_)) => {
                return Err(Error::invalid(
                    "change",
                    "give either id (one entry) or change (everything one call did), not both.",
                ))
            }
            (None, None, None) => {
                return Err(Error::invalid(
                    "id",
                    "what should come back? Give id (a deleted entry; with version, an earlier version of a live one) or change (undo everything one delete, clear or edit did).",
                ))
            }
        };
        let (restored, skipped) = out;
        for e in &restored {
            self.0
                .bus
                .publish(EventType::Created, &e.pad, Some(e.clone()));
        }
        self.superseded_changed(restored.iter().map(|e| e.supersedes.clone()).collect())
            .await;
        Ok(RestoreResult { restored, skipped })
    }

    /// Takes a live entry back to `version` as a new version.
    async fn revert_to(
        &self,
        seq: i64,
        version: i64,
        by: &str,
        guard: &Guard,
    ) -> Result<(Vec<Entry>, Vec<Skipped>)> {
        let (live, versions) = self.db().history(seq).await?;
        let Some(live) = live else {
            return Err(Error::invalid(
                "version",
                format!(
                    "entry {} is deleted; restore it first (entry.restore with its id alone), then take it back to a version.",
                    id::encode(seq)
                ),
            ));
        };
        if live.version == version {
            return Err(Error::invalid(
                "version",
                format!("entry {} is at version {version} already.", live.id),
            ));
        }
        let Some(old) = versions.into_iter().find(|v| v.entry.version == version) else {
            return Err(Error::NotFound {
                field: "version",
                message: format!(
                    "entry {} has no kept version {version}; entry.history lists the versions kept (the current one is {}).",
                    live.id, live.version
                ),
            });
        };
        self.may_bring_back(&old.entry, live.supersedes.as_deref(), guard)
            .await?;
        // Taking it back is an edit: the rules `entry.update` follows.
        let patch = revert(old.entry, live.version);
        guard.may_edit(self.db(), &patch).await?;
        let entry = self.update(patch, by).await?;
        Ok((vec![entry], Vec::new()))
    }

    /// Undoes a change's edits: each entry not edited since goes back.
    async fn undo_edits(
        &self,
        versions: Vec<Version>,
        by: &str,
        guard: &Guard,
    ) -> Result<(Vec<Entry>, Vec<Skipped>)> {
        let (mut restored, mut skipped) = (Vec::new(), Vec::new());
        for v in versions {
            let id = v.entry.id.clone();
            if guard.may_write(&v.entry.pad).is_err() {
                skipped.push(Skipped {
                    id,
                    reason: "its pad is not one your token may write".into(),
                });
                continue;
            }
            let now = self.db().get(&id).await.ok().and_then(|e| e.supersedes);
            if let Err(e) = self.may_bring_back(&v.entry, now.as_deref(), guard).await {
                skipped.push(Skipped {
                    id,
                    reason: e.to_string(),
                });
                continue;
            }
            let after = v.entry.version + 1;
            let patch = revert(v.entry, after);
            if let Err(e) = guard.may_edit(self.db(), &patch).await {
                skipped.push(Skipped {
                    id,
                    reason: e.to_string(),
                });
                continue;
            }
            match self.update(patch, by).await {
                Ok(e) => restored.push(e),
                Err(Error::Conflict { .. }) => skipped.push(Skipped {
                    id,
                    reason: "edited again since; entry.history shows the versions, and entry.restore with id and version takes it back to one".into(),
                }),
                Err(e) => skipped.push(Skipped {
                    id,
                    reason: e.to_string(),
                }),
            }
        }
        Ok((restored, skipped))
    }

    /// Erases kept versions for good (the owner's call).
    pub async fn purge(&self, p: PurgeParams) -> Result<PurgeResult> {
        let which = match (p.id, p.pad, p.all) {
            (Some(id), None, false) => Purge::Seq(self.kept_id(&id, &Guard::owner()).await?.0),
            (None, Some(pad), false) => Purge::Pad(model::pad_name("pad", &pad)?),
            (None, None, true) => Purge::All,
            _ => {
                return Err(Error::invalid(
                    "id",
                    "give one of id (a deleted entry), pad (that pad's trash) or all: true (the whole trash).",
                ))
            }
        };
        let purged = self.db().purge(&which).await?;
        Ok(PurgeResult { purged })
    }

    /// Who did what: entries created, edited, deleted and restored, newest first.
    pub async fn changes(&self, p: ChangesParams, guard: &Guard) -> Result<ChangesResult> {
        let limit = limit("limit", p.limit, DEFAULT_CHANGES_LIMIT, MAX_HISTORY_LIMIT)? as usize;
        let mut filter = self.history_filter(p.pad.as_deref(), p.by.as_deref(), guard)?;
        filter.since = p
            .since
            .as_deref()
            .map(|t| model::parse_time("since", t))
            .transpose()?;
        filter.until = p
            .until
            .as_deref()
            .map(|t| model::parse_time("until", t))
            .transpose()?;
        let created = p.include_created;
        let (changes, truncated) = self.db().changes(&filter, limit, created).await?;
        Ok(ChangesResult { changes, truncated })
    }

    fn history_filter(
        &self,
        pad: Option<&str>,
        by: Option<&str>,
        guard: &Guard,
    ) -> Result<HistoryFilter> {
        let pad = pad.map(|p| model::pad_name("pad", p)).transpose()?;
        if let Some(pad) = &pad {
            guard.may_read(pad)?;
        }
        Ok(HistoryFilter {
            pad,
            by: by.map(|b| model::author("by", b)).transpose()?,
            since: None,
            until: None,
            scope: guard.scope_pads(),
        })
    }
}

/// The update that puts `old`'s fields back, if the entry is still at
/// version `current`.
fn revert(old: Entry, current: i64) -> UpdateParams {
    UpdateParams {
        id: old.id,
        content: Some(old.content),
        tags: Some(old.tags),
        kind: Some(old.kind),
        status: Some(old.status),
        assignee: Some(old.assignee),
        resume: Some(old.resume),
        category: Some(old.category),
        confidence: Some(old.confidence),
        pinned: Some(old.pinned),
        depends_on: Some(old.depends_on.into_iter().map(String::from).collect()),
        remind_at: Some(old.remind_at),
        meta: Some(old.meta),
        supersedes: Some(old.supersedes.map(String::from)),
        if_version: Some(current),
    }
}
