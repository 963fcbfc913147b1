//! Deliveries to A2A agents as SQLite keeps them (the `deliveries` table;
//! rows are written with their entry, in `entries::insert_rows`).

use rusqlite::{params, Row};

use super::Sqlite;
use super::{in_transaction, Store};
use crate::error::Result;
use crate::id;
use crate::storage::rules::KEEP_FINISHED_CONVERSATIONS;
use crate::storage::Deliveries;
use crate::storage::DeliveryRow;
use crate::storage::Fut;

/// Finished conversations kept (`rules::KEEP_FINISHED_CONVERSATIONS`).
const KEEP_FINISHED: i64 = KEEP_FINISHED_CONVERSATIONS as i64;

fn row(r: &Row) -> rusqlite::Result<DeliveryRow> {
    Ok(DeliveryRow {
        entry: id::encode(r.get(0)?),
        agent: r.get(1)?,
        root: id::encode(r.get(2)?),
        pad: r.get(3)?,
        state: r.get(4)?,
        live: r.get(5)?,
    })
}

const COLUMNS: &str = "entry, agent, root, pad, state, live";

impl Store {
    /// Messages for `agents` no conversation has taken yet, oldest first.
    pub fn deliveries_waiting(&self, agents: &[String]) -> Result<Vec<DeliveryRow>> {
        let conn = self.reader()?;
        let agents = serde_json::to_string(agents).expect("names serialize");
        let rows = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM deliveries WHERE taken = 0 \
                 AND agent IN (SELECT value FROM json_each(?)) ORDER BY entry"
            ))?
            .query_map([agents], row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Conversations begun: every live one and the newest finished.
    pub fn conversations(&self) -> Result<Vec<DeliveryRow>> {
        let conn = self.reader()?;
        let rows = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM deliveries WHERE entry = root AND state IS NOT NULL \
                 AND (live = 1 OR entry IN (SELECT entry FROM deliveries WHERE entry = root \
                   AND live = 0 ORDER BY updated_at DESC LIMIT ?)) ORDER BY entry"
            ))?
            .query_map([KEEP_FINISHED], row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Stores a conversation's state in its root row; `taken`: the message
    /// it took in meanwhile, no longer waiting.
    pub fn save_conversation(&self, c: &DeliveryRow, taken: Option<&str>, now: i64) -> Result<()> {
        let (Some(entry), Some(root)) = (id::decode(&c.entry), id::decode(&c.root)) else {
            return Ok(());
        };
        let mut w = self.writer();
        in_transaction(&mut w, |w| {
            w.conn
                .prepare_cached(
                    "INSERT INTO deliveries (entry, agent, root, pad, state, taken, live, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7) ON CONFLICT (root, agent, entry) DO UPDATE SET \
                     state = excluded.state, taken = 1, live = excluded.live, \
                     updated_at = excluded.updated_at",
                )?
                .execute(params![entry, c.agent, root, c.pad, c.state, c.live, now])?;
            if let Some(t) = taken.and_then(id::decode).filter(|t| *t != entry) {
                w.conn
                    .prepare_cached(
                        "DELETE FROM deliveries WHERE root = ? AND agent = ? AND entry = ?",
                    )?
                    .execute(params![root, c.agent, t])?;
            }
            if !c.live {
                w.conn
                    .prepare_cached(
                        "DELETE FROM deliveries WHERE entry = root AND live = 0 AND entry NOT IN \
                         (SELECT entry FROM deliveries WHERE entry = root AND live = 0 \
                          ORDER BY updated_at DESC LIMIT ?)",
                    )?
                    .execute([KEEP_FINISHED])?;
            }
            Ok(())
        })
    }

    /// Forgets a waiting message (its entry is gone, or its agent).
    pub fn drop_delivery(&self, d: &DeliveryRow) -> Result<()> {
        let (Some(entry), Some(root)) = (id::decode(&d.entry), id::decode(&d.root)) else {
            return Ok(());
        };
        self.writer().conn.execute(
            "DELETE FROM deliveries WHERE root = ? AND agent = ? AND entry = ?",
            params![root, d.agent, entry],
        )?;
        Ok(())
    }

    /// Forgets what `agent` has not finished; how many conversations.
    pub fn drop_agent_deliveries(&self, agent: &str) -> Result<usize> {
        let mut w = self.writer();
        in_transaction(&mut w, |w| {
            let n = w.conn.execute(
                "DELETE FROM deliveries WHERE agent = ? AND entry = root AND live = 1",
                [agent],
            )?;
            w.conn.execute(
                "DELETE FROM deliveries WHERE agent = ? AND taken = 0",
                [agent],
            )?;
            Ok(n)
        })
    }

    /// The conversations of a pad, or of one note, as stored.
    pub fn deliveries(&self, pad: Option<&str>, entry: Option<&str>) -> Result<Vec<DeliveryRow>> {
        let conn = self.reader()?;
        let entry = entry.map(|e| id::decode(e).unwrap_or(-1));
        let rows = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM deliveries WHERE entry = root \
                 AND (?1 IS NULL OR pad = ?1) AND (?2 IS NULL OR entry = ?2) ORDER BY entry"
            ))?
            .query_map(params![pad, entry], row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}

impl Deliveries for Sqlite {
    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| s.deliveries_waiting(agents))
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        self.inline(|s| s.conversations())
    }

    fn save_conversation<'a>(
        &'a self,
        row: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        self.inline(move |s| s.save_conversation(row, taken, now))
    }

    fn drop_delivery<'a>(&'a self, row: &'a DeliveryRow) -> Fut<'a, ()> {
        self.inline(move |s| s.drop_delivery(row))
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        self.inline(move |s| s.drop_agent_deliveries(agent))
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| s.deliveries(pad, entry))
    }
}
