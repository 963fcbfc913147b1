//! `cargo bench --bench locomo`: does search find what answers a question?
//!
//! LoCoMo (snap-research/locomo, `data/locomo10.zip`): long multi-session
//! conversations, each question labelled with the dialog turns that answer
//! it. Each conversation goes into a pad of its own, one note per turn
//! (author: the speaker; an image's caption kept as "(image: …)"), written
//! to the release `pad serve` with meaning search on. Every question is
//! then asked in each mode (text, semantic, hybrid), with
//! its conversation's pad as the filter, and in the same run two plain
//! baselines rank the same turns: BM25 (Okapi, k1 1.5, b 0.75, lowercase
//! words, as rank_bm25 does) and exact cosine over the same model's
//! vectors, and their reciprocal rank fusion. A reference row, exact cosine
//! over "author: text" (what the engine embeds), shows what `semantic`
//! should equal.
//!
//! Printed: evidence recall@5/10/25 (the share of a question's answering
//! turns found in the top k, averaged over questions) and MRR (of the first
//! answering turn), per ranking, over categories 1–4; recall@10 per
//! category (5, adversarial, included); LoCoMo's own scoring (every
//! question, a question without evidence counted as found,
//! `locomo/score.rs`) beside the paper's DRAGON row; search latency p50/p99
//! per mode, with and without the pad filter (the query's embedding
//! included; a query's embedding alone is timed separately). More rows rank
//! the baselines' exact lists the engine's way (`locomo/experiment.rs`):
//! fused, lifted by one neighbour each side, and two variants of the lift
//! (neighbours joining as candidates; two neighbours each side, the one
//! the engine took); then, two each side, the words' share at 0.6 (the
//! engine's) and 0.5, and relevance feedback: the query given the words
//! its first three hits share and it lacks (`Bm25::feedback`), tried and
//! not taken (docs/benchmarks.md, "The words' share, again"); then, words
//! 0.6 and two each side, the turns around each candidate joining it, a
//! second stage over a wide pool (both lists' top 50 and two turns each
//! side, every one scored in full on both sides), and a candidate whose
//! author the question names raised by 0.1 or 0.2 (the engine took 0.2:
//! docs/benchmarks.md, "Recall that connects turns"). Last, the learned
//! sparse list (SPLADE-tiny document weights, `semantic::splade`, computed
//! here for the turns' text in batches of 16 and timed): alone, with the
//! query as its own word pieces (each weighing 1, or its idf among the
//! turns) or encoded by the model, and fused third
//! beside BM25 and the "author: text" cosine at several weights (then the
//! author named +0.2 and two each side, as the engine's hybrid).
//!
//! `BENCH_EMBED_THREADS` gives the engine's embedding more threads (default
//! 1). `BENCH_MODEL` picks the model (`all-MiniLM-L6-v2`, the default, or
//! `multilingual-e5-small`). `BENCH_LOCOMO` names the data: the zip unpacked (a folder of per-
//! conversation files such as `26.json`, as `data/locomo10.zip` holds them)
//! or `locomo10.json` (a list of conversations). `BENCH_CONVS` picks the
//! conversations (default `26,30,41,42,43`: develop on these five only; the
//! other five are held out for measuring). `BENCH_TURN=speaker` stores each
//! turn as "Speaker: text" (a transcript line) instead of its text alone.
//! `BENCH_REALTALK=<REALTALK's data folder>` ranks REALTALK instead
//! (github.com/danny911kr/REALTALK, `data/Chat_N_….json`: real 21-day
//! chats in LoCoMo's layout, by LoCoMo's authors; categories 1 multi-hop,
//! 2 temporal, 3 inference), `BENCH_CONVS` its chats (default `1,2,3,4,5`,
//! the development half; 6–10 are held out). Its evidence ids are read
//! with care (`locomo/evidence.rs`: lists, ranges, stray punctuation);
//! ids naming no turn are dropped, and questions left with none, each
//! counted and printed first.
//! `BENCH_SET=paraphrases` ranks our own small set instead (dev-team notes
//! and questions that mean the same as one of them in other words,
//! tests/common/paraphrases.rs): no LoCoMo data needed.
//! `BENCH_BACKLOG=10000` measures embedding alone instead: that many notes
//! (the conversations' turns, over and over) written at once to an engine
//! whose model is loaded, and the time until every one is embedded.

mod common;
#[path = "locomo/data.rs"]
mod data;
#[path = "locomo/dump.rs"]
mod dump;
#[path = "locomo/evidence.rs"]
mod evidence;
#[path = "locomo/experiment.rs"]
mod experiment;
#[path = "../tests/common/model.rs"]
mod model;
#[path = "../tests/common/paraphrases.rs"]
mod paraphrases;
#[path = "locomo/score.rs"]
mod score;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{stats, Engine};
use data::Conversation;
use score::Tally;
use scratchpad::client::Client;
use scratchpad::semantic::splade::{self, Splade, Terms};
use scratchpad::semantic::{runtime, Model, ModelKind, ModelSource, Precision};
use serde_json::json;

const DEPTH: usize = 25;

/// A query's words, each weighing 1 (`Bm25::rank_weighted`).
fn weighed(query: &str) -> Vec<(String, f64)> {
    words(query).into_iter().map(|w| (w, 1.0)).collect()
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// BM25 Okapi over one conversation, as rank_bm25 computes it.
struct Bm25 {
    docs: Vec<HashMap<String, f64>>,
    /// How many turns hold each word.
    df: HashMap<String, f64>,
    lengths: Vec<f64>,
    avgdl: f64,
    idf: HashMap<String, f64>,
}

impl Bm25 {
    fn new(texts: &[&str]) -> Bm25 {
        let mut df: HashMap<String, f64> = HashMap::new();
        let mut docs = Vec::new();
        let mut lengths = Vec::new();
        for t in texts {
            let ws = words(t);
            lengths.push(ws.len() as f64);
            let mut tf: HashMap<String, f64> = HashMap::new();
            for w in ws {
                *tf.entry(w).or_default() += 1.0;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1.0;
            }
            docs.push(tf);
        }
        let n = texts.len() as f64;
        let mut idf: HashMap<String, f64> = df
            .iter()
            .map(|(w, d)| (w.clone(), ((n - d + 0.5) / (d + 0.5)).ln()))
            .collect();
        let floor = 0.25 * idf.values().sum::<f64>() / idf.len().max(1) as f64;
        for v in idf.values_mut() {
            if *v < 0.0 {
                *v = floor;
            }
        }
        let avgdl = lengths.iter().sum::<f64>() / n;
        Bm25 {
            docs,
            df,
            lengths,
            avgdl,
            idf,
        }
    }

    fn rank(&self, query: &str) -> Vec<(usize, f64)> {
        self.rank_weighted(&weighed(query))
    }

    /// Words that the first hits share and the query lacks (relevance
    /// feedback, as RM3 picks them): each word of the `docs` (best first)
    /// held by at most a twentieth of the turns, weighed by its share of
    /// each turn, its idf and the turn's rank; the best `n`, scaled to the
    /// best one's weight.
    fn feedback(&self, query: &str, docs: &[usize], n: usize) -> Vec<(String, f64)> {
        let asked: std::collections::HashSet<String> = words(query).into_iter().collect();
        let most = (self.docs.len() as f64 / 20.0).max(2.0);
        let mut weight: HashMap<String, f64> = HashMap::new();
        for (rank, &d) in docs.iter().enumerate() {
            for (w, f) in &self.docs[d] {
                if asked.contains(w) || self.df[w] > most || w.chars().count() < 3 {
                    continue;
                }
                *weight.entry(w.clone()).or_default() +=
                    f / self.lengths[d].max(1.0) * self.idf[w] / (rank + 1) as f64;
            }
        }
        let mut best: Vec<(String, f64)> = weight.into_iter().collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        best.truncate(n);
        let top = best.first().map_or(1.0, |x| x.1);
        best.into_iter().map(|(w, s)| (w, s / top)).collect()
    }

    fn rank_weighted(&self, q: &[(String, f64)]) -> Vec<(usize, f64)> {
        let mut scored: Vec<(usize, f64)> = (0..self.docs.len())
            .map(|i| (i, self.score(q, i)))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(2 * DEPTH);
        scored
    }

    /// Turn `i`'s score for the weighted query `q`.
    fn score(&self, q: &[(String, f64)], i: usize) -> f64 {
        let (k1, b) = (1.5, 0.75);
        let tf = &self.docs[i];
        q.iter()
            .filter_map(|(w, weight)| {
                let f = *tf.get(w)?;
                Some(
                    weight * self.idf[w] * f * (k1 + 1.0)
                        / (f + k1 * (1.0 - b + b * self.lengths[i] / self.avgdl)),
                )
            })
            .sum::<f64>()
    }
}

fn exact(vectors: &[Vec<f32>], query: &[f32]) -> Vec<(usize, f64)> {
    let mut scored: Vec<(usize, f64)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                i,
                v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>() as f64,
            )
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(2 * DEPTH);
    scored
}

/// A convex combination of the two lists' scores, each divided by its
/// list's best (BM25) or taken as it is (cosine), as in Bruch et al.'s
/// "theoretical min-max" normalisation; `w` is the words' weight.
fn convex(words: &[(usize, f64)], vectors: &[(usize, f64)], w: f64, minmax: bool) -> Vec<usize> {
    let norm = |l: &[(usize, f64)], theory_min: f64| -> HashMap<usize, f64> {
        let max = l.iter().map(|x| x.1).fold(f64::MIN, f64::max);
        let min = if minmax {
            l.iter().map(|x| x.1).fold(f64::MAX, f64::min)
        } else {
            theory_min
        };
        l.iter()
            .map(|(i, s)| (*i, (s - min) / (max - min).max(1e-9)))
            .collect()
    };
    let (a, b) = (norm(words, 0.0), norm(vectors, 0.0));
    let mut all: Vec<usize> = a.keys().chain(b.keys()).copied().collect();
    all.sort();
    all.dedup();
    let mut scored: Vec<(usize, f64)> = all
        .into_iter()
        .map(|i| {
            let s = w * a.get(&i).copied().unwrap_or(0.0)
                + (1.0 - w) * b.get(&i).copied().unwrap_or(0.0);
            (i, s)
        })
        .collect();
    scored.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    scored.into_iter().map(|(i, _)| i).take(DEPTH).collect()
}

/// How the query meets the turns' sparse terms.
#[derive(Clone, Copy)]
enum SparseQuery {
    /// Its own word pieces, each weighing 1 (no model).
    Pieces,
    /// Its own word pieces, each weighing its idf among the turns (no model).
    Idf,
    /// Encoded by the model, as a turn is.
    Encoded,
}

/// The query's pieces, each weighing ln(1 + N/df) over the `n` turns
/// (`df`: how many turns give the piece a weight); dropped if none does.
fn idf_weighted(query: &Terms, df: &HashMap<u32, usize>, n: usize) -> Terms {
    query
        .iter()
        .filter_map(|&(id, _)| {
            let d = *df.get(&id)?;
            Some((id, (1.0 + n as f32 / d as f32).ln()))
        })
        .collect()
}

/// Every turn with a share of the query's sparse terms, best first.
fn sparse_rank(turns: &[Terms], query: &Terms) -> Vec<(usize, f64)> {
    let mut scored: Vec<(usize, f64)> = turns
        .iter()
        .enumerate()
        .map(|(i, t)| (i, splade::score(query, t) as f64))
        .filter(|(_, s)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(2 * DEPTH);
    scored
}

fn top(l: &[(usize, f64)]) -> Vec<usize> {
    l.iter().map(|x| x.0).take(DEPTH).collect()
}

fn normalized(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.into_iter().map(|x| x / norm).collect()
}

fn rrf(lists: &[Vec<usize>]) -> Vec<usize> {
    let mut score: HashMap<usize, f64> = HashMap::new();
    for list in lists {
        for (rank, i) in list.iter().enumerate() {
            *score.entry(*i).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(usize, f64)> = score.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(i, _)| i).take(DEPTH).collect()
}

async fn embedded(c: &mut Client) {
    loop {
        let s = c.call("stats", json!({})).await.unwrap();
        if s["semantic"]["status"] == "ready" && s["embed_queue"] == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Writes `n` turns at once and times the backlog they make, from the
/// first write until the last is embedded.
async fn backlog(engine: &Engine, c: &mut Client, conversations: &[Conversation], n: usize) {
    let idle_rss = engine.rss_mib();
    loop {
        let s = c.call("stats", json!({})).await.unwrap();
        if s["semantic"]["status"] == "ready" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let turns: Vec<(&str, &str)> = conversations
        .iter()
        .flat_map(|c| {
            c.turns
                .iter()
                .map(|(_, who, text)| (who.as_str(), text.as_str()))
        })
        .collect();
    let started = Instant::now();
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        for &i in chunk {
            let (who, text) = turns[i % turns.len()];
            c.send(
                "entry.add",
                json!({"pad": "backlog", "content": text, "author": data::author_of(who)}),
            )
            .await
            .unwrap();
        }
        c.flush().await.unwrap();
        for _ in chunk {
            c.response().await.unwrap().1.unwrap();
        }
    }
    let written = started.elapsed();
    let mut peak_rss = idle_rss;
    loop {
        peak_rss = peak_rss.max(engine.rss_mib());
        let s = c.call("stats", json!({})).await.unwrap();
        if s["embed_queue"] == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let took = started.elapsed();
    let s = c.call("stats", json!({})).await.unwrap();
    println!(
        "a backlog of {n} notes ({} distinct turns): written in {:.1} s, all embedded {:.1} s after the first write ({:.1} notes/s)",
        turns.len(),
        written.as_secs_f64(),
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    println!(
        "engine: {}; resident {idle_rss:.0} MiB before, at most {peak_rss:.0} MiB while embedding, {:.0} MiB after",
        s["semantic"],
        engine.rss_mib()
    );
}

async fn run() {
    let mut set = chosen_set();
    if let Some(r) = set.evidence {
        println!(
            "evidence: {} entries listed, {} turn ids read; {} entries unreadable, {} ids naming no turn dropped; {} questions left without evidence dropped",
            r.listed, r.ids, r.unreadable, r.no_such_turn, r.questions_without
        );
    }
    let conversations = &mut set.conversations;
    // `BENCH_TURN=speaker`: a turn is stored as a transcript line,
    // "Caroline: I went to the support group", as a person pasting a
    // conversation (or an agent logging one) writes it; every ranking,
    // baselines included, sees the same text.
    let speaker_lines = std::env::var("BENCH_TURN").is_ok_and(|v| v == "speaker");
    if speaker_lines {
        for conv in conversations.iter_mut() {
            for (_, speaker, text) in &mut conv.turns {
                *text = format!("{speaker}: {text}");
            }
        }
    }
    println!(
        "turns stored as {}",
        if speaker_lines {
            "\"Speaker: text\" lines"
        } else {
            "their text alone"
        }
    );
    let kind: ModelKind = std::env::var("BENCH_MODEL")
        .unwrap_or_else(|_| "all-MiniLM-L6-v2".into())
        .parse()
        .unwrap();
    let model_dir = match kind {
        ModelKind::MiniLm => model::model_dir(),
        ModelKind::E5Small => model::e5_model_dir(),
    };
    // The folder of model folders, so the engine loads the sparse model
    // beside the embedding model (`BENCH_SPARSE=0`: the model's own
    // folder, no sparse list).
    let sparse = std::env::var("BENCH_SPARSE").map_or(true, |v| v != "0");
    let model_dir = match model_dir.parent() {
        Some(all) if sparse && all.join(splade::NAME).is_dir() => all.to_path_buf(),
        _ => model_dir,
    };
    let threads = std::env::var("BENCH_EMBED_THREADS").unwrap_or_else(|_| "1".into());
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(
        dir.path(),
        &[
            "--model",
            kind.name(),
            "--model-dir",
            model_dir.to_str().unwrap(),
            "--embed-threads",
            &threads,
        ],
    )
    .await;
    println!(
        "model: {}; the engine's sparse list: {}",
        kind.name(),
        if model_dir.join(splade::NAME).is_dir() {
            "on"
        } else {
            "off"
        }
    );
    let mut c = engine.client().await;
    if let Some(n) = std::env::var("BENCH_BACKLOG")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return backlog(&engine, &mut c, conversations, n).await;
    }

    // The turns, as notes.
    let started = Instant::now();
    let mut ids: HashMap<String, String> = HashMap::new(); // entry id -> "conv/turn"
    let total: usize = conversations.iter().map(|c| c.turns.len()).sum();
    for conv in conversations.iter() {
        for (turn, speaker, text) in &conv.turns {
            let r = c
                .call(
                    "entry.add",
                    json!({"pad": format!("{}-{}", set.name, conv.id), "content": text,
                           "author": data::author_of(speaker)}),
                )
                .await
                .unwrap();
            ids.insert(
                r["entry"]["id"].as_str().unwrap().to_string(),
                format!("{}/{turn}", conv.id),
            );
        }
    }
    let written = started.elapsed();
    embedded(&mut c).await;
    let embedding = started.elapsed() - written;
    println!(
        "{total} turns of {} conversations written in {:.1} s, embedded in {:.1} s ({:.1} turns/s, {threads} thread(s))",
        conversations.len(),
        written.as_secs_f64(),
        embedding.as_secs_f64(),
        total as f64 / embedding.as_secs_f64()
    );

    // The baselines' vectors: the same model, exact f32 cosine.
    runtime::init(dir.path()).expect("ONNX Runtime loads");
    let mut model = Model::load_kind(
        kind,
        &ModelSource::Dir(model_dir),
        Precision::Int8,
        1,
        dir.path(),
    )
    .expect("the model loads");
    let mut sparse_model = Splade::load(&model::splade_model_dir(), 1).expect("SPLADE-tiny loads");
    let (mut sparse_time, mut sparse_turns) = (Duration::ZERO, 0);
    let mut sparse_query_us = Vec::new();

    let modes = ["text", "semantic", "hybrid"];
    let mut scores: HashMap<&str, Tally> = HashMap::new();
    let mut latency: HashMap<String, Vec<f64>> = HashMap::new();
    let mut embed_us = Vec::new();
    // `BENCH_DUMP=<file>`: every list's scores per question, for
    // experiments outside the bench (`dump.rs`).
    let mut dump = std::env::var("BENCH_DUMP")
        .ok()
        .map(|p| dump::Dump::create(&p));
    for conv in conversations.iter() {
        let texts: Vec<&str> = conv.turns.iter().map(|t| t.2.as_str()).collect();
        let bm25 = Bm25::new(&texts);
        let embed = |model: &mut Model, texts: &[String]| -> Vec<Vec<f32>> {
            texts
                .chunks(32)
                .flat_map(|chunk| {
                    let chunk: Vec<&str> = chunk.iter().map(String::as_str).collect();
                    model.embed(&chunk).unwrap()
                })
                .map(normalized)
                .collect()
        };
        let vectors = embed(
            &mut model,
            &texts.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        );
        // What the engine embeds: "author: content" (the author lowercased,
        // as the bench writes it). The same as `vectors` plus the name.
        let as_stored: Vec<String> = conv
            .turns
            .iter()
            .map(|(_, speaker, text)| format!("{}: {text}", data::author_of(speaker)))
            .collect();
        let stored_vectors = embed(&mut model, &as_stored);
        // The turns' learned sparse terms, as the background encoder makes
        // them: batches of 16.
        let t = Instant::now();
        let sparse: Vec<Terms> = texts
            .chunks(16)
            .flat_map(|chunk| sparse_model.encode(chunk).unwrap())
            .collect();
        sparse_time += t.elapsed();
        sparse_turns += texts.len();
        let mut df: HashMap<u32, usize> = HashMap::new();
        for terms in &sparse {
            for (id, _) in terms {
                *df.entry(*id).or_default() += 1;
            }
        }
        let turn_of = |i: usize| format!("{}/{}", conv.id, conv.turns[i].0);
        if let Some(d) = dump.as_mut() {
            d.conversation(conv, &stored_vectors, &sparse);
        }
        for q in &conv.questions {
            let question = q.text.as_str();
            let by_words = bm25.rank(question);
            let t = Instant::now();
            let qv = normalized(model.embed_query(question).unwrap());
            embed_us.push(t.elapsed().as_secs_f64() * 1e6);
            let by_vector = exact(&vectors, &qv);
            let by_stored = exact(&stored_vectors, &qv);
            let pieces = sparse_model.query_terms(question);
            let by_pieces = sparse_rank(&sparse, &pieces);
            let by_idf = sparse_rank(&sparse, &idf_weighted(&pieces, &df, sparse.len()));
            let t = Instant::now();
            let encoded = sparse_model.encode(&[question]).unwrap().remove(0);
            sparse_query_us.push(t.elapsed().as_secs_f64() * 1e6);
            let by_encoded = sparse_rank(&sparse, &encoded);
            let fused = rrf(&[top(&by_words), top(&by_vector)]);
            let sim = experiment::convex_scores(&by_words, &by_stored, 0.7);
            let two = experiment::neighbours_two(&sim, 0.5);
            let first: Vec<usize> = two.iter().take(3).map(|x| x.0).collect();
            // Fused with the words weighing `w`, lifted two each side.
            let lifted = |by_words: &[(usize, f64)], w: f64| {
                experiment::top_of(&experiment::neighbours_two(
                    &experiment::convex_scores(by_words, &by_stored, w),
                    0.5,
                ))
            };
            let feedback = |n: usize, lambda: f64, w: f64| {
                let mut q = weighed(question);
                q.extend(
                    bm25.feedback(question, &first, n)
                        .into_iter()
                        .map(|(w, s)| (w, lambda * s)),
                );
                lifted(&bm25.rank_weighted(&q), w)
            };
            let sim6 = experiment::convex_scores(&by_words, &by_stored, 0.6);
            let cosine = |i: usize| -> f64 {
                stored_vectors[i]
                    .iter()
                    .zip(&qv)
                    .map(|(a, b)| a * b)
                    .sum::<f32>() as f64
            };
            // A joiner's own meaning score, scaled as the meaning list's are
            // (0 below its last).
            let (cmax, cmin) = (
                by_stored.first().map_or(1.0, |x| x.1),
                by_stored.last().map_or(0.0, |x| x.1),
            );
            let scaled_cosine =
                |i: usize| 0.4 * ((cosine(i) - cmin) / (cmax - cmin).max(1e-9)).clamp(0.0, 1.0);
            let asked = weighed(question);
            // The author named in the question: each candidate by that
            // speaker gains `bonus` before the lift.
            let named_on = |fused: &[(usize, f64)], bonus: f64| {
                let asked: std::collections::HashSet<String> =
                    words(question).into_iter().collect();
                let l: Vec<(usize, f64)> = fused
                    .iter()
                    .map(|&(i, s)| {
                        // Every part of the name a word of the question,
                        // as the engine asks (`fusion::author_named`).
                        let by = data::author_of(&conv.turns[i].1);
                        let named = by.split('-').all(|part| asked.contains(part));
                        (i, s + if named { bonus } else { 0.0 })
                    })
                    .collect();
                experiment::top_of(&experiment::neighbours_two(&experiment::sorted(l), 0.5))
            };
            let named = |bonus: f64| named_on(&sim6, bonus);
            // The sparse list third, fused with its weight, then the
            // engine's steps (the author named +0.2, two each side).
            let three = THREE.map(|(name, w, m, sp, query)| {
                let sparse_list = match query {
                    SparseQuery::Pieces => &by_pieces,
                    SparseQuery::Idf => &by_idf,
                    SparseQuery::Encoded => &by_encoded,
                };
                let fused = experiment::convex_many(&[
                    (by_words.as_slice(), w),
                    (by_stored.as_slice(), m),
                    (sparse_list.as_slice(), sp),
                ]);
                (name, named_on(&fused, 0.2))
            });
            let variants = [
                (SPARSE_PIECES, top(&by_pieces)),
                (SPARSE_IDF, top(&by_idf)),
                (SPARSE_ENCODED, top(&by_encoded)),
                (NAMED_1, named(0.1)),
                (NAMED_2, named(0.2)),
                (
                    JOINING,
                    experiment::top_of(&experiment::joining_two(&sim6, 0.5, texts.len(), |_| 0.0)),
                ),
                (
                    JOINING_COSINE,
                    experiment::top_of(&experiment::joining_two(
                        &sim6,
                        0.5,
                        texts.len(),
                        scaled_cosine,
                    )),
                ),
                (
                    WIDE_POOL,
                    experiment::top_of(&experiment::wide_pool(
                        &[&by_words, &by_stored],
                        texts.len(),
                        |i| bm25.score(&asked, i),
                        cosine,
                        0.6,
                    )),
                ),
                (
                    "convex 0.7, min-max",
                    convex(&by_words, &by_vector, 0.7, true),
                ),
                (FUSED, experiment::top_of(&sim)),
                (
                    LIFTED,
                    experiment::top_of(&experiment::neighbours(&sim, 0.5)),
                ),
                (
                    "lifted, neighbours joining",
                    experiment::top_of(&experiment::neighbours_joining(&sim, 0.5, texts.len())),
                ),
                ("lifted, two each side", experiment::top_of(&two)),
                ("two each side, words 0.6", lifted(&by_words, 0.6)),
                ("two each side, words 0.5", lifted(&by_words, 0.5)),
                ("two each side, feedback 5 words 0.3", feedback(5, 0.3, 0.7)),
                ("words 0.6, feedback 5 words 0.3", feedback(5, 0.3, 0.6)),
                ("words 0.6, feedback 3 words 0.3", feedback(3, 0.3, 0.6)),
                ("BM25 (baseline)", top(&by_words)),
                ("exact cosine, same model (baseline)", top(&by_vector)),
                ("RRF of BM25 and exact cosine (baseline)", fused),
                (AS_STORED, top(&by_stored)),
            ];
            for (name, list) in variants.into_iter().chain(three) {
                let ranked: Vec<String> = list.iter().map(|i| turn_of(*i)).collect();
                scores.entry(name).or_default().add(&ranked, q);
            }
            let mut engine_ranked: Vec<String> = Vec::new();
            for mode in modes {
                for filtered in [true, false] {
                    let mut params = json!({"query": question, "mode": mode, "limit": DEPTH});
                    if filtered {
                        params["pad"] = json!(format!("{}-{}", set.name, conv.id));
                    }
                    let t = Instant::now();
                    let r = c.call("search", params).await.unwrap();
                    let us = t.elapsed().as_secs_f64() * 1e6;
                    let key = format!("{mode}{}", if filtered { ", pad filter" } else { "" });
                    latency.entry(key).or_default().push(us);
                    if filtered {
                        let ranked: Vec<String> = r["hits"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter_map(|h| ids.get(h["entry"]["id"].as_str().unwrap()).cloned())
                            .collect();
                        if mode == "hybrid" {
                            engine_ranked = ranked.clone();
                        }
                        scores.entry(mode).or_default().add(&ranked, q);
                    }
                }
            }
            if let Some(d) = dump.as_mut() {
                let scores: Vec<f64> = (0..texts.len()).map(|i| bm25.score(&asked, i)).collect();
                let idf = idf_weighted(&pieces, &df, sparse.len());
                d.question(q, &qv, &scores, &idf, &engine_ranked);
            }
        }
    }
    println!(
        "\nconversations {}",
        conversations
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let ours: Vec<String> = modes.iter().map(|m| format!("ours, {m}")).collect();
    let mut rows: Vec<(&str, &Tally)> = [
        "BM25 (baseline)",
        "exact cosine, same model (baseline)",
        "RRF of BM25 and exact cosine (baseline)",
        AS_STORED,
        "convex 0.7, min-max",
        FUSED,
        LIFTED,
        "lifted, neighbours joining",
        "lifted, two each side",
        "two each side, words 0.6",
        "two each side, words 0.5",
        "two each side, feedback 5 words 0.3",
        "words 0.6, feedback 5 words 0.3",
        "words 0.6, feedback 3 words 0.3",
        JOINING,
        JOINING_COSINE,
        WIDE_POOL,
        NAMED_1,
        NAMED_2,
        SPARSE_PIECES,
        SPARSE_IDF,
        SPARSE_ENCODED,
    ]
    .into_iter()
    .chain(THREE.map(|t| t.0))
    .map(|name| (name, &scores[name]))
    .collect();
    for (mode, name) in modes.iter().zip(&ours) {
        rows.push((name.as_str(), &scores[mode]));
    }
    score::print(&rows, set.categories, set.name == "locomo");
    println!("\nsearch latency, {total} entries (the query's embedding included):");
    let mut keys: Vec<&String> = latency.keys().collect();
    keys.sort();
    for key in keys {
        let s = stats(latency[key].clone());
        println!(
            "{key:<30} p50 {:>8.2} ms   p95 {:>8.2} ms   p99 {:>8.2} ms",
            s.p50 / 1e3,
            s.p95 / 1e3,
            s.p99 / 1e3
        );
    }
    println!(
        "SPLADE-tiny: {sparse_turns} turns encoded in {:.1} s ({:.2} ms a turn, {:.0} turns/s; batches of 16, 1 thread)",
        sparse_time.as_secs_f64(),
        sparse_time.as_secs_f64() * 1e3 / sparse_turns as f64,
        sparse_turns as f64 / sparse_time.as_secs_f64()
    );
    let s = stats(sparse_query_us);
    println!(
        "{:<30} p50 {:>8.2} ms   p95 {:>8.2} ms",
        "a query's sparse encoding",
        s.p50 / 1e3,
        s.p95 / 1e3
    );
    let s = stats(embed_us);
    println!(
        "{:<30} p50 {:>8.2} ms   p99 {:>8.2} ms",
        "a query's embedding alone",
        s.p50 / 1e3,
        s.p99 / 1e3
    );
    drop(engine);
}

/// The engine's fusion (min–max, words 0.7) on the baselines' lists: BM25
/// and exact cosine over "author: text".
const FUSED: &str = "BM25 + \"author: text\" cosine, fused 0.7";
/// The same, each hit lifted by half its best neighbour's score (the turn
/// before or after it), as the engine's hybrid does.
const LIFTED: &str = "the same, lifted by neighbours (0.5)";

/// The engine's hybrid today (words 0.6, two each side) with the turns
/// around each candidate joining it (`experiment::joining_two`).
const JOINING: &str = "words 0.6, neighbours joining";
/// The same, each joiner also scored by its own cosine.
const JOINING_COSINE: &str = "words 0.6, joining with their cosine";
/// A second stage over the lists' candidates and two turns each side,
/// each scored in full on both sides (`experiment::wide_pool`).
const WIDE_POOL: &str = "wide pool (top 50s + 2 each side), full scores";

/// Words 0.6, two each side, a candidate whose author the question names
/// raised by 0.1 or 0.2 of a fused score before the lift.
const NAMED_1: &str = "words 0.6, the author named +0.1";
const NAMED_2: &str = "words 0.6, the author named +0.2";

/// The learned sparse list alone (SPLADE-tiny document weights): the query
/// as its own word pieces, or encoded by the model too.
const SPARSE_PIECES: &str = "SPLADE, the query's own pieces";
const SPARSE_IDF: &str = "SPLADE, the query's pieces by idf";
const SPARSE_ENCODED: &str = "SPLADE, the query encoded";
/// Three lists fused (words, meaning, sparse weights; the query's own
/// pieces, by idf, or encoded), then the author named +0.2 and two each side.
const THREE: [(&str, f64, f64, f64, SparseQuery); 10] = [
    (
        "three lists 0.5/0.3/0.2, pieces",
        0.5,
        0.3,
        0.2,
        SparseQuery::Pieces,
    ),
    (
        "three lists 0.45/0.3/0.25, pieces",
        0.45,
        0.3,
        0.25,
        SparseQuery::Pieces,
    ),
    (
        "three lists 0.4/0.3/0.3, pieces",
        0.4,
        0.3,
        0.3,
        SparseQuery::Pieces,
    ),
    (
        "three lists 0.4/0.25/0.35, pieces",
        0.4,
        0.25,
        0.35,
        SparseQuery::Pieces,
    ),
    (
        "three lists 0.35/0.25/0.4, pieces",
        0.35,
        0.25,
        0.4,
        SparseQuery::Pieces,
    ),
    (
        "three lists 0.4/0.3/0.3, pieces by idf",
        0.4,
        0.3,
        0.3,
        SparseQuery::Idf,
    ),
    (
        "three lists 0.35/0.25/0.4, pieces by idf",
        0.35,
        0.25,
        0.4,
        SparseQuery::Idf,
    ),
    (
        "three lists 0.45/0.3/0.25, encoded",
        0.45,
        0.3,
        0.25,
        SparseQuery::Encoded,
    ),
    (
        "three lists 0.4/0.3/0.3, encoded",
        0.4,
        0.3,
        0.3,
        SparseQuery::Encoded,
    ),
    (
        "three lists 0.35/0.25/0.4, encoded",
        0.35,
        0.25,
        0.4,
        SparseQuery::Encoded,
    ),
];

/// Exact cosine over the text the engine embeds ("author: content"):
/// what `semantic` should equal, the index being exact.
const AS_STORED: &str = "exact cosine, \"author: text\" (as embedded)";

/// The data set asked for: `BENCH_SET=paraphrases`, else REALTALK's chats
/// when `BENCH_REALTALK` names its data, else LoCoMo's conversations.
fn chosen_set() -> data::Set {
    let wanted = |default: &str| -> Vec<String> {
        std::env::var("BENCH_CONVS")
            .unwrap_or_else(|_| default.into())
            .split(',')
            .map(|s| s.trim().trim_start_matches("conv-").to_string())
            .collect()
    };
    if std::env::var("BENCH_SET").is_ok_and(|v| v == "paraphrases") {
        return data::paraphrases();
    }
    if let Some(dir) = std::env::var_os("BENCH_REALTALK") {
        return data::realtalk(&PathBuf::from(dir), &wanted("1,2,3,4,5"));
    }
    let path = PathBuf::from(std::env::var_os("BENCH_LOCOMO").expect(
        "set BENCH_LOCOMO to LoCoMo's data: `git clone https://github.com/snap-research/locomo` \
         and unzip data/locomo10.zip, then point it at the folder of NN.json files; or \
         BENCH_REALTALK to REALTALK's data folder (github.com/danny911kr/REALTALK, data/)",
    ));
    data::locomo(&path, &wanted("26,30,41,42,43"))
}

fn main() {
    common::two_thread_runtime().block_on(run());
}
