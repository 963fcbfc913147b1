//! Superseding: a note that says it replaces an older one (`supersedes`).
//! The older note is kept as it is; whether it is superseded is read from
//! the newer one's field (`Entry::superseded_by`), and lists, searches and
//! exports leave it out unless asked for `include_superseded`.

use super::Engine;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::model::NoteRef;

/// How far a chain of supersessions is followed to find a loop.
const MAX_CHAIN: usize = 1000;

impl Engine {
    /// Refuses an edit making `id` supersede `older` when `older` already
    /// (through a chain) supersedes `id`: the two would each hide the other.
    pub(super) async fn refuse_supersede_loop(&self, id: &str, older: &str) -> Result<()> {
        crate::storage::rules::not_superseding_itself(id, Some(older))?;
        let mut at = older.to_owned();
        for _ in 0..MAX_CHAIN {
            if at == id {
                return Err(Error::invalid(
                    "supersedes",
                    format!(
                        "entry {older} already supersedes {id} (directly or through the notes it replaces), so {id} cannot supersede it; \
                         to make {id} current again, clear 'supersedes' on the note that replaces it."
                    ),
                ));
            }
            match self.db().get(&at).await.ok().and_then(|e| e.supersedes) {
                Some(next) => at = next.into(),
                None => return Ok(()),
            }
        }
        Ok(())
    }

    /// Refuses bringing `back` (a deleted note, or an older version of a
    /// live one whose `supersedes` is `now`) when that would hide a note
    /// the caller may not write — superseding asks as much — or close a
    /// loop of supersessions (each note hiding the next: a whole pad's list
    /// empty).
    pub(super) async fn may_bring_back(
        &self,
        back: &crate::model::Entry,
        now: Option<&str>,
        guard: &crate::guard::Guard,
    ) -> Result<()> {
        let Some(older) = back.supersedes.as_deref().filter(|o| Some(*o) != now) else {
            return Ok(());
        };
        if guard.may_remove(self.db(), older, "hide").await.is_err() {
            return Err(Error::Forbidden(format!(
                "entry {} superseded a note your token may not change; bringing it back would hide that note again. Ask the person to restore it, or add a new note instead.",
                back.id
            )));
        }
        self.refuse_supersede_loop(&back.id, older)
            .await
            .map_err(|_| {
                Error::invalid(
                    "id",
                    format!(
                        "bringing entry {} back would close a loop: it supersedes {older}, which (through the notes it replaces) supersedes it again, and every note of the loop would be hidden. First clear 'supersedes' on one of them (entry.update with supersedes null), then restore.",
                        back.id
                    ),
                )
            })
    }

    /// Tells subscribers that the notes `ids` were superseded or became
    /// current again (their `superseded_by` moved): an update event each,
    /// the note as it is now.
    pub(super) async fn superseded_changed(&self, ids: Vec<Option<NoteRef>>) {
        for id in ids.into_iter().flatten() {
            if let Ok(e) = self.db().get(&id).await {
                self.0.bus.entry_changed(EventType::Updated, None, &e);
            }
        }
    }
}
