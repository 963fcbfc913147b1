//! A filter's check of an entry still only in the journal: what
//! `Query::filter` asks of the database, asked of a journaled entry.

use crate::storage::{EntryFilter, NewEntry};

impl EntryFilter {
    /// `Query::filter`'s conditions, for an entry still only in the journal
    /// (never superseded: a note that supersedes commits the journal first).
    pub(crate) fn admits(&self, e: &NewEntry, archived: &dyn Fn(&str) -> bool) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        !archived(&e.pad)
            && is(&self.pad, &e.pad)
            && is(&self.author, &e.author)
            && self.kind.is_none_or(|k| k == e.kind)
            && self.status.is_none_or(|s| Some(s) == e.status)
            && self.since.is_none_or(|t| e.now >= t)
            && self.category.is_none_or(|c| Some(c) == e.category)
            && self
                .min_confidence
                .is_none_or(|c| e.confidence.is_some_and(|have| have >= c))
            && self.scope.as_ref().is_none_or(|scope| {
                scope
                    .iter()
                    .any(|p| crate::access::pattern_matches(p, &e.pad))
            })
            && self.tags.iter().all(|t| e.tags.contains(t))
    }
}
