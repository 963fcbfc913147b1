//! `search {explain: true}`: what the query became (its words and their
//! weights, the common words dropped, the budget's cuts, the conditions
//! that narrowed it) and why each hit ranked where it did (the words it
//! holds, its place and score in each side's list, what its neighbours
//! added). Built from the figures the ranking used, and only when asked.

use super::fusion::{Fused, Side};
use super::sparse::SparsePlan;
use super::Engine;
use crate::error::Result;
use crate::model::Entry;
use crate::protocol::{
    Candidates, HitExplain, QueryExplain, Ranked, SearchMode, SearchParams, WordWeight,
};
use crate::storage::EntryFilter;
use crate::terms;

/// What the word side did with a query, as its tiers ran it.
#[derive(Debug, Default, Clone)]
pub(super) struct TextPlan {
    /// Read as keywords (else as a question).
    pub keywords: bool,
    /// The question's common words, left out.
    pub dropped_common: Vec<String>,
    /// Words left out because their postings passed the budget.
    pub over_budget: Vec<String>,
    /// Only the newest matches of the rarest word were ranked.
    pub newest_only: bool,
    /// The words the ranked tier scored by, with how many entries hold
    /// each; empty when the keyword tiers filled the page.
    pub ranked: Vec<(String, u64)>,
    /// How many entries a scoped caller may read, which BM25 weighs a word
    /// by; `None` for the owner (every live entry).
    pub readable: Option<u64>,
}

/// What each list was asked for and found, and the word side's and the
/// sparse list's plans.
pub(super) struct Sides {
    pub k: u32,
    /// The meaning list's cosines centred (`centre.rs`).
    pub centred: bool,
    pub text: Option<usize>,
    pub text_plan: Option<TextPlan>,
    pub meaning: Option<usize>,
    pub below_floor: usize,
    /// The sparse list's plan and how many it found (hybrid with the
    /// sparse model).
    pub sparse: Option<(SparsePlan, usize)>,
    /// The weights the lists were fused with (hybrid).
    pub weights: Option<super::fusion::Weights>,
}

impl Engine {
    /// What the query became: the plan (`query`, run in `mode` under
    /// `filter`), and each list's part.
    pub(super) async fn explain_query(
        &self,
        query: &str,
        mode: SearchMode,
        filter: &EntryFilter,
        p: &SearchParams,
        sides: Sides,
    ) -> Result<QueryExplain> {
        let plan = sides.text_plan.as_ref();
        let db = self.db();
        // The words ranked by; a keyword query's tiers found enough before
        // the ranked tier ran, so its words are counted here.
        let counted = match plan {
            None => Vec::new(),
            Some(plan) if !plan.ranked.is_empty() => plan.ranked.clone(),
            Some(_) => db.word_counts(&terms::index_words(query), filter).await?,
        };
        // A token's weights are over its pads, as its counts are (what the
        // word side counted); the owner's over every live entry.
        let n = match plan.and_then(|plan| plan.readable) {
            Some(readable) => readable as f64,
            None => db.live_entries().await? as f64,
        };
        let mut words: Vec<WordWeight> = counted
            .into_iter()
            .map(|(word, df)| WordWeight {
                weight: terms::idf(n, df as f64),
                word,
                entries: df,
            })
            .collect();
        words.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        let plan = plan.cloned().unwrap_or_default();
        let weights = sides.weights;
        let (sparse, sparse_plan) = match sides.sparse {
            Some((plan, found)) => (Some(found), plan),
            None => (None, SparsePlan::default()),
        };
        let candidates = |found: Option<usize>, below_floor| {
            found.map(|found| Candidates {
                asked: sides.k,
                found,
                below_floor,
            })
        };
        Ok(QueryExplain {
            reads_as: match (mode, plan.keywords) {
                (SearchMode::Semantic, _) => "meaning".into(),
                (_, true) => "keywords".into(),
                (_, false) => "question".into(),
            },
            words,
            dropped_common: plan.dropped_common,
            dropped_over_budget: plan.over_budget,
            newest_only: plan.newest_only,
            filter: conditions(filter, p.include_superseded),
            text: candidates(sides.text, 0),
            meaning: candidates(sides.meaning, sides.below_floor),
            meaning_floor: weights.map(|_| super::fusion::HYBRID_MIN_SIMILARITY),
            meaning_scores: sides.centred.then(|| {
                format!(
                    "cosine centred on the mean of the notes searched (the plain cosine's best {} re-scored; \
                     in one pad, the mean of its newest {}; over more notes than that in several pads, \
                     the plain cosine)",
                    super::centre::POOL,
                    super::centre::MEAN_SAMPLE
                )
            }),
            words_weight: weights.map(|w| w.words),
            sparse: candidates(sparse, 0),
            sparse_weight: weights.filter(|w| w.sparse > 0.0).map(|w| w.sparse),
            pieces_from: sparse.map(|_| {
                match sparse_plan.encoded {
                    true => "the question encoded by the sparse model: each term its model weight × its idf",
                    false => "the question's own word pieces (encoding it failed): each its idf",
                }
                .to_string()
            }),
            pieces: sparse_plan.ranked,
            pieces_left_out: sparse_plan.left_out,
            superseded_left_out: 0,
            copies_folded: 0,
        })
    }
}

/// Why `f` ranked where it did: the query's ranked words it holds (whole
/// words for a question; for keywords also a word's beginning or inside,
/// as their tiers match), its place in each list, its neighbours' lift.
pub(super) fn hit(f: &Fused<Entry>, q: &QueryExplain) -> HitExplain {
    let words = match f.words {
        None => Vec::new(),
        Some(_) => {
            let held = terms::index_words(&f.item.content);
            let keywords = q.reads_as == "keywords";
            q.words
                .iter()
                .filter(|w| {
                    held.iter()
                        .any(|h| *h == w.word || (keywords && h.contains(w.word.as_str())))
                })
                .cloned()
                .collect()
        }
    };
    let ranked = |s: Side| Ranked {
        rank: s.rank,
        score: s.score,
        scaled: s.scaled,
    };
    HitExplain {
        words,
        text: f.words.map(ranked),
        meaning: f.meaning.map(ranked),
        sparse: f.sparse.map(ranked),
        // Only a hybrid's hits are lifted and named (`fusion::one_side`
        // does neither).
        neighbours: f.lifted,
        author_named: f.named,
        score: f.score,
    }
}

/// The conditions a search's candidates met, as applied.
fn conditions(filter: &EntryFilter, include_superseded: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(pad) = &filter.pad {
        out.push(format!("pad = {pad}"));
    }
    for tag in &filter.tags {
        out.push(format!("tagged {tag}"));
    }
    if let Some(a) = &filter.author {
        out.push(format!("author = {a}"));
    }
    if let Some(k) = filter.kind {
        out.push(format!("kind = {}", k.as_str()));
    }
    if let Some(s) = filter.status {
        out.push(format!("status = {}", s.as_str()));
    }
    if let Some(c) = filter.category {
        out.push(format!("category = {}", c.as_str()));
    }
    if let Some(c) = filter.min_confidence {
        out.push(format!("confidence at least {c}"));
    }
    if let Some(scope) = &filter.scope {
        out.push(format!("only the token's pads: {}", scope.join(", ")));
    }
    out.push("archived pads left out".into());
    if !include_superseded {
        out.push("notes a newer note supersedes left out".into());
    }
    out
}
