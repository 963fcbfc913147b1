//! `pad_bm25(entries_words, n, df, …)`: FTS5's `bm25()` told how many
//! entries hold each word instead of counting them itself, and (`n` > 0)
//! how many entries there are — a scoped caller's, not the index's.
//!
//! Before it scores its first row, `bm25()` counts the entries holding each
//! phrase of the query by walking every posting of it across the whole
//! index. Inside a pad filter that walk is most of a question's cost: a
//! question in a pad of 1,000 at 100k entries ranks a few dozen matches but
//! walks ~55,000 postings (docs/benchmarks.md). The ranked tier has the
//! counts it weighs by already (`word_counts`: at most a filtered pad's
//! size, as on PostgreSQL and in the explanation), so it passes them, one
//! per `content` phrase in the query's order. The rest is `bm25()` as FTS5
//! computes it: k1 1.2,
//! b 0.75, the row's length and the mean length over every column, the
//! idf of `terms::idf` over the entries indexed; only matches in `content`
//! count, and phrases past the counts given (the filter's `meta` terms)
//! weigh nothing. Higher is better (`bm25()` is negated).

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;
use rusqlite::Connection;

use crate::terms;

/// Makes `pad_bm25` available to FTS5 queries on `conn`.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: FTS5 hands out its API through a pointer bound to `SELECT
    // fts5(?1)` (sqlite.org/fts5.html, "Extending FTS5"); the statement is
    // finalized before return, and the API lives as long as the connection.
    let failed = |rc, why: Option<&str>| {
        rusqlite::Error::SqliteFailure(ffi::Error::new(rc), why.map(str::to_string))
    };
    unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(rc, None));
        }
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        let create = match api.as_ref() {
            Some(a) if a.iVersion >= 2 => a.xCreateFunction,
            _ => None,
        };
        let Some(create) = create else {
            return Err(failed(ffi::SQLITE_ERROR, Some("this SQLite has no FTS5")));
        };
        let rc = create(
            api,
            c"pad_bm25".as_ptr(),
            ptr::null_mut(),
            Some(pad_bm25),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(rc, None));
        }
    }
    Ok(())
}

unsafe extern "C" fn pad_bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API, the row's context and `n_val`
    // argument values, all valid for the call.
    let result = unsafe {
        let args = std::slice::from_raw_parts(vals, n_val.max(0) as usize);
        match args.split_first() {
            Some((n, counts)) => score(&*api, fts, ffi::sqlite3_value_int64(*n), counts),
            None => Err(ffi::SQLITE_MISUSE),
        }
    };
    match result {
        // SAFETY: `ctx` is this call's.
        Ok(s) => unsafe { ffi::sqlite3_result_double(ctx, s) },
        Err(rc) => unsafe { ffi::sqlite3_result_error_code(ctx, rc) },
    }
}

/// The current row's score for phrases held by `counts` entries each (the
/// call's arguments, read as they are needed: no allocation per row) among
/// `told_rows` entries (0: the entries indexed).
///
/// # Safety
/// `api`, `fts` and `counts` as FTS5 passes them to an auxiliary function.
unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    told_rows: i64,
    counts: &[*mut ffi::sqlite3_value],
) -> Result<f64, c_int> {
    let check = |rc: c_int| {
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(rc)
        }
    };
    let missing = ffi::SQLITE_MISUSE;
    // SAFETY: the caller's; every function pointer is FTS5's own (version ≥ 2).
    unsafe {
        let (mut rows, mut tokens, mut length) = (0i64, 0i64, 0 as c_int);
        check((api.xRowCount.ok_or(missing)?)(fts, &mut rows))?;
        check((api.xColumnTotalSize.ok_or(missing)?)(fts, -1, &mut tokens))?;
        check((api.xColumnSize.ok_or(missing)?)(fts, -1, &mut length))?;
        let phrases = (api.xPhraseCount.ok_or(missing)?)(fts).max(0) as usize;
        let (first, next) = (
            api.xPhraseFirst.ok_or(missing)?,
            api.xPhraseNext.ok_or(missing)?,
        );
        let avgdl = (tokens as f64 / rows.max(1) as f64).max(1.0);
        let n = if told_rows > 0 { told_rows } else { rows } as f64;
        let norm = terms::K1 * (1.0 - terms::B + terms::B * length as f64 / avgdl);
        let mut total = 0.0;
        for (phrase, &count) in counts.iter().enumerate().take(phrases) {
            let mut iter = ffi::Fts5PhraseIter {
                a: ptr::null(),
                b: ptr::null(),
            };
            let (mut col, mut off) = (0 as c_int, 0 as c_int);
            check(first(fts, phrase as c_int, &mut iter, &mut col, &mut off))?;
            let mut tf = 0.0;
            while col >= 0 {
                if col == 0 {
                    tf += 1.0;
                }
                next(fts, &mut iter, &mut col, &mut off);
            }
            if tf > 0.0 {
                let df = ffi::sqlite3_value_double(count);
                total += terms::idf(n, df) * tf * (terms::K1 + 1.0) / (tf + norm);
            }
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Told the counts FTS5 would find itself, `pad_bm25` scores every row
    /// as `bm25()` does, with a filter's `meta` term in the query or not;
    /// told other counts, it weighs by them.
    #[test]
    fn pad_bm25_is_bm25_told_the_counts() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE w USING fts5(content, meta, content = '', contentless_delete = 1);
             CREATE VIRTUAL TABLE v USING fts5vocab(w, col);",
        )
        .unwrap();
        let notes = [
            ("the staging database moved to the new cluster", "pa"),
            ("staging staging deploy failed", "pb"),
            ("database dashboards again, nothing to do", "pa"),
            (
                "a long note about the cluster and the database and the staging plan for friday",
                "pa",
            ),
            ("unrelated words only", "pb"),
        ];
        for (i, (content, meta)) in notes.iter().enumerate() {
            conn.execute(
                "INSERT INTO w (rowid, content, meta) VALUES (?, ?, ?)",
                rusqlite::params![i as i64 + 1, content, meta],
            )
            .unwrap();
        }
        let df = |t: &str| -> i64 {
            conn.query_row(
                "SELECT doc FROM v WHERE term = ? AND col = 'content'",
                [t],
                |r| r.get(0),
            )
            .unwrap()
        };
        let (staging, database, cluster) = (df("staging"), df("database"), df("cluster"));
        for q in [
            "content : (staging OR database OR cluster)",
            "content : (staging OR database OR cluster) AND meta : pa",
        ] {
            let rows = |sql: &str, counts: [i64; 3]| -> Vec<(i64, f64)> {
                conn.prepare(sql)
                    .unwrap()
                    .query_map(rusqlite::params![counts[0], counts[1], counts[2], q], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            };
            let theirs = rows(
                "SELECT rowid, -bm25(w, 1.0, 0.0) + 0 * (? + ? + ?) FROM w WHERE w MATCH ? ORDER BY rowid",
                [0, 0, 0],
            );
            let ours = rows(
                "SELECT rowid, pad_bm25(w, 0, ?, ?, ?) FROM w WHERE w MATCH ? ORDER BY rowid",
                [staging, database, cluster],
            );
            assert!(!theirs.is_empty() && theirs.len() == ours.len(), "{q}");
            for ((a, x), (b, y)) in theirs.iter().zip(&ours) {
                assert_eq!(a, b);
                assert!((x - y).abs() < 1e-9, "{q}: row {a}: bm25 {x}, pad_bm25 {y}");
            }
            // "staging" said to be in every note weighs (almost) nothing:
            // the note holding only it (row 2, pad "pb") scores nothing.
            let told = rows(
                "SELECT rowid, pad_bm25(w, 0, ?, ?, ?) FROM w WHERE w MATCH ? ORDER BY rowid",
                [notes.len() as i64, database, cluster],
            );
            let staging_only = told.iter().find(|(id, _)| *id == 2);
            match (q.contains("meta"), staging_only) {
                (false, Some((_, s))) => assert!(*s < 1e-5, "{q}: {told:?}"),
                (true, None) => {}
                _ => panic!("{q}: row 2 is in pad pb, matched only unfiltered: {told:?}"),
            }
        }
    }
}
