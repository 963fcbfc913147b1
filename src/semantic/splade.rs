//! The learned sparse model, SPLADE-tiny: a note's terms, weighted, with
//! words it does not contain but means ("puppy" gives weight to "dog").
//!
//! A note's weights are SPLADE's: for every word piece of the vocabulary,
//! the maximum over the note's tokens of log(1 + ReLU(masked-language
//! logit)); pieces of weight 0 are left out (a short turn keeps ~20–80).
//! fastembed's SPLADE pooling computes them from our ONNX graph
//! (scripts/splade_onnx.py builds it at setup from the PyPI wheel; see
//! scripts/model.sh). A search's question is encoded by the same model
//! (`encode`, on the worker as a query's embedding is), giving it weighted
//! and expanded terms; a note's score is the dot product of the two sparse
//! vectors (`score`; the search weighs each term by its idf too,
//! `engine::sparse`). Should encoding a question fail, it is its own word
//! pieces (`Pieces`), each weighing 1. A note's encoding runs where
//! embeddings run, off the write path.

use std::path::Path;
use std::sync::Arc;

use fastembed::{InitOptionsUserDefined, SparseModel, SparseTextEmbedding, UserDefinedSparseModel};

use super::model::{model_files, panic_text};

/// The model's folder name under `PAD_MODEL_DIR`.
pub const NAME: &str = "splade-tiny";
/// Word pieces encoded per note: about the first 1,000 characters count
/// (the reference the tests compare with cuts at the same place).
pub const MAX_TOKENS: usize = 256;

/// Word pieces one run of the model reads at most (its texts times the
/// longest's pieces): its output scores each of 30,522 words at every
/// piece, 122 KB a piece in f32, and ONNX Runtime keeps the memory of its
/// largest run. 16 full notes (4,096 pieces) in one run took the process
/// from 82 to 1,123 MB resident; in runs of 512, to 210 MB (measured
/// 2026-12-05). A run of short turns (~30 pieces each) still takes a
/// batch's 16.
pub const RUN_PIECES: usize = 512;

/// A note's terms: (word-piece id, weight), ascending by id, weights > 0.
pub type Terms = Vec<(u32, f32)>;

pub struct Splade {
    inner: SparseTextEmbedding,
    /// [CLS], [SEP], [PAD] and the like: never a query's terms.
    special: Vec<u32>,
}

impl Splade {
    /// Loads the model from `dir` (a folder named `splade-tiny` in it, or
    /// `dir` itself). ONNX Runtime must already be loaded (`runtime::init`).
    pub fn load(dir: &Path, threads: usize) -> Result<Splade, String> {
        let sub = dir.join(NAME);
        let dir = if sub.is_dir() { sub.as_path() } else { dir };
        let (onnx, files) = model_files(dir, NAME, "model.onnx")?;
        let model = UserDefinedSparseModel::new(onnx, files, SparseModel::SPLADEPPV1);
        let options = InitOptionsUserDefined::new()
            .with_max_length(MAX_TOKENS)
            .with_intra_threads(threads.max(1));
        let inner = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            SparseTextEmbedding::try_new_from_user_defined(model, options)
        }))
        .map_err(|p| format!("loading {NAME} panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("cannot load {NAME} from {}: {e}", dir.display()))?;
        let special = inner
            .tokenizer
            .get_added_tokens_decoder()
            .iter()
            .filter(|(_, t)| t.special)
            .map(|(id, _)| *id)
            .collect();
        Ok(Splade { inner, special })
    }

    /// The terms of stored texts, one list per text, in order; encoded in
    /// runs of at most `RUN_PIECES` word pieces (padding counted).
    pub fn encode(&mut self, texts: &[&str]) -> Result<Vec<Terms>, String> {
        let pieces: Vec<usize> = texts.iter().map(|t| self.pieces_in(t)).collect();
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        while start < texts.len() {
            let (mut end, mut longest) = (start + 1, pieces[start]);
            while end < texts.len() && longest.max(pieces[end]) * (end + 1 - start) <= RUN_PIECES {
                longest = longest.max(pieces[end]);
                end += 1;
            }
            out.extend(self.run(&texts[start..end])?);
            start = end;
        }
        Ok(out)
    }

    /// How many word pieces the model reads of `text`.
    fn pieces_in(&self, text: &str) -> usize {
        self.inner
            .tokenizer
            .encode(text, true)
            .map_or(MAX_TOKENS, |e| e.get_ids().len().min(MAX_TOKENS))
    }

    fn run(&mut self, texts: &[&str]) -> Result<Vec<Terms>, String> {
        let inner = &mut self.inner;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            inner.embed(texts, Some(texts.len().max(1)))
        }))
        .map_err(|p| format!("sparse encoding panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("sparse encoding failed: {e}"))?;
        Ok(out
            .into_iter()
            .map(|e| {
                e.indices
                    .into_iter()
                    .map(|i| i as u32)
                    .zip(e.values)
                    .collect()
            })
            .collect())
    }

    /// A question's terms by the model, its special tokens ([CLS], [SEP])
    /// left out: they stand for no word.
    pub fn encode_question(&mut self, question: &str) -> Result<Terms, String> {
        let mut terms = self.encode(&[question])?.remove(0);
        terms.retain(|(id, _)| !self.special.contains(id));
        Ok(terms)
    }

    /// What a search needs of the model: its tokenizer, no model run.
    pub fn pieces(&self) -> Pieces {
        let tokenizer = self.inner.tokenizer.clone();
        let special = self.special.clone();
        let split = move |query: &str| -> Vec<u32> {
            let Ok(encoding) = tokenizer.encode(query, true) else {
                return Vec::new();
            };
            let mut ids: Vec<u32> = encoding
                .get_ids()
                .iter()
                .copied()
                .filter(|id| !special.contains(id))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let tokenizer = self.inner.tokenizer.clone();
        Pieces {
            split: Arc::new(split),
            name: Arc::new(move |id| tokenizer.id_to_token(id)),
        }
    }

    /// A query's own word pieces, each once and weighing 1, ascending (no
    /// model runs).
    pub fn query_terms(&self, query: &str) -> Terms {
        self.pieces().terms(query)
    }

    /// A word piece's text (for `--explain` and the tests).
    pub fn piece(&self, id: u32) -> Option<String> {
        self.inner.tokenizer.id_to_token(id)
    }
}

/// A query's word pieces, by the sparse model's tokenizer: what search
/// asks the sparse list for (`engine::sparse`).
#[derive(Clone)]
pub struct Pieces {
    split: Arc<Split>,
    name: Arc<Name>,
}

/// A text to its word pieces' ids, the tokenizer's work.
type Split = dyn Fn(&str) -> Vec<u32> + Send + Sync;
/// A piece's id to its text.
type Name = dyn Fn(u32) -> Option<String> + Send + Sync;

impl Pieces {
    /// The query's word pieces, each once, ascending; special tokens left out.
    pub fn of(&self, query: &str) -> Vec<u32> {
        (self.split)(query)
    }

    /// The query's word pieces as its terms, each weighing 1 (no model
    /// runs).
    pub fn terms(&self, query: &str) -> Terms {
        self.of(query).into_iter().map(|id| (id, 1.0)).collect()
    }

    /// A piece's text ("##ing" for the end of a word).
    pub fn name(&self, id: u32) -> Option<String> {
        (self.name)(id)
    }
}

#[cfg(test)]
impl Pieces {
    /// Pieces by a tokenizer of whitespace words, each word's place in
    /// `vocab` its id (words not in it left out): for the engine's unit
    /// tests, which have no model files.
    pub(crate) fn of_words(vocab: &'static [&'static str]) -> Pieces {
        let id = move |w: &str| vocab.iter().position(|v| *v == w).map(|i| i as u32);
        Pieces {
            split: Arc::new(move |q: &str| {
                let mut ids: Vec<u32> = q.split_whitespace().filter_map(id).collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            }),
            name: Arc::new(move |i| vocab.get(i as usize).map(|w| w.to_string())),
        }
    }
}

/// A note's score for a query: the dot product of their terms (both
/// ascending by id, as `encode` and `query_terms` give them).
pub fn score(query: &[(u32, f32)], terms: &[(u32, f32)]) -> f32 {
    let (mut i, mut j, mut total) = (0, 0, 0.0);
    while i < query.len() && j < terms.len() {
        match query[i].0.cmp(&terms[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                total += query[i].1 * terms[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::score;

    #[test]
    fn a_note_scores_the_dot_product_with_the_query_terms() {
        // Note terms 3 (0.5), 7 (1.25), 9 (2.0). The query's own pieces
        // 1, 7, 9, 12 weigh 1: 7 and 9 match, 1.25 + 2.0 = 3.25.
        let note = [(3, 0.5), (7, 1.25), (9, 2.0)];
        let own = |ids: &[u32]| ids.iter().map(|&i| (i, 1.0)).collect::<Vec<_>>();
        assert_eq!(score(&own(&[1, 7, 9, 12]), &note), 3.25);
        assert_eq!(score(&own(&[3]), &note), 0.5);
        assert_eq!(score(&own(&[4, 8, 10]), &note), 0.0);
        assert_eq!(score(&[], &note), 0.0);
        assert_eq!(score(&own(&[9]), &[]), 0.0);
        // An encoded query weighs its terms: 0.5·0.5 + 2·2 = 4.25.
        assert_eq!(score(&[(3, 0.5), (9, 2.0), (11, 3.0)], &note), 4.25);
    }
}
