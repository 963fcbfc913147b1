//! Deliveries to A2A agents on SQLite (`pg/deliveries.rs` on PostgreSQL):
//! the statements written once (`storage::deliveries`), on the writer and a
//! reader; rows are written with their entry, in `entries::insert_rows`.

use rusqlite::params;

use super::in_transaction;
use super::Sqlite;
use crate::id;
use crate::storage::deliveries::{self as stmt, read_delivery, COLUMNS, KEEP_FINISHED};
use crate::storage::dialect::Dialect;
use crate::storage::Deliveries;
use crate::storage::DeliveryRow;
use crate::storage::Fut;

impl Deliveries for Sqlite {
    /// The agents' names bound as JSON text.
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| {
            let agents = serde_json::to_string(agents).expect("names serialize");
            Ok(s.reader()?
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM deliveries WHERE taken = 0 \
                     AND agent IN (SELECT value FROM json_each(?)) ORDER BY entry"
                ))?
                .query_map([agents], |r| read_delivery(r))?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        self.inline(|s| {
            Ok(s.reader()?
                .prepare_cached(stmt::CONVERSATIONS)?
                .query_map([KEEP_FINISHED], |r| read_delivery(r))?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn save_conversation<'a>(
        &'a self,
        c: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        self.inline(move |s| {
            let (Some(entry), Some(root)) = (id::decode(&c.entry), id::decode(&c.root)) else {
                return Ok(());
            };
            let mut w = s.writer();
            in_transaction(&mut w, |w| {
                w.conn
                    .prepare_cached(stmt::SAVE)?
                    .execute(params![entry, c.agent, root, c.pad, c.state, c.live, now])?;
                if let Some(t) = taken.and_then(id::decode).filter(|t| *t != entry) {
                    w.conn
                        .prepare_cached(stmt::DROP_ONE)?
                        .execute(params![root, c.agent, t])?;
                }
                if !c.live {
                    w.conn
                        .prepare_cached(stmt::TRIM_FINISHED)?
                        .execute([KEEP_FINISHED])?;
                }
                Ok(())
            })
        })
    }

    fn drop_delivery<'a>(&'a self, d: &'a DeliveryRow) -> Fut<'a, ()> {
        self.inline(move |s| {
            let (Some(entry), Some(root)) = (id::decode(&d.entry), id::decode(&d.root)) else {
                return Ok(());
            };
            s.writer()
                .conn
                .execute(stmt::DROP_ONE, params![root, d.agent, entry])?;
            Ok(())
        })
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        self.inline(move |s| {
            let mut w = s.writer();
            in_transaction(&mut w, |w| {
                let n = w.conn.execute(stmt::DROP_LIVE, [agent])?;
                w.conn
                    .execute(&stmt::drop_waiting(Dialect::Sqlite), [agent])?;
                Ok(n)
            })
        })
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| {
            let entry = entry.map(|e| id::decode(e).unwrap_or(-1));
            Ok(s.reader()?
                .prepare_cached(stmt::OF)?
                .query_map(params![pad, entry], |r| read_delivery(r))?
                .collect::<rusqlite::Result<_>>()?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Durability, Store};

    /// SQLite runs the shared statements on the deliveries' indexes: a
    /// bare flag (`NOT live`, `NOT taken`) is read as no equality, and
    /// the planner scanned the table for it.
    #[test]
    fn the_shared_statements_use_sqlites_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal, None, 8192, 0, true).unwrap();
        let conn = store.reader().unwrap();
        let plan = |sql: &str, bound: &dyn rusqlite::ToSql| -> String {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let steps: Vec<String> = stmt
                .query_map([bound], |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            steps.join("; ")
        };
        for sql in [stmt::CONVERSATIONS, stmt::TRIM_FINISHED] {
            let p = plan(sql, &KEEP_FINISHED);
            assert!(
                p.contains("USING INDEX deliveries_conversations (live=?)"),
                "{sql}: {p}"
            );
        }
        let waiting = stmt::drop_waiting(Dialect::Sqlite);
        let p = plan(&waiting, &"agent");
        assert!(p.contains("USING INDEX deliveries_waiting"), "{p}");
    }
}
