//! What `entry.list`, `search`, tags and reports filter by, as SQL and as a
//! check of an entry still in the journal.

use rusqlite::types::Value as Sql;

use crate::storage::{EntryFilter, NewEntry};

impl EntryFilter {
    /// Appends ` AND …` clauses for this filter; `e` is entries, `p` its pad.
    pub(crate) fn push_sql(&self, sql: &mut String, args: &mut Vec<Sql>) {
        self.push_clauses(sql, args, false);
    }

    /// `push_sql` for a query that visits candidates one by one (a text
    /// index's matches): a tag is checked on each candidate's own tags
    /// rather than by listing every entry with the tag first.
    pub(crate) fn push_sql_per_entry(&self, sql: &mut String, args: &mut Vec<Sql>) {
        self.push_clauses(sql, args, true);
    }

    fn push_clauses(&self, sql: &mut String, args: &mut Vec<Sql>, per_entry: bool) {
        sql.push_str(" AND p.archived_at IS NULL");
        let mut clause = |text: &str, v: Sql| {
            sql.push_str(text);
            args.push(v);
        };
        if let Some(pad) = &self.pad {
            clause(" AND e.pad = ?", Sql::Text(pad.clone()));
        }
        if let Some(a) = &self.author {
            clause(" AND e.author = ?", Sql::Text(a.clone()));
        }
        if let Some(k) = self.kind {
            clause(" AND e.kind = ?", Sql::Text(k.as_str().into()));
        }
        if let Some(s) = self.status {
            clause(" AND e.status = ?", Sql::Text(s.as_str().into()));
        }
        if let Some(t) = self.since {
            clause(" AND e.created_at >= ?", Sql::Integer(t));
        }
        if let Some(c) = self.category {
            clause(" AND e.category = ?", Sql::Text(c.as_str().into()));
        }
        if let Some(c) = self.min_confidence {
            clause(" AND e.confidence >= ?", Sql::Real(c));
        }
        if let Some(scope) = &self.scope {
            push_scope(sql, args, scope);
        }
        if self.current_only {
            match self.scope.as_deref() {
                None => sql.push_str(crate::storage::rules::CURRENT_ONLY),
                // To a token, a note is superseded only by one it may read:
                // a newer note elsewhere does not hide it.
                Some(scope) => {
                    sql.push_str(crate::storage::rules::CURRENT_ONLY_OPEN);
                    push_scope_of("s", sql, args, scope);
                    sql.push(')');
                }
            }
        }
        for tag in &self.tags {
            sql.push_str(if per_entry {
                " AND EXISTS (SELECT 1 FROM entry_tags t WHERE t.seq = e.seq AND t.tag = ?)"
            } else {
                " AND e.seq IN (SELECT seq FROM entry_tags WHERE tag = ?)"
            });
            args.push(Sql::Text(tag.clone()));
        }
    }
}

/// ` AND` `e.pad` is one of a token's pads (names and `prefix*` patterns).
pub(crate) fn push_scope(sql: &mut String, args: &mut Vec<Sql>, scope: &[String]) {
    push_scope_of("e", sql, args, scope)
}

/// `push_scope` on the entries aliased `alias`.
fn push_scope_of(alias: &str, sql: &mut String, args: &mut Vec<Sql>, scope: &[String]) {
    sql.push_str(" AND (0");
    for pattern in scope {
        // Pad names hold no GLOB metacharacters, so only the `*` of a
        // pattern is one.
        sql.push_str(&format!(" OR {alias}.pad GLOB ?"));
        args.push(Sql::Text(pattern.clone()));
    }
    sql.push(')');
}

impl EntryFilter {
    /// `push_sql`'s conditions, for an entry still only in the journal
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
