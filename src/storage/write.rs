//! The write sequences, written once: what editing and deleting an entry
//! do — resolve the id and the references, check the version, walk for a
//! dependency loop, keep the version before, write — over a transaction
//! each store supplies (`WriteTx`: its statements, nothing else).
//!
//! PostgreSQL's transaction awaits its connection; SQLite's statements are
//! synchronous, so its futures are ready when first polled and its store
//! runs a sequence to its end at once (`store::entries`).

use super::rules::{check_version, not_superseding_itself, would_cycle};
use super::{CycleSearch, Patch, Step};
use crate::error::{Error, Result};
use crate::model::Entry;

/// One write's transaction on a store: the statements a sequence runs.
#[allow(async_fn_in_trait)]
pub trait WriteTx {
    /// `(seq, full id)` of the live entry with this id or unique prefix.
    async fn resolve(&mut self, field: &'static str, id: &str) -> Result<(i64, String)>;
    /// The entry, held for this transaction (no other write changes it).
    async fn load(&mut self, seq: i64) -> Result<Entry>;
    /// The ids the entry `seq` waits on (empty when it is gone).
    async fn depends_on(&mut self, seq: i64) -> Result<Vec<String>>;
    /// Keeps the entry `seq` as it is in its history, before an edit.
    async fn keep_edited(&mut self, seq: i64, by: &str, now: i64) -> Result<()>;
    /// Writes `after` over the entry `seq`, one version on; `remind`: the
    /// patch's new reminder (`Some(None)`: cleared), which re-arms it.
    async fn rewrite(
        &mut self,
        seq: i64,
        after: &Entry,
        remind: Option<Option<i64>>,
        now: i64,
    ) -> Result<()>;
    /// Deletes the entry `seq`, keeping it in the trash: the change number.
    async fn delete_keeping(&mut self, seq: i64, by: &str, now: i64) -> Result<i64>;
}

/// An edit: the entry before and after.
pub async fn update(
    tx: &mut impl WriteTx,
    id: &str,
    patch: Patch,
    if_version: Option<i64>,
    now: i64,
    by: &str,
) -> Result<(Entry, Entry)> {
    let (seq, full_id) = tx.resolve("id", id).await?;
    let before = tx.load(seq).await?;
    check_version(&full_id, before.version, if_version)?;
    let mut after = before.clone();
    if let Some(deps) = &patch.depends_on {
        let mut resolved = Vec::with_capacity(deps.len());
        for d in deps {
            let (_, dep) = tx.resolve("depends_on", d).await?;
            if dep == full_id {
                return Err(Error::invalid(
                    "depends_on",
                    format!("entry {full_id} cannot depend on itself; remove it from depends_on."),
                ));
            }
            resolved.push(dep);
        }
        if let Some(cycle) = find_cycle(tx, &full_id, &resolved).await? {
            return Err(would_cycle(&cycle));
        }
        after.depends_on = resolved;
    }
    if let Some(older) = &patch.supersedes {
        after.supersedes = match older {
            Some(o) => Some(tx.resolve("supersedes", o).await?.1),
            None => None,
        };
        not_superseding_itself(&full_id, after.supersedes.as_deref())?;
    }
    let remind = patch.remind_at;
    patch.apply(&mut after, now);
    tx.keep_edited(seq, by, now).await?;
    tx.rewrite(seq, &after, remind, now).await?;
    Ok((before, after))
}

/// A delete: the entry and the change that kept it in the trash.
pub async fn delete(
    tx: &mut impl WriteTx,
    id: &str,
    if_version: Option<i64>,
    now: i64,
    by: &str,
) -> Result<(Entry, i64)> {
    let (seq, full_id) = tx.resolve("id", id).await?;
    let gone = tx.load(seq).await?;
    check_version(&full_id, gone.version, if_version)?;
    let change = tx.delete_keeping(seq, by, now).await?;
    Ok((gone, change))
}

/// If `id` depending on `deps` would close a loop, the loop as "a → b → a".
pub async fn find_cycle(
    tx: &mut impl WriteTx,
    id: &str,
    deps: &[String],
) -> Result<Option<String>> {
    let mut walk = CycleSearch::new(id, deps);
    while let Some(step) = walk.step() {
        match step {
            Step::Loop(path) => return Ok(Some(path)),
            Step::Read(cur, seq) => {
                let next = tx.depends_on(seq).await?;
                walk.reached(&cur, next);
            }
        }
    }
    Ok(None)
}
