//! The statements `store/vectors.rs` runs, held to their plans and counts.

use super::*;
use crate::storage::query::Query;
use crate::store::Durability;

/// How SQLite runs `sql` in `store`, a step a line.
fn plan(store: &Store, sql: &str, args: Vec<Arg>) -> Vec<String> {
    let conn = store.reader().unwrap();
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let steps = stmt
        .query_map(params_from_iter(args), |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    steps
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Normal, None, 8192, 0, true).unwrap();
    (dir, store)
}

fn by_tag() -> EntryFilter {
    EntryFilter {
        tags: vec!["flagged".into(), "urgent".into()],
        author: Some("agent".into()),
        ..Default::default()
    }
}

/// The check of a chunk of the index's walk looks up each of its ids
/// whatever the filter: no list of the filter's entries built per run
/// (a tag filter's `IN (SELECT …)` made a meaning search by tag take
/// 565 ms at 100k), no table read whole.
#[test]
fn the_filter_check_looks_up_each_candidate() {
    let (_dir, store) = store();
    for filter in [
        by_tag(),
        EntryFilter {
            pad: Some("ops".into()),
            ..by_tag()
        },
    ] {
        let mut args = vec![Arg::Text("[1, 2]".into())];
        let sql = passing_sql(&filter, &mut args);
        let plan = plan(&store, &sql, args);
        assert!(
            plan.iter().all(|step| !step.contains("LIST SUBQUERY")
                && (!step.starts_with("SCAN") || step.starts_with("SCAN j"))),
            "the chunk's check builds a list or scans:\n{}",
            plan.join("\n")
        );
    }
}

/// A search by tag counts the tag's entries up to its cap by walking
/// the tag's own list, never by listing every entry with the tag first
/// (18 ms for a tag on a tenth of a million notes).
#[test]
fn a_count_by_tag_walks_the_tags_list() {
    let (_dir, store) = store();
    let tags = EntryFilter {
        tags: vec!["flagged".into(), "urgent".into()],
        ..Default::default()
    };
    for filter in [
        tags.clone(),
        EntryFilter {
            pad: Some("ops".into()),
            ..tags
        },
    ] {
        let q = crate::storage::entries::counting(
            crate::storage::query::Dialect::Sqlite,
            &filter,
            2001,
        );
        let plan = plan(&store, &q.sql, q.args().to_vec());
        assert!(
            plan.iter().all(|step| !step.contains("LIST SUBQUERY")
                && (!step.starts_with("SCAN") || step == "SCAN m")),
            "the count by tag lists the tag's entries first:\n{}",
            plan.join("\n")
        );
    }
}

/// The count by tag counts what the filter's list form passes, with
/// several tags, a pad, a token's pads and an archived pad.
#[test]
fn a_count_by_tag_counts_what_the_filter_passes() {
    let (dir, store) = store();
    {
        let conn = rusqlite::Connection::open(dir.path().join("pad.db")).unwrap();
        for i in 0..60i64 {
            let tags = match i % 4 {
                0 => r#"["a"]"#,
                1 => r#"["a","b"]"#,
                2 => r#"["b"]"#,
                _ => "[]",
            };
            conn.execute(
                "INSERT INTO entries (seq, pad, author, kind, content, tags, created_at, updated_at) \
                 VALUES (?1, ?2, 'agent', 'note', 'n', ?3, 1, 1)",
                rusqlite::params![i + 1, ["ops", "dev", "old"][i as usize % 3], tags],
            )
            .unwrap();
        }
        // What the journal writes beside an entry: its tags, its pad.
        conn.execute_batch(
            "INSERT OR IGNORE INTO entry_tags (seq, tag) \
               SELECT e.seq, j.value FROM entries e, json_each(e.tags) j; \
             INSERT OR IGNORE INTO pads (name, created_at, last_write_at, entries) \
               SELECT pad, 1, 1, count(*) FROM entries GROUP BY pad; \
             UPDATE pads SET archived_at = 1 WHERE name = 'old';",
        )
        .unwrap();
    }
    let tagged = |tags: &[&str]| EntryFilter {
        tags: tags.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    };
    for filter in [
        tagged(&["a"]),
        tagged(&["a", "b"]),
        tagged(&["b", "a"]),
        EntryFilter {
            pad: Some("ops".into()),
            ..tagged(&["b"])
        },
        EntryFilter {
            scope: Some(vec!["dev".into()]),
            ..tagged(&["a"])
        },
    ] {
        let mut listed = Query::new(
            crate::storage::query::Dialect::Sqlite,
            "SELECT count(*) FROM entries e JOIN pads p ON p.name = e.pad WHERE 1",
        );
        listed.filter(&filter);
        let count = |q: &Query| -> i64 {
            let conn = store.reader().unwrap();
            conn.query_row(&q.sql, params_from_iter(q.args().to_vec()), |r| r.get(0))
                .unwrap()
        };
        let expected = count(&listed);
        assert!(expected > 2, "{filter:?}: {expected}");
        for cap in [1000, 2] {
            let counted = crate::storage::entries::counting(
                crate::storage::query::Dialect::Sqlite,
                &filter,
                cap,
            );
            assert_eq!(
                count(&counted),
                expected.min(cap as i64),
                "{filter:?} capped at {cap}"
            );
        }
    }
}

/// An exact search reads the vectors of the entries that pass its
/// filter, found first, never every vector in the store.
#[test]
fn an_exact_search_reads_only_the_passing_entries_vectors() {
    let (_dir, store) = store();
    let pad = EntryFilter {
        pad: Some("ops".into()),
        ..Default::default()
    };
    for (filter, entries_scanned) in [
        (by_tag(), false),
        (pad, false),
        (EntryFilter::default(), true),
    ] {
        let mut args = Vec::new();
        let sql = format!("SELECT v.seq, v.vec{}", filtered(&filter, &mut args));
        let plan = plan(&store, &sql, args);
        let shown = plan.join("\n");
        assert!(
            !plan.iter().any(|s| s.starts_with("SCAN v")),
            "every vector read:\n{shown}"
        );
        assert!(
            plan.iter()
                .any(|s| s.starts_with("SEARCH v USING INTEGER PRIMARY KEY")),
            "{shown}"
        );
        if !entries_scanned {
            assert!(
                !plan.iter().any(|s| s.starts_with("SCAN e")),
                "every entry read:\n{shown}"
            );
        }
    }
}
