//! What each method may touch, declared in the dispatch table beside its
//! handler (`methods::TABLE`), and enforced here before the handler runs.
//!
//! A declaration names the params fields that name pads and notes and what
//! the call does there, the field naming agents it hands work to, whether
//! only the owner may call it, and how its answer is scoped. `enforce`
//! checks each against the call's guard and writes each note's full id back
//! into the params (a token's prefix resolves among the notes it may read
//! only), so a handler works on what was checked and nothing else. A table
//! row without a declaration does not compile; `tests/scope.rs` calls every
//! method with a token as its declaration says and reads every answer for
//! what the token may not see.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::Reply;
use crate::engine::Engine;
use crate::error::Result;
use crate::guard::Guard;
use crate::model;

/// What a call does with a pad or a note it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    Read,
    /// Writes there: adds, edits, deletes, claims.
    Write,
    /// Edits the note: a write there, and rewriting its words (the call
    /// carries `content`) is the caller's own note unless its grant says
    /// `others`, as `Hide` — filing it (tags, status…) is a write.
    Edit,
    /// Hides the note from its pad's readers (superseding it): a write
    /// there, and the caller's own note unless its grant says `others`.
    Hide,
    /// Removes the note (deleting it): as `Hide`.
    Remove,
    /// Removes every note of the pad (clearing it): the owner's, or a
    /// grant's that says `others`.
    Clear,
}

/// A params field naming a pad.
#[derive(Debug, Clone, Copy)]
pub struct PadField {
    pub field: &'static str,
    pub does: Does,
    /// Absent, it means `inbox` — unless this other field is given.
    pub inbox_unless: Option<&'static str>,
}

/// How a method's answer is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// About what its fields name, checked here.
    Named,
    /// From the store through the guard's scope (`Guard::scope`,
    /// `Guard::covers`): lists, searches, figures, events.
    Scoped,
    /// About the connection alone (its subscriptions).
    Session,
}

/// One method's declaration.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub pads: &'static [PadField],
    /// Fields naming notes by id: a string, a list of them, or null.
    pub notes: &'static [(&'static str, Does)],
    /// The field naming registered agents it hands work to.
    pub agents: Option<&'static str>,
    /// Only the owner may call it; what it does, for the refusal.
    pub owner_only: Option<&'static str>,
    /// It writes wherever the notes it brings back are (a restore): a
    /// read-only token is refused before it runs.
    pub writes_found: bool,
    pub answer: Answer,
}

impl Declared {
    pub const NONE: Declared = Declared {
        pads: &[],
        notes: &[],
        agents: None,
        owner_only: None,
        writes_found: false,
        answer: Answer::Named,
    };

    /// Everything the declaration says of `params`, checked against the
    /// guard; each note field's ids made full.
    pub async fn enforce(
        &self,
        guard: &Guard,
        engine: &Engine,
        params: &mut Option<Value>,
    ) -> Result<()> {
        if guard.grant().is_none() {
            return Ok(());
        }
        if let Some(what) = self.owner_only {
            guard.owner_only(what)?;
        }
        if self.writes_found {
            guard.any_write()?;
        }
        let empty = Map::new();
        let fields = match params {
            Some(Value::Object(m)) => m,
            // Not an object: the handler's parse refuses it, naming why.
            _ => &empty,
        };
        for pad in self.pads {
            let named = match fields.get(pad.field) {
                Some(Value::String(s)) => s.as_str(),
                Some(_) => continue,
                None => match pad.inbox_unless {
                    Some(other) if !fields.contains_key(other) => model::INBOX,
                    _ => continue,
                },
            };
            match pad.does {
                Does::Read => guard.pad(named, pad.field, false)?,
                Does::Write | Does::Edit | Does::Hide | Does::Remove => {
                    guard.pad(named, pad.field, true)?
                }
                Does::Clear => {
                    guard.pad(named, pad.field, true)?;
                    guard.may_clear(&model::pad_name(pad.field, named)?)?;
                }
            }
        }
        if let Some(field) = self.agents {
            if let Some(Value::Array(to)) = fields.get(field) {
                let to: Vec<String> = to
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect();
                guard.hand_to(&to, |a| engine.is_registered_agent(a))?;
            }
        }
        let Some(Value::Object(fields)) = params else {
            return Ok(());
        };
        let rewords = fields.contains_key("content");
        for (field, does) in self.notes {
            match fields.get_mut(*field) {
                Some(Value::String(id)) => {
                    *id = resolve(guard, engine, id, *does, rewords, field).await?
                }
                Some(Value::Array(ids)) => {
                    for v in ids {
                        if let Value::String(id) = v {
                            *id = resolve(guard, engine, id, *does, rewords, field).await?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

async fn resolve(
    guard: &Guard,
    engine: &Engine,
    id: &str,
    does: Does,
    rewords: bool,
    field: &'static str,
) -> Result<String> {
    let db = engine.db();
    match does {
        Does::Read => guard.entry(db, id, false).await,
        Does::Edit if rewords => guard.may_remove(db, id, "rewrite").await,
        Does::Write | Does::Edit | Does::Clear => guard.entry(db, id, true).await,
        Does::Hide => guard.may_remove(db, id, "supersede").await,
        Does::Remove => guard.may_remove(db, id, "delete").await,
    }
    .map_err(|e| e.for_field(field))
}

/// How a set reference reads in the compact JSON of an answer: `"field":"…`
/// or `"field":["…` — a note's text could hold the field's name only with
/// its quotes escaped.
static SET_REFERENCES: LazyLock<Vec<String>> = LazyLock::new(|| {
    crate::guard::REFERENCES
        .iter()
        .flat_map(|f| [format!("\"{f}\":\""), format!("\"{f}\":[\"")])
        .collect()
});

/// An answer to a token with every reference to a note it may not read
/// taken out (`Guard::seal`); the owner's answers pass untouched.
pub(crate) async fn seal(guard: &Guard, engine: &Engine, answer: Reply) -> Result<Reply> {
    // Only an answer naming another note is read again.
    let text = answer.get();
    if guard.grant().is_none() || !SET_REFERENCES.iter().any(|p| text.contains(p.as_str())) {
        return Ok(answer);
    }
    let internal = |e: serde_json::Error| crate::error::Error::Internal(e.to_string());
    let mut v: Value = serde_json::from_str(answer.get()).map_err(internal)?;
    if !guard.seal(engine.db(), &mut v).await? {
        return Ok(answer);
    }
    Ok(super::reply(v))
}
