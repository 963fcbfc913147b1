//! Schema migrations: `migrations/<timestamp>_<name>.sql`, embedded at build
//! time and applied in order when the database opens, each in its own
//! transaction. A checksum per applied migration catches a landed migration
//! that was edited (never do that: add a new one), and a database that a newer
//! Scratchpad already migrated is refused rather than misread.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

pub fn run(conn: &mut Connection, now: i64) -> Result<()> {
    // Migrations that turn ids written as text into rows call this.
    conn.create_scalar_function(
        "pad_id_seq",
        1,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(ctx.get_raw(0).as_str().ok().and_then(crate::id::decode)),
    )?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version    INTEGER PRIMARY KEY,
             name       TEXT NOT NULL,
             checksum   TEXT NOT NULL,
             applied_at INTEGER NOT NULL
         ) STRICT;",
    )?;
    let newest_known = MIGRATIONS.last().map(|m| m.0).unwrap_or(0);
    let newest_applied: Option<i64> =
        conn.query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })?;
    if let Some(v) = newest_applied.filter(|v| *v > newest_known) {
        return Err(Error::Internal(format!(
            "the database has schema version {v}, newer than this Scratchpad knows ({newest_known}); run a newer `pad`."
        )));
    }
    for (version, name, sql) in MIGRATIONS {
        let sum = checksum(sql);
        let applied: Option<String> = conn
            .query_row(
                "SELECT checksum FROM schema_migrations WHERE version = ?",
                [version],
                |r| r.get(0),
            )
            .optional()?;
        match applied {
            Some(s) if s == sum => continue,
            Some(_) => {
                return Err(Error::Internal(format!(
                    "migration {version}_{name} changed after it was applied; restore it and add a new migration instead."
                )))
            }
            None => {
                let tx = conn.transaction()?;
                tx.execute_batch(sql)?;
                tx.execute(
                    "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                    params![version, name, sum, now],
                )?;
                tx.commit()?;
                tracing::info!("applied migration {version}_{name}");
            }
        }
    }
    Ok(())
}

/// FNV-1a: enough to notice an edited file (this is not about security).
fn checksum(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_apply_once_and_refuse_edits() {
        let mut conn = Connection::open_in_memory().unwrap();
        run(&mut conn, 1).unwrap();
        run(&mut conn, 2).unwrap(); // idempotent
        let n: i64 = conn
            .query_row("SELECT count(*) FROM schema_migrations", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n as usize, MIGRATIONS.len());
        conn.execute("UPDATE schema_migrations SET checksum = 'x'", [])
            .unwrap();
        assert!(run(&mut conn, 3)
            .unwrap_err()
            .to_string()
            .contains("changed after"));
    }

    /// Replies written before `reply_to` existed (`meta.reply_to` = the
    /// parent's id) become threads; a `meta.reply_to` naming nothing stays.
    #[test]
    fn meta_reply_to_moves_to_the_reply_to_field() {
        let at = MIGRATIONS.iter().position(|m| m.1 == "threads").unwrap();
        let earlier = &MIGRATIONS[..at];
        let mut conn = Connection::open_in_memory().unwrap();
        let parent = crate::id::first_at(1_790_000_000_000);
        let ids = [parent, parent + 1, parent + 2, parent + 3];
        let db = |conn: &mut Connection| {
            run(conn, 0).unwrap();
        };
        // The schema as it was: every migration before threads.
        conn.execute_batch("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;").unwrap();
        for (version, name, sql) in earlier {
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?, 0)",
                params![version, name, checksum(sql)],
            )
            .unwrap();
        }
        let insert = |conn: &Connection, seq: i64, author: &str, meta: Option<String>| {
            conn.execute(
                "INSERT INTO entries (seq, pad, author, kind, content, meta, created_at, updated_at) \
                 VALUES (?, 'p', ?, 'question', 'x', ?, 0, 0)",
                params![seq, author, meta],
            )
            .unwrap();
        };
        let parent_id = crate::id::encode(parent);
        insert(&conn, ids[0], "agent", None);
        insert(
            &conn,
            ids[1],
            "agent",
            Some(format!(r#"{{"reply_to":"{parent_id}"}}"#)),
        );
        insert(
            &conn,
            ids[2],
            "user",
            Some(format!(
                r#"{{"reply_to":"{}","k":1}}"#,
                parent_id.to_uppercase()
            )),
        );
        insert(
            &conn,
            ids[3],
            "user",
            Some(r#"{"reply_to":"nonsense"}"#.into()),
        );
        db(&mut conn);
        let row = |seq: i64| -> (Option<i64>, Option<String>, i64, Option<i64>) {
            conn.query_row(
                "SELECT reply_to, meta, replies, answer FROM entries WHERE seq = ?",
                [seq],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap()
        };
        assert_eq!(
            row(ids[0]),
            (None, None, 2, Some(ids[2])),
            "the first reply by someone else answers"
        );
        assert_eq!(row(ids[1]), (Some(parent), None, 0, None));
        assert_eq!(
            row(ids[2]),
            (Some(parent), Some(r#"{"k":1}"#.into()), 0, None)
        );
        assert_eq!(
            row(ids[3]),
            (None, Some(r#"{"reply_to":"nonsense"}"#.into()), 0, None)
        );
    }
}
