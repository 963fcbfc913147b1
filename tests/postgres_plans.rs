//! The plans PostgreSQL runs the engine's statements by, read from its
//! own log (`auto_explain`): what a store of many notes would make slow
//! shows here in the plan, long before it shows in a time.

mod common;

use common::postgres::Postgres;
use common::{ok, Harness};
use serde_json::{json, Value};

/// A new database on `pg` whose every session logs the plan of every
/// statement, with `settings` besides; its URL and name.
fn explained(pg: &Postgres, settings: &[&str]) -> (String, String) {
    let url = pg.new_database();
    let db = url.rsplit('/').next().unwrap().to_string();
    let logged = [
        "session_preload_libraries = 'auto_explain'",
        "auto_explain.log_min_duration = 0",
        "auto_explain.log_analyze = on",
    ];
    for setting in logged.iter().chain(settings) {
        pg.psql(&db, &format!("ALTER DATABASE {db} SET {setting}"));
    }
    (url, db)
}

/// The plans logged since `from` (an offset in the log) of the statements
/// whose text holds `marker`.
fn plans_of(pg: &Postgres, from: usize, marker: &str) -> Vec<String> {
    pg.log()[from..]
        .split("Query Text:")
        .skip(1)
        .filter(|plan| {
            plan.lines()
                .next()
                .is_some_and(|text| text.contains(marker))
        })
        .map(str::to_string)
        .collect()
}

async fn search(c: &mut scratchpad::client::Client, params: Value) -> Vec<String> {
    common::hit_contents(&ok(c, "search", params).await)
}

/// Words each in half the older notes. Two that meet in none but two:
/// walking the newest rows until 256 hold both would read every row (at a
/// million notes, two unrelated common words took 34–65 ms so); the engine
/// sees from the newest rows that they rarely meet and gathers their
/// matches first, in a set of their own (`PgStore::rare_together`; at a
/// million notes PostgreSQL takes them from the words index), unless the
/// search has a filter of its own. Two that meet in every newest note are
/// walked newest first; one common word is
/// walked without looking; two that meet in half the older notes but in
/// none of the newest look rare, and the gathering stops at its cap for
/// the walk.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn common_words_that_rarely_meet_are_gathered_from_the_words_index() {
    let pg = Postgres::start();
    let (url, db) = explained(&pg, &[]);
    let h = Harness::with(move |c| c.database = Some(url)).await;
    let mut c = h.client().await;
    let first = json!({"pad": "bulk", "content": "the first note"});
    ok(&mut c, "entry.add", first).await;
    // 24,100 older notes at once (through the engine they would take
    // minutes): "alpha gamma …" and "beta gamma …" by turns, then 4,100
    // "delta epsilon …".
    pg.psql(
        &db,
        "INSERT INTO entries (seq, pad, author, kind, content, created_at, updated_at) \
         SELECT i, 'bulk', 'agent', 'note', CASE WHEN i > 20000 THEN 'delta epsilon ' \
           WHEN i % 2 = 0 THEN 'alpha gamma ' ELSE 'beta gamma ' END || i, i, i \
         FROM generate_series(1, 24100) i; \
         UPDATE pads SET entries = entries + 24100 WHERE name = 'bulk'; ANALYZE entries;",
    );
    for (content, tags) in [
        ("alpha beta met once", json!([])),
        ("alpha beta met again", json!(["farm"])),
    ] {
        let p = json!({"pad": "bulk", "content": content, "tags": tags});
        ok(&mut c, "entry.add", p).await;
    }
    let probe = "SELECT count(*) FROM (SELECT words FROM entries ORDER BY seq DESC";
    let gathered = |plan: &String| plan.contains("CTE m");

    let from = pg.log().len();
    let both = json!({"query": "alpha beta", "mode": "text", "limit": 2});
    assert_eq!(
        search(&mut c, both).await,
        ["alpha beta met again", "alpha beta met once"]
    );
    let plans = plans_of(&pg, from, "ts_rank(c.words");
    assert_eq!(plans.len(), 1, "{}", &pg.log()[from..]);
    // Gathered in a set of their own (on a table this small PostgreSQL may
    // read the table for them rather than the index), not walked.
    assert!(gathered(&plans[0]), "not gathered:\n{}", plans[0]);
    // With a filter of its own, left to PostgreSQL's plan.
    let from = pg.log().len();
    let tagged = json!({"query": "alpha beta", "mode": "text", "limit": 1, "tags": ["farm"]});
    assert_eq!(search(&mut c, tagged).await, ["alpha beta met again"]);
    let plans = plans_of(&pg, from, "ts_rank(c.words");
    assert_eq!(plans.len(), 1, "{}", &pg.log()[from..]);
    assert!(
        !gathered(&plans[0]),
        "gathered with a filter:\n{}",
        plans[0]
    );

    for (query, newest, looked) in [
        ("delta epsilon", "delta epsilon 24100", true),
        ("gamma", "alpha gamma 20000", false),
    ] {
        let from = pg.log().len();
        let p = json!({"query": query, "mode": "text", "limit": 1});
        assert_eq!(search(&mut c, p).await, [newest]);
        let plans = plans_of(&pg, from, "ts_rank(c.words");
        assert_eq!(plans.len(), 1, "{query}: {}", &pg.log()[from..]);
        assert!(!gathered(&plans[0]), "{query}: gathered:\n{}", plans[0]);
        assert_eq!(!plans_of(&pg, from, probe).is_empty(), looked, "{query}");
    }

    let from = pg.log().len();
    let once_often = json!({"query": "alpha gamma", "mode": "text", "limit": 3});
    assert_eq!(
        search(&mut c, once_often).await,
        [
            "alpha gamma 20000",
            "alpha gamma 19998",
            "alpha gamma 19996"
        ]
    );
    let plans = plans_of(&pg, from, "ts_rank(c.words");
    assert_eq!(plans.len(), 2, "{}", &pg.log()[from..]);
    assert!(
        gathered(&plans[0]) && plans[0].contains("rows=1024"),
        "not gathered to its cap first:\n{}",
        plans[0]
    );
    assert!(!gathered(&plans[1]), "then not walked:\n{}", plans[1]);
    h.stop().await;
}

/// BM25's tier for words in few notes, by a pad that holds many: their
/// matches are gathered from the words index first, in a set of their own
/// (`Subquery Scan`), and the pad's filter applied to them. Left to
/// PostgreSQL, a word it has no statistics for is guessed at 0.5% of the
/// table, and its bitmap ANDed with the pad's whole one (a ticket number
/// in 6 of a million notes, by pad: 13 ms for the pad's 99,245 rows, for
/// none). Words in about as many notes as the pad holds are left to
/// PostgreSQL's plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rare_words_in_a_large_pad_are_gathered_before_the_pad_filter() {
    let pg = Postgres::start();
    let (url, db) = explained(&pg, &[]);
    let h = Harness::with(move |c| c.database = Some(url)).await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "big", "content": "the first note"}),
    )
    .await;
    let other = json!({"pad": "other", "content": "ticket 48213 reopened"});
    ok(&mut c, "entry.add", other).await;
    pg.psql(
        &db,
        "INSERT INTO entries (seq, pad, author, kind, content, created_at, updated_at) \
         SELECT i, 'big', 'agent', 'note', 'routine check ' || i, i, i \
         FROM generate_series(1, 2000) i; \
         UPDATE pads SET entries = entries + 2000 WHERE name = 'big'; ANALYZE entries;",
    );
    let bm25 = "sum(w.idf";
    let gathered = |plan: &String| plan.contains("Subquery Scan");

    let from = pg.log().len();
    let rare = json!({"query": "what about ticket 48213?", "mode": "text", "pad": "big"});
    assert!(search(&mut c, rare).await.is_empty());
    let plans = plans_of(&pg, from, bm25);
    assert_eq!(plans.len(), 1, "{}", &pg.log()[from..]);
    assert!(gathered(&plans[0]), "not gathered first:\n{}", plans[0]);

    let from = pg.log().len();
    let common =
        json!({"query": "which routine checks ran?", "mode": "text", "pad": "big", "limit": 1});
    assert_eq!(search(&mut c, common).await.len(), 1);
    let plans = plans_of(&pg, from, bm25);
    assert_eq!(plans.len(), 1, "{}", &pg.log()[from..]);
    assert!(!gathered(&plans[0]), "gathered:\n{}", plans[0]);
    h.stop().await;
}

/// A question by a tag on few notes walks that tag's entries newest first
/// (`entry_tags`, kept by a trigger whichever way tags are written) when
/// its words are too common to rank every match: the walk of every entry
/// newest first reads ten rows for each of a tag on a tenth of the notes
/// (at a million: 44,808 buffers against 17,920). A tag on most notes is
/// not walked so. The rows follow an edit of a note's tags and its
/// deletion, and `stats` counts the tags from them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_question_by_a_rare_tag_walks_the_tags_entries() {
    let pg = Postgres::start();
    let (url, db) = explained(&pg, &[]);
    let h = Harness::with(move |c| c.database = Some(url)).await;
    let mut c = h.client().await;
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "ops", "content": "the first note"}),
    )
    .await;
    pg.psql(
        &db,
        "INSERT INTO entries (seq, pad, author, kind, content, tags, created_at, updated_at) \
         SELECT i, 'ops', 'agent', 'note', 'routine check ' || i, \
                CASE WHEN i % 50 = 0 THEN '{everywhere,rare}' ELSE '{everywhere}' END::text[], i, i \
         FROM generate_series(2, 4001) i; \
         UPDATE pads SET entries = entries + 4000 WHERE name = 'ops'; ANALYZE entries;",
    );
    let bm25 = "sum(w.idf";
    let walked = |plan: &String| plan.contains("entry_tags");
    let question = |tag: &str| json!({"query": "which routine checks ran?", "mode": "text", "tags": [tag], "limit": 3});

    let from = pg.log().len();
    let hits = search(&mut c, question("rare")).await;
    assert_eq!(
        hits,
        [
            "routine check 4000",
            "routine check 3950",
            "routine check 3900"
        ]
    );
    let plans = plans_of(&pg, from, bm25);
    assert_eq!(plans.len(), 1, "{}", &pg.log()[from..]);
    assert!(
        walked(&plans[0]),
        "the tag's entries not walked:\n{}",
        plans[0]
    );

    let from = pg.log().len();
    assert_eq!(search(&mut c, question("everywhere")).await.len(), 3);
    let plans = plans_of(&pg, from, bm25);
    assert_eq!(plans.len(), 1, "{}", &pg.log()[from..]);
    assert!(
        !walked(&plans[0]),
        "a tag on every note walked:\n{}",
        plans[0]
    );

    // An edit moves the note to its new tag; a deletion takes it away.
    let found = ok(&mut c, "search", question("rare")).await;
    let id = found["hits"][0]["entry"]["id"].clone();
    ok(&mut c, "entry.update", json!({"id": id, "tags": ["moved"]})).await;
    assert_eq!(
        search(&mut c, question("rare")).await,
        [
            "routine check 3950",
            "routine check 3900",
            "routine check 3850"
        ]
    );
    assert_eq!(
        search(&mut c, question("moved")).await,
        ["routine check 4000"]
    );
    ok(&mut c, "entry.delete", json!({"id": id})).await;
    assert!(search(&mut c, question("moved")).await.is_empty());
    let rows = pg.psql(&db, "SELECT count(*) FROM entry_tags WHERE seq = 4000");
    assert_eq!(rows.trim(), "0");
    let stats = ok(&mut c, "stats", json!({})).await;
    assert_eq!(stats["tags"], 2, "{stats}");
    h.stop().await;
}

/// A meaning search filtered by a tag on most notes: whether few enough
/// pass to score them all is read from PostgreSQL's statistics, not
/// counted (counting to the limit read ~20,000 rows for a tag on a tenth
/// of a million notes, 5–9 ms of a 26 ms search); a rare tag is counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_common_tag_is_judged_by_the_statistics_a_rare_one_counted() {
    let pg = Postgres::start();
    let (url, _) = explained(&pg, &[]);
    let engine_url = url.clone();
    let h = Harness::with(move |c| {
        c.database = Some(engine_url);
        let mut s = common::semantic_config(scratchpad::semantic::Precision::Int8);
        s.exact_max = 3;
        c.semantic = Some(s);
    })
    .await;
    let mut c = h.client().await;
    for i in 0..60 {
        let p = json!({"pad": "ops", "content": format!("routine check {i} passed"), "tags": ["flagged"]});
        ok(&mut c, "entry.add", p).await;
    }
    for (content, tags) in [
        ("the payment webhook times out", json!(["flagged"])),
        ("the payment webhook was fixed", json!(["rare"])),
        ("lunch is at noon", json!(["rare"])),
    ] {
        let p = json!({"pad": "ops", "content": content, "tags": tags});
        ok(&mut c, "entry.add", p).await;
    }
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query("ANALYZE entries").execute(&pool).await.unwrap();
    pool.close().await;
    common::embedded_all(&mut c).await;

    for (tag, best, counted) in [
        ("flagged", "the payment webhook times out", false),
        ("rare", "the payment webhook was fixed", true),
    ] {
        let from = pg.log().len();
        let p = json!({"query": "payment webhook problems", "mode": "semantic", "limit": 1, "tags": [tag]});
        assert_eq!(search(&mut c, p).await, [best], "{tag}");
        let counts = plans_of(&pg, from, "SELECT count(*) FROM (SELECT 1 FROM entries e");
        assert_eq!(!counts.is_empty(), counted, "{tag}: {counts:?}");
    }
    h.stop().await;
}

/// The engine's sessions never JIT-compile a statement. At a million notes
/// PostgreSQL estimated a question's word counts (each word an index probe
/// of ~0.03 ms) past `jit_above_cost` and compiled for 35–40 ms each time:
/// a question took 104 ms at p50. Here the database asks every session to
/// compile everything (`jit_above_cost` 0) and `auto_explain` logs each
/// plan the engine runs with its JIT part, if any.
///
/// And they cost a page read out of order as one in memory
/// (`random_page_cost` 1.1, `pg::PLANNER_SETTINGS`): at 4, PostgreSQL
/// read a million notes newest first for a word in a pad (40 ms) rather
/// than the pad's own index (9 ms). `auto_explain` logs the settings each
/// plan was made with.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_engine_never_jit_compiles_and_costs_pages_as_cached() {
    let pg = Postgres::start();
    let (url, db) = explained(
        &pg,
        &[
            "jit = on",
            "jit_above_cost = 0",
            "auto_explain.log_settings = on",
        ],
    );
    // What a session compiles without the engine's setting: the test's
    // premise (this server has a JIT provider).
    let plain = pg.psql(&db, "EXPLAIN (ANALYZE) SELECT count(*) FROM pg_class");
    assert!(
        plain.contains("JIT:"),
        "this PostgreSQL does not JIT-compile: {plain}"
    );
    let before = pg.log().len();

    let h = Harness::with(move |c| c.database = Some(url)).await;
    let mut c = h.client().await;
    for i in 0..20 {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "team", "content": format!("the payment webhook keeps timing out, note {i}")}),
        )
        .await;
    }
    let r = ok(
        &mut c,
        "search",
        json!({"query": "payments timing out", "mode": "text"}),
    )
    .await;
    assert!(!r["hits"].as_array().unwrap().is_empty(), "{r}");
    let log = pg.log()[before..].to_string();
    let plans = log.matches("Query Text:").count();
    assert!(plans > 20, "auto_explain logged {plans} plans:\n{log}");
    assert!(
        !log.contains("JIT:"),
        "a statement of the engine was JIT-compiled:\n{log}"
    );
    let cached = log.matches("random_page_cost = '1.1'").count();
    assert_eq!(
        cached, plans,
        "{plans} plans, {cached} of them costed with random_page_cost 1.1:\n{log}"
    );
    h.stop().await;
}
