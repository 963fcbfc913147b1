//! Text search's primitives on PostgreSQL (the tiers `engine::search` runs,
//! as on SQLite) over the `words` tsvector and the trigram index, with BM25
//! computed in SQL the way FTS5's `bm25()` computes it, so both stores rank
//! alike.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::Row;

use super::{
    bounded, read_entry, read_entry_seq, statement, Arg, PgStore, Query, Run, ENTRY_COLUMNS,
};
use crate::error::Result;
use crate::model::Entry;
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::{Entries, TextSearch};
use crate::terms::{self, B, K1};

/// At most this many matches are scored by BM25, the newest: taking each
/// candidate's words apart costs PostgreSQL ~20 µs.
const MAX_CANDIDATES: u32 = 500;
/// A substring search filtered to a pad of at most this many entries reads
/// the pad's rows rather than the trigram index (`substring_hits`).
const PAD_WALK: i64 = 5_000;
/// What reading one entry of a pad costs, in matches gathered from the
/// words index (measured at 100k entries: ~7 µs a row, ~0.3 µs a match).
const PAD_READ_COST: f64 = 20.0;
/// A substring with at most this many matches in the store is looked up
/// in the trigram index (`trigram_matches`); one with more, by reading the
/// newest rows.
const TRIGRAM_CAP: i64 = 300;

/// How long an engine trusts its `WordStats`.
const STATS_FOR: Duration = Duration::from_secs(60);

/// The store as BM25 sees it (`PgStore::word_stats`).
pub(crate) struct WordStats {
    n: f64,
    avgdl: f64,
    /// Words in at least a hundredth of the entries, with their share, from
    /// PostgreSQL's own statistics of the `words` column (`ANALYZE`).
    common: HashMap<String, f64>,
    /// Whether those statistics exist (the table was analysed).
    analysed: bool,
}

pub(crate) type SharedStats = Arc<Mutex<Option<(Instant, Arc<WordStats>)>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PgStore {
    /// The store's size, its entries' mean length in words, and its common
    /// words: read at most once a minute per engine (they move slowly, and
    /// BM25 barely feels it).
    async fn word_stats(&self) -> Result<Arc<WordStats>> {
        if let Some((at, stats)) = &*lock(&self.word_stats) {
            if at.elapsed() < STATS_FOR {
                return Ok(stats.clone());
            }
        }
        let row = sqlx::query(
            "SELECT (SELECT coalesce(sum(entries), 0) FROM pads)::float8 AS n, \
               (SELECT coalesce(avg(length), 1) FROM (SELECT (SELECT sum(cardinality(t.positions)) \
                   FROM unnest(words) t)::float8 AS length FROM entries ORDER BY seq DESC LIMIT 500) s)::float8 AS avgdl, \
               (SELECT most_common_elems::text::text[] FROM pg_stats \
                 WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'words') AS words, \
               (SELECT most_common_elem_freqs::float8[] FROM pg_stats \
                 WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'words') AS shares",
        )
        .fetch_one(self.pool())
        .await?;
        let words: Option<Vec<String>> = row.try_get("words")?;
        let shares: Option<Vec<f64>> = row.try_get("shares")?;
        let stats = Arc::new(WordStats {
            analysed: words.is_some(),
            n: row.try_get("n")?,
            avgdl: row.try_get("avgdl")?,
            // Only words in over a hundredth of the entries: below that the
            // statistics' sample says little, and a count is cheap.
            common: words
                .unwrap_or_default()
                .into_iter()
                .zip(shares.unwrap_or_default())
                .filter(|(_, share)| *share >= 0.01)
                .collect(),
        });
        *lock(&self.word_stats) = Some((Instant::now(), stats.clone()));
        Ok(stats)
    }

    /// How many entries the filter's pad holds (`None`: no pad filter, or
    /// no such pad): at most that many can match inside it.
    async fn pad_size(&self, filter: &EntryFilter) -> Result<Option<i64>> {
        let Some(pad) = &filter.pad else {
            return Ok(None);
        };
        Ok(
            sqlx::query_scalar("SELECT entries FROM pads WHERE name = $1")
                .bind(pad)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// Every entry matching all of `likes`, from the trigram index, when
    /// there are at most `TRIGRAM_CAP`; `None` when there are more. The
    /// index is asked in a materialised set of its own: in one query with
    /// the filters and the order, PostgreSQL can misjudge a rare fragment
    /// as common and read the whole table newest first for it (seen with
    /// `auto_explain`: ~200 matches of `%braluwyx%` expected, 3 found,
    /// p99 40 ms with a kind filter at 100k entries). A common fragment
    /// stops the set at the cap; reading the newest rows then finds its
    /// matches at once.
    async fn trigram_matches(&self, likes: &[String]) -> Result<Option<Vec<i64>>> {
        let mut q = statement("WITH m AS MATERIALIZED (SELECT seq FROM entries WHERE true");
        for like in likes {
            q.push(" AND lower(content) LIKE $?", Arg::Text(like.clone()));
        }
        q.push(") SELECT seq FROM m LIMIT $?", Arg::Int(TRIGRAM_CAP + 1));
        let seqs: Vec<i64> = q
            .build()
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|r| r.try_get::<i64, _>(0))
            .collect::<std::result::Result<_, _>>()?;
        Ok((seqs.len() as i64 <= TRIGRAM_CAP).then_some(seqs))
    }

    async fn unranked(&self, q: &Query) -> Result<Vec<(Entry, f64)>> {
        let rows = q.build().fetch_all(self.pool()).await?;
        rows.iter()
            .map(|r| Ok((read_entry(r)?, 0.0)))
            .collect::<Result<_>>()
    }
}

impl PgStore {
    /// Runs a ranking query (its rows `seq` and `score`, best first) and
    /// reads the entries it ranked, in its order.
    async fn scored(&self, q: Query) -> Result<Vec<(Entry, f64)>> {
        let ranked: Vec<(i64, f64)> = q
            .build()
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|r| Ok((r.try_get("seq")?, r.try_get("score")?)))
            .collect::<Result<_>>()?;
        let seqs: Vec<i64> = ranked.iter().map(|r| r.0).collect();
        let entries = self.entries_by_id(&seqs).await?;
        Ok(ranked
            .into_iter()
            .zip(entries)
            .filter_map(|((_, score), e)| Some((e?, score)))
            .collect())
    }
}

impl TextSearch for PgStore {
    /// Tiers 1 and 2: entries holding every word whole or (`prefix`) by its
    /// beginning, ranked, among the newest matches.
    fn word_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
        prefix: bool,
        // ts_rank weighs no word by how common it is.
        _readable: Option<u64>,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        bounded(async move {
            // Words as the index holds them: letters and digits, lower-cased; a
            // word with none can only match as a substring.
            let terms: Vec<String> = words
                .iter()
                .map(|w| {
                    w.to_lowercase()
                        .chars()
                        .filter(|c| c.is_alphanumeric())
                        .collect::<String>()
                })
                .collect();
            if terms.is_empty() || terms.iter().any(String::is_empty) {
                return Ok(Vec::new());
            }
            let tsquery = terms
                .iter()
                .map(|t| {
                    let star = if prefix && t.chars().count() >= 3 {
                        ":*"
                    } else {
                        ""
                    };
                    format!("'{t}'{star}")
                })
                .collect::<Vec<_>>()
                .join(" & ");
            // The newest matches that pass the filters, ranked; then recency.
            // A word in under a hundredth of the entries (by the statistics)
            // is looked up in the words index first, in a set of its own:
            // PostgreSQL guesses such a word at 0.5% of the table and reads
            // it newest first looking for 256 matches — every row, for a
            // ticket number in 15 of a million notes (453 ms).
            let stats = self.word_stats().await?;
            let common = |t: &String| match prefix {
                true => stats.common.keys().any(|w| w.starts_with(t.as_str())),
                false => stats.common.contains_key(t),
            };
            // Inside a pad of at most `PAD_WALK` notes its newest rows are
            // read instead, as `substring_hits` does: bounded, and cheaper
            // than every match across the store (a word beginning by pad at
            // 100k: 1.9 ms read so, 5.4 ms from the index).
            let small_pad = matches!(self.pad_size(filter).await?, Some(n) if n <= PAD_WALK);
            let rare = stats.analysed && !small_pad && !terms.iter().all(common);
            let (matched, matches) = if rare {
                (
                    "WITH m AS MATERIALIZED \
                     (SELECT seq FROM entries WHERE words @@ to_tsquery('simple', $1)) ",
                    "e.seq IN (SELECT seq FROM m)",
                )
            } else {
                ("", "e.words @@ to_tsquery('simple', $1)")
            };
            let mut q = statement(format!(
                "{matched}SELECT {ENTRY_COLUMNS}, ts_rank(e.words, to_tsquery('simple', $1))::float8 AS score \
                 FROM entries e JOIN pads p ON p.name = e.pad WHERE {matches}"
            ));
            q.push("", Arg::Text(tsquery));
            q.filter(filter);
            q.push(
                " ORDER BY e.seq DESC LIMIT $?",
                Arg::Int((limit.max(64) * 4) as i64),
            );
            let rows = q.build().fetch_all(self.pool()).await?;
            let mut ranked = rows
                .iter()
                .map(|r| Ok((read_entry_seq(r)?, r.try_get::<f64, _>("score")?)))
                .collect::<Result<Vec<_>>>()?;
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0 .0.cmp(&a.0 .0)));
            ranked.truncate(limit as usize);
            Ok(ranked.into_iter().map(|((_, e), s)| (e, s)).collect())
        })
    }

    /// Tier 3: entries holding every word anywhere, newest first.
    fn substring_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        bounded(async move {
            let likes: Vec<String> = words
                .iter()
                .map(|w| {
                    // Matched against lower(content); a query's % and _ are
                    // escaped to plain characters.
                    format!(
                        "%{}%",
                        w.to_lowercase()
                            .replace('\\', "\\\\")
                            .replace('%', "\\%")
                            .replace('_', "\\_")
                    )
                })
                .collect();
            // The trigram index is asked only where it helps. In a pad of at
            // most `PAD_WALK` entries, reading its newest rows and checking
            // each is bounded and cheap, where the index gathers the fragment's
            // matches across the store first (p99 85 ms at 100k entries, 3 ms
            // reading the pad). A fragment under three characters has no
            // trigram: the index returns every entry (seen: 100,000 rows, 95 ms
            // with a tag filter), while the newest rows hold a match at once.
            let short = words.iter().any(|w| w.chars().count() < 3);
            let walk = short || matches!(self.pad_size(filter).await?, Some(n) if n <= PAD_WALK);
            if !walk {
                if let Some(seqs) = self.trigram_matches(&likes).await? {
                    let mut q = statement(format!(
                        "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad \
                         WHERE e.seq = ANY($1)"
                    ));
                    q.push("", Arg::Ints(seqs));
                    q.filter(filter);
                    q.push(" ORDER BY e.seq DESC LIMIT $?", Arg::Int(limit as i64));
                    return self.unranked(&q).await;
                }
            }
            // Written as `lower(content) || ''`, the test cannot use the index:
            // the newest rows are read until enough match.
            let text = if walk {
                "lower(e.content) || ''"
            } else {
                "lower(e.content)"
            };
            let mut q = statement(format!(
                "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad WHERE true"
            ));
            q.filter(filter);
            for like in likes {
                q.push(&format!(" AND {text} LIKE $?"), Arg::Text(like));
            }
            q.push(" ORDER BY e.seq DESC LIMIT $?", Arg::Int(limit as i64));
            self.unranked(&q).await
        })
    }

    /// For tier 4: how many entries hold each word (words in none left
    /// out), at most the filtered pad's size. A word the planner's
    /// statistics list as common is weighed by its share there; any other is
    /// rare, and counted (cheaply, for that reason), up to just past the budget.
    fn word_counts<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(String, u64)>> {
        bounded(async move {
            if words.is_empty() {
                return Ok(Vec::new());
            }
            let cap = self.pad_size(filter).await?;
            if let Some(pads) = filter.scope.as_deref() {
                // A token's counts are over its pads alone: they weigh its
                // ranking and its explanation shows them. One statement for
                // every word (a question's forms make them many), each
                // count bounded.
                let mut q = statement("SELECT ARRAY[");
                for (i, w) in words.iter().enumerate() {
                    if i > 0 {
                        q.raw(", ");
                    }
                    q.push(
                        "(SELECT count(*) FROM (SELECT 1 FROM entries e WHERE e.words @@ $?::tsquery",
                        Arg::Text(format!("'{w}'")),
                    );
                    q.scope(pads);
                    q.push(
                        " LIMIT $?) s)",
                        Arg::Int((terms::POSTINGS_BUDGET_PG + 1) as i64),
                    );
                }
                q.raw("]");
                let dfs: Vec<i64> = q.build().fetch_one(self.pool()).await?.try_get(0)?;
                return Ok(words
                    .iter()
                    .zip(dfs)
                    .filter(|(_, df)| *df > 0)
                    .map(|(w, df)| (w.clone(), df.min(cap.unwrap_or(i64::MAX)) as u64))
                    .collect());
            }
            let stats = self.word_stats().await?;
            let mut dfs: Vec<Option<i64>> = words
                .iter()
                .map(|w| stats.common.get(w).map(|share| (share * stats.n) as i64))
                .collect();
            let rare: Vec<String> = words
                .iter()
                .zip(&dfs)
                .filter(|(_, df)| df.is_none())
                .map(|(w, _)| w.clone())
                .collect();
            if !rare.is_empty() {
                // One count per word, each with its own bound value: a planned
                // tsquery is what lets PostgreSQL use the index.
                let mut sql = String::from("SELECT ARRAY[");
                for i in 0..rare.len() {
                    if i > 0 {
                        sql.push_str(", ");
                    }
                    sql.push_str(&format!(
                        "(SELECT count(*) FROM (SELECT 1 FROM entries \
                           WHERE words @@ ${}::tsquery LIMIT $1) s)",
                        i + 2
                    ));
                }
                sql.push(']');
                // Planned with the words (`Query::build`): a generic plan may
                // read the table for a word the index finds at once.
                let mut q = sqlx::query_scalar::<_, Vec<i64>>(sqlx::AssertSqlSafe(sql))
                    .persistent(false)
                    .bind((terms::POSTINGS_BUDGET_PG + 1) as i64);
                for w in &rare {
                    q = q.bind(format!("'{w}'"));
                }
                let counts = q.fetch_one(self.pool()).await?;
                let mut counts = counts.into_iter();
                for df in dfs.iter_mut().filter(|df| df.is_none()) {
                    *df = counts.next();
                }
            }
            Ok(words
                .iter()
                .zip(dfs)
                .filter_map(|(w, df)| Some((w, df?)))
                .filter(|(_, df)| *df > 0)
                .map(|(w, df)| (w.clone(), df.min(cap.unwrap_or(i64::MAX)) as u64))
                .collect())
        })
    }

    /// Tier 4: entries holding any of `words` (with how many entries hold
    /// each), ranked by BM25 as on SQLite, best first; `newest_only` ranks
    /// only the newest matches (`terms::newest_candidates`).
    fn any_word_hits<'a>(
        &'a self,
        words: &'a [(String, u64)],
        readable: Option<u64>,
        filter: &'a EntryFilter,
        limit: u32,
        newest_only: bool,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        bounded(async move {
            if words.is_empty() {
                return Ok(Vec::new());
            }
            let stats = self.word_stats().await?;
            let (n, avgdl) = (readable.map_or(stats.n, |r| r as f64), stats.avgdl);
            let kept: Vec<String> = words.iter().map(|(w, _)| w.clone()).collect();
            let idfs: Vec<f64> = words
                .iter()
                .map(|(_, df)| terms::idf(n, *df as f64))
                .collect();
            let tsquery = kept
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" | ");
            // The words index gathers every match across the store, the pad
            // filter applied after; a pad read row by row costs ~20 times a
            // gathered match. So a pad much smaller than the words' postings
            // is read (`ts_match_vq`, the function behind `@@`, which no index
            // serves): a question in a pad of 1,000 at 100k entries gathered
            // 40–65k postings for 20 ms, where reading the pad took 7.
            let postings: f64 = words
                .iter()
                .map(|(w, df)| stats.common.get(w).map_or(*df as f64, |share| share * n))
                .sum();
            let walk = matches!(self.pad_size(filter).await?, Some(size) if (size as f64) * PAD_READ_COST < postings);
            let matching = if walk {
                "ts_match_vq(e.words, to_tsquery('simple', $?))"
            } else {
                "e.words @@ to_tsquery('simple', $?)"
            };
            let mut q = statement("");
            q.push("", Arg::Texts(kept));
            q.push("", Arg::Reals(idfs));
            q.push(
                &format!(
                    "SELECT c.seq, sum(w.idf * cardinality(t.positions) * {k1p} \
                         / (cardinality(t.positions) + {K1} * ({one_b} + {B} * c.dl / {avgdl}))) AS score \
                     FROM (SELECT e.seq, e.words, \
                         (SELECT sum(cardinality(t.positions)) FROM unnest(e.words) t)::float8 AS dl \
                       FROM entries e JOIN pads p ON p.name = e.pad \
                       WHERE {matching}",
                    k1p = K1 + 1.0,
                    one_b = 1.0 - B,
                    avgdl = avgdl.max(1.0),
                ),
                Arg::Text(tsquery),
            );
            q.filter(filter);
            // The newest `MAX_CANDIDATES` are scored (every match in a pad of
            // that size or less).
            let candidates = if newest_only {
                terms::newest_candidates(limit)
            } else {
                MAX_CANDIDATES
            };
            // Within the budget every match is known to be few (the counts
            // above), so they are gathered from the index and sorted; ordered
            // by `e.seq` itself, PostgreSQL may instead read the whole table
            // newest first for words it misjudges as common (seen with
            // `auto_explain`: 31,768 rows read for 500 matches of five rare
            // words, 14 of the query's 19 ms). `e.seq + 0` has no index to walk.
            let order = if newest_only { "e.seq" } else { "e.seq + 0" };
            q.push(
                &format!(" ORDER BY {order} DESC LIMIT $?"),
                Arg::Int(candidates as i64),
            );
            q.raw(&format!(
                ") c CROSS JOIN LATERAL unnest(c.words) t \
                 JOIN unnest($1::text[], $2::float8[]) AS w(term, idf) ON w.term = t.lexeme \
                 GROUP BY c.seq ORDER BY score DESC, c.seq DESC LIMIT {limit}"
            ));
            self.scored(q).await
        })
    }

    fn postings_budget(&self) -> u64 {
        crate::terms::POSTINGS_BUDGET_PG
    }

    /// Text is indexed in the write's transaction: nothing to do.
    fn index_text(&self) -> Fut<'_, ()> {
        Box::pin(async { Ok(()) })
    }
}
