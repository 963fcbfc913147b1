//! `search {explain: true}`: why the hits ranked where they did, in the
//! figures the ranking used. Absent unless asked for.

use serde::{Deserialize, Serialize};

/// What the query became before any note was scored.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct QueryExplain {
    /// `keywords` (one word, or up to three with no common word among
    /// them: every word required, then word beginnings and substrings) or
    /// `question` (any of its uncommon words, ranked by BM25).
    pub reads_as: String,
    /// The words ranked by, rarest first: how many entries hold each and
    /// its BM25 weight (idf over the store's live entries).
    pub words: Vec<WordWeight>,
    /// Common words a question left out ("the", "when", "did" …).
    pub dropped_common: Vec<String>,
    /// Words left out because ranking every note holding them would pass
    /// the postings budget (the most common go first).
    pub dropped_over_budget: Vec<String>,
    /// Every word was too common to rank all its matches: only the newest
    /// matches of the rarest word were ranked.
    pub newest_only: bool,
    /// The conditions that narrowed the candidates, as applied: the
    /// filters given, a token's pads, archived pads and (unless asked)
    /// superseded notes left out.
    pub filter: Vec<String>,
    /// The word side: how many hits it was asked for (the candidates'
    /// budget) and how many it found. Absent in `semantic` mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Candidates>,
    /// The meaning side, the same; `below_floor` counts its matches under
    /// the hybrid's cosine floor, left out. Absent in `text` mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<Candidates>,
    /// Hybrid: the cosine under which meaning matches are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning_floor: Option<f64>,
    /// Hybrid: what the meaning list's scores are — the cosine centred on
    /// the mean of the notes searched, of the plain cosine's best 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning_scores: Option<String>,
    /// Hybrid: the word side's share of a fused score (the meaning side
    /// has the rest, less the sparse list's share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words_weight: Option<f64>,
    /// Hybrid with the sparse model: the sparse list (the notes holding the
    /// question's encoded terms among their learned terms) — how many hits it
    /// was asked for and found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse: Option<Candidates>,
    /// The sparse list's share of a fused score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse_weight: Option<f64>,
    /// Where the sparse list's terms came from: the question encoded by
    /// the sparse model (each term's weight its model weight × its idf),
    /// or its own word pieces (each its idf) when encoding failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pieces_from: Option<String>,
    /// The terms the sparse list ranked by ("##s" ends a word; an encoded
    /// question's include words it means): how many notes hold each among
    /// their terms, and its weight (its weight in the question × its idf).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces: Vec<WordWeight>,
    /// Pieces the sparse list left out: in no note's terms, or past the
    /// postings budget (the most common go first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces_left_out: Vec<String>,
    /// Hits left out of the page because a newer note supersedes them.
    pub superseded_left_out: usize,
    /// Hits folded into an earlier hit with exactly their text (its
    /// `copies`).
    pub copies_folded: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct WordWeight {
    pub word: String,
    /// How many live entries hold it (within the filter).
    pub entries: u64,
    /// Its BM25 weight (inverse document frequency).
    pub weight: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Candidates {
    pub asked: u32,
    pub found: usize,
    #[serde(default)]
    pub below_floor: usize,
}

/// Why one hit ranked where it did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct HitExplain {
    /// The query's ranked words this note holds, with their weight.
    pub words: Vec<WordWeight>,
    /// Its place in the word side's list: rank (from 1), score (BM25, or
    /// the keyword tier's), and the score scaled 0–1 in that list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Ranked>,
    /// Its place in the meaning side's list; `score` is the cosine
    /// similarity of its vector and the query's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<Ranked>,
    /// Its place in the sparse list; `score` is the sum of its terms'
    /// weights for the query's pieces times their idf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse: Option<Ranked>,
    /// Hybrid: what the note next to it in its pad (or the one it replies
    /// to), a hit too, added to its score.
    pub neighbours: f64,
    /// Hybrid: what the query naming its author added ("what did caroline
    /// say…" for a note by `caroline`; 0 when it does not).
    #[serde(default)]
    pub author_named: f64,
    /// The score it ranked by (the hit's `score`).
    pub score: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Ranked {
    pub rank: usize,
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaled: Option<f64>,
}
