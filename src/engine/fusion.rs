//! Hybrid search's fusion: one ranking from the word side's and the
//! meaning side's.
//!
//! Each side's scores are rescaled to 0–1 within its own list (min–max: BM25
//! has no fixed range, and a model's cosines sit in a band of its own), then
//! combined with the words weighted `WORDS_WEIGHT`. Measured on LoCoMo's
//! development conversations against reciprocal rank fusion, which ranks by
//! position only and so lets a mediocre hit of both lists beat the best of
//! one (docs/benchmarks.md, "Search quality").

use std::collections::HashMap;

/// The word side's share of a fused score; the meaning side has the rest.
/// On LoCoMo's development conversations with all-MiniLM-L6-v2, 0.7 put the
/// hybrid level with words alone at recall@10 and above it at @25, where
/// 0.5 fell 4 points below (the model finds a turn that answers a question
/// far less often than the words do); our paraphrase set (tests/semantic.rs)
/// still finds every target in the top 5 at 0.7.
pub const WORDS_WEIGHT: f64 = 0.7;

/// A fused hit: the item, its score (0–1), and which sides found it.
pub struct Fused<T> {
    pub item: T,
    pub score: f64,
    pub by_words: bool,
    pub by_meaning: bool,
}

/// Fuses the two ranked lists (`(key, item, score)`, best first), best
/// first; an item both found appears once.
pub fn fuse<K, T>(words: Vec<(K, T, f64)>, meaning: Vec<(K, T, f64)>) -> Vec<Fused<T>>
where
    K: Eq + std::hash::Hash,
{
    let mut at: HashMap<K, usize> = HashMap::new();
    let mut fused: Vec<Fused<T>> = Vec::new();
    for (side, list) in [words, meaning].into_iter().enumerate() {
        let weight = if side == 0 {
            WORDS_WEIGHT
        } else {
            1.0 - WORDS_WEIGHT
        };
        let scaled = rescaled(list.iter().map(|x| x.2).collect());
        for ((key, item, _), s) in list.into_iter().zip(scaled) {
            let i = *at.entry(key).or_insert_with(|| {
                fused.push(Fused {
                    item,
                    score: 0.0,
                    by_words: false,
                    by_meaning: false,
                });
                fused.len() - 1
            });
            fused[i].score += weight * s;
            if side == 0 {
                fused[i].by_words = true;
            } else {
                fused[i].by_meaning = true;
            }
        }
    }
    // Stable: equal scores keep first-seen order (the word side's first).
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    fused
}

/// Scores mapped onto 0–1 by the list's own range; a list whose scores are
/// all equal maps to 1 (each is as good as the best).
fn rescaled(scores: Vec<f64>) -> Vec<f64> {
    let max = scores.iter().copied().fold(f64::MIN, f64::max);
    let min = scores.iter().copied().fold(f64::MAX, f64::min);
    let span = max - min;
    scores
        .into_iter()
        .map(|s| if span > 1e-12 { (s - min) / span } else { 1.0 })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(f: &[Fused<u32>]) -> Vec<u32> {
        f.iter().map(|x| x.item).collect()
    }

    #[test]
    fn both_sides_count_and_each_hit_says_who_found_it() {
        let words = vec![(1, 1, 9.0), (2, 2, 5.0), (3, 3, 1.0)];
        let meaning = vec![(4, 4, 0.8), (3, 3, 0.7), (5, 5, 0.2)];
        let f = fuse(words, meaning);
        assert_eq!(f.len(), 5, "each item once");
        let three = f.iter().find(|x| x.item == 3).unwrap();
        assert!(three.by_words && three.by_meaning);
        let four = f.iter().find(|x| x.item == 4).unwrap();
        assert!(!four.by_words && four.by_meaning);
        assert_eq!(keys(&f)[0], 1, "the word side's clear best leads");
        assert!(f.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn the_best_of_one_side_beats_the_middle_of_both() {
        // Rank fusion puts 2 and 3 (second and third on both sides) above 1
        // (the clear best of the word side); scores do not.
        let words = vec![(1, 1, 10.0), (2, 2, 5.0), (3, 3, 1.0)];
        let meaning = vec![(4, 4, 0.8), (3, 3, 0.5), (2, 2, 0.2)];
        assert_eq!(keys(&fuse(words, meaning))[0], 1);
    }

    #[test]
    fn one_sided_and_flat_lists_still_rank() {
        let f = fuse(Vec::<(u8, u32, f64)>::new(), vec![(1, 1, 0.5), (2, 2, 0.5)]);
        assert_eq!(keys(&f), [1, 2]);
        assert!(f.iter().all(|x| x.score > 0.0));
    }
}
