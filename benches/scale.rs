//! `cargo bench --bench scale`: how the cost grows from 10k to 100k to a
//! million notes, on SQLite and PostgreSQL side by side (each the release
//! `pad serve` over its socket, searches interleaved so both see the same
//! machine).
//!
//! The corpus is `benches/semantic.rs`'s clustered dev notes by one author,
//! in ten pads of about a tenth each (and one in 500 in a small pad), one in
//! ten tagged `flagged`; each size is the first notes of the next. At each
//! size: every search shape — words (a paraphrased question, two words, a
//! ticket number), meaning and hybrid (cached queries: the query's embedding
//! is timed apart, by the same model on one thread) — alone, by pad and by
//! tag; served meaning search against exact search (every vector scored in
//! f32 by this bench, with the same filter); the first start (the index
//! built from the stored vectors), a restart (the saved index loaded),
//! memory and disk per note. Figures go to `bench-scale-<corpus>-<vectors>.csv` in
//! the target directory; `benches/scale_plot.py` draws them.
//!
//! Embedding a million notes takes about an hour a store here, so the notes
//! are written with semantic search off and their vectors stored through
//! the store's own `VectorSource::embed_next` (what the embedding worker
//! calls), from `BENCH_VECTORS`:
//! - `composed` (the default): the model's vector of the note's sentence
//!   (all 48,000, embedded once) plus the shift the model gives a ticket
//!   number (the model's vector of a numbered note minus its sentence's,
//!   from 1,024 notes; the note's number picks one), normalised. The bench
//!   prints how close they come to the model's own vectors for 1,000 notes.
//! - `model`: every note embedded by the model (two threads; ~5 min per
//!   100k), to check that `composed` gives the figures real embedding gives.
//!
//! `BENCH_SIZES` (default `10000,100000,1000000`) picks the sizes,
//! `BENCH_STORES` (default `sqlite,postgres`) the stores;
//! `BENCH_CORPUS=near-dup` writes `tests/recall.rs`'s near-duplicates
//! instead of dev notes (with `BENCH_VECTORS=model`), for served meaning
//! search against exact among them.

mod common;
#[path = "../tests/common/model.rs"]
mod model;
#[path = "../tests/common/notes.rs"]
mod notes;
#[allow(dead_code)]
#[path = "../tests/common/postgres.rs"]
mod postgres;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::devnotes::{numbered, template, QUERIES, SUBJECTS, TAILS, TEMPLATES};
use common::{stats, timed, Engine};
use scratchpad::client::Client;
use scratchpad::pg::{PgStore, PgVectors};
use scratchpad::semantic::vector::{embedded_text, EMBEDDED_AS};
use scratchpad::semantic::{runtime, Encoded, Model, ModelSource, Precision, VectorSource};
use scratchpad::store::{Durability, SqliteVectors, Store};
use serde_json::{json, Value};

const AUTHOR: &str = "agent";
const DIM: usize = 384;
const OFFSETS: usize = 1024;
const PADS: usize = 10;

struct Note {
    content: String,
    /// The sentence and number it was made of (dev notes).
    template: u32,
    number: u32,
    /// `PADS`: the small pad.
    pad: u8,
    tagged: bool,
}

impl Note {
    fn content(&self) -> &str {
        &self.content
    }

    fn pad(&self) -> String {
        match self.pad as usize {
            PADS => "small".into(),
            p => format!("p{p}"),
        }
    }
}

/// The notes, their vectors (`DIM` f32s each, in note order) and where
/// each embedded text's vector is.
struct Corpus {
    notes: Vec<Note>,
    vectors: Vec<f32>,
    by_text: HashMap<String, u32>,
}

impl Corpus {
    fn vector(&self, i: usize) -> &[f32] {
        &self.vectors[i * DIM..(i + 1) * DIM]
    }

    /// The vector of a text the store hands over (`author: content`).
    fn vector_of(&self, text: &str) -> Vec<f32> {
        let i = self
            .by_text
            .get(text)
            .unwrap_or_else(|| panic!("not a note of this bench: {text}"));
        self.vector(*i as usize).to_vec()
    }

    /// Exact search: the `k` best notes among the first `size` that pass
    /// `keep`, by the f32 dot product (ties to the newest), as contents.
    fn exact(
        &self,
        size: usize,
        query: &[f32],
        k: usize,
        keep: impl Fn(&Note) -> bool,
    ) -> HashSet<String> {
        let mut scored: Vec<(f32, usize)> = (0..size)
            .filter(|i| keep(&self.notes[*i]))
            .map(|i| (dot(self.vector(i), query), i))
            .collect();
        let k = k.min(scored.len());
        scored.select_nth_unstable_by(k.saturating_sub(1), |a, b| {
            b.0.total_cmp(&a.0).then(b.1.cmp(&a.1))
        });
        scored[..k]
            .iter()
            .map(|(_, i)| self.notes[*i].content().to_string())
            .collect()
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = dot(&v, &v).sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// `n` notes: dev notes, or with `near_dup` `tests/recall.rs`'s
/// near-duplicates (200 sentences, each with thousands of ticket numbers).
fn notes(n: usize, near_dup: bool) -> Vec<Note> {
    let mut rng = fastrand::Rng::with_seed(17);
    let mut near = near_dup.then(|| notes::near_duplicates(n).into_iter());
    (0..n)
        .map(|i| {
            let (template, number) = (rng.u32(..TEMPLATES as u32), rng.u32(..100_000));
            Note {
                content: match near.as_mut() {
                    Some(near) => near.next().unwrap(),
                    None => numbered(template as usize, number),
                },
                template,
                number,
                pad: if i % 500 == 499 {
                    PADS as u8
                } else {
                    rng.u8(..PADS as u8)
                },
                tagged: rng.u8(..10) == 0,
            }
        })
        .collect()
}

/// Every text embedded by `model`, in batches of 64; flat. Kept in the
/// target directory (`bench-vectors/`, named by the model and the texts),
/// so a second run reads them back.
fn embed_all(model: &mut Model, texts: &[String]) -> Vec<f32> {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for b in model
        .name
        .bytes()
        .chain(texts.iter().flat_map(|t| t.bytes().chain([0])))
    {
        hash = (hash ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let dir = target_dir().join("bench-vectors");
    let path = dir.join(format!("scale-{hash:016x}.f32"));
    if let Ok(bytes) = std::fs::read(&path) {
        if bytes.len() == texts.len() * DIM * 4 {
            println!(
                "  {} vectors read back from {}",
                texts.len(),
                path.display()
            );
            return bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect();
        }
    }
    let out = embed_each(model, texts);
    std::fs::create_dir_all(&dir).unwrap();
    let bytes: Vec<u8> = out.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&path, bytes).unwrap();
    out
}

fn target_dir() -> PathBuf {
    // Bench binaries are <target>/<profile>/deps/<name>.
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

fn embed_each(model: &mut Model, texts: &[String]) -> Vec<f32> {
    let t = Instant::now();
    let mut out = Vec::with_capacity(texts.len() * DIM);
    for (i, chunk) in texts.chunks(64).enumerate() {
        for v in model.embed(chunk).expect("the model embeds") {
            out.extend(v);
        }
        if i % 250 == 249 {
            eprintln!("  embedded {} of {}", (i + 1) * 64, texts.len());
        }
    }
    println!(
        "  {} texts embedded in {:.0} s ({:.0}/s, two threads)",
        texts.len(),
        t.elapsed().as_secs_f64(),
        texts.len() as f64 / t.elapsed().as_secs_f64()
    );
    out
}

fn text_of(note: &Note) -> String {
    embedded_text(AUTHOR, note.content())
}

/// The notes' vectors, `composed` or from the `model` (see the top).
fn vectors(notes: &[Note], how: &str, model: &mut Model) -> Vec<f32> {
    if how == "model" {
        let texts: Vec<String> = notes.iter().map(text_of).collect();
        return embed_all(model, &texts);
    }
    assert_eq!(how, "composed", "BENCH_VECTORS is composed or model");
    let sentences: Vec<String> = (0..TEMPLATES)
        .map(|t| embedded_text(AUTHOR, &template(t)))
        .collect();
    let sentence = embed_all(model, &sentences);
    let of = |t: usize| &sentence[t * DIM..(t + 1) * DIM];
    let mut rng = fastrand::Rng::with_seed(23);
    let samples: Vec<(usize, u32)> = (0..OFFSETS)
        .map(|_| (rng.usize(..TEMPLATES), rng.u32(..100_000)))
        .collect();
    let numbered_texts: Vec<String> = samples
        .iter()
        .map(|(t, n)| embedded_text(AUTHOR, &numbered(*t, *n)))
        .collect();
    let real = embed_all(model, &numbered_texts);
    let shift: Vec<f32> = samples
        .iter()
        .enumerate()
        .flat_map(|(j, (t, _))| (0..DIM).map(move |d| (j, *t, d)))
        .map(|(j, t, d)| real[j * DIM + d] - of(t)[d])
        .collect();
    let compose = |note: &Note| {
        let j = (note.number as usize).wrapping_mul(2_654_435_761) % OFFSETS;
        let t = note.template as usize;
        normalised((0..DIM).map(|d| of(t)[d] + shift[j * DIM + d]).collect())
    };
    // How close composing comes: 1,000 notes the model embeds itself.
    let sample: Vec<usize> = (0..1000).map(|_| rng.usize(..notes.len())).collect();
    let texts: Vec<String> = sample.iter().map(|i| text_of(&notes[*i])).collect();
    let own = embed_all(model, &texts);
    let cosines: Vec<f64> = sample
        .iter()
        .enumerate()
        .map(|(k, i)| dot(&compose(&notes[*i]), &own[k * DIM..(k + 1) * DIM]) as f64)
        .collect();
    let sentence_only: Vec<f64> = sample
        .iter()
        .enumerate()
        .map(|(k, i)| {
            dot(
                of(notes[*i].template as usize),
                &own[k * DIM..(k + 1) * DIM],
            ) as f64
        })
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    println!(
        "  composed against the model's own vectors, 1,000 notes: cosine mean {:.4}, min {:.4} \
         (the sentence's vector alone: mean {:.4}, min {:.4})",
        mean(&cosines),
        min(&cosines),
        mean(&sentence_only),
        min(&sentence_only)
    );
    notes.iter().flat_map(compose).collect()
}

/// Writes notes `from..to` through the socket, over four connections
/// (pipelined, 500 at a time each: PostgreSQL commits each write, and
/// concurrent commits share their flushes), and waits until the journal and
/// the text index have caught up.
async fn load(engine: &Engine, corpus: &Corpus, from: usize, to: usize) -> f64 {
    const WRITERS: usize = 4;
    let t = Instant::now();
    let writer = |k: usize| async move {
        let mut c = engine.client().await;
        let mut i = from + k * 500;
        while i < to {
            let batch = (to - i).min(500);
            for note in &corpus.notes[i..i + batch] {
                let mut p = json!({"pad": note.pad(), "content": note.content(), "author": AUTHOR});
                if note.tagged {
                    p["tags"] = json!(["flagged"]);
                }
                c.send("entry.add", p).await.unwrap();
            }
            c.flush().await.unwrap();
            for _ in 0..batch {
                c.response().await.unwrap().1.unwrap();
            }
            i += WRITERS * 500;
        }
    };
    futures_util::future::join_all((0..WRITERS).map(writer)).await;
    let mut c = engine.client().await;
    loop {
        let s = c.call("stats", json!({})).await.unwrap();
        if s["index_queue"] == 0 && s["journal_queue"] == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    (to - from) as f64 / t.elapsed().as_secs_f64()
}

/// Stores the vectors of every note not yet embedded, as the embedding
/// worker would (`embed_next`), with the corpus's vectors for the model.
fn store_vectors(source: &dyn VectorSource, key: &str, corpus: &Corpus) -> (usize, f64) {
    source.use_model(key).unwrap();
    let t = Instant::now();
    let mut embed = |notes: &[scratchpad::semantic::Note]| -> Vec<Option<Encoded>> {
        notes
            .iter()
            .map(|n| {
                Some(Encoded {
                    vector: corpus.vector_of(&embedded_text(n.author, n.content)),
                    terms: Vec::new(),
                })
            })
            .collect()
    };
    let mut n = 0;
    while let Some(k) = source.embed_next(2000, &mut embed).unwrap() {
        n += k;
    }
    (n, t.elapsed().as_secs_f64())
}

/// Waits until semantic search is ready with nothing queued.
async fn ready(c: &mut Client) -> Value {
    loop {
        let s = c.call("stats", json!({})).await.unwrap();
        if s["semantic"]["status"] == "ready" && s["embed_queue"] == 0 {
            return s;
        }
        assert_ne!(s["semantic"]["status"], "unavailable", "{s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

struct Side {
    name: &'static str,
    dir: PathBuf,
    args: Vec<String>,
}

impl Side {
    async fn start(&self, semantic: bool) -> Engine {
        let mut args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        if !semantic {
            args.push("--no-semantic");
        }
        Engine::start(&self.dir, &args).await
    }
}

/// The search shapes: a name, the mode and the queries (cycled).
fn shapes() -> Vec<(&'static str, &'static str, Vec<String>)> {
    let mut rng = fastrand::Rng::with_seed(29);
    let last = |s: &str| s.rsplit(' ').next().unwrap().to_string();
    let words = (0..50)
        .map(|_| {
            let s = last(SUBJECTS[rng.usize(..SUBJECTS.len())]);
            format!("{s} {}", last(TAILS[rng.usize(..TAILS.len())]))
        })
        .collect();
    let numbers = (0..50).map(|_| rng.u32(..100_000).to_string()).collect();
    let queries: Vec<String> = QUERIES.iter().map(|q| q.to_string()).collect();
    vec![
        ("words: a question", "text", queries.clone()),
        ("words: two words", "text", words),
        ("words: a ticket number", "text", numbers),
        ("meaning", "semantic", queries.clone()),
        ("hybrid", "hybrid", queries),
    ]
}

fn filters() -> [(&'static str, Value); 3] {
    [
        ("", json!({})),
        (", by pad", json!({"pad": "p3"})),
        (", by tag", json!({"tags": ["flagged"]})),
    ]
}

fn keeps(filter: &str) -> impl Fn(&Note) -> bool + '_ {
    move |n: &Note| match filter {
        ", by pad" => n.pad == 3,
        ", by tag" => n.tagged,
        _ => true,
    }
}

struct Figures {
    csv: Vec<String>,
}

impl Figures {
    fn add(&mut self, what: &str, store: &str, size: usize, a: f64, b: f64) {
        self.csv
            .push(format!("\"{what}\",{store},{size},{a:.4},{b:.4}"));
    }
}

/// Every shape alone and filtered, each store in turn per query.
async fn searches(clients: &mut [(&str, Client)], size: usize, figures: &mut Figures) {
    let rounds = if size >= 1_000_000 { 100 } else { 200 };
    let mut head = format!("{:<40}", "search, p50 / p99 ms");
    for (name, _) in clients.iter() {
        head.push_str(&format!(" {name:>19}"));
    }
    println!("{head}");
    for (shape, mode, queries) in shapes() {
        for (fname, filter) in filters() {
            let params = |i: usize| {
                let mut p = json!({"query": queries[i % queries.len()], "mode": mode, "limit": 10});
                for (k, v) in filter.as_object().unwrap() {
                    p[k] = v.clone();
                }
                p
            };
            for (_, c) in clients.iter_mut() {
                for i in 0..queries.len().min(rounds) {
                    timed(c, "search", params(i)).await; // cached queries, warm pages
                }
            }
            let mut us = vec![Vec::new(); clients.len()];
            for i in 0..rounds {
                for ((_, c), us) in clients.iter_mut().zip(&mut us) {
                    us.push(timed(c, "search", params(i)).await);
                }
            }
            let what = format!("{shape}{fname}");
            let mut line = format!("{what:<40}");
            for ((store, _), us) in clients.iter().zip(us) {
                let s = stats(us);
                line.push_str(&format!(" {:>9.2} / {:>7.2}", s.p50 / 1e3, s.p99 / 1e3));
                figures.add(&what, store, size, s.p50 / 1e3, s.p99 / 1e3);
            }
            println!("{line}");
        }
    }
}

/// Served meaning search against exact search: the share of exact's top
/// 10 the engine answered, over every query and filter.
async fn recall(
    clients: &mut [(&str, Client)],
    corpus: &Corpus,
    size: usize,
    queries: &[(&str, Vec<f32>)],
    figures: &mut Figures,
) {
    for (store, c) in clients.iter_mut() {
        let (mut found, mut total, mut worst) = (0, 0, 1.0f64);
        for (fname, filter) in filters() {
            for (q, qv) in queries {
                let truth = corpus.exact(size, qv, 10, keeps(fname));
                let mut p = json!({"query": q, "mode": "semantic", "limit": 10});
                for (k, v) in filter.as_object().unwrap() {
                    p[k] = v.clone();
                }
                let r = c.call("search", p).await.unwrap();
                let got = r["hits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|h| truth.contains(h["entry"]["content"].as_str().unwrap()))
                    .count();
                found += got;
                total += truth.len();
                worst = worst.min(got as f64 / truth.len() as f64);
            }
        }
        let share = found as f64 / total as f64;
        println!("{store}: served meaning search found {share:.3} of exact search's top 10 (worst query {worst:.2})");
        figures.add("meaning against exact", store, size, share, worst);
    }
}

async fn run() {
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000,1000000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("BENCH_SIZES: sizes separated by commas")
        })
        .collect();
    let how = std::env::var("BENCH_VECTORS").unwrap_or_else(|_| "composed".into());
    let near_dup = match std::env::var("BENCH_CORPUS").as_deref() {
        Ok("near-dup") => true,
        Ok("dev") | Err(_) => false,
        Ok(other) => panic!("BENCH_CORPUS is dev or near-dup, not {other}"),
    };
    assert!(
        !near_dup || how == "model",
        "the near-duplicates are embedded by the model: BENCH_VECTORS=model"
    );
    let max = *sizes.iter().max().unwrap();
    println!(
        "scratchpad {} scale bench — sizes {sizes:?}, vectors {how}, near-duplicates {near_dup}\n",
        env!("CARGO_PKG_VERSION")
    );

    let model_dir = model::model_dir();
    std::env::set_var("PAD_MODEL_DIR", &model_dir);
    let scratch = tempfile::tempdir().unwrap();
    runtime::init(scratch.path()).expect("ONNX Runtime (run scripts/setup.sh)");
    let source = ModelSource::Dir(model_dir);
    let mut two = Model::load(&source, Precision::Int8, 2, scratch.path()).unwrap();
    let mut one = Model::load(&source, Precision::Int8, 1, scratch.path()).unwrap();
    let key = format!("{} / {EMBEDDED_AS}", one.name);

    let notes = notes(max, near_dup);
    let t = Instant::now();
    let vectors = vectors(&notes, &how, &mut two);
    drop(two);
    let mut by_text = HashMap::with_capacity(notes.len());
    for (i, n) in notes.iter().enumerate() {
        by_text.entry(text_of(n)).or_insert(i as u32);
    }
    let corpus = Corpus {
        notes,
        vectors,
        by_text,
    };
    println!(
        "vectors for {max} notes ready in {:.0} s\n",
        t.elapsed().as_secs_f64()
    );

    // The query's embedding, timed apart: the engine's model, one thread.
    let mut us = Vec::new();
    for i in 0..100 {
        let t = Instant::now();
        one.embed_query(&format!("{} {i}", QUERIES[i % QUERIES.len()]))
            .unwrap();
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let embedding = stats(us);
    println!(
        "one query's embedding (int8, one thread): p50 {:.2} ms, p99 {:.2} ms\n",
        embedding.p50 / 1e3,
        embedding.p99 / 1e3
    );
    let asked = if near_dup { notes::QUERIES } else { QUERIES };
    let queries: Vec<(&str, Vec<f32>)> = asked
        .iter()
        .map(|q| (*q, one.embed_query(q).unwrap()))
        .collect();
    let mut figures = Figures {
        csv: vec!["what,store,size,a,b".into()],
    };
    figures.add(
        "query embedding ms",
        "model",
        0,
        embedding.p50 / 1e3,
        embedding.p99 / 1e3,
    );

    let pg = postgres::Postgres::start_durable();
    let url = pg.url();
    let (sq_dir, pg_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let stores = std::env::var("BENCH_STORES").unwrap_or_else(|_| "sqlite,postgres".into());
    let sides: Vec<Side> = [
        Side {
            name: "SQLite",
            dir: sq_dir.path().into(),
            args: vec![],
        },
        Side {
            name: "PostgreSQL",
            dir: pg_dir.path().into(),
            args: vec!["--database".into(), url.clone()],
        },
    ]
    .into_iter()
    .filter(|side| {
        stores.split(',').any(|s| match s.trim() {
            "sqlite" => side.name == "SQLite",
            "postgres" => side.name == "PostgreSQL",
            other => {
                panic!("BENCH_STORES: sqlite, postgres or both, separated by commas, not {other}")
            }
        })
    })
    .collect();
    let mut have = 0;
    for &size in &sizes {
        println!("== {size} notes ==");
        for side in &sides {
            let engine = side.start(false).await;
            let rate = load(&engine, &corpus, have, size).await;
            drop(engine);
            let (n, took) = match side.name {
                "SQLite" => {
                    let store = Store::open(
                        &side.dir.join("data"),
                        Durability::Normal,
                        None,
                        8192,
                        scratchpad::clock::system_now_ms(),
                        true,
                    )
                    .unwrap();
                    store_vectors(&SqliteVectors(Arc::new(store)), &key, &corpus)
                }
                _ => {
                    let store = PgStore::open(&url, None).await.unwrap();
                    // Its own runtime, started and stopped off this one.
                    std::thread::scope(|s| {
                        s.spawn(|| store_vectors(&PgVectors::new(&store).unwrap(), &key, &corpus))
                            .join()
                            .unwrap()
                    })
                }
            };
            assert_eq!(
                n,
                size - have,
                "{}: every new note gets its vector",
                side.name
            );
            println!(
                "{}: {} notes written at {rate:.0}/s; their vectors stored in {took:.0} s",
                side.name,
                size - have
            );
        }
        // As `benches/search.rs`: autovacuum would have analysed a store of
        // this size long before anyone searches it.
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        sqlx::query("VACUUM ANALYZE").execute(&pool).await.unwrap();

        let mut engines = Vec::new();
        for side in &sides {
            for restart in [false, true] {
                let t = Instant::now();
                let engine = side.start(true).await;
                let mut c = engine.client().await;
                let s = ready(&mut c).await;
                let took = t.elapsed().as_secs_f64();
                assert_eq!(s["semantic"]["vectors"], size as u64, "{}: {s}", side.name);
                let what = if restart {
                    "restart to ready (index loaded)"
                } else {
                    "first start (index built)"
                };
                println!("{}: {what}: {took:.2} s", side.name);
                figures.add(
                    if restart {
                        "restart s"
                    } else {
                        "index build s"
                    },
                    side.name,
                    size,
                    took,
                    0.0,
                );
                if restart {
                    engines.push((side.name, engine, c));
                }
            }
        }
        let mut clients: Vec<(&str, Client)> = Vec::new();
        for (name, engine, _) in &engines {
            clients.push((name, engine.client().await));
        }
        searches(&mut clients, size, &mut figures).await;
        recall(&mut clients, &corpus, size, &queries, &mut figures).await;
        let pg_bytes: i64 = sqlx::query_scalar("SELECT pg_database_size('pad')")
            .fetch_one(&pool)
            .await
            .unwrap();
        pool.close().await;
        for ((name, engine, _), side) in engines.iter().zip(&sides) {
            let rss = engine.rss_mib() * 1048576.0;
            let disk = dir_bytes(&side.dir.join("data")) as f64
                + if *name == "PostgreSQL" {
                    pg_bytes as f64
                } else {
                    0.0
                };
            println!(
                "{name}: engine memory {:.0} MiB ({:.0} bytes a note); disk {:.0} MiB ({:.0} bytes a note)",
                rss / 1048576.0,
                rss / size as f64,
                disk / 1048576.0,
                disk / size as f64
            );
            figures.add("memory bytes/note", name, size, rss / size as f64, rss);
            figures.add("disk bytes/note", name, size, disk / size as f64, disk);
        }
        println!();
        drop(clients);
        drop(engines);
        have = size;
    }
    let target = target_dir();
    let corpus_name = if near_dup { "near-dup" } else { "dev" };
    let out = target.join(format!("bench-scale-{corpus_name}-{how}.csv"));
    let mut f = std::fs::File::create(&out).unwrap();
    writeln!(f, "{}", figures.csv.join("\n")).unwrap();
    println!("figures written to {}", out.display());
}

fn main() {
    common::two_thread_runtime().block_on(run());
}
