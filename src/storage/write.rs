//! The write sequences, written once: what adding, editing, deleting and
//! restoring an entry and moving a task along do — resolve the id and the
//! references, check the version, walk for a dependency loop, keep the
//! version before, note the reply, roll the pad's window, write — over a
//! transaction each store supplies (`WriteTx`, `TaskTx`, `RestoreTx`: its
//! statements, nothing else).
//!
//! PostgreSQL's transaction awaits its connection; SQLite's statements are
//! synchronous, so its futures are ready when first polled and its store
//! runs a sequence to its end at once (`store::entries`).

use super::rules::{check_version, is_task, may_finish, may_heartbeat, new_entry, stamp, Stamp};
use super::rules::{
    not_superseding_itself, nothing_to_restore, replied, window_drops, would_cycle,
};
use super::{Added, CycleSearch, Finish, NewEntry, Patch, Restore, Step};
use crate::error::{Error, Result};
use crate::model::{Entry, Status};
use crate::protocol::{Skipped, Version};

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
    /// patch's new reminder (`Some(None)`: cleared), which re-arms it;
    /// `stamp`: the task's times its new status sets (`rules::stamp`).
    async fn rewrite(
        &mut self,
        seq: i64,
        after: &Entry,
        remind: Option<Option<i64>>,
        stamp: Option<Stamp>,
        now: i64,
    ) -> Result<()>;
    /// Deletes the entry `seq`, keeping it in the trash: the change number.
    async fn delete_keeping(&mut self, seq: i64, by: &str, now: i64) -> Result<i64>;
    /// Inserts a new entry (its references resolved) with its tags and
    /// hand-offs: its seq.
    async fn insert(&mut self, e: &NewEntry) -> Result<i64>;
    /// Writes `after` (`rules::replied`) over the parent `seq` a reply moved.
    async fn note_reply(&mut self, seq: i64, before: &Entry, after: &Entry, now: i64)
        -> Result<()>;
    /// Moves the pad's row on for one more entry (creating it, restoring it
    /// if archived): its window and entry count when it has a window.
    async fn pad_written(&mut self, pad: &str, now: i64) -> Result<Option<(i64, i64)>>;
    /// The pad's oldest droppable entries (not pinned, not `important`), at
    /// most `limit`; with `mine`, only that author's and never that seq.
    async fn droppable(
        &mut self,
        pad: &str,
        mine: Option<(&str, i64)>,
        limit: i64,
    ) -> Result<Vec<i64>>;
    /// Deletes the entries a window rolled out, keeping them in the trash.
    async fn drop_window(&mut self, seqs: Vec<i64>, by: &str, now: i64) -> Result<Vec<Entry>>;
}

/// The statements moving a task along, on a write's transaction.
#[allow(async_fn_in_trait)]
pub trait TaskTx: WriteTx {
    /// `(seq, depends_on)` of the pad's tasks a claimant may take (`todo`, or
    /// `doing` with the lease run out), oldest first; none of them held.
    async fn claimable(&mut self, pad: &str, now: i64) -> Result<Vec<(i64, Vec<String>)>>;
    /// Holds the task `seq` for this transaction if it is still claimable
    /// and no other claimant holds it (PostgreSQL skips a row another
    /// transaction locked): false when another claimant has it.
    async fn hold_claimable(&mut self, seq: i64, now: i64) -> Result<bool>;
    /// The dependencies in `depends_on` still holding a task up.
    async fn unmet(&mut self, depends_on: &[String]) -> Result<Vec<String>>;
    /// Hands the task `seq` to `agent` until `now + lease_ms`.
    async fn take(&mut self, seq: i64, agent: &str, lease_ms: i64, now: i64) -> Result<Entry>;
    /// Extends the task's lease (by `lease_ms`, else as its claim asked) and
    /// records where the work stands.
    async fn extend_lease(
        &mut self,
        seq: i64,
        lease_ms: Option<i64>,
        resume: Option<String>,
        now: i64,
    ) -> Result<Entry>;
    /// Ends the task's attempt in `status`.
    async fn end_attempt(&mut self, seq: i64, end: Ended<'_>, now: i64) -> Result<Entry>;
    /// Tasks `doing` whose lease ran out by `now`, oldest first, held.
    async fn expired(&mut self, now: i64) -> Result<Vec<i64>>;
    /// Puts the task `seq` back to `todo`.
    async fn requeue(&mut self, seq: i64, now: i64) -> Result<Entry>;
}

/// How an attempt at a task ended, as its row takes it.
pub struct Ended<'a> {
    pub status: Status,
    /// Set when given (a failure); kept from before when not.
    pub error: Option<String>,
    pub resume: Option<String>,
    /// The holder's name, kept when the task had none.
    pub agent: Option<&'a str>,
}

/// The statements bringing deleted entries back, on a write's transaction.
#[allow(async_fn_in_trait)]
pub trait RestoreTx {
    /// `(n, seq, version)` of the latest deletion of each entry `which`
    /// names, oldest seq first, held for this transaction.
    async fn last_deletions(&mut self, which: Restore) -> Result<Vec<(i64, i64, Version)>>;
    /// Which of `seqs` are live.
    async fn live(&mut self, seqs: &[i64]) -> Result<Vec<i64>>;
    /// Puts the kept versions `kept` (`(n, entry)`) back as live entries —
    /// tags, pad rows, the meaning index told — and marks them restored.
    async fn bring_back(&mut self, kept: &[(i64, Entry)], by: &str, now: i64) -> Result<()>;
}

/// A new entry that needs the database (references, a reply, a window):
/// its references resolved to full ids, its parent's reply noted, its pad's
/// window rolled.
pub async fn add(tx: &mut impl WriteTx, mut e: NewEntry) -> Result<Added> {
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
            tx.note_reply(parent, &before, &after, e.now).await?;
            Some((before, after))
        }
        None => None,
    };
    let rolled = match tx.pad_written(&e.pad, e.now).await? {
        Some((max, entries)) if entries > max => {
            // Past the window: the writer's oldest while it holds most of
            // it, else the oldest (`window_drops`), kept in the trash first.
            let own = tx.droppable(&e.pad, Some((&e.author, seq)), max).await?;
            let out = match window_drops(max, entries - max, &own) {
                Some(out) => out,
                None => tx.droppable(&e.pad, None, entries - max).await?,
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
    tx.rewrite(seq, &after, remind, stamp, now).await?;
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
                let next = tx.depends_on(seq).await?;
                walk.reached(&cur, next);
            }
        }
    }
    Ok(None)
}

/// The task `id` names, held: its seq, full id and state.
async fn task(tx: &mut impl TaskTx, id: &str) -> Result<(i64, String, Entry)> {
    let (seq, full_id) = tx.resolve("id", id).await?;
    let task = tx.load(seq).await?;
    is_task(&task)?;
    Ok((seq, full_id, task))
}

/// Hands the oldest ready task of `pad` to `agent`: one a claimant may take
/// whose dependencies are all met. Before and after, or `None`.
pub async fn claim(
    tx: &mut impl TaskTx,
    pad: &str,
    agent: &str,
    lease_ms: i64,
    now: i64,
) -> Result<Option<(Entry, Entry)>> {
    // Only the task taken is held: a claimant on another engine passes
    // over it and takes the next, never finding every candidate locked.
    for (seq, deps) in tx.claimable(pad, now).await? {
        if !tx.unmet(&deps).await?.is_empty() || !tx.hold_claimable(seq, now).await? {
            continue;
        }
        let before = tx.load(seq).await?;
        let after = tx.take(seq, agent, lease_ms, now).await?;
        return Ok(Some((before, after)));
    }
    Ok(None)
}

/// A holder's heartbeat: the lease extended, where the work stands kept.
pub async fn heartbeat(
    tx: &mut impl TaskTx,
    id: &str,
    agent: Option<&str>,
    resume: Option<String>,
    lease_ms: Option<i64>,
    now: i64,
) -> Result<(Entry, Entry)> {
    let (seq, full_id, before) = task(tx, id).await?;
    may_heartbeat(&full_id, &before, agent)?;
    let after = tx.extend_lease(seq, lease_ms, resume, now).await?;
    Ok((before, after))
}

/// Ends an attempt at a task: done, failed, or failed and back in the queue.
pub async fn finish(
    tx: &mut impl TaskTx,
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
    let after = tx.end_attempt(seq, end, now).await?;
    Ok((before, after))
}

/// Puts tasks whose lease ran out back in the queue (`todo`), keeping their
/// `resume` note and last holder: each before and after.
pub async fn release_expired(tx: &mut impl TaskTx, now: i64) -> Result<Vec<(Entry, Entry)>> {
    let seqs = tx.expired(now).await?;
    let mut out = Vec::with_capacity(seqs.len());
    for seq in seqs {
        let before = tx.load(seq).await?;
        let after = tx.requeue(seq, now).await?;
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
    let rows = tx.last_deletions(which).await?;
    if rows.is_empty() {
        return Err(nothing_to_restore(which));
    }
    let seqs: Vec<i64> = rows.iter().map(|r| r.1).collect();
    let live = tx.live(&seqs).await?;
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
