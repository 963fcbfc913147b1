//! Text search's primitives on PostgreSQL (the tiers `engine::search` runs,
//! as on SQLite) over the `words` tsvector and the trigram index, with BM25
//! computed in SQL the way FTS5's `bm25()` computes it, so both stores rank
//! alike.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::Row;

use super::{bounded, read_entry, statement, Arg, PgStore, Query, Run, ENTRY_COLUMNS};
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

/// How many of the newest rows `rare_together` reads to judge how often
/// common words meet (~1.5 ms at a million notes).
const PROBE_ROWS: i64 = 4_000;
/// What gathering one match from the words index costs against reading
/// one row newest first: a match is a heap row fetched out of order
/// (2.4 µs warm, 8 µs from the page cache, at a million notes), a row read
/// in order 0.3–0.6 µs.
const FETCH_COST: f64 = 8.0;

/// How many matches, past four times those expected, a gathering may
/// read before it is given up for the walk.
const GATHER_SPARE: f64 = 1_000.0;
/// What gathering one match from the words index costs against one row
/// of a filter's own bitmap (a pad's or a tag's index read whole): a heap
/// row fetched out of order, 2.4–8 µs, against ~0.13 µs (a pad of 99,245
/// notes at a million: 13 ms).
const MATCH_PER_FILTER_ROWS: f64 = 30.0;
/// A tag on less than this share of the entries is walked newest first in
/// its own index (`entry_tags`) rather than every entry, when a question's
/// newest matches are walked (`any_word_hits`): each of its
/// entries is a row fetched by its seq, ~4 buffers against ~1 for a row
/// walked in order, so the tag's walk reads less while the tag is on
/// under a quarter of the entries (a question by a tag on a tenth at a
/// million notes: 17,920 buffers, 24.6 ms, against 44,808, 49.5 ms, beside
/// a build).
const TAG_WALK_SHARE: f64 = 0.25;

/// Whether gathering every match from the words index is cheaper than
/// reading the newest rows until `candidates` of them turn up, for words
/// `found` in the newest `PROBE_ROWS` of `n` entries: the matches expected
/// across the store, each costing `FETCH_COST` rows, against the rows the
/// walk reads (at most all of them). If so, how many matches the gathering
/// may read (`Some(cap)`): the newest rows can misjudge the store — words
/// common in older notes and absent from the newest — and a gathering
/// that reaches the cap stops, for the walk, which then finds its matches
/// soon.
fn gather_from_index(found: i64, n: f64, candidates: i64) -> Option<i64> {
    // One more than found: none found is still a share, not zero.
    let share = (found + 1) as f64 / PROBE_ROWS as f64;
    let expected = share * n;
    let walked = (candidates as f64 / share).min(n);
    (expected * FETCH_COST < walked).then_some((4.0 * expected + GATHER_SPARE) as i64)
}

/// How long an engine trusts its `WordStats`.
const STATS_FOR: Duration = Duration::from_secs(60);

/// The store as BM25 and a filtered meaning search see it
/// (`PgStore::word_stats`).
pub(crate) struct WordStats {
    n: f64,
    /// Of them, in archived pads.
    archived: f64,
    avgdl: f64,
    /// Words in at least a hundredth of the entries, with their share, from
    /// PostgreSQL's own statistics of the `words` column (`ANALYZE`).
    common: HashMap<String, f64>,
    /// Tags on at least a hundredth of the entries, the same way.
    common_tags: HashMap<String, f64>,
    /// Whether those statistics exist (the table was analysed).
    analysed: bool,
}

pub(crate) type SharedStats = Arc<Mutex<Option<(Instant, Arc<WordStats>)>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PgStore {
    /// The store's size, its entries' mean length in words, and its common
    /// words and tags: read at most once a minute per engine (they move
    /// slowly, and BM25 barely feels it).
    async fn word_stats(&self) -> Result<Arc<WordStats>> {
        if let Some((at, stats)) = &*lock(&self.word_stats) {
            if at.elapsed() < STATS_FOR {
                return Ok(stats.clone());
            }
        }
        let row = sqlx::query(
            "SELECT (SELECT coalesce(sum(entries), 0) FROM pads)::float8 AS n, \
               (SELECT coalesce(sum(entries), 0) FROM pads WHERE archived_at IS NOT NULL)::float8 AS archived, \
               (SELECT coalesce(avg(length), 1) FROM (SELECT (SELECT sum(cardinality(t.positions)) \
                   FROM unnest(words) t)::float8 AS length FROM entries ORDER BY seq DESC LIMIT 500) s)::float8 AS avgdl, \
               (SELECT most_common_elems::text::text[] FROM pg_stats \
                 WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'words') AS words, \
               (SELECT most_common_elem_freqs::float8[] FROM pg_stats \
                 WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'words') AS shares, \
               (SELECT most_common_elems::text::text[] FROM pg_stats \
                 WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'tags') AS tags, \
               (SELECT most_common_elem_freqs::float8[] FROM pg_stats \
                 WHERE schemaname = current_schema() AND tablename = 'entries' AND attname = 'tags') AS tag_shares",
        )
        .fetch_one(self.pool())
        .await?;
        // Only those in over a hundredth of the entries: below that the
        // statistics' sample says little, and a count is cheap.
        let common = |names: &str, shares: &str| -> Result<HashMap<String, f64>> {
            let names: Option<Vec<String>> = row.try_get(names)?;
            let shares: Option<Vec<f64>> = row.try_get(shares)?;
            Ok(names
                .unwrap_or_default()
                .into_iter()
                .zip(shares.unwrap_or_default())
                .filter(|(_, share)| *share >= 0.01)
                .collect())
        };
        let stats = Arc::new(WordStats {
            analysed: row.try_get::<Option<Vec<String>>, _>("words")?.is_some(),
            n: row.try_get("n")?,
            archived: row.try_get("archived")?,
            avgdl: row.try_get("avgdl")?,
            common: common("words", "shares")?,
            common_tags: common("tags", "tag_shares")?,
        });
        *lock(&self.word_stats) = Some((Instant::now(), stats.clone()));
        Ok(stats)
    }

    /// About how many entries of live pads hold `tag` at the least (as if
    /// every archived pad's entry held it), when it is on at least a
    /// hundredth of all entries by the statistics; `None` for a rarer tag.
    pub(super) async fn common_tag(&self, tag: &str) -> Result<Option<f64>> {
        let stats = self.word_stats().await?;
        Ok(stats
            .common_tags
            .get(tag)
            .map(|share| share * stats.n - stats.archived))
    }

    /// How many entries the filter's own index hands over, when that is
    /// known to be many: its pad's size, or with tags alone the fewest any
    /// of them is on when every one is common by the statistics (`None`
    /// otherwise: a rare tag's index hands over few).
    async fn filter_rows(
        &self,
        filter: &EntryFilter,
        pad_size: Option<i64>,
    ) -> Result<Option<f64>> {
        if filter.pad.is_some() {
            return Ok(pad_size.map(|n| n as f64));
        }
        let mut fewest: Option<f64> = None;
        for tag in &filter.tags {
            match self.common_tag(tag).await? {
                Some(n) => fewest = Some(fewest.map_or(n, |f| f.min(n))),
                None => return Ok(None),
            }
        }
        Ok(fewest)
    }

    /// The filter's tag to walk newest first (`TAG_WALK_SHARE`): the one
    /// on the fewest entries by the statistics, a tag under a hundredth of
    /// them (unknown to the statistics) before any other.
    async fn tag_to_walk(&self, filter: &EntryFilter, n: f64) -> Result<Option<String>> {
        let mut fewest: Option<(f64, &String)> = None;
        for tag in &filter.tags {
            let rows = self.common_tag(tag).await?.unwrap_or(0.0);
            if fewest.is_none_or(|(least, _)| rows < least) {
                fewest = Some((rows, tag));
            }
        }
        Ok(fewest
            .filter(|(rows, _)| *rows < n * TAG_WALK_SHARE)
            .map(|(_, tag)| tag.clone()))
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

    /// Whether the entries holding every word of `tsquery` (each word
    /// common, two or more) are few enough that gathering them all from
    /// the words index costs less than reading the newest rows until
    /// `candidates` of them turn up, and if so how many the gathering may
    /// read (`gather_from_index`). Judged by how many of the newest
    /// `PROBE_ROWS` hold them: PostgreSQL's statistics know each word's
    /// share, not how often two words meet (two in 5% of a million notes
    /// each: 2,541 notes hold both when the words are unrelated, 50,386 for
    /// "login page").
    async fn rare_together(&self, tsquery: &str, n: f64, candidates: i64) -> Result<Option<i64>> {
        if n < (4 * PROBE_ROWS) as f64 {
            return Ok(None);
        }
        let found: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT words FROM entries ORDER BY seq DESC LIMIT $2) s \
             WHERE words @@ to_tsquery('simple', $1)",
        )
        .bind(tsquery)
        .bind(PROBE_ROWS)
        .fetch_one(self.pool())
        .await?;
        Ok(gather_from_index(found, n, candidates))
    }

    /// Tiers 1 and 2 by gathering: every entry matching `tsquery` from the
    /// words index, at most `cap` (`None` when there are more), in a set of
    /// their own that the filters apply to as to the table — whole rows, as
    /// the filters may ask for any column —, the newest `candidates` that
    /// pass ranked, and the best `limit` read.
    async fn gathered(
        &self,
        tsquery: &str,
        cap: i64,
        filter: &EntryFilter,
        candidates: i64,
        limit: u32,
    ) -> Result<Option<Vec<(Entry, f64)>>> {
        let mut q = statement(
            "WITH m AS MATERIALIZED \
             (SELECT * FROM entries WHERE words @@ to_tsquery('simple', $1)",
        );
        q.push("", Arg::Text(tsquery.to_string()));
        q.push(
            " LIMIT $?) SELECT g.gathered, r.seq, r.score \
             FROM (SELECT count(*) AS gathered FROM m) g LEFT JOIN LATERAL \
             (SELECT c.seq, ts_rank(c.words, to_tsquery('simple', $1))::float8 AS score \
              FROM (SELECT e.seq, e.words FROM m e JOIN pads p ON p.name = e.pad WHERE true",
            Arg::Int(cap),
        );
        q.filter(filter);
        q.push(" ORDER BY e.seq DESC LIMIT $?", Arg::Int(candidates));
        q.raw(&format!(
            ") c ORDER BY score DESC, c.seq DESC LIMIT {limit}) r ON true \
             ORDER BY r.score DESC, r.seq DESC"
        ));
        let rows = q.build().fetch_all(self.pool()).await?;
        let gathered: i64 = match rows.first() {
            Some(r) => r.try_get("gathered")?,
            None => 0,
        };
        if gathered >= cap {
            return Ok(None);
        }
        let mut ranked = Vec::with_capacity(rows.len());
        for r in &rows {
            if let Some(seq) = r.try_get::<Option<i64>, _>("seq")? {
                ranked.push((seq, r.try_get::<f64, _>("score")?));
            }
        }
        Ok(Some(self.read_ranked(ranked).await?))
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
        self.read_ranked(ranked).await
    }

    /// The entries of a ranking (seq, score), in its order.
    async fn read_ranked(&self, ranked: Vec<(i64, f64)>) -> Result<Vec<(Entry, f64)>> {
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
            let rare = !terms.iter().all(common);
            let candidates = (limit.max(64) * 4) as i64;
            // Two common words can still be rare together; one common word
            // is in a hundredth of the entries or more, and the walk finds
            // it soon. With a filter of its own PostgreSQL's plan meets the
            // words and the filter in their indexes, where a gathering
            // fetches every match across the store first (two words by pad
            // at a million notes: 12.95 / 18.03 ms p50 / p99 walked, 16.64
            // / 32.96 gathered; by tag 13.97 / 18.49 and 16.32 / 28.39).
            let own_filter = !EntryFilter {
                current_only: false,
                ..filter.clone()
            }
            .is_unfiltered();
            let cap = match (stats.analysed && !small_pad, rare, terms.len()) {
                (false, _, _) => None,
                (true, true, _) => Some(i64::MAX),
                (true, false, 1) => None,
                (true, false, _) if own_filter => None,
                (true, false, _) => self.rare_together(&tsquery, stats.n, candidates).await?,
            };
            if let Some(cap) = cap {
                if let Some(found) = self
                    .gathered(&tsquery, cap, filter, candidates, limit)
                    .await?
                {
                    return Ok(found);
                }
            }
            // The newest candidates ranked, and only the best read whole.
            let mut q = statement(
                "SELECT c.seq, ts_rank(c.words, to_tsquery('simple', $1))::float8 AS score \
                 FROM (SELECT e.seq, e.words FROM entries e JOIN pads p ON p.name = e.pad \
                 WHERE e.words @@ to_tsquery('simple', $1)",
            );
            q.push("", Arg::Text(tsquery));
            q.filter(filter);
            q.push(" ORDER BY e.seq DESC LIMIT $?", Arg::Int(candidates));
            q.raw(&format!(
                ") c ORDER BY score DESC, c.seq DESC LIMIT {limit}"
            ));
            self.scored(q).await
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
            let pad_size = self.pad_size(filter).await?;
            let walk = matches!(pad_size, Some(size) if (size as f64) * PAD_READ_COST < postings);
            // Few matches (the counts above) are gathered from the words
            // index before the filter applies, in a set of their own:
            // PostgreSQL guesses a word it has no statistics for at 0.5% of
            // the table and ANDs its bitmap with the filter's whole one (a
            // ticket number in 6 of a million notes, by pad: the pad's
            // 99,245 rows read, 13 ms, for none).
            let gather = !walk
                && !newest_only
                && matches!(self.filter_rows(filter, pad_size).await?,
                    Some(rows) if postings * MATCH_PER_FILTER_ROWS < rows);
            // Only when the newest matches are walked anyway (words too
            // common to rank every match): words that fit the budget are
            // few, gathered from the index at once, where the tag's walk
            // might fetch every one of its entries looking for them (a tag
            // on a hundredth of a million notes: 10,000 fetches for words
            // in 3,000).
            let tag_walk = match newest_only && !walk && filter.pad.is_none() {
                true => self.tag_to_walk(filter, n).await?,
                false => None,
            };
            let (source, matching) = match (walk, gather, &tag_walk) {
                (true, _, _) => ("entries", "ts_match_vq(e.words, to_tsquery('simple', $?))"),
                // OFFSET 0: the set is not merged into the query.
                (false, true, _) => (
                    "(SELECT * FROM entries WHERE words @@ to_tsquery('simple', $?) OFFSET 0)",
                    "true",
                ),
                // Each of the tag's entries, newest first, fetched by its
                // seq (OFFSET 0: one at a time, so the limit stops the walk;
                // merged, PostgreSQL walks every entry beside the tag's).
                (false, false, Some(_)) => (
                    "entry_tags t CROSS JOIN LATERAL \
                     (SELECT * FROM entries WHERE seq = t.seq OFFSET 0)",
                    "e.words @@ to_tsquery('simple', $?)",
                ),
                (false, false, None) => ("entries", "e.words @@ to_tsquery('simple', $?)"),
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
                       FROM {source} e JOIN pads p ON p.name = e.pad \
                       WHERE {matching}",
                    k1p = K1 + 1.0,
                    one_b = 1.0 - B,
                    avgdl = avgdl.max(1.0),
                ),
                Arg::Text(tsquery),
            );
            if let Some(tag) = &tag_walk {
                q.push(" AND t.tag = $?", Arg::Text(tag.clone()));
            }
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
            let order = match (newest_only, tag_walk.is_some()) {
                (_, true) => "t.seq",
                (true, false) => "e.seq",
                (false, false) => "e.seq + 0",
            };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_that_meet_rarely_are_gathered_from_the_index() {
        // The scale bench's two unrelated words at a million notes: about
        // 10 of the newest 4,000 hold both (2,541 in all); walking to 256
        // of them reads ~100k rows.
        let cap = gather_from_index(10, 1e6, 256).expect("gathered");
        assert!(
            cap > 2_541 * 2,
            "room for what the newest rows foretell: {cap}"
        );
        // Two that never meet: the walk would read every row; a gathering
        // that finds them common after all stops at 2,000.
        assert_eq!(gather_from_index(0, 1e6, 256), Some(2_000));
    }

    #[test]
    fn words_that_meet_often_are_found_newest_first() {
        // "login page": 200 of the newest 4,000 (50,386 in all); the walk
        // finds 256 in ~5,000 rows.
        assert_eq!(gather_from_index(200, 1e6, 256), None);
        // The even point at a million: 21 found, 5,500 matches expected
        // (44,000 rows' worth) against 46,545 rows walked: gathered; 22,
        // 5,750 (46,000) against 44,522: walked.
        assert!(gather_from_index(21, 1e6, 256).is_some());
        assert_eq!(gather_from_index(22, 1e6, 256), None);
    }
}
