//! Hybrid search's third list: the notes holding the query's word pieces
//! among their learned sparse terms (`semantic::splade`: a note's words
//! and the words it means, each weighted, stored beside its vector by the
//! embedding worker). The query runs no model: it is its own word pieces,
//! each weighing its idf over the notes that have terms, ln(1 + N/df), the
//! rarest kept while their postings fit the hybrid's budget
//! (`terms::HYBRID_POSTINGS_BUDGET`), as the word side's ranked tier does.

use super::Engine;
use crate::error::Result;
use crate::model::Entry;
use crate::protocol::WordWeight;
use crate::semantic::splade::Pieces;
use crate::storage::EntryFilter;
use crate::terms;

/// What the sparse list ranked by.
#[derive(Debug, Default, Clone)]
pub(super) struct SparsePlan {
    /// The pieces ranked by: their text, how many notes hold each, and
    /// their weight.
    pub ranked: Vec<WordWeight>,
    /// Pieces left out: in no note, or past the postings budget.
    pub left_out: Vec<String>,
}

impl Engine {
    /// The sparse list for `query`: up to `k` notes passing `filter`, best
    /// first, with their scores (the sum of their weights for the query's
    /// pieces times the pieces' idf).
    pub(super) async fn sparse_hits(
        &self,
        pieces: &Pieces,
        query: &str,
        filter: &EntryFilter,
        k: u32,
    ) -> Result<(Vec<(Entry, f64)>, SparsePlan)> {
        let ids = pieces.of(query);
        let db = self.db();
        let counts = db.term_counts(&ids).await?;
        let held: Vec<(u32, u64)> = counts.held.into_iter().filter(|(_, df)| *df > 0).collect();
        let kept = terms::within_budget(&held, terms::HYBRID_POSTINGS_BUDGET);
        let n = counts.notes.max(1) as f64;
        let weighed: Vec<(u32, u64, f32)> = held
            .iter()
            .filter(|(id, _)| kept.contains(id))
            .map(|&(id, df)| (id, df, (1.0 + n / df as f64).ln() as f32))
            .collect();
        let name = |id: u32| pieces.name(id).unwrap_or_else(|| format!("#{id}"));
        let mut plan = SparsePlan {
            ranked: weighed
                .iter()
                .map(|&(id, df, w)| WordWeight {
                    word: name(id),
                    entries: df,
                    weight: w as f64,
                })
                .collect(),
            left_out: ids
                .iter()
                .filter(|id| !kept.contains(id))
                .map(|&id| name(id))
                .collect(),
        };
        plan.ranked.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        if weighed.is_empty() {
            return Ok((Vec::new(), plan));
        }
        let query: Vec<(u32, f32)> = weighed.iter().map(|&(id, _, w)| (id, w)).collect();
        let hits = db.sparse_hits(&query, filter, k).await?;
        Ok((hits, plan))
    }
}
