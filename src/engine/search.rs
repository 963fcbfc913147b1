//! `search`: text, meaning, or both fused by rank.

use std::time::Instant;

use super::explain::{self, TextPlan};
use super::plan::{self, Plan};
use super::sparse::SparsePlan;
use super::{fusion, limit, Engine};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model::Entry;
use crate::protocol::*;
use crate::storage::EntryFilter;
use crate::terms::{self, TierHits};

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
    /// planned (`plan.rs`), its lists run, fused and cut.
    async fn search_inner(
        &self,
        p: &SearchParams,
        guard: &Guard,
        want: u32,
    ) -> Result<SearchResult> {
        let query = plan::asked(p)?;
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
            true => Some(self.explain_query(&plan, p, sides).await?),
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
    /// side, and the related words after the meaning side, once every
    /// acknowledged write is encoded.
    async fn run_lists(&self, plan: &Plan) -> Result<Lists> {
        let meaning = plan.meaning.then(|| {
            let (query, filter, this) = (plan.query.clone(), plan.filter.clone(), self.clone());
            let (pieces, k) = (plan.sparse.clone(), plan.k);
            tokio::spawn(async move {
                let (near, not_embedded) = this
                    .nearest_entries(&query, Probe::Search, filter.clone(), k)
                    .await?;
                let sparse = match pieces {
                    None => None,
                    Some(pieces) => {
                        let _turn = this.turn().await?;
                        // A third list: without it the search still
                        // answers, from the other two.
                        match this.sparse_hits(&pieces, &query, &filter, k).await {
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
        self.as_one_scan(move |engine| async move {
            engine
                .text_tiers(&query, &filter, limit, substrings, beside_meaning)
                .await
        })
        .await
    }

    /// Runs `scan`, several store operations, as one: on a store whose
    /// scans block a thread, on one blocking thread of its own with each
    /// operation inline there (a hop per operation cost SQLite up to 1.6 ms
    /// p50, docs/benchmarks.md); on others, here.
    pub(super) async fn as_one_scan<T, F>(
        &self,
        scan: impl FnOnce(Engine) -> F + Send + 'static,
    ) -> Result<T>
    where
        F: std::future::Future<Output = Result<T>> + Send,
        T: Send + 'static,
    {
        if !self.db().scans_block() {
            return scan(self.clone()).await;
        }
        let (engine, runtime) = (self.clone(), tokio::runtime::Handle::current());
        tokio::task::spawn_blocking(move || {
            crate::storage::run_on_scan_thread(|| runtime.block_on(scan(engine)))
        })
        .await
        .map_err(|e| Error::Internal(format!("a search task failed: {e}")))?
    }

    async fn text_tiers(
        &self,
        query: &str,
        filter: &EntryFilter,
        limit: u32,
        substrings: bool,
        beside_meaning: bool,
    ) -> Result<(Vec<(Entry, f64)>, TextPlan)> {
        let db = self.db();
        // Read your writes: the text index has every acknowledged write.
        db.index_text().await?;
        let mut plan = TextPlan {
            keywords: terms::is_keywords(query),
            ..TextPlan::default()
        };
        let mut hits = TierHits::new(limit);
        let readable = super::pads::readable_entries(db, filter).await?;
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

    /// The `k` live entries nearest in meaning to `text` that pass `filter`,
    /// with their cosine similarity; for a search, after waiting (briefly)
    /// for every acknowledged write to be embedded, and also how many were
    /// not (a flood).
    pub(super) async fn nearest_entries(
        &self,
        text: &str,
        probe: Probe,
        filter: EntryFilter,
        k: u32,
    ) -> Result<(Vec<(Entry, f64)>, u64)> {
        let semantic = self
            .semantic()
            .expect("called only when semantic search is ready");
        let vector = async {
            match probe {
                Probe::Search => semantic.query_vector(text).await,
                Probe::NewNote => semantic.text_vector(text).await,
            }
        };
        let settled = async {
            match probe {
                // Counted over what the caller may read.
                Probe::Search => self.settle(semantic, filter.scope.clone()).await,
                Probe::NewNote => Ok(0),
            }
        };
        let (vector, not_embedded) = tokio::try_join!(vector, settled)?;
        let _turn = self.turn().await?;
        let near = self
            .nearest(semantic.clone(), vector, filter, k as usize)
            .await?;
        let ids: Vec<i64> = near.iter().map(|(id, _)| *id).collect();
        let entries = self.db().entries_by_id(&ids).await?;
        let near = near
            .into_iter()
            .zip(entries)
            .filter_map(|((_, score), entry)| Some((entry?, score as f64)))
            .collect();
        Ok((near, not_embedded))
    }
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

/// What a meaning lookup is for.
#[derive(Clone, Copy)]
pub(super) enum Probe {
    /// A search: the text embedded as a query, once every acknowledged
    /// write is embedded (read your writes).
    Search,
    /// A note about to be added (`check_duplicates`): embedded as stored
    /// texts are, against what is embedded now — waiting for the backlog
    /// would hold up every add behind the writes before it.
    NewNote,
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
