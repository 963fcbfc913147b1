//! The guard: what one call may touch, decided in one place.
//!
//! `rpc::dispatch` makes a `Guard` for every call from the connection's
//! access (a token's grant is looked up afresh, so a revoked token stops at
//! once) and asks it before acting: may this caller read or write that pad,
//! act on that entry, hand work to that agent, call an owner's method. The
//! engine takes the same guard and asks it what it may show and change
//! (`covers`, `may_read`, `may_write`, `scope`). The grant's own tests and
//! their wording live with it (`access::Grant`); every caller goes through
//! here.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::access::{Access, Grant};
use crate::error::{Error, Result};
use crate::model::{self, Kind};
use crate::protocol::UpdateParams;
use crate::storage::rules::{ambiguous, no_entry};
use crate::storage::{EntryFilter, Storage};

/// One call's access: the owner (no grant) or a token's grant.
#[derive(Clone)]
pub struct Guard {
    access: Access,
    grant: Option<Arc<Grant>>,
}

impl Guard {
    /// The guard of a call made with `access` and, for a token, its grant
    /// as stored now (`Engine::grant`).
    pub fn new(access: Access, grant: Option<Arc<Grant>>) -> Guard {
        Guard { access, grant }
    }

    /// The owner's: everything is allowed (the engine's own calls).
    pub fn owner() -> Guard {
        Guard::new(Access::Owner, None)
    }

    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The token's grant; `None` for the owner.
    pub fn grant(&self) -> Option<&Grant> {
        self.grant.as_deref()
    }

    /// The name of the token the call was made with: it writes under that
    /// name, whatever the call says, so it cannot speak as anyone else.
    pub fn token(&self) -> Option<&str> {
        match &self.access {
            Access::Token { name, .. } => Some(name),
            _ => None,
        }
    }

    /// Refuses a method only the owner may call; `what` says what it does.
    pub fn owner_only(&self, what: &str) -> Result<()> {
        match self.grant() {
            None => Ok(()),
            Some(g) => Err(Error::Forbidden(format!(
                "token '{}' may not {what}: only the owner may. The token allows {}.",
                g.name,
                g.describe()
            ))),
        }
    }

    /// Refuses reading (or, with `write`, writing) the pad `raw` names.
    pub fn pad(&self, raw: &str, field: &str, write: bool) -> Result<()> {
        if let Some(g) = self.grant() {
            let pad = model::pad_name(field, raw)?;
            if write {
                g.check_write(&pad)?;
            } else {
                g.check_read(&pad)?;
            }
        }
        Ok(())
    }

    /// Checks an entry's pad before acting on it by id, and gives the full
    /// id to act on. To a token, an entry outside its grant does not exist:
    /// its prefix resolves among the entries it may read only (a foreign
    /// entry neither matches nor makes a prefix ambiguous), and the error
    /// names no foreign pad.
    pub async fn entry(&self, db: &dyn Storage, id: &str, write: bool) -> Result<String> {
        let Some(g) = self.grant() else {
            return Ok(id.to_owned());
        };
        let covers = |pad: &str| g.covers(pad);
        match db.visible_matches(id, &covers).await?.as_slice() {
            [] => Err(no_entry("id", &id.trim().to_lowercase())),
            // Readable already (the pad is covered): a write needs more.
            [(full, pad)] => {
                if write {
                    g.check_write(pad)?;
                }
                Ok(full.clone())
            }
            _ => Err(ambiguous("id", id)),
        }
    }

    /// Resolves `id` for a change that removes, hides or rewrites the note
    /// (`what`: "delete", "supersede", "rewrite"), refused when the note is someone else's and
    /// the token's grant keeps it to its own (`others`): the person's notes
    /// are the person's.
    pub async fn may_remove(&self, db: &dyn Storage, id: &str, what: &str) -> Result<String> {
        let full = self.entry(db, id, true).await?;
        let Some(g) = self.grant().filter(|g| !g.others) else {
            return Ok(full);
        };
        let note = db.get(&full).await?;
        if note.author.eq_ignore_ascii_case(&g.name) {
            return Ok(full);
        }
        Err(Error::Forbidden(format!(
            "token '{}' may not {what} note {full}: '{}' wrote it, and the token removes, hides or rewrites only its own notes. Reply to it or add a note of your own instead, or ask the person for a token that may (pad token create --others).",
            g.name, note.author
        )))
    }

    /// Refuses clearing a pad (every note in it, others' too) to a token
    /// whose grant keeps it to its own notes.
    pub fn may_clear(&self, pad: &str) -> Result<()> {
        match self.grant() {
            Some(g) if !g.others => Err(Error::Forbidden(format!(
                "token '{}' may not clear pad '{pad}': clearing removes everyone's notes, and the token removes only its own. Delete its notes one by one (entry.delete), or ask the person for a token that may (pad token create --others).",
                g.name
            ))),
            _ => Ok(()),
        }
    }

    /// Whether the caller may read the note `id` (a full id).
    pub async fn sees(&self, db: &dyn Storage, id: &str) -> Result<bool> {
        let Some(g) = self.grant() else {
            return Ok(true);
        };
        let covers = |pad: &str| g.covers(pad);
        Ok(db
            .visible_matches(id, &covers)
            .await?
            .iter()
            .any(|(full, _)| full == id))
    }

    /// Refuses a read-only token before a call that writes wherever the
    /// entries it names are (a restore; each pad is checked as it comes back).
    pub fn any_write(&self) -> Result<()> {
        match self.grant() {
            Some(g) => g.check_any_write(),
            None => Ok(()),
        }
    }

    /// Refuses addressing a registered agent the grant does not name. The
    /// names are read exactly as the engine stores them (`model::recipients`),
    /// so no spelling passes here and reaches the agent after.
    pub fn hand_to(&self, to: &[String], registered: impl Fn(&str) -> bool) -> Result<()> {
        let Some(g) = self.grant() else {
            return Ok(());
        };
        for agent in model::recipients("to", to)? {
            if registered(&agent) {
                g.check_dispatch(&agent)?;
            }
        }
        Ok(())
    }

    /// Whether what the caller writes may reach the registered agent
    /// `agent` (a note addressed to it, a reply in a thread handed to it,
    /// an answer to its question): the owner's does; a token's if its grant
    /// names the agent.
    pub fn may_hand_to(&self, agent: &str) -> bool {
        self.grant().is_none_or(|g| g.check_dispatch(agent).is_ok())
    }

    /// Who acts is the caller: a token's field naming who acts (an author,
    /// a task's agent, an inbox's owner) is its own name, filled in when
    /// left out; naming anyone else refuses the call.
    pub fn acts_as(&self, field: &str, who: &mut Option<String>) -> Result<()> {
        let Some(name) = self.token() else {
            return Ok(());
        };
        if let Some(given) = who.as_deref() {
            if !given.trim().eq_ignore_ascii_case(name) {
                let shown: String = given.chars().take(64).collect();
                return Err(Error::Forbidden(format!(
                    "token '{name}' acts only as itself: '{field}' is '{shown}', and a token's call may name no one else there. Leave '{field}' out (the engine fills in '{name}') or give '{name}'."
                )));
            }
        }
        *who = Some(name.to_owned());
        Ok(())
    }

    /// Refuses an edit (`entry.update`, or a restore that takes a note
    /// back) a token may not make on someone else's note: rewording it
    /// unless its grant says `others`, and changing what makes a question
    /// a question (its kind, `meta.answer_from`) at all — that is the
    /// asker's. `patch.id` is a full id the caller may write.
    pub async fn may_edit(&self, db: &dyn Storage, patch: &UpdateParams) -> Result<()> {
        let Some(g) = self.grant() else {
            return Ok(());
        };
        let note = db.get(&patch.id).await?;
        // A task's work is its holder's: finished or handed on by the task
        // methods, as its holder.
        let holder = note
            .assignee
            .as_deref()
            .filter(|a| !a.eq_ignore_ascii_case(&g.name));
        let works = patch.status.is_some() || patch.assignee.is_some() || patch.resume.is_some();
        if let (Some(holder), true) = (holder, works) {
            return Err(Error::Forbidden(format!(
                "token '{}' may not change the status, holder or resume of note {}: '{holder}' holds it. Its holder finishes it (task.complete, task.fail); reply in its thread to say something about it.",
                g.name, note.id
            )));
        }
        if let Some(Some(to)) = &patch.assignee {
            if !to.trim().eq_ignore_ascii_case(&g.name) {
                return Err(Error::Forbidden(format!(
                    "token '{}' assigns a task only to itself, not to '{}': others take tasks with task.claim. Leave 'assignee' out, or give '{}'.",
                    g.name,
                    to.chars().take(64).collect::<String>(),
                    g.name
                )));
            }
        }
        if note.author.eq_ignore_ascii_case(&g.name) {
            return Ok(());
        }
        let rewords = patch.content.as_ref().is_some_and(|c| *c != note.content);
        if rewords && !g.others {
            return Err(Error::Forbidden(format!(
                "token '{}' may not rewrite note {}: '{}' wrote it, and the token removes, hides or rewrites only its own notes. Reply to it or add a note of your own instead, or ask the person for a token that may (pad token create --others).",
                g.name, note.id, note.author
            )));
        }
        let question = note.kind == Kind::Question || patch.kind == Some(Kind::Question);
        let answer_from =
            |m: Option<&Map<String, Value>>| m.and_then(|m| m.get(model::ANSWER_FROM)).cloned();
        let redefines = patch.kind.is_some_and(|k| k != note.kind)
            || patch
                .meta
                .as_ref()
                .is_some_and(|m| answer_from(m.as_ref()) != answer_from(note.meta.as_ref()));
        if question && redefines {
            return Err(Error::Forbidden(format!(
                "token '{}' may not change what makes note {} a question (its kind or meta.answer_from): '{}' asked it, and only the asker and the person may. File it with tags or status, or reply in its thread.",
                g.name, note.id, note.author
            )));
        }
        Ok(())
    }
}

impl Guard {
    /// Whether the caller may read the pad named `pad` (a stored name).
    pub fn covers(&self, pad: &str) -> bool {
        self.grant().is_none_or(|g| g.covers(pad))
    }

    /// Refuses reading the pad named `pad` (a stored name).
    pub fn may_read(&self, pad: &str) -> Result<()> {
        self.grant().map_or(Ok(()), |g| g.check_read(pad))
    }

    /// Refuses writing in the pad named `pad` (a stored name).
    pub fn may_write(&self, pad: &str) -> Result<()> {
        self.grant().map_or(Ok(()), |g| g.check_write(pad))
    }

    /// Refuses watching pads `pattern` names (a name or `prefix*`) unless
    /// the grant covers all of them.
    pub fn may_watch(&self, pattern: &str) -> Result<()> {
        match self.grant() {
            Some(g) if !g.covers_pattern(pattern) => Err(Error::Forbidden(format!(
                "token '{}' may not watch '{pattern}': it allows {}. Subscribe to pads it covers, or leave 'pads' out to watch all of them.",
                g.name,
                g.describe()
            ))),
            _ => Ok(()),
        }
    }

    /// The pads a token may read (names and `prefix*` patterns); `None`:
    /// every pad (the owner, or a grant of `*`, which narrows nothing).
    pub fn scope_pads(&self) -> Option<Vec<String>> {
        self.grant()
            .filter(|g| !crate::access::covers_all(&g.pads))
            .map(|g| g.pads.clone())
    }

    /// Narrows a filter to what the caller may read: its pad must be
    /// covered, and without a pad it spans the token's pads only.
    pub fn scope(&self, mut filter: EntryFilter) -> Result<EntryFilter> {
        if let Some(pad) = &filter.pad {
            self.may_read(pad)?;
        }
        filter.scope = self.scope_pads();
        Ok(filter)
    }

    /// Everything the caller may read, in one pad or (without one) in all.
    pub fn pad_scope(&self, pad: Option<&str>) -> Result<EntryFilter> {
        let filter = EntryFilter {
            pad: pad.map(|n| model::pad_name("pad", n)).transpose()?,
            ..EntryFilter::default()
        };
        self.scope(filter)
    }
}
