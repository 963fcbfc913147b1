//! The write sequences, written once: what adding, editing, deleting and
//! restoring an entry and moving a task along do — take the call's
//! idempotency key when it has one, resolve the id and the references,
//! check the version, walk for a dependency loop, keep the version before,
//! note the reply, roll the pad's window, write — over a transaction each
//! store supplies (`WriteTx`, `RestoreTx`, `KeyTx`: the statements that
//! differ, and its connection). The statements the same on both run on
//! that connection, written once beside their concern (`storage::entries`,
//! `storage::tasks`, `storage::history`).
//!
//! PostgreSQL's transaction awaits its connection; SQLite's statements are
//! synchronous, so its futures are ready when first polled and its store
//! runs a sequence to its end at once (`store::entries`).

use super::once::{self, Key, KeyTx, Once};
use super::query::Execute;
use super::rules::{check_version, is_task, may_finish, may_heartbeat, new_entry, stamp};
use super::rules::{
    not_superseding_itself, nothing_to_restore, replied, window_drops, would_cycle,
};
use super::tasks::{self, Ended};
use super::{entries, history};
use super::{Added, CycleSearch, Finish, NewEntry, Patch, Restore, Step};
use crate::error::{Error, Result};
use crate::model::{Entry, Status};
use crate::protocol::Skipped;

/// One write's transaction on a store: the statements a sequence runs
/// that differ between the stores, and the connection the rest run on.
#[allow(async_fn_in_trait)]
pub trait WriteTx {
    /// The connection the transaction runs on.
    type Conn: Execute;
    fn conn(&mut self) -> &mut Self::Conn;
    /// `(seq, full id)` of the live entry with this id or unique prefix.
    async fn resolve(&mut self, field: &'static str, id: &str) -> Result<(i64, String)>;
    /// The entry, held for this transaction (no other write changes it).
    async fn load(&mut self, seq: i64) -> Result<Entry>;
    /// Keeps the entry `seq` as it is in its history, before an edit.
    async fn keep_edited(&mut self, seq: i64, by: &str, now: i64) -> Result<()>;
    /// Deletes the entry `seq`, keeping it in the trash: the change number.
    async fn delete_keeping(&mut self, seq: i64, by: &str, now: i64) -> Result<i64>;
    /// Inserts a new entry (its references resolved) with its tags and
    /// hand-offs: its seq.
    async fn insert(&mut self, e: &NewEntry) -> Result<i64>;
    /// Moves the pad's row on for one more entry (creating it, restoring it
    /// if archived): its window and entry count when it has a window.
    async fn pad_written(&mut self, pad: &str, now: i64) -> Result<Option<(i64, i64)>>;
    /// Deletes the entries a window rolled out, keeping them in the trash.
    async fn drop_window(&mut self, seqs: Vec<i64>, by: &str, now: i64) -> Result<Vec<Entry>>;
}

/// The statement bringing deleted entries back, on a write's transaction.
#[allow(async_fn_in_trait)]
pub trait RestoreTx: WriteTx {
    /// Puts the kept versions `kept` (`(n, entry)`) back as live entries —
    /// tags, pad rows, the meaning index told — and marks them restored.
    async fn bring_back(&mut self, kept: &[(i64, Entry)], by: &str, now: i64) -> Result<()>;
}

/// A new entry that needs the database (references, a reply, a window, a
/// key): under its idempotency key when it has one — a retry answered with
/// the first call's entry, writing nothing (`storage::once`) —, its
/// references resolved to full ids, its parent's reply noted, its pad's
/// window rolled.
pub async fn add(tx: &mut (impl WriteTx + KeyTx), mut e: NewEntry) -> Result<Once<Added>> {
    let Some(key) = e.key.take() else {
        return Ok(Once::Wrote(add_entry(tx, e).await?));
    };
    if let Some(first) = once::taken(tx, &key, e.now).await? {
        return Ok(Once::Again(first));
    }
    let added = add_entry(tx, e).await?;
    once::keep(tx, &key, &added.entry.id).await?;
    Ok(Once::Wrote(added))
}

/// The new entry's own statements, its key aside.
async fn add_entry(tx: &mut impl WriteTx, mut e: NewEntry) -> Result<Added> {
    let mut depends = Vec::with_capacity(e.depends_on.len());
    for d in &e.depends_on {
        depends.push(tx.resolve("depends_on", d).await?.1);
    }
    e.depends_on = depends;
    let parent = match &e.reply_to {
        Some(p) => Some(tx.resolve("reply_to", p).await?),
        None => None,
    };
    e.reply_to = parent.as_ref().map(|p| p.1.clone());
    if let Some(older) = &e.supersedes {
        e.supersedes = Some(tx.resolve("supersedes", older).await?.1);
    }
    let seq = tx.insert(&e).await?;
    let parent = match parent {
        Some((parent, _)) => {
            let before = tx.load(parent).await?;
            let after = replied(&before, seq, &e);
            entries::note_reply(tx.conn(), parent, &before, &after, e.now).await?;
            Some((before, after))
        }
        None => None,
    };
    let rolled = match tx.pad_written(&e.pad, e.now).await? {
        Some((max, entries)) if entries > max => {
            // Past the window: the writer's oldest while it holds most of
            // it, else the oldest (`window_drops`), kept in the trash first.
            let own = entries::droppable(tx.conn(), &e.pad, Some((&e.author, seq)), max).await?;
            let out = match window_drops(max, entries - max, &own) {
                Some(out) => out,
                None => entries::droppable(tx.conn(), &e.pad, None, entries - max).await?,
            };
            if out.is_empty() {
                Vec::new()
            } else {
                tx.drop_window(out, &e.author, e.now).await?
            }
        }
        _ => Vec::new(),
    };
    Ok(Added {
        entry: new_entry(seq, e),
        rolled,
        parent,
    })
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
            let path: Vec<Option<String>> = cycle.into_iter().map(Some).collect();
            return Err(would_cycle(&path));
        }
        after.depends_on = crate::seal::refs(resolved);
    }
    if let Some(older) = &patch.supersedes {
        after.supersedes = match older {
            Some(o) => Some(tx.resolve("supersedes", o).await?.1.into()),
            None => None,
        };
        not_superseding_itself(&full_id, after.supersedes.as_deref())?;
    }
    let remind = patch.remind_at;
    let stamp = patch.status.and_then(|s| stamp(Some(&before), s, now));
    patch.apply(&mut after, now);
    tx.keep_edited(seq, by, now).await?;
    entries::rewrite(tx.conn(), seq, &after, remind, stamp, now).await?;
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

/// If `id` depending on `deps` would close a loop, the loop: `[a, b, a]`.
pub async fn find_cycle(
    tx: &mut impl WriteTx,
    id: &str,
    deps: &[String],
) -> Result<Option<Vec<String>>> {
    let mut walk = CycleSearch::new(id, deps);
    while let Some(step) = walk.step() {
        match step {
            Step::Loop(path) => return Ok(Some(path)),
            Step::Read(cur, seq) => {
                let next = entries::depends_on(tx.conn(), seq).await?;
                walk.reached(&cur, next);
            }
        }
    }
    Ok(None)
}

/// The task `id` names, held: its seq, full id and state.
async fn task(tx: &mut impl WriteTx, id: &str) -> Result<(i64, String, Entry)> {
    let (seq, full_id) = tx.resolve("id", id).await?;
    let task = tx.load(seq).await?;
    is_task(&task)?;
    Ok((seq, full_id, task))
}

/// Hands the oldest ready task of `pad` to `agent`: one a claimant may take
/// whose dependencies are all met. Before and after, or `None`.
///
/// Under its idempotency key when it has one, as `add`; a claim that took
/// nothing keeps no key (the store rolls it back: an idle poll writes no
/// key's row).
pub async fn claim(
    tx: &mut (impl WriteTx + KeyTx),
    pad: &str,
    agent: &str,
    lease_ms: i64,
    now: i64,
    key: Option<&Key>,
) -> Result<Once<Option<(Entry, Entry)>>> {
    let Some(key) = key else {
        let claimed = claim_task(tx, pad, agent, lease_ms, now).await?;
        return Ok(Once::Wrote(claimed));
    };
    if let Some(first) = once::taken(tx, key, now).await? {
        return Ok(Once::Again(first));
    }
    let claimed = claim_task(tx, pad, agent, lease_ms, now).await?;
    if let Some((_, after)) = &claimed {
        once::keep(tx, key, &after.id).await?;
    }
    Ok(Once::Wrote(claimed))
}

/// The claim's own statements, its key aside.
async fn claim_task(
    tx: &mut impl WriteTx,
    pad: &str,
    agent: &str,
    lease_ms: i64,
    now: i64,
) -> Result<Option<(Entry, Entry)>> {
    // Only the task taken is held: a claimant on another engine passes
    // over it and takes the next, never finding every candidate locked.
    for (seq, deps) in tasks::claimable(tx.conn(), pad, now).await? {
        if !tasks::unmet(tx.conn(), &deps).await?.is_empty()
            || !tasks::hold_claimable(tx.conn(), seq, now).await?
        {
            continue;
        }
        let before = tx.load(seq).await?;
        let after = tasks::take(tx.conn(), seq, agent, lease_ms, now).await?;
        return Ok(Some((before, after)));
    }
    Ok(None)
}

/// A holder's heartbeat: the lease extended, where the work stands kept.
pub async fn heartbeat(
    tx: &mut impl WriteTx,
    id: &str,
    agent: Option<&str>,
    resume: Option<String>,
    lease_ms: Option<i64>,
    now: i64,
) -> Result<(Entry, Entry)> {
    let (seq, full_id, before) = task(tx, id).await?;
    may_heartbeat(&full_id, &before, agent)?;
    let after = tasks::extend_lease(tx.conn(), seq, lease_ms, resume, now).await?;
    Ok((before, after))
}

/// Ends an attempt at a task: done, failed, or failed and back in the queue.
pub async fn finish(
    tx: &mut impl WriteTx,
    id: &str,
    agent: Option<&str>,
    how: Finish,
    now: i64,
) -> Result<(Entry, Entry)> {
    let (seq, full_id, before) = task(tx, id).await?;
    may_finish(&full_id, &before, agent)?;
    let end = match how {
        Finish::Done { resume } => Ended {
            status: Status::Done,
            error: None,
            resume,
            agent,
        },
        Finish::Failed {
            error,
            resume,
            retry,
        } => Ended {
            status: if retry { Status::Todo } else { Status::Failed },
            error: Some(error),
            resume,
            agent,
        },
    };
    let after = tasks::end_attempt(tx.conn(), seq, end, now).await?;
    Ok((before, after))
}

/// Puts tasks whose lease ran out back in the queue (`todo`), keeping their
/// `resume` note and last holder: each before and after.
pub async fn release_expired(tx: &mut impl WriteTx, now: i64) -> Result<Vec<(Entry, Entry)>> {
    let seqs = tasks::expired(tx.conn(), now).await?;
    let mut out = Vec::with_capacity(seqs.len());
    for seq in seqs {
        let before = tx.load(seq).await?;
        let after = tasks::requeue(tx.conn(), seq, now).await?;
        out.push((before, after));
    }
    Ok(out)
}

/// Brings deleted entries back as they were — id, tags, thread links, task
/// state — all of them or none. One already live again, or in a pad
/// `writable` refuses, is skipped and said why.
pub async fn restore(
    tx: &mut impl RestoreTx,
    which: Restore,
    by: &str,
    now: i64,
    writable: &(dyn Fn(&str) -> bool + Sync),
) -> Result<(Vec<Entry>, Vec<Skipped>)> {
    let rows = history::last_deletions(tx.conn(), which).await?;
    if rows.is_empty() {
        return Err(nothing_to_restore(which));
    }
    let seqs: Vec<i64> = rows.iter().map(|r| r.1).collect();
    let live = history::live(tx.conn(), &seqs).await?;
    let (mut back, mut skipped) = (Vec::new(), Vec::new());
    for (n, seq, v) in rows {
        let reason = if live.contains(&seq) {
            "already restored: the entry is live"
        } else if !writable(&v.entry.pad) {
            "its pad is not one your token may write"
        } else {
            back.push((n, v.entry));
            continue;
        };
        skipped.push(Skipped {
            id: v.entry.id,
            reason: reason.into(),
        });
    }
    if !back.is_empty() {
        tx.bring_back(&back, by, now).await?;
    }
    Ok((back.into_iter().map(|(_, e)| e).collect(), skipped))
}
