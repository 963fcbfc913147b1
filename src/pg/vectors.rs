//! Meaning search on PostgreSQL: the vectors live in the shared database,
//! each engine's in-memory index follows them (`semantic::VectorSource`),
//! and each entry is embedded once across engines.
//!
//! A trigger queues every new, edited and deleted entry in `embed_queue`
//! (migrations/postgres/…_vectors.sql). An engine's embedding worker takes a
//! batch with `FOR UPDATE SKIP LOCKED` (no other engine takes the same rows),
//! embeds the entries' current text, and in one transaction writes the
//! vectors (or tombstones), each with the next `n`, and deletes the queue
//! rows. Writers draw `n` only after taking an advisory lock held to their
//! commit, so rows become visible in `n` order and an index that has applied
//! everything up to `n` catches up by reading `n > applied`. A vector made
//! from an older version of an entry never overwrites a newer one.

use std::collections::HashSet;

use futures_util::TryStreamExt;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Row};

use super::deadline::UPKEEP_DEADLINE;
use super::{bounded, statement, upkeep, PgStore, Run};
use crate::error::{Error, Result};
use crate::semantic::vector::{add_blob, best, dot, from_blob, to_blob, VectorRow};
use crate::semantic::{Embed, Note, VectorSource};
use crate::storage::entries;
use crate::storage::ArchiveMark;
use crate::storage::CandidateCheck;
use crate::storage::EmbedGoal;
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::Meaning;
use std::sync::Arc;

/// The advisory lock vector writers hold from drawing `n` to their commit.
const WRITE_LOCK: i64 = 0x7061_645f_7665_6373; // "pad_vecs"
/// Tombstones are kept this long, so engines that are down a while still
/// see the deletions when they come back; an index saved before the last
/// pruned one is rebuilt (`floor`).
const KEEP_TOMBSTONES: &str = "1 day";

/// The longest the worker waits for the backlog's count (`backlog`).
const BACKLOG_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// The store's vectors as the embedding worker (a thread of its own) sees
/// them: it has its own small runtime and its own two connections, so its
/// batches (a transaction held while embedding) never take the engine's,
/// and the engine's runtime can shut down around it.
pub struct PgVectors {
    pool: PgPool,
    rt: tokio::runtime::Runtime,
    /// This engine's write transactions (`PgStore::writes`).
    writes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl PgVectors {
    pub fn new(store: &PgStore) -> Result<PgVectors> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the embedding runtime: {e}")))?;
        let options: PgConnectOptions = store
            .url()
            .parse()
            .map_err(|e| Error::Internal(format!("database URL: {e}")))?;
        let pool = {
            let _in = rt.enter();
            PgPoolOptions::new()
                .max_connections(2)
                .acquire_timeout(super::deadline::CALL_DEADLINE)
                .connect_lazy_with(
                    options
                        .application_name("scratchpad-embed")
                        .options(super::PLANNER_SETTINGS),
                )
        };
        Ok(PgVectors {
            pool,
            rt,
            writes: store.writes(),
        })
    }

    fn run<T>(&self, f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        self.rt.block_on(f)
    }

    fn pool(&self) -> &PgPool {
        &self.pool
    }

    async fn state(&self, key: &str) -> Result<String> {
        let v: Option<String> = sqlx::query_scalar("SELECT value FROM vector_state WHERE key = $1")
            .bind(key)
            .fetch_optional(self.pool())
            .await?;
        Ok(v.unwrap_or_default())
    }

    /// Forgets every vector and queues every entry again; with `model`,
    /// only if the vectors are not already that model's (checked on the
    /// locked row, so engines starting together reset once, not each).
    /// Returns whether it did.
    async fn reset(&self, model: Option<&str>) -> Result<bool> {
        let mut tx = self.pool().begin().await?;
        if let Some(m) = model {
            let stored: String =
                sqlx::query_scalar("SELECT value FROM vector_state WHERE key = 'model' FOR UPDATE")
                    .fetch_one(&mut *tx)
                    .await?;
            if stored == m {
                return Ok(false);
            }
        }
        // The queue first: a batch another engine holds is waited for
        // before the write lock is taken, as that engine takes them in this
        // order too (the other order could deadlock).
        sqlx::query("DELETE FROM embed_queue")
            .execute(&mut *tx)
            .await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(WRITE_LOCK)
            .execute(&mut *tx)
            .await?;
        for statement in [
            "DELETE FROM vectors",
            "DELETE FROM sparse_terms",
            "DELETE FROM sparse_counts",
            "INSERT INTO embed_queue (seq) SELECT seq FROM entries ORDER BY seq",
            "UPDATE vector_state SET value = md5(random()::text || clock_timestamp()::text) \
             WHERE key = 'generation'",
            "UPDATE vector_state SET value = '0' WHERE key = 'floor'",
        ] {
            sqlx::query(statement).execute(&mut *tx).await?;
        }
        if let Some(m) = model {
            sqlx::query("UPDATE vector_state SET value = $1 WHERE key = 'model'")
                .bind(m)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}

impl VectorSource for PgVectors {
    fn use_model(&self, model: &str) -> Result<bool> {
        self.run(async {
            if self.state("model").await? == model {
                return Ok(false);
            }
            self.reset(Some(model)).await
        })
    }

    fn clear(&self) -> Result<()> {
        self.run(self.reset(None)).map(|_| ())
    }

    fn generation(&self) -> Result<String> {
        self.run(self.state("generation"))
    }

    fn last_n(&self) -> Result<i64> {
        self.run(async {
            Ok(
                sqlx::query_scalar("SELECT coalesce(max(n), 0)::bigint FROM vectors")
                    .fetch_one(self.pool())
                    .await?,
            )
        })
    }

    fn floor(&self) -> Result<i64> {
        self.run(async { Ok(self.state("floor").await?.parse().unwrap_or(0)) })
    }

    fn since(&self, n: i64, limit: i64) -> Result<Vec<VectorRow>> {
        self.run(async {
            let rows =
                sqlx::query("SELECT seq, n, vec FROM vectors WHERE n > $1 ORDER BY n LIMIT $2")
                    .bind(n)
                    .bind(limit)
                    .fetch_all(self.pool())
                    .await?;
            rows.iter()
                .map(|r| {
                    Ok(VectorRow {
                        seq: r.try_get(0)?,
                        n: r.try_get(1)?,
                        vec: r.try_get::<Option<Vec<u8>>, _>(2)?.map(|b| from_blob(&b)),
                    })
                })
                .collect()
        })
    }

    fn live_after(&self, after: i64, limit: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        self.run(async {
            let rows = sqlx::query(
                "SELECT seq, vec FROM vectors WHERE seq > $1 AND vec IS NOT NULL ORDER BY seq LIMIT $2",
            )
            .bind(after)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, from_blob(&r.try_get::<Vec<u8>, _>(1)?))))
                .collect()
        })
    }

    fn count(&self) -> Result<i64> {
        self.run(async {
            Ok(
                sqlx::query_scalar("SELECT count(*) FROM vectors WHERE vec IS NOT NULL")
                    .fetch_one(self.pool())
                    .await?,
            )
        })
    }

    /// Other engines may not have applied what this one has, so tombstones
    /// go by age, not by this engine's index; the newest row always stays,
    /// so `last_n` never goes back.
    fn prune_tombstones(&self, _upto_n: i64) -> Result<usize> {
        self.run(async {
            let pruned: Option<i64> = sqlx::query_scalar(sql!(
                "WITH gone AS (DELETE FROM vectors WHERE vec IS NULL \
                   AND buried_at < now() - interval '{KEEP_TOMBSTONES}' \
                   AND n < (SELECT max(n) FROM vectors) RETURNING n), \
                 top AS (SELECT max(n) AS n FROM gone), \
                 moved AS (UPDATE vector_state SET value = greatest(value::bigint, top.n)::text \
                   FROM top WHERE key = 'floor' AND top.n IS NOT NULL) \
                 SELECT count(*)::bigint FROM gone"
            ))
            .fetch_one(self.pool())
            .await?;
            Ok(pruned.unwrap_or(0) as usize)
        })
    }

    fn embed_next(&self, limit: usize, embed: &mut Embed<'_>) -> Result<Option<usize>> {
        self.run(async {
            let mut tx = self.pool().begin().await?;
            let taken: Vec<(i64, i64)> = sqlx::query_as(
                "SELECT id, seq FROM embed_queue ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
            )
            .bind(limit as i64)
            .fetch_all(&mut *tx)
            .await?;
            if taken.is_empty() {
                return Ok(None);
            }
            let ids: Vec<i64> = taken.iter().map(|(id, _)| *id).collect();
            let mut seqs: Vec<i64> = taken.iter().map(|(_, s)| *s).collect();
            seqs.sort_unstable();
            seqs.dedup();
            let live: Vec<(i64, i64, String, String)> = sqlx::query_as(
                "SELECT seq, version, author, content FROM entries WHERE seq = ANY($1)",
            )
            .bind(&seqs)
            .fetch_all(&mut *tx)
            .await?;
            let notes: Vec<Note> = live
                .iter()
                .map(|(_, _, author, content)| Note { author, content })
                .collect();
            let encoded = if notes.is_empty() {
                Vec::new()
            } else {
                embed(&notes)
            };
            let (mut kept, mut versions, mut blobs) = (Vec::new(), Vec::new(), Vec::new());
            let mut terms = Vec::new();
            for ((seq, version, _, _), e) in live.iter().zip(&encoded) {
                if let Some(e) = e {
                    kept.push(*seq);
                    versions.push(*version);
                    blobs.push(to_blob(&e.vector));
                    terms.push(e.terms.as_slice());
                }
            }
            let found: HashSet<i64> = live.iter().map(|(s, _, _, _)| *s).collect();
            let gone: Vec<i64> = seqs.into_iter().filter(|s| !found.contains(s)).collect();
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(WRITE_LOCK)
                .execute(&mut *tx)
                .await?;
            let written: HashSet<i64> = sqlx::query_scalar(
                "INSERT INTO vectors (seq, version, n, vec) \
                 SELECT s, v, nextval('vectors_n'), b \
                   FROM unnest($1::bigint[], $2::bigint[], $3::bytea[]) AS u(s, v, b) ORDER BY s \
                 ON CONFLICT (seq) DO UPDATE SET version = excluded.version, n = excluded.n, \
                   vec = excluded.vec, buried_at = NULL \
                 WHERE vectors.version < excluded.version \
                 RETURNING seq",
            )
            .bind(&kept)
            .bind(&versions)
            .bind(&blobs)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .collect();
            // The terms follow the vector: those of an older version than
            // the stored vector's are not written either.
            let (mut replaced, mut their_terms) = (gone.clone(), vec![&[][..]; gone.len()]);
            for (seq, t) in kept.iter().zip(&terms) {
                if written.contains(seq) {
                    replaced.push(*seq);
                    their_terms.push(*t);
                }
            }
            super::sparse::replace_terms(&mut tx, &replaced, &their_terms).await?;
            sqlx::query(
                "INSERT INTO vectors (seq, version, n, vec, buried_at) \
                 SELECT s, 9223372036854775807, nextval('vectors_n'), NULL, now() \
                   FROM unnest($1::bigint[]) AS u(s) ORDER BY s \
                 ON CONFLICT (seq) DO UPDATE SET version = excluded.version, n = excluded.n, \
                   vec = NULL, buried_at = excluded.buried_at \
                 WHERE vectors.version < excluded.version",
            )
            .bind(&gone)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM embed_queue WHERE id = ANY($1)")
                .bind(&ids)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Some(notes.len()))
        })
    }

    fn write_epoch(&self) -> Option<u64> {
        None
    }

    fn own_writes(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn backlog(&self) -> Option<i64> {
        // Counted only as far as the pace needs, on the worker's
        // own connections (the queue's rows another engine holds count
        // too: they wait as well), and briefly: the worker answers query
        // embeddings meanwhile. A count that fails or takes long says
        // nothing; the pace then holds runs back as for any stream.
        let count = async {
            let waiting = sqlx::query_scalar(
                "SELECT count(*) FROM (SELECT 1 FROM embed_queue LIMIT $1) AS waiting",
            )
            .bind(crate::semantic::SETTLE_MAX_BACKLOG + 1)
            .fetch_one(self.pool());
            match tokio::time::timeout(BACKLOG_WAIT, waiting).await {
                Ok(counted) => Ok(counted?),
                Err(_) => Err(Error::Unavailable(
                    "the backlog's count took too long".into(),
                )),
            }
        };
        self.run(count)
            .inspect_err(|e| tracing::debug!("counting the embedding backlog: {e}"))
            .ok()
    }

    fn marks(&self, applied: i64) -> (i64, i64) {
        (applied, 0)
    }
}

/// What meaning search reads from the shared database.
impl PgStore {
    /// Entries waiting to be embedded: the newest queue row and how many;
    /// and the highest `n` of a visible vector row (one round trip).
    pub async fn embed_backlog(&self) -> Result<(Option<i64>, i64, i64)> {
        Ok(sqlx::query_as(
            "SELECT max(id), count(*), \
                    (SELECT coalesce(max(n), 0)::bigint FROM vectors) FROM embed_queue",
        )
        .fetch_one(self.pool())
        .await?)
    }

    /// Queue rows up to `upto` not yet embedded (by any engine).
    /// Queued entries up to `upto`, in the pads `scope` names (`None`: all).
    pub async fn queued_upto(&self, upto: i64, scope: Option<&[String]>) -> Result<i64> {
        let Some(scope) = scope else {
            return Ok(
                sqlx::query_scalar("SELECT count(*) FROM embed_queue WHERE id <= $1")
                    .bind(upto)
                    .fetch_one(self.pool())
                    .await?,
            );
        };
        let mut q = statement(
            "SELECT count(*) FROM embed_queue q JOIN entries e ON e.seq = q.seq WHERE q.id <= ",
        );
        q.push("$?", super::Arg::Int(upto));
        q.scope(scope);
        Ok(q.build().fetch_one(self.pool()).await?.try_get(0)?)
    }

    /// The highest `n` of a visible vector row.
    pub async fn vectors_last_n(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT coalesce(max(n), 0)::bigint FROM vectors")
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// Which of these entries exist, live, and pass `filter`. Kept
    /// prepared: the entries are found by their seqs whatever the filter,
    /// so one plan serves every chunk of a walk, where planning each anew
    /// took 0.3–1.9 ms of the 0.5–3.6 ms a chunk's check took at a million
    /// notes (PostgreSQL's log, a meaning search by tag beside a build).
    pub async fn passing(&self, filter: &EntryFilter, seqs: &[i64]) -> Result<HashSet<i64>> {
        let mut q = statement(
            "SELECT e.seq FROM entries e JOIN pads p ON p.name = e.pad WHERE e.seq = ANY(",
        );
        q.prepared = true;
        q.push("$?::bigint[])", super::Arg::Ints(seqs.to_vec()));
        q.filter(filter);
        let rows = q.build().fetch_all(self.pool()).await?;
        rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
    }
}

impl Meaning for PgStore {
    fn vectors(&self) -> Result<Arc<dyn VectorSource>> {
        Ok(Arc::new(PgVectors::new(self)?))
    }

    /// Entries in live pads (from the pads' counters: no scan).
    fn live_entries(&self) -> Fut<'_, usize> {
        upkeep(async move {
            let n: i64 = sqlx::query_scalar(
                "SELECT coalesce(sum(entries), 0)::bigint FROM pads WHERE archived_at IS NULL",
            )
            .fetch_one(self.pool())
            .await?;
            Ok(n as usize)
        })
    }

    /// How many live entries pass `filter`, counting no further than `cap`.
    /// A filter of one tag the statistics find on ten times `cap` entries
    /// of live pads or more is not counted, and answers `cap`: counting to
    /// `cap` read ~20,000 rows for a tag on a tenth of a million notes (5–9
    /// ms of a 26 ms search). The statistics may be a minute or an
    /// `ANALYZE` old (and notes a newer one supersedes are among them): an
    /// answer too high sends a meaning search to the index's walk, which
    /// scores every row when few pass, and weighs the sparse list's words
    /// as among `cap` notes.
    fn count_matching(&self, filter: EntryFilter, cap: usize) -> Fut<'_, usize> {
        upkeep(async move {
            let others = EntryFilter {
                tags: Vec::new(),
                current_only: false,
                ..filter.clone()
            };
            if let ([tag], true) = (filter.tags.as_slice(), others.is_unfiltered()) {
                if matches!(self.common_tag(tag).await?, Some(n) if n >= 10.0 * cap as f64) {
                    return Ok(cap);
                }
            }
            let mut conn = self.pool().acquire().await?;
            entries::count_matching(&mut *conn, &filter, cap).await
        })
    }

    /// The shared pads' mark: an engine sees a pad another engine archived
    /// at its next search.
    fn archived(&self) -> Fut<'_, ArchiveMark> {
        upkeep(async move {
            let (pads, archived_at, entries): (i64, i64, i64) = sqlx::query_as(
                "SELECT count(*), coalesce(sum(archived_at), 0)::bigint, \
                 coalesce(sum(entries), 0)::bigint FROM pads WHERE archived_at IS NOT NULL",
            )
            .fetch_one(self.pool())
            .await?;
            Ok(ArchiveMark {
                pads,
                archived_at,
                entries,
            })
        })
    }

    fn archived_entries(&self) -> Fut<'_, Vec<i64>> {
        upkeep(async move {
            Ok(sqlx::query_scalar(
                "SELECT e.seq FROM pads p JOIN entries e ON e.pad = p.name \
                 WHERE p.archived_at IS NOT NULL ORDER BY e.seq",
            )
            .fetch_all(self.pool())
            .await?)
        })
    }

    /// The exact `k` nearest entries passing `filter` (a selective one), by
    /// cosine similarity on their stored vectors.
    fn nearest_exact(
        &self,
        query: Arc<[f32]>,
        filter: EntryFilter,
        k: usize,
    ) -> Fut<'_, Vec<(i64, f32)>> {
        upkeep(async move {
            let mut q = statement(
                "SELECT v.seq, v.vec FROM vectors v JOIN entries e ON e.seq = v.seq \
                 JOIN pads p ON p.name = e.pad WHERE v.vec IS NOT NULL",
            );
            q.filter(&filter);
            // Streamed and scored row by row, keeping the best `k`: an
            // unfiltered search while the index is still being built reads
            // every vector, and must not hold them all.
            let mut rows = q.build().fetch(self.pool());
            let mut top: Vec<(i64, f32)> = Vec::with_capacity(2 * k + 1);
            while let Some(r) = rows.try_next().await? {
                let blob: &[u8] = r.try_get(1)?;
                top.push((r.try_get::<i64, _>(0)?, dot(&query, blob)));
                if top.len() > 2 * k {
                    top = best(top, k);
                }
            }
            Ok(best(top, k))
        })
    }

    /// Cosine similarity of `query` to the stored vectors of these entries
    /// (those without a vector are skipped).
    fn similarities(&self, query: Arc<[f32]>, ids: Vec<i64>) -> Fut<'_, Vec<(i64, f32)>> {
        upkeep(async move {
            let rows =
                sqlx::query("SELECT seq, vec FROM vectors WHERE seq = ANY($1) AND vec IS NOT NULL")
                    .bind(&ids)
                    .fetch_all(self.pool())
                    .await?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                let blob: &[u8] = r.try_get(1)?;
                out.push((r.try_get::<i64, _>(0)?, dot(&query, blob)));
            }
            Ok(out)
        })
    }

    /// Summed as the rows stream in, in the order PostgreSQL reads the
    /// filter's entries.
    fn vector_sum(&self, filter: EntryFilter, cap: usize) -> Fut<'_, (Vec<f64>, usize)> {
        // On a search's path: a search's deadline.
        bounded(async move {
            let mut q = statement(
                "SELECT v.vec FROM vectors v JOIN entries e ON e.seq = v.seq \
                 JOIN pads p ON p.name = e.pad WHERE v.vec IS NOT NULL",
            );
            q.filter(&filter);
            q.push(" ORDER BY e.seq DESC LIMIT $?", super::Arg::Int(cap as i64));
            let mut rows = q.build().fetch(self.pool());
            let (mut sum, mut n) = (Vec::new(), 0);
            while let Some(r) = rows.try_next().await? {
                add_blob(&mut sum, r.try_get(0)?);
                n += 1;
            }
            Ok((sum, n))
        })
    }

    /// One scan of the index, the filter checked a chunk of the walk at a
    /// time in one query each (`passing`), from the scan's thread. (Asking
    /// the index again for four times more on each round scored every
    /// vector each round: 94 ms p99 by pad at 1M notes.)
    /// Each chunk in one query; the walk runs on a blocking thread, so the
    /// query is waited for there. The whole walk is held to the upkeep
    /// deadline, as one scan is: a filter whose notes lie far from the
    /// query may walk most of the index, a chunk at a time.
    fn candidate_check(&self, filter: EntryFilter) -> Box<CandidateCheck> {
        let (store, runtime) = (self.clone(), tokio::runtime::Handle::current());
        let started = std::time::Instant::now();
        Box::new(move |keys: &[i64]| {
            if started.elapsed() >= UPKEEP_DEADLINE {
                return Err(Error::Unavailable(format!(
                    "checking meaning search's candidates against the filter took over {} s (PostgreSQL overloaded, or a filter whose notes lie far from the query?); narrow the filter or retry in a few seconds",
                    UPKEEP_DEADLINE.as_secs()
                )));
            }
            runtime.block_on(upkeep(store.passing(&filter, keys)))
        })
    }

    /// The newest queued entry, and the vectors' newest row when read:
    /// any engine of the team may embed what is queued.
    fn embed_goal(&self) -> Fut<'_, EmbedGoal> {
        upkeep(async move {
            let (queued, backlog, n) = self.embed_backlog().await?;
            Ok(EmbedGoal {
                upto: (queued.unwrap_or(0), n),
                backlog,
            })
        })
    }

    /// Once nothing up to the goal waits in the queue, the index must reach
    /// the vectors' newest row (which holds them).
    fn embedded_mark(&self, goal: EmbedGoal) -> Fut<'_, Option<(i64, i64)>> {
        upkeep(async move {
            let n = match goal.upto {
                (0, n) => n,
                (queued, _) if self.queued_upto(queued, None).await? == 0 => {
                    self.vectors_last_n().await?
                }
                _ => return Ok(None),
            };
            Ok(Some((n, i64::MIN)))
        })
    }

    fn embed_left(&self, goal: EmbedGoal, scope: Option<Vec<String>>) -> Fut<'_, u64> {
        upkeep(async move {
            Ok(match goal.upto.0 {
                0 => 0,
                queued => self.queued_upto(queued, scope.as_deref()).await?.max(0) as u64,
            })
        })
    }
}
