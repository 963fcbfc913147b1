//! What each method may touch, declared on its params type (`each`, at
//! the end) and enforced here on the very value its handler gets.
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

/// Each params type's declaration: which of its fields name a pad, a note,
/// agents or who acts, and what the call does there (`Touches`). A method's
/// params type without one here does not compile into the dispatch table.
mod each {
    use super::Does::{Clear, Edit, Hide, Read, Remove, Write};
    use super::{Field, Notes, Pads, Ref, Role, Touches};
    use crate::model;
    use crate::protocol::*;

    macro_rules! touches {
        ($($(#[$keyed:ident])? $ty:ty { $($field:ident: $role:ident $(($does:ident))?),* $(,)? })*) => {$(
            impl Touches for $ty {
                $(touches!(@$keyed);)?
                const FIELDS: &'static [Field] = &[
                    $(Field { name: stringify!($field), role: touches!(@role $role $($does)?) }),*
                ];
                #[allow(unused_mut, clippy::vec_init_then_push)]
                fn refs(&mut self) -> Vec<Ref<'_>> {
                    let mut out = Vec::new();
                    $(touches!(@ref out self $field $role $($does)?);)*
                    out
                }
            }
        )*};
        (@keyed) => {
            fn sent_key(&self) -> Option<&str> {
                self.idempotency_key.as_deref()
            }
        };
        (@role pad $does:ident) => { Role::Pad($does) };
        (@role note $does:ident) => { Role::Note($does) };
        (@role agents) => { Role::Agents };
        (@role actor) => { Role::Actor };
        (@ref $out:ident $s:ident $field:ident pad $does:ident) => {
            for name in Pads::pads(&$s.$field) {
                $out.push(Ref::Pad(stringify!($field), name, $does));
            }
        };
        (@ref $out:ident $s:ident $field:ident note $does:ident) => {
            for id in Notes::ids(&mut $s.$field) {
                $out.push(Ref::Note(stringify!($field), id, $does));
            }
        };
        (@ref $out:ident $s:ident $field:ident agents) => {
            $out.push(Ref::Agents(stringify!($field), &$s.$field));
        };
        (@ref $out:ident $s:ident $field:ident actor) => {
            $out.push(Ref::Actor(stringify!($field), &mut $s.$field));
        };
    }

    touches! {
        #[keyed]
        AddParams {
            pad: pad(Write),
            reply_to: note(Read),
            supersedes: note(Hide),
            depends_on: note(Read),
            to: agents,
            author: actor,
        }
        IdParams { id: note(Read) }
        DeleteParams { id: note(Remove) }
        // Works on deleted notes too: the engine resolves it through the guard.
        HistoryParams {}
        TrashParams { pad: pad(Read) }
        // The engine checks each note it brings back, and a rewording as an edit.
        RestoreParams {}
        PurgeParams {}
        ChangesParams { pad: pad(Read) }
        ListParams { pad: pad(Read) }
        SearchParams { pad: pad(Read) }
        TagsParams { pad: pad(Read) }
        PadListParams {}
        ConfigureParams { name: pad(Write) }
        PadNameParams { name: pad(Write) }
        ClearParams { name: pad(Clear) }
        ExportParams { name: pad(Read) }
        // Patterns, each checked by the engine (`Guard::may_watch`).
        SubscribeParams {}
        UnsubscribeParams {}
        StatsParams {}
        ReindexParams {}
        InboxParams { author: actor }
        PlanParams { pad: pad(Read) }
        #[keyed]
        ClaimParams { pad: pad(Write), agent: actor }
        HeartbeatParams { id: note(Write), agent: actor }
        CompleteParams { id: note(Write), agent: actor }
        FailParams { id: note(Write), agent: actor }
        ShareParams { id: note(Read), to: pad(Write), author: actor }
        ReportParams { pad: pad(Read) }
        TokenCreateParams {}
        TokenListParams {}
        TokenRevokeParams {}
        AgentAddParams {}
        AgentListParams {}
        AgentNameParams {}
        DeliveriesParams {}
    }

    impl Touches for UpdateParams {
        const FIELDS: &'static [Field] = &[
            Field {
                name: "id",
                role: Role::Note(Edit),
            },
            Field {
                name: "supersedes",
                role: Role::Note(Hide),
            },
            Field {
                name: "depends_on",
                role: Role::Note(Read),
            },
        ];

        fn refs(&mut self) -> Vec<Ref<'_>> {
            let mut out = vec![Ref::Note("id", &mut self.id, Edit)];
            out.extend(
                self.supersedes
                    .ids()
                    .into_iter()
                    .map(|id| Ref::Note("supersedes", id, Hide)),
            );
            out.extend(
                self.depends_on
                    .ids()
                    .into_iter()
                    .map(|id| Ref::Note("depends_on", id, Read)),
            );
            out
        }

        fn patch(&self) -> Option<&UpdateParams> {
            Some(self)
        }
    }

    /// `ask` asks a new question in its pad (the inbox when none is named), or
    /// waits on one asked before (`id`): the same choice `Engine::ask` makes.
    impl Touches for AskParams {
        const FIELDS: &'static [Field] = &[
            Field {
                name: "pad",
                role: Role::Pad(Write),
            },
            Field {
                name: "id",
                role: Role::Note(Read),
            },
            Field {
                name: "author",
                role: Role::Actor,
            },
        ];

        fn sent_key(&self) -> Option<&str> {
            self.idempotency_key.as_deref()
        }

        fn refs(&mut self) -> Vec<Ref<'_>> {
            let mut out = vec![Ref::Actor("author", &mut self.author)];
            // A pad named is checked whether or not it is used.
            match (&mut self.id, self.pad.as_deref()) {
                (Some(id), pad) => {
                    out.push(Ref::Note("id", id, Read));
                    out.extend(pad.map(|p| Ref::Pad("pad", p, Write)));
                }
                (None, pad) => out.push(Ref::Pad("pad", pad.unwrap_or(model::INBOX), Write)),
            }
            out
        }
    }
}
