//! Each params type's declaration: which of its fields name a pad, a note,
//! agents or who acts, and what the call does there (`declared::Touches`).
//! A method's params type without one here does not compile into the
//! dispatch table.

use super::declared::Does::{Clear, Edit, Hide, Read, Remove, Write};
use super::declared::{Field, Notes, Pads, Ref, Role, Touches};
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
