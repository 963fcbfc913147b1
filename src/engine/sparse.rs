//! Hybrid search's third list: the notes holding the question's terms
//! among their learned sparse terms (`semantic::splade`: a note's words
//! and the words it means, each weighted, stored beside its vector by the
//! embedding worker). The question is encoded by the same model, on the
//! worker as its embedding is (`Semantic::question_terms`): its word pieces
//! and the words it means, each with the model's weight, which reach notes
//! sharing no word with it ("which pets does Sam have?" weighs "dog").
//! Each term then weighs that weight times its idf among the notes
//! searched, ln(1 + N/df); the rarest are kept while their postings fit
//! the hybrid's budget (`terms::HYBRID_POSTINGS_BUDGET`), as the word
//! side's ranked tier does. Should the encoding fail, the question is its
//! own word pieces, each weighing 1 (times its idf). The stores read the
//! postings; the ranking is here, once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::Engine;
use crate::error::Result;
use crate::model::Entry;
use crate::protocol::WordWeight;
use crate::semantic::splade::{Pieces, Terms};
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
    /// Whether the terms are the question encoded by the sparse model
    /// (else its own word pieces, each weighing 1).
    pub encoded: bool,
}

/// The terms the sparse list ranks a question by.
pub(super) struct QuestionTerms {
    /// (word piece, weight), ascending by piece.
    terms: Arc<Terms>,
    /// Encoded by the sparse model (else the question's own pieces).
    encoded: bool,
}

/// How long a search waits for its question's encoding (~2.5 ms on a
/// quiet machine): the worker runs at idle priority and a batch may hold
/// the sparse model; past this the list ranks by the question's own pieces.
const ENCODING_WAIT: Duration = Duration::from_millis(250);

impl Engine {
    /// The terms the sparse list ranks `question` by: encoded by the
    /// sparse model on the worker; its own word pieces, each weighing 1,
    /// should that fail or take past `ENCODING_WAIT`.
    pub(super) async fn question_terms(&self, pieces: &Pieces, question: &str) -> QuestionTerms {
        let encoded = match self.semantic() {
            Some(semantic) => {
                match tokio::time::timeout(ENCODING_WAIT, semantic.question_terms(question)).await {
                    Ok(encoded) => encoded,
                    Err(_) => Err(crate::error::Error::Unavailable(format!(
                        "the worker did not encode it within {} ms",
                        ENCODING_WAIT.as_millis()
                    ))),
                }
            }
            None => Ok(None),
        };
        match encoded {
            Ok(Some(terms)) => QuestionTerms {
                terms,
                encoded: true,
            },
            failed => {
                if let Err(e) = failed {
                    tracing::warn!(
                        "encoding a question for the sparse list failed ({e}); it ranks by the question's own word pieces"
                    );
                }
                QuestionTerms {
                    terms: Arc::new(pieces.terms(question)),
                    encoded: false,
                }
            }
        }
    }

    /// The sparse list for a question's `terms`: up to `k` notes passing
    /// `filter`, best first, with their scores (the sum over the terms a
    /// note holds of its weight for the term times the term's weight in
    /// the question times its idf).
    ///
    /// The terms are kept rarest first while their postings across the
    /// store fit the budget (that bounds what is read); then only their
    /// postings on notes passing the filter are read, and each term's idf
    /// is counted among those notes: in a pad, a word every note of that
    /// pad holds weighs little, however rare elsewhere.
    pub(super) async fn sparse_hits(
        &self,
        pieces: &Pieces,
        question: &QuestionTerms,
        filter: &EntryFilter,
        k: u32,
    ) -> Result<(Vec<(Entry, f64)>, SparsePlan)> {
        let ids: Vec<u32> = question.terms.iter().map(|t| t.0).collect();
        let db = self.db();
        let counts = db.term_counts(&ids).await?;
        let held: Vec<(u32, u64)> = counts.into_iter().filter(|(_, df)| *df > 0).collect();
        let kept = terms::within_budget(&held, terms::HYBRID_POSTINGS_BUDGET);
        let postings = db.sparse_postings(&kept, filter).await?;
        let notes = match filter.is_unfiltered() {
            true => db.live_entries().await?,
            false => db.count_matching(filter.clone(), NOTES_COUNTED).await?,
        } as u64;
        let ranked = rank(&postings, &question.terms, notes, k as usize);
        let name = |id: u32| pieces.name(id).unwrap_or_else(|| format!("#{id}"));
        let mut plan = SparsePlan {
            ranked: ranked
                .weights
                .iter()
                .map(|&(id, df, weight)| WordWeight {
                    word: name(id),
                    entries: df,
                    weight,
                })
                .collect(),
            left_out: ids
                .iter()
                .filter(|id| !ranked.weights.iter().any(|w| w.0 == **id))
                .map(|&id| name(id))
                .collect(),
            encoded: question.encoded,
        };
        plan.ranked.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        let seqs: Vec<i64> = ranked.best.iter().map(|(seq, _)| *seq).collect();
        let entries = db.entries_by_id(&seqs).await?;
        let hits = ranked
            .best
            .into_iter()
            .zip(entries)
            .filter_map(|((_, score), e)| Some((e?, score)))
            .collect();
        Ok((hits, plan))
    }
}

/// A filter's notes are counted up to this many for the idf; a filter
/// passing more counts as this many (the count costs a scan of them).
const NOTES_COUNTED: usize = 20_000;

/// What `rank` makes of the postings.
struct Ranked {
    /// Each term with postings: (piece, notes holding it, its weight in
    /// the question times its idf).
    weights: Vec<(u32, u64, f64)>,
    /// The best `k` notes, (id, score), best first (ties: the newest).
    best: Vec<(i64, f64)>,
}

/// Ranks the notes of `postings` (piece, note, weight) among `notes`
/// notes for a question's `terms` (piece, weight; ascending by piece):
/// each term weighs its weight in the question times ln(1 + notes / the
/// notes holding it), and a note scores the sum of its weights times the
/// terms' weights.
fn rank(postings: &[(u32, i64, f32)], terms: &[(u32, f32)], notes: u64, k: usize) -> Ranked {
    let mut df: HashMap<u32, u64> = HashMap::new();
    for &(piece, _, _) in postings {
        *df.entry(piece).or_default() += 1;
    }
    // A count capped below the postings seen is raised to them.
    let n = notes.max(df.values().copied().max().unwrap_or(0)).max(1) as f64;
    let asked = |piece: u32| match terms.binary_search_by_key(&piece, |t| t.0) {
        Ok(at) => terms[at].1 as f64,
        Err(_) => 0.0,
    };
    let weighs: HashMap<u32, f64> = df
        .iter()
        .map(|(&piece, &d)| (piece, asked(piece) * (1.0 + n / d as f64).ln()))
        .collect();
    let mut score: HashMap<i64, f64> = HashMap::new();
    for &(piece, seq, weight) in postings {
        *score.entry(seq).or_default() += weight as f64 * weighs[&piece];
    }
    let mut best: Vec<(i64, f64)> = score.into_iter().collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    best.truncate(k);
    let mut weights: Vec<(u32, u64, f64)> = df
        .iter()
        .map(|(&piece, &d)| (piece, d, weighs[&piece]))
        .collect();
    weights.sort_by_key(|w| w.0);
    Ranked { weights, best }
}

#[cfg(test)]
mod tests {
    use super::rank;

    #[test]
    fn a_note_scores_its_weights_times_the_pieces_idf_among_the_notes_searched() {
        // Four notes searched. Piece 7 is held by notes 1 and 2, piece 9 by
        // note 2 alone: idf ln(1 + 4/2) and ln(1 + 4/1).
        let postings = [(7, 1, 2.0), (7, 2, 0.5), (9, 2, 1.0)];
        let own = [(7, 1.0), (9, 1.0)];
        let r = rank(&postings, &own, 4, 10);
        let (i7, i9) = (3f64.ln(), 5f64.ln());
        assert_eq!(r.weights.len(), 2);
        assert_eq!((r.weights[0].0, r.weights[0].1), (7, 2));
        assert!((r.weights[0].2 - i7).abs() < 1e-12);
        assert!((r.weights[1].2 - i9).abs() < 1e-12);
        // Note 1: 2.0·i7 = 2.197; note 2: 0.5·i7 + 1.0·i9 = 2.159.
        assert_eq!(r.best.iter().map(|b| b.0).collect::<Vec<_>>(), [1, 2]);
        assert!((r.best[0].1 - 2.0 * i7).abs() < 1e-9);
        assert!((r.best[1].1 - (0.5 * i7 + i9)).abs() < 1e-9);
        // Cut at k; equal scores: the newer note first.
        let tie = rank(&[(7, 1, 1.0), (7, 3, 1.0), (7, 2, 1.0)], &own, 3, 2);
        assert_eq!(tie.best.iter().map(|b| b.0).collect::<Vec<_>>(), [3, 2]);
        // A count below the postings seen (capped) is raised to them.
        let capped = rank(&[(7, 1, 1.0), (7, 2, 1.0)], &own, 1, 5);
        assert!((capped.weights[0].2 - 2f64.ln()).abs() < 1e-12);
        assert!(rank(&[], &own, 0, 5).best.is_empty());
    }

    #[test]
    fn an_encoded_question_weighs_each_term_by_its_weight_times_its_idf() {
        // The same postings, the question encoded: piece 7 weighs 0.25 in
        // it, piece 9 (a word it means, not one it holds) 2.0. Note 1:
        // 2.0·0.25·i7 = 0.549; note 2: 0.5·0.25·i7 + 1.0·2.0·i9 = 3.356.
        let postings = [(7, 1, 2.0), (7, 2, 0.5), (9, 2, 1.0)];
        let r = rank(&postings, &[(7, 0.25), (9, 2.0)], 4, 10);
        let (i7, i9) = (3f64.ln(), 5f64.ln());
        assert!((r.weights[0].2 - 0.25 * i7).abs() < 1e-9);
        assert!((r.weights[1].2 - 2.0 * i9).abs() < 1e-9);
        assert_eq!(r.best.iter().map(|b| b.0).collect::<Vec<_>>(), [2, 1]);
        assert!((r.best[0].1 - (0.5 * 0.25 * i7 + 2.0 * i9)).abs() < 1e-6);
        assert!((r.best[1].1 - 2.0 * 0.25 * i7).abs() < 1e-6);
    }
}
