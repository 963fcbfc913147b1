//! What a text query asks for, decided once for both stores: its words as
//! the word indexes hold them, whether it reads as keywords or as a
//! question, and which of its words are worth ranking by; and text search's
//! tuning (postings budgets, newest candidates) in one place.
//!
//! A keyword query ("docker login", "dock") keeps every word required and
//! falls back to word beginnings and substrings; a question ("when did we
//! move the staging DB?") matches any of its words that are not common,
//! ranked by BM25, so the notes sharing its rarest words come first.

use std::collections::HashSet;

use rust_stemmers::{Algorithm, Stemmer};

/// Queries of up to this many words are keywords; longer ones are questions.
const KEYWORD_WORDS: usize = 3;

/// How many postings the ranked tier may score on SQLite: a word whose
/// matches would push the total past this is too common to rank by (its
/// weight in BM25 is near nothing anyway), and is left out, most common
/// first. 25,000 cost p50 20 ms / p99 36 ms for a question at 100k entries;
/// 10,000 keep it near 10 ms (benches/search.rs, docs/benchmarks.md). A pad
/// of up to this many entries always ranks every word.
pub const POSTINGS_BUDGET: u64 = 10_000;

/// The same budget on PostgreSQL: it gathers every match of a question's
/// words before taking the newest, at ~3 µs a match (a question at 100k
/// entries: p50 45 ms with 10,000), so it ranks by fewer of the common words.
pub const POSTINGS_BUDGET_PG: u64 = 3_000;

/// The budget of a hybrid search's words side, on both stores: beside the
/// meaning side, which scores every note anyway, ranking every match of a
/// word in 5 % of 100k notes bought little and cost the most (the words
/// side of such a question ~6–10 ms on SQLite, contending with the vector
/// scan on two cores: hybrid p50 / p99 7.1 / 13.7 ms with 10,000, 5.1 / 8.1
/// with this, on one standing store, docs/benchmarks.md). A pad of up to
/// this many entries still ranks every word, so LoCoMo's conversations are
/// ranked as before.
pub const HYBRID_POSTINGS_BUDGET: u64 = 3_000;

/// When even the rarest word is too common to rank every match of, the
/// newest matches are ranked: at least this many, and at least
/// `CANDIDATES_PER_HIT` per hit asked for. Ranking every match of a very
/// common word costs tens of milliseconds at 100k entries; ranking the newest
/// few hundred costs a few, and for a scratch-pad the newest matches are the
/// ones wanted.
const NEWEST_CANDIDATES: u32 = 200;
const CANDIDATES_PER_HIT: u32 = 10;

/// How many of the newest matches are ranked for a page of `limit`.
pub fn newest_candidates(limit: u32) -> u32 {
    NEWEST_CANDIDATES.max(limit.saturating_mul(CANDIDATES_PER_HIT))
}

/// How many of a ranked query's best matches the SQLite index hands over
/// to be checked against a filter it applied itself (`store::text`): a few
/// spare beyond the page, for an archived pad's notes.
pub fn index_candidates(limit: u32) -> u32 {
    limit.saturating_mul(2).saturating_add(10)
}

/// BM25's parameters, as FTS5's `bm25()` has them, so both stores rank alike.
pub const K1: f64 = 1.2;
pub const B: f64 = 0.75;

/// A query's words, as the word indexes tokenize text: runs of letters and
/// digits, lower-cased, each once, in the query's order.
pub fn index_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = w.to_lowercase();
        if !words.contains(&w) {
            words.push(w);
        }
    }
    words
}

/// Whether a query reads as keywords (every word required, word beginnings
/// and substrings tried) rather than a question: one word, or a few with
/// no function word among them.
pub fn is_keywords(query: &str) -> bool {
    let words: Vec<&str> = query.split_whitespace().collect();
    words.len() <= 1
        || (words.len() <= KEYWORD_WORDS && !words.iter().any(|w| is_stopword(&w.to_lowercase())))
}

/// The words of a question to look for: its words less the common ones
/// (all of them when nothing else is left, as in "what is it").
pub fn question_words(query: &str) -> Vec<String> {
    let words = index_words(query);
    let kept: Vec<String> = words.iter().filter(|w| !is_stopword(w)).cloned().collect();
    if kept.is_empty() {
        words
    } else {
        kept
    }
}

/// The other English forms a question's `words` may take in a note
/// ("camp": "camps", "camped", "camping"; "activities": "activity"), so its
/// ranked tier finds a note that says it another way. A form is made from
/// the word or its stem with a common ending (doubling a last consonant,
/// an "e" dropped, a "y" for an "i") and kept only when Snowball's English
/// stemmer takes it to the same stem, it is not a function word ("having"
/// does not bring "have") and it is not one of `words`; the forms no note
/// holds drop out when the words are counted. Words of three ASCII letters
/// or more only (numbers and other scripts have none), and of the first
/// `FORMS_OF` words. Each form once, in the words' order.
///
/// Measured on LoCoMo's and REALTALK's development halves through the
/// engine: recall@10 74.8 → 76.1 and 57.1 → 57.7 (LoCoMo's scoring),
/// multi-hop 35.4 → 38.8 and 34.1 → 35.9 — as much as stemming the notes
/// themselves did on the same lists, with no index changed
/// (docs/benchmarks.md).
pub fn forms_of(words: &[String]) -> Vec<String> {
    let english = Stemmer::create(Algorithm::English);
    let asked: HashSet<&str> = words.iter().map(String::as_str).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for word in words.iter().take(FORMS_OF) {
        for f in forms(&english, word) {
            if !asked.contains(f.as_str()) && !is_stopword(&f) && seen.insert(f.clone()) {
                out.push(f);
            }
        }
    }
    out
}

/// A question's words given forms (`forms_of`): a longer one is a pasted
/// text more than a question, and its words are many enough.
const FORMS_OF: usize = 16;

/// Of a question's counted words (`typed`) and their forms (`formed`),
/// with how many entries hold each, those to rank by: its own words rarest
/// first while their postings fit `budget` (`within_budget`), then their
/// forms, rarest first, in what the budget leaves — a form never pushes
/// out a word the question says. None when even the rarest of its own
/// words is over budget (the caller then ranks that word's newest
/// matches); when no word of its own is held, the forms alone.
pub fn ranked_words(typed: &[(String, u64)], formed: &[(String, u64)], budget: u64) -> Vec<String> {
    if typed.is_empty() {
        return within_budget(formed, budget);
    }
    let mut kept = within_budget(typed, budget);
    if kept.is_empty() {
        return kept;
    }
    let used: u64 = typed
        .iter()
        .filter(|(w, _)| kept.contains(w))
        .map(|(_, df)| df)
        .sum();
    kept.extend(within_budget(formed, budget - used));
    kept
}

/// The endings a form is made with.
const ENDINGS: [&str; 8] = ["", "s", "es", "ed", "ing", "ies", "ied", "e"];

/// The other forms of `word` that share its stem, in a stable order.
fn forms(english: &Stemmer, word: &str) -> Vec<String> {
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Vec::new();
    }
    let stem = english.stem(word).into_owned();
    // "activities" and "carried" end in an "i" once their ending is off,
    // which becomes a "y": "activity", "carry".
    let before_ending = ["ies", "ied"]
        .iter()
        .find_map(|e| word.strip_suffix(&e[1..]).filter(|_| word.ends_with(e)));
    let mut made: Vec<String> = Vec::new();
    for base in [Some(stem.as_str()), Some(word), before_ending]
        .into_iter()
        .flatten()
    {
        let last = &base[base.len() - 1..];
        for ending in ENDINGS {
            made.push(format!("{base}{ending}"));
            made.push(format!("{base}{last}{ending}"));
            if let Some(b) = base.strip_suffix('i') {
                made.push(format!("{b}y{ending}"));
            }
            if let Some(b) = base.strip_suffix('e') {
                made.push(format!("{b}{ending}"));
            }
        }
    }
    made.sort();
    made.dedup();
    made.retain(|f| f != word && english.stem(f) == stem);
    made
}

/// Of `words` with how many entries hold each (`df`), those to rank by: the
/// rarest first while their postings fit `budget`; none when even the
/// rarest does not (the caller then ranks the newest matches instead).
pub fn within_budget<W: Clone>(words: &[(W, u64)], budget: u64) -> Vec<W> {
    let mut by_rarity: Vec<&(W, u64)> = words.iter().collect();
    by_rarity.sort_by_key(|(_, df)| *df);
    let mut total = 0u64;
    let mut kept = Vec::new();
    for (w, df) in by_rarity {
        if total + df > budget {
            break;
        }
        total += df;
        kept.push(w.clone());
    }
    kept
}

/// BM25's weight of a word held by `df` of `n` entries, as FTS5 computes it
/// (a word in over half the entries counts for almost nothing, not less).
pub fn idf(n: f64, df: f64) -> f64 {
    let idf = ((n - df + 0.5) / (df + 0.5)).ln();
    if idf <= 0.0 {
        1e-6
    } else {
        idf
    }
}

/// A query's words as typed. Control characters (a NUL, say) separate words
/// like spaces: FTS5 cannot take them inside a quoted term.
pub fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Text search's page, filled tier by tier (words, then word beginnings,
/// then substrings, then any word), each hit once, in the order the tiers
/// found them.
pub struct TierHits {
    hits: Vec<(crate::model::Entry, f64)>,
    seen: std::collections::HashSet<String>,
    limit: usize,
}

impl TierHits {
    pub fn new(limit: u32) -> TierHits {
        TierHits {
            hits: Vec::new(),
            seen: Default::default(),
            limit: limit as usize,
        }
    }

    pub fn add(&mut self, more: Vec<(crate::model::Entry, f64)>) {
        for (e, score) in more {
            if self.hits.len() < self.limit && self.seen.insert(e.id.clone()) {
                self.hits.push((e, score));
            }
        }
    }

    /// The page is full: later tiers need not run.
    pub fn full(&self) -> bool {
        self.hits.len() >= self.limit
    }

    pub fn into_vec(self) -> Vec<(crate::model::Entry, f64)> {
        self.hits
    }
}

/// Function words of English and of the other languages people here write
/// in most (German, French, Spanish): they match nearly every note, so a
/// question's ranking ignores them. Rare words carry the meaning.
fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

/// Sorted, for the binary search.
const STOPWORDS: &[&str] = &[
    "a", "about", "al", "all", "also", "am", "an", "and", "any", "are", "as", "at", "au", "aux",
    "be", "been", "being", "but", "by", "can", "could", "dans", "das", "de", "del", "dem", "den",
    "der", "des", "did", "die", "do", "does", "du", "ein", "eine", "einen", "el", "en", "es",
    "est", "et", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "il",
    "im", "in", "into", "is", "ist", "it", "its", "la", "las", "le", "les", "los", "me", "mit",
    "my", "of", "on", "or", "ou", "our", "para", "por", "que", "she", "should", "so", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "un", "una", "und", "une", "uno", "us", "von", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "y", "you", "your",
    "zu",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stopword_list_is_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_question_keeps_its_rare_words() {
        assert_eq!(
            question_words("When did Caroline go to the support group?"),
            ["caroline", "go", "support", "group"]
        );
        assert_eq!(question_words("what is it"), ["what", "is", "it"]);
        assert!(is_keywords("docker login"));
        assert!(
            is_keywords("on"),
            "one word is a keyword, even a common one"
        );
        assert!(!is_keywords("when is the deploy"));
        assert!(!is_keywords("staging database migration plan"));
    }

    #[test]
    fn the_budget_keeps_the_rarest_words() {
        let words = [
            ("go".to_string(), 9000),
            ("caroline".into(), 300),
            ("group".into(), 20),
        ];
        assert_eq!(within_budget(&words, 10_000), ["group", "caroline", "go"]);
        assert_eq!(within_budget(&words, 5_000), ["group", "caroline"]);
        assert!(within_budget(&words, 10).is_empty());
    }

    #[test]
    fn a_word_brings_its_english_forms_and_only_them() {
        let of =
            |words: &[&str]| forms_of(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>());
        let forms = of(&["camp"]);
        for f in ["camps", "camped", "camping"] {
            assert!(forms.contains(&f.to_string()), "{f} in {forms:?}");
        }
        assert!(!forms.contains(&"camp".to_string()), "not the word itself");
        let forms = of(&["activities", "shop"]);
        for f in ["activity", "shops", "shopping", "shopped"] {
            assert!(forms.contains(&f.to_string()), "{f} in {forms:?}");
        }
        let english = Stemmer::create(Algorithm::English);
        for (w, f) in [
            ("research", "researching"),
            ("kids", "kid"),
            ("moved", "move"),
        ] {
            let made = of(&[w]);
            assert!(made.contains(&f.to_string()), "{f} from {w}: {made:?}");
            assert!(made.iter().all(|m| english.stem(m) == english.stem(w)));
        }
        // Each form once; a word the question says is not its form.
        let both = of(&["camp", "camping"]);
        let mut unique = both.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(both.len(), unique.len());
        assert!(!both.contains(&"camp".to_string()) && !both.contains(&"camping".to_string()));
        // No function word: "having" does not bring "have".
        assert!(!of(&["having"]).contains(&"have".to_string()));
        // Numbers, short words and other scripts have none.
        for w in ["2024", "go", "café", "東京"] {
            assert!(of(&[w]).is_empty(), "{w}");
        }
        // Only the first words of a long text.
        let mut many = vec!["2024".to_string(); FORMS_OF];
        many.push("camp".into());
        assert!(forms_of(&many).is_empty());
        many.remove(0);
        assert!(!forms_of(&many).is_empty());
    }

    #[test]
    fn a_form_never_pushes_out_a_word_the_question_says() {
        let w = |s: &str, df: u64| (s.to_string(), df);
        // "camp" in 2,500 notes; "camps" 300, "camping" 400: the word first.
        let typed = [w("camp", 2500)];
        let formed = [w("camps", 300), w("camping", 400)];
        assert_eq!(ranked_words(&typed, &formed, 3000), ["camp", "camps"]);
        // The word over budget: nothing (its newest matches are ranked),
        // not a rarer form in its place.
        assert!(ranked_words(&[w("deploy", 5000)], &[w("deploys", 30)], 3000).is_empty());
        // No word of the question held: its forms.
        assert_eq!(ranked_words(&[], &formed, 3000), ["camps", "camping"]);
    }
}
