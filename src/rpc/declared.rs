//! What each method may touch, declared on its params type and enforced
//! here on the very value its handler gets.
//!
//! A call's params are parsed once into the method's type; that type says
//! (`Touches`) which of its fields name a pad, a note, the agents it hands
//! work to and who acts, and what the call does there. `enforce` checks each
//! against the call's guard and writes each note's full id back into the
//! typed value (a token's prefix resolves among the notes it may read only),
//! and puts a token's own name in every field naming who acts, or refuses
//! the call when the field names anyone else. A field present but `null`,
//! absent, or of a wrong type is decided once, by parsing: what the guard
//! saw is what the handler does. A params type without a declaration does
//! not compile into the table (`methods::TABLE`); `tests/scope.rs` tries
//! every declared field of every method as a token would (`FIELDS`).

use crate::engine::Engine;
use crate::error::Result;
use crate::guard::Guard;
use crate::model;
use crate::protocol::UpdateParams;

/// What a call does with a pad or a note it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    Read,
    /// Writes there: adds, claims, files (tags, status…).
    Write,
    /// Edits the note (`entry.update`): a write there, and the patch's own
    /// rules (`Guard::may_edit`): rewording is the caller's own note unless
    /// its grant says `others`; what makes a question a question is the
    /// asker's.
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

/// What a params field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Pad(Does),
    Note(Does),
    /// Registered agents the call hands work to.
    Agents,
    /// Who acts: for a token, its own name or nothing.
    Actor,
}

/// One declared field of a params type.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub role: Role,
}

/// One value a call's params name, borrowed from the parsed params.
pub enum Ref<'a> {
    Pad(&'static str, &'a str, Does),
    Note(&'static str, &'a mut String, Does),
    Agents(&'static str, &'a [String]),
    Actor(&'static str, &'a mut Option<String>),
}

/// What a params type names: its fields (for the scope matrix and the
/// docs) and, on a parsed value, the values themselves.
pub trait Touches {
    const FIELDS: &'static [Field];
    fn refs(&mut self) -> Vec<Ref<'_>>;
    /// An edit's patch, for the rules that read what it changes.
    fn patch(&self) -> Option<&UpdateParams> {
        None
    }
    /// The idempotency key sent, for a method that takes one
    /// (`storage::once`).
    fn sent_key(&self) -> Option<&str> {
        None
    }
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

/// What a method declares beside its params' fields.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    /// Only the owner may call it; what it does, for the refusal.
    pub owner_only: Option<&'static str>,
    /// It writes wherever the notes it brings back are (a restore): a
    /// read-only token is refused before it runs.
    pub writes_found: bool,
    pub answer: Answer,
}

impl Declared {
    pub const NONE: Declared = Declared {
        owner_only: None,
        writes_found: false,
        answer: Answer::Named,
    };
}

/// Everything `declared` and the params' type say of `params`, checked
/// against the guard; each note's id made full, each actor field the
/// token's name.
pub async fn enforce<P: Touches>(
    declared: &Declared,
    guard: &Guard,
    engine: &Engine,
    params: &mut P,
) -> Result<()> {
    if guard.grant().is_none() {
        return Ok(());
    }
    if let Some(what) = declared.owner_only {
        guard.owner_only(what)?;
    }
    if declared.writes_found {
        guard.any_write()?;
    }
    for r in params.refs() {
        match r {
            Ref::Pad(field, named, does) => match does {
                Does::Read => guard.pad(named, field, false)?,
                Does::Write | Does::Edit | Does::Hide | Does::Remove => {
                    guard.pad(named, field, true)?
                }
                Does::Clear => {
                    guard.pad(named, field, true)?;
                    guard.may_clear(&model::pad_name(field, named)?)?;
                }
            },
            Ref::Note(field, id, does) => {
                *id = resolve(guard, engine, id, does)
                    .await
                    .map_err(|e| e.for_field(field))?
            }
            Ref::Agents(_, to) => guard.hand_to(to, |a| engine.is_registered_agent(a))?,
            Ref::Actor(field, who) => guard.acts_as(field, who)?,
        }
    }
    if let Some(patch) = params.patch() {
        guard.may_edit(engine.db(), patch).await?;
    }
    Ok(())
}

async fn resolve(guard: &Guard, engine: &Engine, id: &str, does: Does) -> Result<String> {
    let db = engine.db();
    match does {
        Does::Read => guard.entry(db, id, false).await,
        Does::Write | Does::Edit | Does::Clear => guard.entry(db, id, true).await,
        Does::Hide => guard.may_remove(db, id, "supersede").await,
        Does::Remove => guard.may_remove(db, id, "delete").await,
    }
}

/// The values of a field naming pads: one, maybe one, or several.
pub trait Pads {
    fn pads(&self) -> Vec<&str>;
}

impl Pads for String {
    fn pads(&self) -> Vec<&str> {
        vec![self]
    }
}

impl Pads for Option<String> {
    fn pads(&self) -> Vec<&str> {
        self.as_deref().into_iter().collect()
    }
}

impl Pads for Vec<String> {
    fn pads(&self) -> Vec<&str> {
        self.iter().map(String::as_str).collect()
    }
}

/// The ids of a field naming notes: one, maybe one, several, or (in a
/// patch) maybe a change to one.
pub trait Notes {
    fn ids(&mut self) -> Vec<&mut String>;
}

impl Notes for String {
    fn ids(&mut self) -> Vec<&mut String> {
        vec![self]
    }
}

impl Notes for Option<String> {
    fn ids(&mut self) -> Vec<&mut String> {
        self.iter_mut().collect()
    }
}

impl Notes for Vec<String> {
    fn ids(&mut self) -> Vec<&mut String> {
        self.iter_mut().collect()
    }
}

impl Notes for Option<Vec<String>> {
    fn ids(&mut self) -> Vec<&mut String> {
        self.iter_mut().flatten().collect()
    }
}

impl Notes for Option<Option<String>> {
    fn ids(&mut self) -> Vec<&mut String> {
        self.iter_mut().flatten().collect()
    }
}
