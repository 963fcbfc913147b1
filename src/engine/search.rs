//! `search`: text, meaning, or both fused by score. A search is a plan
//! first: the request turned into a value — which ranked lists run, how
//! deep, under which filter, and how they are fused — before anything runs
//! (`Plan::new`, pure, so tests assert on it); then the lists run
//! (`Engine::run_lists`), are fused and cut; `explain` is the plan plus
//! each list's part.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::explain::{self, TextPlan};
use super::fusion::{self, Weights};
use super::meaning::Probe;
use super::sparse::SparsePlan;
use super::{limit, Engine};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model::Entry;
use crate::protocol::*;
use crate::semantic::splade::Pieces;
use crate::storage::{EntryFilter, Storage};
use crate::terms::{self, TierHits};

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
    /// Whether the meaning list is centred on the mean of the notes
    /// searched (`centre.rs`): in hybrid with the sparse list, as measured.
    pub centred: bool,
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
            centred: sparse.is_some(),
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
            .field("centred", &self.centred)
            .finish()
    }
}

/// The query, trimmed, or why it cannot be searched for.
fn asked(p: &SearchParams) -> Result<&str> {
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

impl Engine {
    pub async fn search(&self, p: SearchParams, guard: &Guard) -> Result<SearchResult> {
        let started = Instant::now();
        let result = self.search_page(&p, guard).await;
        if let (Some(m), Ok(r)) = (self.metrics(), &result) {
            m.search(r.mode, started.elapsed());
        }
        result
    }

    /// A page of `limit` hits, exact copies folded into the first of them
    /// and superseded notes left out (unless `include_superseded`) before
    /// the page is cut: while they leave it short and more hits may exist,
    /// the search runs again for twice as many.
    async fn search_page(&self, p: &SearchParams, guard: &Guard) -> Result<SearchResult> {
        let page = limit("limit", p.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT)? as usize;
        let mut want = page as u32;
        loop {
            let mut r = self.search_inner(p, guard, want).await?;
            let found = r.hits.len();
            if !p.include_superseded {
                // Superseded by a note the caller may read: a newer note
                // in a pad it cannot read hides nothing from it.
                let mut current = Vec::with_capacity(r.hits.len());
                for h in std::mem::take(&mut r.hits) {
                    let hidden = match &h.entry.superseded_by {
                        None => false,
                        Some(newer) => guard.sees(self.db(), newer).await?,
                    };
                    if !hidden {
                        current.push(h);
                    }
                }
                r.hits = current;
            }
            let current = r.hits.len();
            r.hits = collapse_copies(r.hits);
            if let Some(e) = &mut r.explain {
                e.superseded_left_out = found - current;
                e.copies_folded = current - r.hits.len();
            }
            if r.hits.len() >= page || found < want as usize || want >= MAX_SEARCH_LIMIT {
                r.hits.truncate(page);
                return Ok(r);
            }
            want = (want * 2).min(MAX_SEARCH_LIMIT);
        }
    }

    /// Up to `want` hits, best first (copies not yet folded): the request
    /// planned (`Plan`), its lists run, fused and cut.
    async fn search_inner(
        &self,
        p: &SearchParams,
        guard: &Guard,
        want: u32,
    ) -> Result<SearchResult> {
        let query = asked(p)?;
        let filter = guard.scope(filter_of(p)?)?;
        let available = match self.semantic() {
            Some(s) if s.is_ready() => Ok(s.pieces()),
            Some(s) => Err(s.not_ready()),
            None => Err(None),
        };
        let plan = Plan::new(query, p.mode, filter, available, want)?;
        let lists = self.run_lists(&plan).await?;
        let not_embedded = lists.not_embedded;
        let (ranked, sides) = self.ranked(&plan, lists).await?;
        let explain = match p.explain {
            false => None,
            true => Some(
                self.explain_query(&plan.query, plan.mode, &plan.filter, p, sides)
                    .await?,
            ),
        };
        let hits = ranked
            .into_iter()
            .take(plan.limit as usize)
            .map(|f| {
                let why = explain.as_ref().map(|q| explain::hit(&f, q));
                SearchHit {
                    found_by: [
                        (f.words.is_some(), "text"),
                        (f.meaning.is_some(), "semantic"),
                        (f.sparse.is_some(), "sparse"),
                    ]
                    .into_iter()
                    .filter(|(by, _)| *by)
                    .map(|(_, name)| name.to_string())
                    .collect(),
                    score: f.score,
                    entry: f.item,
                    copies: Vec::new(),
                    explain: why,
                }
            })
            .collect();
        Ok(SearchResult {
            hits,
            mode: plan.mode,
            not_embedded,
            explain,
        })
    }

    /// Runs the plan's lists: the meaning side (the query's embedding on
    /// the worker, then the index) as its own task alongside the word
    /// side, and the related words (the question encoded on the worker
    /// meanwhile) after the meaning side, once every acknowledged write is
    /// encoded.
    async fn run_lists(&self, plan: &Plan) -> Result<Lists> {
        let meaning = plan.meaning.then(|| {
            let (query, filter, this) = (plan.query.clone(), plan.filter.clone(), self.clone());
            let (pieces, k) = (plan.sparse.clone(), plan.k);
            let probe = match plan.centred {
                true => Probe::Fused,
                false => Probe::Search,
            };
            tokio::spawn(async move {
                // The question's terms are encoded on the worker while the
                // store is searched by meaning.
                let terms = async {
                    match &pieces {
                        Some(pieces) => Some(this.question_terms(pieces, &query).await),
                        None => None,
                    }
                };
                let (near, terms) = tokio::join!(
                    this.nearest_entries(&query, probe, filter.clone(), k),
                    terms
                );
                let (near, not_embedded) = near?;
                let sparse = match pieces.zip(terms) {
                    None => None,
                    Some((pieces, terms)) => {
                        let _turn = this.turn().await?;
                        // A third list: without it the search still
                        // answers, from the other two.
                        match this.sparse_hits(&pieces, &terms, &filter, k).await {
                            Ok(found) => Some(found),
                            Err(e) => {
                                tracing::warn!(
                                    "the sparse list failed ({e}); searching without it"
                                );
                                None
                            }
                        }
                    }
                };
                Ok::<_, Error>((near, not_embedded, sparse))
            })
        });
        let (text, text_plan) = match plan.words {
            None => (Vec::new(), None),
            Some(words) => {
                let _turn = self.turn().await?;
                let (hits, text_plan) = self
                    .text_hits(
                        &plan.query,
                        &plan.filter,
                        plan.k,
                        words.substrings,
                        words.beside_meaning,
                    )
                    .await?;
                (hits, Some(text_plan))
            }
        };
        let (near, not_embedded, sparse) = match meaning {
            Some(task) => task
                .await
                .map_err(|e| Error::Internal(format!("semantic search task failed: {e}")))??,
            None => (Vec::new(), 0, None),
        };
        Ok(Lists {
            text,
            text_plan,
            near,
            not_embedded,
            sparse,
        })
    }

    /// The lists as one ranking: one list as it ranks; a hybrid's fused
    /// by the plan's weights (weak meaning matches left out), raised where
    /// the query names the author, lifted by neighbours. With it, what
    /// each list was asked for and found, for `explain`.
    async fn ranked(
        &self,
        plan: &Plan,
        lists: Lists,
    ) -> Result<(Vec<fusion::Fused<Entry>>, explain::Sides)> {
        let mut sides = explain::Sides {
            k: plan.k,
            centred: plan.centred,
            text: lists.text_plan.is_some().then_some(lists.text.len()),
            text_plan: lists.text_plan,
            meaning: plan.meaning.then_some(lists.near.len()),
            below_floor: 0,
            sparse: None,
            weights: None,
        };
        let Some(weights) = plan.fusion else {
            let ranked = match plan.mode {
                SearchMode::Semantic => fusion::one_side(lists.near, false),
                _ => fusion::one_side(lists.text, true),
            };
            return Ok((ranked, sides));
        };
        // Weak meaning matches are noise next to word matches.
        let found = lists.near.len();
        let near: Vec<(Entry, f64)> = lists
            .near
            .into_iter()
            .filter(|(_, score)| *score >= fusion::HYBRID_MIN_SIMILARITY)
            .collect();
        sides.below_floor = found - near.len();
        // An empty sparse list (nothing encoded yet, every piece past the
        // budget, or it failed) leaves the two lists as they fuse alone.
        let (sparse, weights) = match lists.sparse {
            Some((hits, sparse_plan)) if !hits.is_empty() => {
                sides.sparse = Some((sparse_plan, hits.len()));
                (hits, weights)
            }
            Some((hits, sparse_plan)) => {
                sides.sparse = Some((sparse_plan, 0));
                (hits, fusion::TWO_LISTS)
            }
            None => (Vec::new(), fusion::TWO_LISTS),
        };
        sides.weights = Some(weights);
        let keyed = |hits: Vec<(Entry, f64)>| -> Vec<(String, Entry, f64)> {
            hits.into_iter()
                .map(|(e, s)| (e.id.clone(), e, s))
                .collect()
        };
        let fused = fusion::author_named(
            fusion::fuse(keyed(lists.text), keyed(near), keyed(sparse), weights),
            |e: &Entry| e.author.clone(),
            &terms::index_words(&plan.query),
        );
        Ok((self.lifted_by_neighbours(fused).await?, sides))
    }

    /// `fusion::lift` with each hit's neighbours: the notes just before and
    /// after it in its pad, and the note it replies to.
    async fn lifted_by_neighbours(
        &self,
        fused: Vec<fusion::Fused<Entry>>,
    ) -> Result<Vec<fusion::Fused<Entry>>> {
        let seqs: Vec<i64> = fused
            .iter()
            .map(|f| crate::id::decode(&f.item.id).unwrap_or(-1))
            .collect();
        let around = self.db().pad_neighbours(&seqs).await?;
        let at: std::collections::HashMap<i64, usize> =
            seqs.iter().enumerate().map(|(i, s)| (*s, i)).collect();
        let near: Vec<Vec<(usize, f64)>> = fused
            .iter()
            .zip(&around)
            .map(|(f, [before, after, before2, after2])| {
                let parent = f.item.reply_to.as_deref().and_then(crate::id::decode);
                let beside = [*before, *after, parent].map(|s| (s, 1.0));
                let far = [*before2, *after2].map(|s| (s, fusion::FAR));
                beside
                    .into_iter()
                    .chain(far)
                    .filter_map(|(s, w)| Some((*at.get(&s?)?, w)))
                    .collect()
            })
            .collect();
        Ok(fusion::lift(fused, &near))
    }

    /// Text search over live entries, case and accents aside: the tiers
    /// below on the store's primitives, each only while the ones before
    /// found fewer hits than asked, and ranked after them.
    ///
    /// A keyword query (`terms::is_keywords`) runs up to four tiers:
    ///
    /// 1. every word whole ("login" finds "Login failed");
    /// 2. every word's beginning ("dock" finds "Docker");
    /// 3. substrings anywhere ("ocker" finds "Docker"), newest first;
    /// 4. any of the words, by BM25.
    ///
    /// A question runs tier 4 alone over its uncommon words, so the notes
    /// sharing its rarest words come first: every match while the words'
    /// postings fit the store's budget (the most common words left out until
    /// they do), else the newest matches of the rarest word. `substrings:
    /// false` skips tier 3 (hybrid search does for queries of several
    /// words: meaning search covers them, and tier 3 is the slowest).
    /// `beside_meaning` (hybrid search) ranks within the smaller
    /// `terms::HYBRID_POSTINGS_BUDGET`.
    ///
    /// On a store whose scans block a thread, the whole pipeline runs on one
    /// blocking thread, its operations inline there.
    pub(super) async fn text_hits(
        &self,
        query: &str,
        filter: &EntryFilter,
        limit: u32,
        substrings: bool,
        beside_meaning: bool,
    ) -> Result<(Vec<(Entry, f64)>, TextPlan)> {
        let (query, filter) = (query.to_string(), filter.clone());
        self.as_one_scan(move |_, scan| async move {
            text_tiers(
                &*scan.db,
                &query,
                &filter,
                limit,
                substrings,
                beside_meaning,
            )
            .await
        })
        .await
    }

    /// Runs `scan`, several store operations, as one: on a store whose
    /// scans block a thread, on one blocking thread of its own with each
    /// operation there (`Scans::on_one_thread`; a hop per operation cost
    /// SQLite up to 1.6 ms p50, docs/benchmarks.md); on others, here.
    pub(super) async fn as_one_scan<T, F>(
        &self,
        scan: impl FnOnce(Engine, Scan) -> F + Send + 'static,
    ) -> Result<T>
    where
        F: std::future::Future<Output = Result<T>> + Send,
        T: Send + 'static,
    {
        let Some(db) = self.db().on_one_thread() else {
            let db = self.0.store.clone();
            return scan(
                self.clone(),
                Scan {
                    db,
                    own_thread: false,
                },
            )
            .await;
        };
        let (engine, runtime) = (self.clone(), tokio::runtime::Handle::current());
        let own = Scan {
            db,
            own_thread: true,
        };
        tokio::task::spawn_blocking(move || runtime.block_on(scan(engine, own)))
            .await
            .map_err(|e| Error::Internal(format!("a search task failed: {e}")))?
    }
}

/// A client's scan run as one (`Engine::as_one_scan`): the store its
/// operations run on and where its other blocking work runs.
pub(super) struct Scan {
    /// The store; on SQLite, the handle running each operation on the
    /// scan's own thread.
    pub db: Arc<dyn Storage>,
    /// Whether the scan runs on a blocking thread of its own.
    own_thread: bool,
}

impl Scan {
    /// Runs `f`, work that blocks its thread: here when the scan has a
    /// thread of its own, else on one of the runtime's blocking threads (a
    /// scan awaited on the runtime must not stall it).
    pub async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.own_thread {
            return f();
        }
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| Error::Internal(format!("a search task failed: {e}")))?
    }
}

/// The word side's tiers (`Engine::text_hits`), on `db`.
async fn text_tiers(
    db: &dyn Storage,
    query: &str,
    filter: &EntryFilter,
    limit: u32,
    substrings: bool,
    beside_meaning: bool,
) -> Result<(Vec<(Entry, f64)>, TextPlan)> {
    // Read your writes: the text index has every acknowledged write.
    db.index_text().await?;
    let readable = readable_entries(db, filter).await?;
    let mut plan = TextPlan {
        keywords: terms::is_keywords(query),
        readable,
        ..TextPlan::default()
    };
    let mut hits = TierHits::new(limit);
    if plan.keywords {
        let words = terms::query_words(query);
        hits.add(db.word_hits(&words, filter, limit, false, readable).await?);
        if !hits.full() {
            hits.add(db.word_hits(&words, filter, limit, true, readable).await?);
        }
        if substrings && !hits.full() {
            hits.add(db.substring_hits(&words, filter, limit).await?);
        }
    }
    if hits.full() {
        return Ok((hits.into_vec(), plan));
    }
    let words = terms::question_words(query);
    let forms = terms::forms_of(&words);
    plan.dropped_common = terms::index_words(query)
        .into_iter()
        .filter(|w| !words.contains(w))
        .collect();
    let asked: Vec<String> = words.iter().chain(&forms).cloned().collect();
    // The question's own words first; their forms from what the budget
    // leaves (`terms::ranked_words`).
    let (typed, formed): (Vec<_>, Vec<_>) = db
        .word_counts(&asked, filter)
        .await?
        .into_iter()
        .partition(|(w, _)| words.contains(w));
    let first = if typed.is_empty() { &formed } else { &typed };
    let Some(rarest) = first.iter().min_by_key(|(_, df)| *df).cloned() else {
        return Ok((hits.into_vec(), plan));
    };
    let budget = if beside_meaning {
        db.postings_budget().min(terms::HYBRID_POSTINGS_BUDGET)
    } else {
        db.postings_budget()
    };
    let kept = terms::ranked_words(&typed, &formed, budget);
    plan.newest_only = kept.is_empty();
    let kept: Vec<(String, u64)> = if plan.newest_only {
        vec![rarest]
    } else {
        typed
            .iter()
            .chain(&formed)
            .filter(|(w, _)| kept.contains(w))
            .cloned()
            .collect()
    };
    // The question's own words left out; a form is only ever a bonus.
    plan.over_budget = typed
        .iter()
        .filter(|(w, _)| !kept.iter().any(|(k, _)| k == w))
        .map(|(w, _)| w.clone())
        .collect();
    hits.add(
        db.any_word_hits(&kept, readable, filter, limit, plan.newest_only)
            .await?,
    );
    plan.ranked = kept;
    Ok((hits.into_vec(), plan))
}

/// How many entries a scoped caller may read (`EntryFilter::scope`: a
/// token's pads), archived pads' too; `None` for the owner. BM25 weighs a
/// word by it, so a token's scores and explanations say nothing of the
/// rest of the store.
async fn readable_entries(
    db: &dyn crate::storage::Storage,
    filter: &crate::storage::EntryFilter,
) -> Result<Option<u64>> {
    let Some(pads) = filter.scope.as_deref() else {
        return Ok(None);
    };
    let readable = db
        .pads(true)
        .await?
        .iter()
        .filter(|p| {
            pads.iter()
                .any(|pat| crate::access::pattern_matches(pat, &p.name))
        })
        .map(|p| p.entries.max(0) as u64)
        .sum();
    Ok(Some(readable))
}

/// What the plan's lists found.
struct Lists {
    text: Vec<(Entry, f64)>,
    text_plan: Option<TextPlan>,
    near: Vec<(Entry, f64)>,
    /// Acknowledged writes the meaning side could not wait for (a flood).
    not_embedded: u64,
    sparse: Option<(Vec<(Entry, f64)>, SparsePlan)>,
}

/// The conditions a search's params ask for (the guard then narrows them
/// to what the caller may read).
fn filter_of(p: &SearchParams) -> Result<EntryFilter> {
    super::Asked {
        pad: p.pad.as_deref(),
        tags: &p.tags,
        author: p.author.as_deref(),
        kind: p.kind,
        category: p.category,
        min_confidence: p.min_confidence,
    }
    .filter()
}

/// Hits with exactly the text of a hit before them leave the page; the
/// first says their ids in `copies`.
fn collapse_copies(hits: Vec<SearchHit>) -> Vec<SearchHit> {
    let mut out: Vec<SearchHit> = Vec::with_capacity(hits.len());
    for hit in hits {
        let text = hit.entry.content.trim();
        match out.iter_mut().find(|h| h.entry.content.trim() == text) {
            Some(first) => first.copies.push(hit.entry.id.into()),
            None => out.push(hit),
        }
    }
    out
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
        assert!(!p.centred, "plain cosines beside words alone");
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
        assert!(p.centred, "beside it, the meaning list is centred");
        assert_eq!(p.k, 20, "as deep as the others");
        assert!(p.meaning && p.words.is_some());
        let p = plan("dog", SearchMode::Semantic, pieces(), 10).unwrap();
        assert!(p.sparse.is_none() && p.fusion.is_none());
        assert!(!p.centred, "semantic gives the plain cosine");
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
