//! `cargo bench --bench search`: text search latency for every query shape,
//! with and without each filter, at 100k entries, on SQLite and on
//! PostgreSQL side by side (each the release `pad serve` over its socket,
//! semantic search off: a query's embedding and the meaning side are timed
//! by `benches/semantic.rs` and `benches/locomo.rs`).
//!
//! The corpus is text with natural language's shape: words drawn from a
//! 20,000-word vocabulary by Zipf's law (the commonest in most notes, most
//! in a handful), mixed with English function words; 100 pads of 1,000
//! notes, five authors, a tag on one note in ten, one note in five a task.
//! Shapes: a question (8–12 words, function words and content words of all
//! frequencies), a question none of whose words occur, one rare word, two
//! common words, a word beginning and a fragment from inside a word (the
//! trigram tier); each alone and
//! with a pad, tag, kind and author filter. `BENCH_QUICK=1`: 10k entries.

mod common;
#[allow(dead_code)]
#[path = "../tests/common/postgres.rs"]
mod postgres;

use common::{stats, timed, Engine};
use scratchpad::client::Client;
use serde_json::{json, Value};

const VOCABULARY: usize = 20_000;
const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "it", "we", "for", "on", "that", "with", "was",
    "what", "when", "did", "do", "how", "about",
];

/// Zipf's law over the vocabulary, by inverse transform on the cumulative weights.
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut total = 0.0;
        let cumulative = (1..=n)
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect::<Vec<_>>();
        Zipf { cumulative }
    }

    fn word(&self, rng: &mut fastrand::Rng) -> String {
        let x = rng.f64() * self.cumulative.last().unwrap();
        let r = self.cumulative.partition_point(|c| *c < x);
        word(r)
    }
}

/// The word of rank `r`: pronounceable, distinct, no real English word.
fn word(r: usize) -> String {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ten", "ru", "sa", "vo", "ne", "pi", "dor", "lu", "fe", "zan", "qui",
        "bra", "tso", "gel", "um", "wy", "hex",
    ];
    let mut r = r;
    let mut w = String::new();
    loop {
        w.push_str(SYLLABLES[r % SYLLABLES.len()]);
        r /= SYLLABLES.len();
        if r == 0 {
            break;
        }
    }
    w.push('x');
    w
}

fn note(z: &Zipf, rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(8..30);
    (0..n)
        .map(|_| {
            if rng.f64() < 0.4 {
                FUNCTION_WORDS[rng.usize(..FUNCTION_WORDS.len())].to_string()
            } else {
                z.word(rng)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn fill(c: &mut Client, n: usize) {
    let z = Zipf::new(VOCABULARY);
    let mut rng = fastrand::Rng::with_seed(7);
    let mut left = n;
    let mut i = 0usize;
    while left > 0 {
        let batch = left.min(500);
        for _ in 0..batch {
            let mut p = json!({
                "pad": format!("pad-{}", i % 100),
                "content": note(&z, &mut rng),
                "author": format!("agent-{}", i % 5),
            });
            if i.is_multiple_of(10) {
                p["tags"] = json!(["flagged"]);
            }
            if i.is_multiple_of(5) {
                p["kind"] = json!("task");
            }
            c.send("entry.add", p).await.unwrap();
            i += 1;
        }
        c.flush().await.unwrap();
        for _ in 0..batch {
            c.response().await.unwrap().1.unwrap();
        }
        left -= batch;
    }
    // Until the text index has caught up.
    loop {
        let s = c.call("stats", json!({})).await.unwrap();
        if s["index_queue"].as_i64().unwrap_or(0) == 0
            && s["journal_queue"].as_i64().unwrap_or(0) == 0
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The query shapes, each `rounds` queries long.
fn shapes(rounds: usize) -> Vec<(&'static str, Vec<String>)> {
    let z = Zipf::new(VOCABULARY);
    let mut rng = fastrand::Rng::with_seed(11);
    let question = |rng: &mut fastrand::Rng| {
        let n = rng.usize(8..13);
        (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    FUNCTION_WORDS[rng.usize(..FUNCTION_WORDS.len())].to_string()
                } else {
                    z.word(rng)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
            + "?"
    };
    vec![
        (
            "question",
            (0..rounds).map(|_| question(&mut rng)).collect(),
        ),
        (
            "question, no word occurs",
            (0..rounds)
                .map(|i| format!("when did the zorblat{i} grommify the plinketh{i}?"))
                .collect(),
        ),
        (
            "one rare word",
            (0..rounds)
                .map(|_| word(rng.usize(5_000..VOCABULARY)))
                .collect(),
        ),
        (
            "two common words",
            (0..rounds)
                .map(|_| format!("{} {}", word(rng.usize(0..5)), word(rng.usize(0..5))))
                .collect(),
        ),
        (
            "mid-word fragment",
            (0..rounds)
                .map(|_| {
                    let w = word(rng.usize(20..400));
                    w[1..w.len() - 2].to_string()
                })
                .collect(),
        ),
        (
            "word beginning",
            (0..rounds)
                .map(|_| {
                    let w = word(rng.usize(20..400));
                    w[..w.len() - 2].to_string()
                })
                .collect(),
        ),
    ]
}

async fn measure(c: &mut Client, query: &str, filter: &Value) -> f64 {
    let mut p = json!({"query": query, "mode": "text", "limit": 10});
    for (k, v) in filter.as_object().unwrap() {
        p[k] = v.clone();
    }
    timed(c, "search", p).await
}

async fn run() {
    let quick = std::env::var("BENCH_QUICK").is_ok();
    let n = if quick { 10_000 } else { 100_000 };
    let rounds = if quick { 40 } else { 200 };
    let pg = postgres::Postgres::start_durable();
    let url = pg.url();
    let (sq_dir, pg_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sq = Engine::start(sq_dir.path(), &["--no-semantic"]).await;
    let pe = Engine::start(pg_dir.path(), &["--no-semantic", "--database", &url]).await;
    let (mut cs, mut cp) = (sq.client().await, pe.client().await);
    let t = std::time::Instant::now();
    fill(&mut cs, n).await;
    fill(&mut cp, n).await;
    // A store of this size has been vacuumed and analysed by autovacuum long
    // before anyone searches it: do it now rather than let it run during the
    // measurement (its pass over a just-loaded table showed as p99 spikes).
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query("VACUUM ANALYZE").execute(&pool).await.unwrap();
    pool.close().await;
    println!(
        "{n} entries in each store (filled in {:.0} s); text search, limit 10, p50 / p99 in ms\n",
        t.elapsed().as_secs_f64()
    );
    let filters = [
        ("", json!({})),
        (", pad filter", json!({"pad": "pad-3"})),
        (", tag filter", json!({"tags": ["flagged"]})),
        (", kind filter", json!({"kind": "task"})),
        (", author filter", json!({"author": "agent-2"})),
    ];
    println!("{:<44} {:>17} {:>17}", "shape", "SQLite", "PostgreSQL");
    for (shape, queries) in shapes(rounds) {
        for (fname, filter) in &filters {
            let (mut s, mut p) = (Vec::new(), Vec::new());
            // Interleaved, so both stores see the same machine.
            for q in &queries {
                s.push(measure(&mut cs, q, filter).await);
                p.push(measure(&mut cp, q, filter).await);
            }
            let (s, p) = (stats(s), stats(p));
            println!(
                "{:<44} {:>7.2} / {:>6.2} {:>7.2} / {:>6.2}",
                format!("{shape}{fname}"),
                s.p50 / 1e3,
                s.p99 / 1e3,
                p.p50 / 1e3,
                p.p99 / 1e3
            );
        }
    }
}

fn main() {
    common::two_thread_runtime().block_on(run());
}
