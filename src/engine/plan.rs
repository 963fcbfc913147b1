//! A search as a plan: the request turned into a value — which ranked
//! lists run, how deep, under which filter, and how they are fused —
//! before anything runs (`Plan::new`, pure, so tests assert on it); then
//! the lists run (`Engine::run_lists`, `search.rs`), are fused and cut;
//! `explain` is the plan plus each list's part.

use std::fmt;

use super::fusion::{self, Weights};
use crate::error::{Error, Result};
use crate::protocol::{SearchMode, SearchParams, MAX_SEARCH_LIMIT};
use crate::semantic::splade::Pieces;
use crate::storage::EntryFilter;

/// What a search will do.
pub(super) struct Plan {
    /// The query, trimmed.
    pub query: String,
    /// The conditions every hit meets (a token's pads among them).
    pub filter: EntryFilter,
    /// The mode it runs in: `hybrid` runs as `text` while meaning search
    /// is not ready.
    pub mode: SearchMode,
    /// How many hits the page takes (before exact copies fold).
    pub limit: u32,
    /// How deep each list goes: hybrid fuses more than it shows, so each
    /// list can lift the others.
    pub k: u32,
    /// The word side's tiers (`Engine::text_hits`); `None` in `semantic`.
    pub words: Option<Words>,
    /// Whether the meaning side runs.
    pub meaning: bool,
    /// The related words (the sparse list), in hybrid with the sparse
    /// model: the tokenizer the query's pieces come from.
    pub sparse: Option<Pieces>,
    /// How a hybrid's lists are fused; `None`: one list, as it ranks.
    pub fusion: Option<Weights>,
}

/// How the word side runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Words {
    /// Whether the substring tier runs (the slowest).
    pub substrings: bool,
    /// Beside the meaning side: the smaller postings budget.
    pub beside_meaning: bool,
}

/// What the engine can rank by besides words: meaning search ready, with
/// the sparse model's tokenizer when it is loaded; else why not (`None`:
/// the engine was started without meaning search).
pub(super) type Available = std::result::Result<Option<Pieces>, Option<Error>>;

impl Plan {
    /// The plan for `query` (as `asked` gives it) in `mode`, over
    /// `filter`, for a page of `want` hits.
    pub fn new(
        query: &str,
        mode: SearchMode,
        filter: EntryFilter,
        available: Available,
        want: u32,
    ) -> Result<Plan> {
        let query = query.to_string();
        let (mode, sparse) = match (mode, available) {
            (SearchMode::Text, _) | (SearchMode::Hybrid, Err(_)) => (SearchMode::Text, None),
            (SearchMode::Semantic, Err(why)) => {
                return Err(why.unwrap_or_else(|| Error::Unavailable(
                    "semantic search is off in this engine (started without a model); use mode 'text', or restart `pad serve` without --no-semantic.".into(),
                )))
            }
            (SearchMode::Semantic, Ok(_)) => (SearchMode::Semantic, None),
            (SearchMode::Hybrid, Ok(pieces)) => (SearchMode::Hybrid, pieces),
        };
        let hybrid = mode == SearchMode::Hybrid;
        let words = (mode != SearchMode::Semantic).then_some(Words {
            // Substrings only for one-word queries in hybrid, such as an
            // identifier fragment; longer queries are what meaning search
            // is for.
            substrings: !hybrid || query.split_whitespace().count() == 1,
            beside_meaning: hybrid,
        });
        let fusion = hybrid.then_some(match sparse {
            Some(_) => fusion::THREE_LISTS,
            None => fusion::TWO_LISTS,
        });
        Ok(Plan {
            k: if hybrid { fused_depth(want) } else { want },
            limit: want,
            meaning: mode != SearchMode::Text,
            query,
            filter,
            mode,
            words,
            sparse,
            fusion,
        })
    }
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("query", &self.query)
            .field("filter", &self.filter)
            .field("mode", &self.mode)
            .field("limit", &self.limit)
            .field("k", &self.k)
            .field("words", &self.words)
            .field("meaning", &self.meaning)
            .field("sparse", &self.sparse.is_some())
            .field("fusion", &self.fusion)
            .finish()
    }
}

/// The query, trimmed, or why it cannot be searched for.
pub(super) fn asked(p: &SearchParams) -> Result<&str> {
    let query = p.query.trim();
    if query.is_empty() {
        return Err(Error::invalid(
            "query",
            "query is empty; give words to look for, e.g. 'docker login'.",
        ));
    }
    let qlen = query.chars().count();
    if qlen > 1000 {
        return Err(Error::over_limit(
            "query",
            format!("query is {qlen} characters; the limit is 1000. Search for the key phrase."),
            1000,
            qlen,
        ));
    }
    Ok(query)
}

/// Hybrid search fuses this many hits from each list, so a hit low on one
/// list but present on others can still rise into the page.
fn fused_depth(limit: u32) -> u32 {
    (limit * 2).clamp(20, MAX_SEARCH_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(query: &str) -> SearchParams {
        serde_json::from_value(serde_json::json!({ "query": query })).unwrap()
    }

    fn plan(query: &str, mode: SearchMode, available: Available, want: u32) -> Result<Plan> {
        Plan::new(query, mode, EntryFilter::default(), available, want)
    }

    #[test]
    fn hybrid_without_meaning_runs_as_text_and_semantic_says_why() {
        let p = plan("staging db", SearchMode::Hybrid, Err(None), 10).unwrap();
        assert_eq!(p.mode, SearchMode::Text);
        assert!(!p.meaning && p.sparse.is_none() && p.fusion.is_none());
        assert_eq!(p.k, 10, "one list: as deep as the page");
        assert_eq!(
            p.words,
            Some(Words {
                substrings: true,
                beside_meaning: false
            })
        );
        let loading = Error::Unavailable("semantic search is starting".into());
        let e = plan("x", SearchMode::Semantic, Err(Some(loading)), 10).unwrap_err();
        assert!(e.to_string().contains("starting"), "{e}");
        let e = plan("x", SearchMode::Semantic, Err(None), 10).unwrap_err();
        assert!(e.to_string().contains("--no-semantic"), "{e}");
        let loading = Error::Unavailable("semantic search is starting".into());
        let p = plan("x", SearchMode::Hybrid, Err(Some(loading)), 10).unwrap();
        assert_eq!(p.mode, SearchMode::Text, "still loading: words alone");
    }

    #[test]
    fn hybrid_fuses_two_lists_deeper_than_the_page_and_skips_substrings_for_phrases() {
        let p = plan("when did we move staging", SearchMode::Hybrid, Ok(None), 5).unwrap();
        assert_eq!(p.mode, SearchMode::Hybrid);
        assert!(p.meaning);
        assert_eq!((p.limit, p.k), (5, 20), "at least 20 from each list");
        assert_eq!(p.fusion, Some(fusion::TWO_LISTS));
        assert_eq!(
            p.words,
            Some(Words {
                substrings: false,
                beside_meaning: true
            })
        );
        let p = plan("ocker", SearchMode::Hybrid, Ok(None), 50).unwrap();
        assert_eq!(p.k, 100, "twice the page");
        assert!(
            p.words.unwrap().substrings,
            "one word: an identifier fragment"
        );
        let p = plan("x", SearchMode::Hybrid, Ok(None), MAX_SEARCH_LIMIT).unwrap();
        assert_eq!(p.k, MAX_SEARCH_LIMIT);
    }

    #[test]
    fn with_the_sparse_model_hybrid_fuses_three_lists_and_no_other_mode_does() {
        let pieces = || Ok(Some(Pieces::of_words(&["dog", "puppy"])));
        let p = plan("dog", SearchMode::Hybrid, pieces(), 10).unwrap();
        assert_eq!(p.fusion, Some(fusion::THREE_LISTS));
        assert!(p.sparse.is_some(), "the sparse list runs");
        assert_eq!(p.k, 20, "as deep as the others");
        assert!(p.meaning && p.words.is_some());
        let p = plan("dog", SearchMode::Semantic, pieces(), 10).unwrap();
        assert!(p.sparse.is_none() && p.fusion.is_none());
        let p = plan("dog", SearchMode::Text, pieces(), 10).unwrap();
        assert!(p.sparse.is_none() && !p.meaning && p.fusion.is_none());
    }

    #[test]
    fn semantic_runs_the_meaning_side_alone() {
        let p = plan("deploys", SearchMode::Semantic, Ok(None), 7).unwrap();
        assert!(p.meaning && p.words.is_none() && p.fusion.is_none());
        assert_eq!(p.k, 7);
    }

    #[test]
    fn an_empty_or_overlong_query_is_refused_before_anything_runs() {
        let e = asked(&params("   ")).unwrap_err();
        assert!(e.to_string().contains("query is empty"), "{e}");
        let e = asked(&params(&"a".repeat(1001))).unwrap_err();
        assert!(e.to_string().contains("limit is 1000"), "{e}");
        assert_eq!(asked(&params("  staging db ")).unwrap(), "staging db");
    }
}
