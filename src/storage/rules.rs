//! The rules both stores apply the same way, written once: how a new entry
//! and a replied-to parent look, what a stale version, an unknown id, a
//! task in the wrong state and an empty restore answer.

use super::types::{NewEntry, Restore};
use crate::error::{Error, Result};
use crate::id::{self, ID_LEN};
use crate::model::{fmt_time, Entry, Kind, NoteRef, Status};
use crate::protocol::Change;

/// The entry as stored, new: what `entry.add` answers.
pub(crate) fn new_entry(seq: i64, e: NewEntry) -> Entry {
    let created = fmt_time(e.now);
    Entry {
        id: id::encode(seq),
        pad: e.pad,
        author: e.author,
        kind: e.kind,
        content: e.content,
        tags: e.tags,
        status: e.status,
        assignee: e.assignee,
        resume: e.resume,
        lease_until: None,
        attempts: 0,
        error: None,
        category: e.category,
        confidence: e.confidence,
        depends_on: e.depends_on.into_iter().map(NoteRef::from).collect(),
        reply_to: e.reply_to.map(NoteRef),
        choices: e.choices,
        to: e.to,
        supersedes: e.supersedes.map(NoteRef),
        superseded_by: None,
        replies: 0,
        answer: None,
        remind_at: e.remind_at.map(fmt_time),
        pinned: e.pinned,
        meta: e.meta.as_deref().and_then(|m| serde_json::from_str(m).ok()),
        updated_at: created.clone(),
        created_at: created,
        version: 1,
    }
}

/// Counts a new reply on its parent, and makes it the parent's answer when it
/// is the first by someone other than the parent's author. An answered
/// question no longer needs the person's eyes: it loses `needs_eyes`.
/// Returns the parent before and after.
/// The parent as a new reply leaves it (see `note_reply`).
pub(crate) fn replied(before: &Entry, reply: i64, e: &NewEntry) -> Entry {
    let mut after = before.clone();
    after.replies += 1;
    // A reply in another pad is in the thread but not the answer: the
    // answer's id is shown with the question, to whoever reads its pad.
    let answers = before.answer.is_none()
        && before.author != e.author
        && before.pad == e.pad
        && (before.kind != Kind::Question || !e.by_token || may_answer(before, &e.author));
    if answers {
        after.answer = Some(NoteRef(id::encode(reply)));
        if before.kind == Kind::Question && before.has_tag(crate::model::NEEDS_EYES) {
            after.tags.retain(|t| t != crate::model::NEEDS_EYES);
            after.version += 1;
            after.updated_at = fmt_time(e.now);
        }
    }
    after
}

/// Whether `author`, writing with a token, may answer the question `q`. A
/// question put to the person with `ask` (it carries `meta.answer_from`) is
/// theirs to answer: a token's reply answers it only when it is addressed
/// to the token's agent or `answer_from` names it (or `*`); otherwise it is
/// a reply in the thread. Any other question anyone but its author answers.
fn may_answer(q: &Entry, author: &str) -> bool {
    let named = |a: &str| a == "*" || a.eq_ignore_ascii_case(author);
    let Some(from) = q
        .meta
        .as_ref()
        .and_then(|m| m.get(crate::model::ANSWER_FROM))
        .and_then(|v| v.as_array())
    else {
        return true;
    };
    q.to.iter().any(|a| named(a)) || from.iter().filter_map(|v| v.as_str()).any(named)
}

/// Which entries a pad's rolling window drops when a write overflows it by
/// `overflow`: the writer's own oldest first while the writer holds more
/// than half the window, so one writer's burst (an agent's flood) never
/// pushes everyone else's notes out; `None`: the oldest of all, as a window
/// does. `own_older`: the writer's entries the window may drop (not
/// pinned, not `important`), oldest first, the new one left out, at most
/// `max` of them.
pub(crate) fn window_drops(max: i64, overflow: i64, own_older: &[i64]) -> Option<Vec<i64>> {
    let own = own_older.len() as i64;
    let overflow = overflow.max(0);
    ((own + 1) * 2 > max && own >= overflow).then(|| own_older[..overflow as usize].to_vec())
}

/// Finished conversations with agents kept (their threads still carry
/// follow-ups): by the stores, and in the dispatcher's memory.
pub const KEEP_FINISHED_CONVERSATIONS: usize = 500;

/// A delivery for an agent no engine has taken this long (ms) — a name
/// nobody registered, or whose engine is gone — is dropped by the sweep.
pub(crate) const UNCLAIMED_DELIVERY_MS: i64 = 86_400_000;

pub(crate) fn check_version(id: &str, actual: i64, expected: Option<i64>) -> Result<()> {
    match expected {
        Some(v) if v != actual => Err(Error::Conflict {
            message: format!(
                "entry {id} is at version {actual}, not {v}: someone changed it since you read it. Fetch it again (entry.get), merge your change, and retry with if_version {actual}."
            ),
            expected: Some(v),
            actual: Some(actual),
        }),
        _ => Ok(()),
    }
}

/// The answer for an id that names no entry — and, to a token, for one
/// outside its grant: the two must read the same.
pub fn no_entry(field: &'static str, id: &str) -> Error {
    Error::NotFound {
        field,
        message: format!("no entry with id '{id}'. It may have been deleted or purged; list the pad (entry.list) to find current ids."),
    }
}

/// The seq range an id or id prefix names, or the error saying what an id is.
pub(crate) fn prefix_range(field: &'static str, id: &str) -> Result<(i64, i64)> {
    id::prefix_range(id).ok_or_else(|| {
        Error::invalid(
            field,
            format!("'{id}' is not an entry id; ids are up to {ID_LEN} characters of 0-9 and a-z (without i, l, o, u), e.g. '2k9xe4mr07cb'. A unique prefix is enough."),
        )
    })
}

pub(crate) fn ambiguous(field: &'static str, id: &str) -> Error {
    Error::invalid(
        field,
        format!(
            "id prefix '{}' matches several entries; give more characters (or the full id).",
            id.trim().to_lowercase()
        ),
    )
}

/// Changes gathered from several queries, merged newest first and cut to
/// `limit`, with whether any were cut.
pub(crate) fn newest_first(mut all: Vec<(i64, Change)>, limit: usize) -> (Vec<Change>, bool) {
    all.sort_by_key(|c| std::cmp::Reverse(c.0));
    let truncated = all.len() > limit;
    all.truncate(limit);
    (all.into_iter().map(|c| c.1).collect(), truncated)
}

/// The first line of `content`, at most 80 characters.
pub fn preview(content: &str) -> String {
    let line = content.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

pub(crate) fn nothing_to_restore(which: Restore) -> Error {
    match which {
        Restore::Seq(seq) => Error::NotFound {
            field: "id",
            message: format!(
                "entry {} was never deleted, so there is nothing to restore; to go back to an earlier version give version too (entry.history lists them).",
                id::encode(seq)
            ),
        },
        Restore::Change(batch) => Error::NotFound {
            field: "change",
            message: format!(
                "change {batch} deleted nothing that is still kept; entry.trash and entry.changes list the changes you can undo."
            ),
        },
    }
}

pub(crate) fn no_pad(name: &str) -> Error {
    Error::NotFound {
        field: "name",
        message: format!("no pad named '{name}'. List pads with pad.list (add include_archived to see archived ones)."),
    }
}

/// Whether `agent` may extend its lease on `task` (either store checks this
/// on the row it holds for the change).
pub(crate) fn may_heartbeat(full_id: &str, task: &Entry, agent: Option<&str>) -> Result<()> {
    if task.status != Some(Status::Doing) {
        return Err(Error::Conflict {
            message: format!(
                "task {full_id} is {}, not being worked on, so there is no lease to extend{}. Claim it again (task.claim) to work on it.",
                status_name(task),
                if task.status == Some(Status::Todo) && task.assignee.is_some() {
                    " (its lease ran out and it went back to the queue)"
                } else {
                    ""
                }
            ),
            expected: None,
            actual: None,
        });
    }
    check_holder(task, agent)
}

/// Whether `agent` may end `task` (done or failed).
pub(crate) fn may_finish(full_id: &str, task: &Entry, agent: Option<&str>) -> Result<()> {
    if task.status == Some(Status::Done) {
        return Err(Error::Conflict {
            message: format!(
                "task {full_id} is already done{}; nothing to end. Add a new task for further work.",
                task.assignee
                    .as_deref()
                    .map(|a| format!(" (by {a})"))
                    .unwrap_or_default()
            ),
            expected: None,
            actual: None,
        });
    }
    if task.status == Some(Status::Doing) {
        check_holder(task, agent)?;
    }
    Ok(())
}

fn status_name(e: &Entry) -> &'static str {
    e.status.map(Status::as_str).unwrap_or("without a status")
}

pub(crate) fn is_task(e: &Entry) -> Result<()> {
    if e.kind != Kind::Task {
        return Err(Error::invalid(
            "id",
            format!(
                "entry {} is a {}, not a task; task.* methods work on entries of kind 'task' (entry.update can change its kind).",
                e.id, e.kind
            ),
        ));
    }
    Ok(())
}

fn check_holder(e: &Entry, agent: Option<&str>) -> Result<()> {
    match (agent, e.assignee.as_deref()) {
        (Some(a), Some(holder)) if a != holder => Err(Error::Conflict {
            message: format!(
                "task {} is held by {holder}, not {a}: its lease ran out and {holder} claimed it. Stop work on it; claim the next task (task.claim).",
                e.id
            ),
            expected: None,
            actual: None,
        }),
        _ => Ok(()),
    }
}

/// Counts per (minute, pad) summed per minute over the pads `keep` accepts,
/// oldest minute first.
pub(crate) fn by_minute(
    rows: Vec<(i64, String, i64)>,
    minutes: usize,
    keep: impl Fn(&str) -> bool,
) -> Vec<u64> {
    let mut out = vec![0u64; minutes];
    for (m, pad, n) in rows {
        // An entry written in the current millisecond lands one past the
        // last minute: it belongs to the last.
        let m = (m as usize).min(minutes.saturating_sub(1));
        if let Some(slot) = out.get_mut(m).filter(|_| keep(&pad)) {
            *slot += n as u64;
        }
    }
    out
}

/// Every column of `entries`; `entry_history` has them under the same names,
/// in both stores' schemas.
pub(crate) const KEPT_COLUMNS: &str = "seq, pad, author, kind, content, tags, status, assignee, \
     resume, lease_until, category, confidence, depends_on, remind_at, pinned, meta, created_at, \
     updated_at, version, reply_to, choices, replies, answer, attempts, error, claimed_at, \
     finished_at, lease_ms, reminded_at, addressed_to, supersedes";

/// The SQL condition (both stores) on `entry_history` (aliased `e`) of
/// deletions still in the trash: not restored, and not live again.
pub(crate) const IN_TRASH: &str = "e.action <> 'edit' AND e.restored_at IS NULL \
     AND NOT EXISTS (SELECT 1 FROM entries l WHERE l.seq = e.seq)";

/// The SQL condition (both stores) that leaves out notes a live note
/// supersedes: `e` is entries.
pub(crate) const CURRENT_ONLY: &str =
    " AND NOT EXISTS (SELECT 1 FROM entries s WHERE s.supersedes = e.seq)";
/// `CURRENT_ONLY` left open for a condition on the newer note `s` (a
/// token's pads) and its closing `)`.
pub(crate) const CURRENT_ONLY_OPEN: &str =
    " AND NOT EXISTS (SELECT 1 FROM entries s WHERE s.supersedes = e.seq";

/// The seqs of the live notes beside `e` in its pad (both stores): just
/// before, just after, two before, two after (`Storage::pad_neighbours`).
pub(crate) const PAD_NEIGHBOURS: &str = "\
    (SELECT p.seq FROM entries p WHERE p.pad = e.pad AND p.seq < e.seq ORDER BY p.seq DESC LIMIT 1), \
    (SELECT n.seq FROM entries n WHERE n.pad = e.pad AND n.seq > e.seq ORDER BY n.seq LIMIT 1), \
    (SELECT p.seq FROM entries p WHERE p.pad = e.pad AND p.seq < e.seq ORDER BY p.seq DESC LIMIT 1 OFFSET 1), \
    (SELECT n.seq FROM entries n WHERE n.pad = e.pad AND n.seq > e.seq ORDER BY n.seq LIMIT 1 OFFSET 1)";

/// A note cannot supersede itself.
pub(crate) fn not_superseding_itself(id: &str, supersedes: Option<&str>) -> Result<()> {
    if supersedes == Some(id) {
        return Err(Error::invalid(
            "supersedes",
            format!(
                "entry {id} cannot supersede itself; give the id of the older note it replaces."
            ),
        ));
    }
    Ok(())
}

/// The answer to `depends_on` links that would close `cycle` (the ids in
/// the loop, as the cycle walk names them).
/// A loop of dependencies, `[a, b, a]`: said as "a → b → a", the ids in
/// `got` (the seal names a step the caller may not read as such:
/// `seal::error`). `None` for a step already hidden.
pub(crate) fn would_cycle(path: &[Option<String>]) -> Error {
    let said: Vec<&str> = path
        .iter()
        .map(|s| s.as_deref().unwrap_or("(a note you cannot read)"))
        .collect();
    Error::InvalidParams {
        field: Some("depends_on".into()),
        message: format!(
            "depends_on would make a cycle: {}. Remove one of these links.",
            said.join(" → ")
        ),
        limit: None,
        got: Some(serde_json::json!(path)),
    }
}

/// What writing a task's status (entry.add, entry.update) does to the two
/// times `plan.order`'s `since` reads, as `task.claim` and `task.complete`
/// do: `claimed_at` (`None`: kept) and `finished_at` (always written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub claimed_at: Option<Option<i64>>,
    pub finished_at: Option<i64>,
}

/// The times a task gets when `status` is written over `before` (`None`:
/// a new entry) at `now`, or `None` when it stays where it stood. Becoming
/// `doing` starts it (claimed now); becoming `done` or `failed` finishes it
/// now (the claim kept, for how long it ran); anything else clears both.
pub(crate) fn stamp(before: Option<&Entry>, status: Option<Status>, now: i64) -> Option<Stamp> {
    if before.is_some_and(|b| b.status == status) {
        return None;
    }
    Some(match status {
        Some(Status::Doing) => Stamp {
            claimed_at: Some(Some(now)),
            finished_at: None,
        },
        Some(Status::Done | Status::Failed) => Stamp {
            claimed_at: None,
            finished_at: Some(now),
        },
        _ => Stamp {
            claimed_at: Some(None),
            finished_at: None,
        },
    })
}
