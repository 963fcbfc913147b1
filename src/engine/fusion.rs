//! Hybrid search's fusion: one ranking from the word side's, the meaning
//! side's and, with the sparse model, the related words' lists.
//!
//! Each list's scores are rescaled to 0–1 within it (min–max: BM25 has no
//! fixed range, and a model's cosines sit in a band of its own), then
//! combined by `Weights`: `TWO_LISTS` (the words `WORDS_WEIGHT`) or
//! `THREE_LISTS`. Measured on LoCoMo's
//! development conversations against reciprocal rank fusion, which ranks by
//! position only and so lets a mediocre hit of both lists beat the best of
//! one (docs/benchmarks.md, "Search quality").

use std::collections::HashMap;

use crate::terms;

/// In hybrid search, meaning matches below this cosine similarity are left
/// out, as they only push word matches down: all-MiniLM-L6-v2 puts clearly
/// unrelated sentences near 0–0.1, while paraphrases in our retrieval test
/// score 0.20–0.62 ("tests are flaky" / "the integration suite fails randomly
/// about one run in five" is 0.20).
pub const HYBRID_MIN_SIMILARITY: f64 = 0.15;

/// The word side's share of a fused score of two lists; the meaning side
/// has the rest.
/// On LoCoMo's development conversations with all-MiniLM-L6-v2, before the
/// neighbour lift, 0.7 put the hybrid level with words alone at recall@10
/// where 0.5 fell 4 points below (the model finds a turn that answers a
/// question far less often than the words do). With the lift (two each
/// side), 0.6 raised recall@10 on both ways of storing a turn and kept
/// @5, where 0.5 lost it with the turns' text alone: a hit the meaning
/// finds now also lifts the turns around it (docs/benchmarks.md, "The
/// words' share, again"). Our paraphrase set (tests/semantic.rs) finds
/// every target in the top 5.
pub const WORDS_WEIGHT: f64 = 0.6;

/// How much of its best neighbour's fused score a hit gains: the note
/// written just before or after it in its pad, or the note it replies to,
/// when that one is a hit too (the notes two away count at half their
/// score, `FAR`). A turn that answers a question often shares few words
/// with it, while the turn before it (the question asked in the
/// conversation) shares many. On LoCoMo's development conversations 0.4 to
/// 0.8 each raised recall@10 by 5 to 7 points; 0.5 keeps most of 0.4's
/// precision at 5 and most of 0.8's recall at 10 (docs/benchmarks.md,
/// "Neighbours, categories and LoCoMo's own scoring").
pub const NEIGHBOUR_WEIGHT: f64 = 0.5;

/// What a neighbour two notes away counts for, against one beside: on the
/// development conversations two each side at half raised recall@10 by
/// another point, most on open-domain questions (answers spread over a few
/// turns), where one each side had fallen behind.
pub const FAR: f64 = 0.5;

/// What a hit gains when the question names its author: a question about
/// someone ("When did Caroline go to the support group?") is most often
/// answered by what they wrote, and the word index holds a note's content
/// alone. On the development conversations, the baselines' exact lists
/// fused the engine's way: +0.1 and +0.2 raised recall@10 on both LoCoMo
/// and REALTALK, 0.2 the more (docs/benchmarks.md, "Recall that connects
/// turns").
pub const AUTHOR_NAMED: f64 = 0.2;

/// A fused hit: the item, its score, where each side ranked it, and what
/// naming its author and its neighbours added.
pub struct Fused<T> {
    pub item: T,
    /// Each list's weighted scaled score, summed, plus `named`
    /// and `lifted`.
    pub score: f64,
    pub words: Option<Side>,
    pub meaning: Option<Side>,
    /// Where the sparse list ranked it (hybrid with the sparse model).
    pub sparse: Option<Side>,
    /// What the query naming its author added (`author_named`).
    pub named: f64,
    /// What its neighbours added to `score` (`lift`).
    pub lifted: f64,
}

/// Where one side ranked a hit: its place (from 1), its score there (BM25
/// or cosine), and, when fused, that score scaled to 0–1 within the side's
/// list.
#[derive(Clone, Copy, Debug)]
pub struct Side {
    pub rank: usize,
    pub score: f64,
    pub scaled: Option<f64>,
}

/// One side's list as it ranks alone (`text` or `semantic` mode): each
/// hit's score is its score there.
pub fn one_side<T>(list: Vec<(T, f64)>, words: bool) -> Vec<Fused<T>> {
    list.into_iter()
        .enumerate()
        .map(|(i, (item, score))| {
            let place = Some(Side {
                rank: i + 1,
                score,
                scaled: None,
            });
            Fused {
                item,
                score,
                words: if words { place } else { None },
                meaning: if words { None } else { place },
                sparse: None,
                named: 0.0,
                lifted: 0.0,
            }
        })
        .collect()
}

/// Each list's share of a fused score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub words: f64,
    pub meaning: f64,
    pub sparse: f64,
}

/// Without the sparse model: the words `WORDS_WEIGHT`, the meaning the rest.
pub const TWO_LISTS: Weights = Weights {
    words: WORDS_WEIGHT,
    meaning: 1.0 - WORDS_WEIGHT,
    sparse: 0.0,
};

/// With the sparse list (`engine::sparse`) third. On LoCoMo's and
/// REALTALK's development halves, the baselines' exact lists fused the
/// engine's way with SPLADE-tiny's list (the question's own word pieces,
/// each weighing its idf), every split tried from 0.5/0.3/0.2 to
/// 0.35/0.25/0.4 lifted recall@10 on both; 0.35/0.25/0.4 the most (+3.7
/// and +5.8 points over the two lists; docs/benchmarks.md, "A learned
/// sparse list"). The question encoded by the model and the centred
/// cosines (issue 68) were measured at these shares too.
pub const THREE_LISTS: Weights = Weights {
    words: 0.35,
    meaning: 0.25,
    sparse: 0.4,
};

/// Fuses the ranked lists (`(key, item, score)`, best first) with their
/// `weights`, best first; an item several found appears once.
pub fn fuse<K, T>(
    words: Vec<(K, T, f64)>,
    meaning: Vec<(K, T, f64)>,
    sparse: Vec<(K, T, f64)>,
    weights: Weights,
) -> Vec<Fused<T>>
where
    K: Eq + std::hash::Hash,
{
    let mut at: HashMap<K, usize> = HashMap::new();
    let mut fused: Vec<Fused<T>> = Vec::new();
    let lists = [
        (words, weights.words),
        (meaning, weights.meaning),
        (sparse, weights.sparse),
    ];
    for (side, (list, weight)) in lists.into_iter().enumerate() {
        let scaled = rescaled(list.iter().map(|x| x.2).collect());
        for (rank, ((key, item, score), s)) in list.into_iter().zip(scaled).enumerate() {
            let i = *at.entry(key).or_insert_with(|| {
                fused.push(Fused {
                    item,
                    score: 0.0,
                    words: None,
                    meaning: None,
                    sparse: None,
                    named: 0.0,
                    lifted: 0.0,
                });
                fused.len() - 1
            });
            fused[i].score += weight * s;
            let place = Some(Side {
                rank: rank + 1,
                score,
                scaled: Some(s),
            });
            match side {
                0 => fused[i].words = place,
                1 => fused[i].meaning = place,
                _ => fused[i].sparse = place,
            }
        }
    }
    // Stable: equal scores keep first-seen order (the word side's first).
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    fused
}

/// Raises each hit whose author the query names by `AUTHOR_NAMED` (every
/// part of the name a word of the query: "agent-zero" is named by "what
/// did agent zero find"), then ranks again, best first. `words`: the
/// query's words, lower-cased (`terms::index_words`).
pub fn author_named<T>(
    mut hits: Vec<Fused<T>>,
    author: impl Fn(&T) -> String,
    words: &[String],
) -> Vec<Fused<T>> {
    for hit in &mut hits {
        let name = terms::index_words(&author(&hit.item));
        if !name.is_empty() && name.iter().all(|part| words.contains(part)) {
            hit.named = AUTHOR_NAMED;
            hit.score += AUTHOR_NAMED;
        }
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
}

/// Lifts each hit by `NEIGHBOUR_WEIGHT` times the best fused score among
/// its neighbours (`near[i]`: the positions in `hits` of hit i's
/// neighbours that are hits, each with what it counts for: 1, or `FAR`),
/// then ranks again, best first. Each hit is lifted by the scores as
/// fused, not as lifted, so no chain feeds itself.
pub fn lift<T>(mut hits: Vec<Fused<T>>, near: &[Vec<(usize, f64)>]) -> Vec<Fused<T>> {
    let before: Vec<f64> = hits.iter().map(|h| h.score).collect();
    for (hit, near) in hits.iter_mut().zip(near) {
        let best = near.iter().map(|&(j, w)| w * before[j]).fold(0.0, f64::max);
        hit.lifted = NEIGHBOUR_WEIGHT * best;
        hit.score += hit.lifted;
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
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
        let f = fuse(words, meaning, Vec::new(), TWO_LISTS);
        assert_eq!(f.len(), 5, "each item once");
        let three = f.iter().find(|x| x.item == 3).unwrap();
        let (w, m) = (three.words.unwrap(), three.meaning.unwrap());
        assert_eq!((w.rank, w.score, w.scaled), (3, 1.0, Some(0.0)));
        assert_eq!((m.rank, m.score), (2, 0.7));
        let four = f.iter().find(|x| x.item == 4).unwrap();
        assert!(four.words.is_none() && four.meaning.is_some());
        assert_eq!(keys(&f)[0], 1, "the word side's clear best leads");
        assert!(f.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn the_best_of_one_side_beats_the_middle_of_both() {
        // Rank fusion puts 2 and 3 (second and third on both sides) above 1
        // (the clear best of the word side); scores do not.
        let words = vec![(1, 1, 10.0), (2, 2, 5.0), (3, 3, 1.0)];
        let meaning = vec![(4, 4, 0.8), (3, 3, 0.5), (2, 2, 0.2)];
        assert_eq!(keys(&fuse(words, meaning, Vec::new(), TWO_LISTS))[0], 1);
    }

    #[test]
    fn a_hit_beside_a_strong_one_rises_above_an_equal_one_alone() {
        // 2 and 3 fuse equal; 2 sits beside 1, the best hit.
        let words = vec![(1, 1, 10.0), (2, 2, 4.0), (3, 3, 4.0), (4, 4, 0.0)];
        let f = fuse(words, Vec::new(), Vec::new(), TWO_LISTS);
        let at = |k: u32| f.iter().position(|x| x.item == k).unwrap();
        let mut near = vec![Vec::new(); f.len()];
        near[at(2)].push((at(1), 1.0));
        near[at(1)].push((at(2), 1.0));
        // 3 is two away from 1: it counts for half.
        near[at(3)].push((at(1), FAR));
        let lifted = lift(f, &near);
        assert_eq!(keys(&lifted)[..3], [1, 2, 3]);
        let three = lifted.iter().find(|x| x.item == 3).unwrap();
        assert!((three.lifted - NEIGHBOUR_WEIGHT * FAR * WORDS_WEIGHT).abs() < 1e-9);
        let two = lifted.iter().find(|x| x.item == 2).unwrap();
        // The best's fused score is the words' weight (it is their best).
        assert!((two.lifted - NEIGHBOUR_WEIGHT * WORDS_WEIGHT).abs() < 1e-9);
        let one = lifted.iter().find(|x| x.item == 1).unwrap();
        assert!(
            (one.lifted - NEIGHBOUR_WEIGHT * WORDS_WEIGHT * 0.4).abs() < 1e-9,
            "its neighbour's own fused score, not its lifted one"
        );
    }

    #[test]
    fn a_hit_by_the_author_the_query_names_rises() {
        // 2 fuses below 1; 2's author is named, in parts.
        let f = fuse(
            vec![(1, 1, 10.0), (2, 2, 9.0), (3, 3, 0.0)],
            Vec::new(),
            Vec::new(),
            TWO_LISTS,
        );
        let author = |k: &u32| {
            match k {
                2 => "agent-zero",
                3 => "agent-research",
                _ => "user",
            }
            .to_string()
        };
        let words = crate::terms::index_words("what did agent zero find?");
        let named = author_named(f, author, &words);
        assert_eq!(keys(&named), [2, 1, 3]);
        assert_eq!(named[0].named, AUTHOR_NAMED);
        assert!((named[0].score - (WORDS_WEIGHT * 0.9 + AUTHOR_NAMED)).abs() < 1e-9);
        assert_eq!(
            named[2].named, 0.0,
            "a name only partly asked for is not named"
        );
    }

    #[test]
    fn the_sparse_list_counts_with_its_weight() {
        // 3 is last in words, absent in meaning, first in the sparse list:
        // 0.35·0 + 0.4·1 = 0.4 beats 2's 0.35·0.5 + 0.25·0 = 0.175.
        let words = vec![(1, 1, 10.0), (2, 2, 5.0), (3, 3, 0.0)];
        let meaning = vec![(1, 1, 0.9), (2, 2, 0.1)];
        let sparse = vec![(3, 3, 7.5), (1, 1, 2.5)];
        let f = fuse(words, meaning, sparse, THREE_LISTS);
        assert_eq!(keys(&f), [1, 3, 2]);
        let three = f.iter().find(|x| x.item == 3).unwrap();
        let sp = three.sparse.unwrap();
        assert_eq!((sp.rank, sp.score, sp.scaled), (1, 7.5, Some(1.0)));
        assert!((three.score - THREE_LISTS.sparse).abs() < 1e-9);
        let one = f.iter().find(|x| x.item == 1).unwrap();
        assert!((one.score - (0.35 + 0.25 + 0.0)).abs() < 1e-9);
        assert!(f.iter().find(|x| x.item == 2).unwrap().sparse.is_none());
        let total = THREE_LISTS.words + THREE_LISTS.meaning + THREE_LISTS.sparse;
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn one_sided_and_flat_lists_still_rank() {
        let f = fuse(
            Vec::<(u8, u32, f64)>::new(),
            vec![(1, 1, 0.5), (2, 2, 0.5)],
            Vec::new(),
            TWO_LISTS,
        );
        assert_eq!(keys(&f), [1, 2]);
        assert!(f.iter().all(|x| x.score > 0.0));
    }
}
