//! Duplicates said, not stored silently: before a note is added with
//! `check_duplicates`, the live notes of its pad that repeat it; and a
//! search's exact copies shown once.

use std::collections::HashSet;

use super::meaning::Probe;
use super::Engine;
use crate::error::Result;
use crate::guard::Guard;
use crate::model;
use crate::protocol::LooksLike;
use crate::semantic::vector::embedded_text;
use crate::semantic::ModelKind;
use crate::storage::EntryFilter;
use crate::terms;

/// Words shared over words in either (Jaccard) from which two notes say
/// nearly the same: one word changed in a ten-word note is 0.82.
const SAME_WORDS: f64 = 0.8;
/// Notes shorter than this many distinct words are compared as text only:
/// "deploy done" and "deploy done!" are the same, "deploy done" and
/// "deploy failed" are not near.
const MIN_WORDS: usize = 5;

/// Cosine (of the two stored texts' vectors) from which two notes say
/// nearly the same thing, per model: each model has its own band. Measured
/// on eight pairs — four restatements, four notes on the same subject that
/// say something else ("deploy failed because the migration timed out" /
/// "deploy succeeded after the migration finished"): e5 put restatements
/// at 0.961–0.976 and the others at 0.895–0.947; MiniLM's bands overlap
/// (0.68–0.91 against 0.47–0.81), so with it only a near-verbatim
/// restatement is said (tests/multilingual.rs, tests/methods.rs).
fn same_meaning(kind: ModelKind) -> f64 {
    match kind {
        ModelKind::MiniLm => 0.9,
        ModelKind::E5Small => 0.955,
    }
}

impl Engine {
    /// The live note of `pad` that `content` repeats, if any: the same text,
    /// else nearly the same words, else (with meaning search ready) nearly
    /// the same meaning (its vector computed as a stored note's is, from
    /// `author` and `content`).
    pub async fn looks_like(
        &self,
        pad: &str,
        author: &str,
        content: &str,
        guard: &Guard,
    ) -> Result<Option<LooksLike>> {
        let pad = model::pad_name("pad", pad)?;
        let filter = guard.scope(EntryFilter {
            pad: Some(pad),
            ..EntryFilter::default()
        })?;
        let new_words: HashSet<String> = terms::index_words(content).into_iter().collect();
        // Notes sharing the new one's words, best first: a repeat is among
        // them. The search takes the words as a question (any of them).
        let query: String = content.chars().take(1000).collect();
        let hits = {
            let _turn = self.turn().await?;
            self.text_hits(&query, &filter, 10, false, false).await?.0
        };
        let said = |e: &crate::model::Entry, same: &str, similarity: f64| LooksLike {
            id: e.id.clone().into(),
            preview: e.content.chars().take(120).collect(),
            same: same.into(),
            similarity,
        };
        let trimmed = content.trim();
        if let Some((e, _)) = hits.iter().find(|(e, _)| e.content.trim() == trimmed) {
            return Ok(Some(said(e, "text", 1.0)));
        }
        if new_words.len() >= MIN_WORDS {
            let best = hits
                .iter()
                .map(|(e, _)| {
                    let theirs: HashSet<String> =
                        terms::index_words(&e.content).into_iter().collect();
                    let shared = new_words.intersection(&theirs).count() as f64;
                    (e, shared / new_words.union(&theirs).count() as f64)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((e, j)) = best.filter(|(_, j)| *j >= SAME_WORDS) {
                return Ok(Some(said(e, "words", j)));
            }
        }
        let Some(semantic) = self.semantic().filter(|s| s.is_ready()) else {
            return Ok(None);
        };
        let threshold = same_meaning(semantic.kind());
        let (near, _) = self
            .nearest_entries(&embedded_text(author, content), Probe::NewNote, filter, 1)
            .await?;
        Ok(near
            .first()
            .filter(|(_, cosine)| *cosine >= threshold)
            .map(|(e, cosine)| said(e, "meaning", *cosine)))
    }
}
