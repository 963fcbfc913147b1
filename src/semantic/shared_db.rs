//! Meaning search when the engine keeps its entries in PostgreSQL: the
//! vectors are in the shared database (`pg/vectors.rs`), this engine's index
//! follows them, and searches filter and rescore there.

use std::sync::Arc;
use std::time::Duration;

use super::{read, Msg, Semantic, RESCORE_FACTOR, SETTLE_MAX_BACKLOG, SETTLE_TIMEOUT};
use crate::error::{Error, Result};
use crate::pg::PgStore;
use crate::store::EntryFilter;

impl Semantic {
    /// Read-your-writes on PostgreSQL: waits until every entry queued before
    /// the call is embedded (by whichever engine took it) and this engine's
    /// index has applied the vectors, within the same bounds as on SQLite.
    /// Returns how many were not embedded yet.
    pub async fn settle_pg(&self, pg: &PgStore) -> Result<u64> {
        let deadline = tokio::time::Instant::now() + SETTLE_TIMEOUT;
        let (upto, backlog, mut n) = pg.embed_backlog().await?;
        if let Some(upto) = upto {
            self.send(Msg::Wake)?;
            if backlog > SETTLE_MAX_BACKLOG {
                return Ok(backlog as u64);
            }
            loop {
                let left = pg.embed_left(upto).await?;
                if left == 0 {
                    break;
                }
                if tokio::time::Instant::now() >= deadline {
                    return Ok(left as u64);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // Embedded meanwhile: by vectors written after the first read.
            n = pg.vectors_last_n().await?;
        }
        let mut indexed = self.shared.indexed.subscribe();
        if indexed.borrow().0 < n {
            self.send(Msg::Wake)?;
            // Embedded, so only this engine's index lags (by one poll at most).
            let _ = tokio::time::timeout_at(deadline, indexed.wait_for(|at| at.0 >= n)).await;
        }
        Ok(0)
    }

    /// The `k` nearest live entries passing `filter` on PostgreSQL: a
    /// selective filter scores its few entries exactly; otherwise the
    /// index's best candidates, filtered in one query (asking for four
    /// times more until enough pass), ranked on their stored vectors.
    pub async fn nearest_pg(
        &self,
        pg: &PgStore,
        query: Arc<[f32]>,
        filter: &EntryFilter,
        k: usize,
    ) -> Result<Vec<(i64, f32)>> {
        // Unfiltered: the pads' counters, as on SQLite (no scan).
        let matching = if filter.is_unfiltered() {
            pg.live_entries().await?
        } else {
            pg.count_matching(filter, self.exact_max.saturating_add(1))
                .await?
        };
        if matching <= self.exact_max {
            return pg.nearest_exact(&query, filter, k).await;
        }
        let check = !filter.is_unfiltered() || pg.any_archived().await?;
        let want = k * RESCORE_FACTOR;
        let mut asked = want;
        let kept = loop {
            let (shared, q) = (self.shared.clone(), query.clone());
            let found = tokio::task::spawn_blocking(move || {
                read(&shared.index).as_ref().map(|i| {
                    let found = if check {
                        i.candidates_to_filter(&q, asked)
                    } else {
                        i.candidates(&q, asked, None)
                    };
                    (found, i.len())
                })
            })
            .await
            .map_err(|e| Error::Internal(format!("semantic search task failed: {e}")))?;
            let Some((candidates, len)) = found else {
                // Still being built: exact is slower but just as right.
                return pg.nearest_exact(&query, filter, k).await;
            };
            let ids: Vec<i64> = candidates.iter().map(|(id, _)| *id).collect();
            let kept = if check {
                let pass = pg.passing(filter, &ids).await?;
                ids.into_iter().filter(|id| pass.contains(id)).collect()
            } else {
                ids
            };
            if kept.len() >= want || asked >= len {
                break kept;
            }
            asked = asked.saturating_mul(4).min(len);
        };
        let scored = pg.similarities(&query, &kept).await?;
        Ok(crate::pg::best(scored, k))
    }
}
