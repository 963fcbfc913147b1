//! Schema migrations: `migrations/<timestamp>_<name>.sql`, embedded at build
//! time and applied in order when the database opens, each in its own
//! transaction. A checksum per applied migration catches a landed migration
//! that was edited (never do that: add a new one), and a database that a newer
//! Scratchpad already migrated is refused rather than misread.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

pub fn run(conn: &mut Connection, now: i64) -> Result<()> {
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
}
