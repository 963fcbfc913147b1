//! Meaning search, written once for both stores on the store contract's
//! primitives: read your writes (`settle`), then the nearest entries
//! (`nearest`) — a selective filter scored exactly on its few stored
//! vectors, else the index's best candidates that pass it, rescored on their
//! full-precision vectors — read back as entries (`nearest_entries`, for a
//! search's meaning side and for `entry.add`'s `looks_like`). A hybrid
//! search's list is the plain cosine's best `centre::POOL` re-scored
//! centred on the mean of the notes searched (`centre.rs`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::search::Scan;
use super::{centre, Engine};
use crate::error::Result;
use crate::model::Entry;
use crate::semantic::vector::best;
use crate::semantic::{ChunkCheck, Semantic, SETTLE_MAX_BACKLOG, SETTLE_TIMEOUT};
use crate::storage::{ArchiveMark, CandidateCheck, EntryFilter, Storage};

/// How often a wait for another engine's embeddings looks again.
const EMBEDDED_POLL: Duration = Duration::from_millis(20);

impl Engine {
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
                Probe::Search | Probe::Fused => semantic.query_vector(text).await,
                Probe::NewNote => semantic.text_vector(text).await,
            }
        };
        let settled = async {
            match probe {
                // Counted over what the caller may read.
                Probe::Search | Probe::Fused => self.settle(semantic, filter.scope.clone()).await,
                Probe::NewNote => Ok(0),
            }
        };
        let (vector, not_embedded) = tokio::try_join!(vector, settled)?;
        let _turn = self.turn().await?;
        let near = match probe {
            Probe::Fused => {
                // The index asked for a quarter of the pool hands over the
                // pool, rescored (asked for the pool itself, it walked four
                // times deeper: past the rows it trusts for a pad of 1–3% of
                // a million notes, and then scored every row).
                let (asked, pool) = (
                    (centre::POOL / 4).max(k as usize),
                    centre::POOL.max(k as usize),
                );
                let plain = self
                    .nearest(
                        semantic.clone(),
                        vector.clone(),
                        filter.clone(),
                        asked,
                        pool,
                    )
                    .await?;
                self.centred(semantic, &vector, &filter, plain, k as usize)
                    .await?
            }
            Probe::Search | Probe::NewNote => {
                self.nearest(semantic.clone(), vector, filter, k as usize, k as usize)
                    .await?
            }
        };
        let ids: Vec<i64> = near.iter().map(|(id, _)| *id).collect();
        let entries = self.db().entries_by_id(&ids).await?;
        let near = near
            .into_iter()
            .zip(entries)
            .filter_map(|((_, score), entry)| Some((entry?, score as f64)))
            .collect();
        Ok((near, not_embedded))
    }

    /// Read-your-writes by meaning: waits until every entry and edit
    /// acknowledged before the call is embedded and in this engine's index,
    /// unless the backlog is a flood (more than `SETTLE_MAX_BACKLOG`) or the
    /// wait passes `SETTLE_TIMEOUT`. Returns how many entries and edits were
    /// still not embedded (0 when the index has them all).
    pub(super) async fn settle(
        &self,
        semantic: &Semantic,
        scope: Option<Vec<String>>,
    ) -> Result<u64> {
        let db = self.db();
        let deadline = tokio::time::Instant::now() + SETTLE_TIMEOUT;
        let goal = db.embed_goal().await?;
        loop {
            if let Some(mark) = db.embedded_mark(goal).await? {
                if semantic.indexed_to(mark) {
                    return Ok(0);
                }
                // Only a search that waits hurries the worker: a flood's
                // searches answer at once and leave it to its pace.
                if goal.backlog > SETTLE_MAX_BACKLOG {
                    semantic.wake()?;
                } else {
                    semantic.hurry()?;
                    if semantic.wait_indexed(mark, deadline).await {
                        return Ok(0);
                    }
                }
                return db.embed_left(goal, scope).await;
            }
            // Not embedded yet (on a team, perhaps by another engine).
            if goal.backlog > SETTLE_MAX_BACKLOG {
                semantic.wake()?;
                // The whole store's backlog is the owner's to know; a
                // token's, its pads'.
                return match scope {
                    None => Ok(goal.backlog as u64),
                    scope => db.embed_left(goal, scope).await,
                };
            }
            semantic.hurry()?;
            if tokio::time::Instant::now() >= deadline {
                return db.embed_left(goal, scope).await;
            }
            tokio::time::sleep(EMBEDDED_POLL).await;
        }
    }

    /// The entries of archived pads, sorted: read again only when the pads'
    /// mark moved (a pad archived or brought back, here or by another
    /// engine of a team).
    async fn archived_rows(&self, db: &dyn Storage) -> Result<Arc<[i64]>> {
        let mark = db.archived().await?;
        if mark.pads == 0 {
            return Ok(Arc::from([]));
        }
        if let Some(rows) = self.0.archived.rows(mark) {
            return Ok(rows);
        }
        let rows: Arc<[i64]> = db.archived_entries().await?.into();
        self.0.archived.keep(mark, rows.clone());
        Ok(rows)
    }

    /// The `keep` live entries nearest `query` that pass `filter`, as (id,
    /// cosine), best first (among equal scores the newest), the index asked
    /// for the best `k` (it hands over at least four candidates for each,
    /// every one rescored: `index/walk.rs`).
    pub(super) async fn nearest(
        &self,
        semantic: Arc<Semantic>,
        query: Arc<[f32]>,
        filter: EntryFilter,
        k: usize,
        keep: usize,
    ) -> Result<Vec<(i64, f32)>> {
        self.as_one_scan(move |engine, scan| async move {
            let db = &*scan.db;
            // Unfiltered: the pads' counters (no scan).
            let matching = if filter.is_unfiltered() {
                db.live_entries().await?
            } else {
                db.count_matching(filter.clone(), semantic.exact_max().saturating_add(1))
                    .await?
            };
            if matching <= semantic.exact_max() {
                return db.nearest_exact(query, filter, keep).await;
            }
            // Archived pads' entries are passed by in the index's walk;
            // nothing else to filter out when no condition is given (an entry
            // deleted a moment ago may still be in the index; rescoring
            // skips it).
            let hidden = engine.archived_rows(db).await?;
            let check = (!filter.is_unfiltered()).then(|| db.candidate_check(filter.clone()));
            let candidates = walk(&scan, semantic, query.clone(), check, hidden, k).await?;
            let Some(ids) = candidates else {
                // Still being built: exact is slower but just as right.
                return db.nearest_exact(query, filter, keep).await;
            };
            // Ranked on the full-precision vectors.
            Ok(best(db.similarities(query, ids).await?, keep))
        })
        .await
    }
}

/// What a meaning lookup is for.
#[derive(Clone, Copy)]
pub(super) enum Probe {
    /// A search: the text embedded as a query, once every acknowledged
    /// write is embedded (read your writes).
    Search,
    /// A hybrid search's meaning list: as `Search`, the plain cosine's
    /// best `centre::POOL` re-scored centred (`centre.rs`).
    Fused,
    /// A note about to be added (`check_duplicates`): embedded as stored
    /// texts are, against what is embedded now — waiting for the backlog
    /// would hold up every add behind the writes before it.
    NewNote,
}

/// The index's candidates for the best `k` for `query` that `check`
/// passes (`Semantic::candidates`, which asks the store through `check`), on a
/// blocking thread: the scan's own when it has one (SQLite), else one of the
/// runtime's. `None` while the index is still being built.
async fn walk(
    scan: &Scan,
    semantic: Arc<Semantic>,
    query: Arc<[f32]>,
    check: Option<Box<CandidateCheck>>,
    hidden: Arc<[i64]>,
    k: usize,
) -> Result<Option<Vec<i64>>> {
    let walk = move || {
        let mut check = check;
        let check = check.as_deref_mut().map(|c| c as &mut ChunkCheck<'_>);
        semantic.candidates(&query, k, check, &hidden)
    };
    scan.blocking(walk).await
}

/// The entries of archived pads, sorted, as last read for the pads' mark
/// (`Engine::archived_rows`): the index's walk passes them by.
#[derive(Default)]
pub(super) struct Archived(Mutex<Option<(ArchiveMark, Arc<[i64]>)>>);

impl Archived {
    fn rows(&self, mark: ArchiveMark) -> Option<Arc<[i64]>> {
        match &*self.0.lock().unwrap_or_else(PoisonError::into_inner) {
            Some((m, rows)) if *m == mark => Some(rows.clone()),
            _ => None,
        }
    }

    fn keep(&self, mark: ArchiveMark, rows: Arc<[i64]>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((mark, rows));
    }
}
