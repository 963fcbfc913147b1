//! Deliveries to A2A agents on SQLite (`pg/deliveries.rs` on PostgreSQL):
//! the sequences written once (`storage::deliveries`), on the writer and a
//! reader; rows are written with their entry, in `entries::insert_rows`.

use super::in_transaction;
use super::sqlite::ready;
use super::Sqlite;
use crate::storage::deliveries;
use crate::storage::Deliveries;
use crate::storage::DeliveryRow;
use crate::storage::Fut;

impl Deliveries for Sqlite {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| ready(deliveries::waiting(&mut *s.reader()?, agents)))
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        self.inline(|s| ready(deliveries::conversations(&mut *s.reader()?)))
    }

    fn save_conversation<'a>(
        &'a self,
        c: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        self.inline(move |s| {
            in_transaction(&mut s.writer(), |w| {
                ready(deliveries::save(&mut w.conn, c, taken, now))
            })
        })
    }

    fn drop_delivery<'a>(&'a self, d: &'a DeliveryRow) -> Fut<'a, ()> {
        self.inline(move |s| ready(deliveries::drop_one(&mut s.writer().conn, d)))
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        self.inline(move |s| {
            in_transaction(&mut s.writer(), |w| {
                ready(deliveries::drop_agent(&mut w.conn, agent))
            })
        })
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| ready(deliveries::of(&mut *s.reader()?, pad, entry)))
    }
}

#[cfg(test)]
mod tests {
    use crate::storage::deliveries::{self as stmt, KEEP_FINISHED};
    use crate::storage::dialect::Dialect;
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
