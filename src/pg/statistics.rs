//! PostgreSQL's planner statistics, kept current after large loads.
//!
//! The planner chooses its plans (which index, which join order) from the
//! statistics `ANALYZE` gathers. Autovacuum refreshes them only once a table
//! grew by a tenth and its next round comes (a minute apart by default):
//! right after a bulk load, queries are planned for the table as it was —
//! text search at 10k notes was measured at 14–16 ms p50 where SQLite took
//! 2 ms. So the engine counts the notes it inserts and, on its upkeep tick
//! (`Storage::checkpoint`, every second), analyzes the tables that grow
//! with notes once it inserted a tenth of what the table held (at least
//! `MIN_ROWS`). Each engine of a team counts its own inserts.

use std::sync::atomic::{AtomicU64, Ordering};

use super::PgStore;
use crate::error::Result;

/// Inserts below which a refresh is not worth its cost (an `ANALYZE` of a
/// small table takes milliseconds; the upkeep tick runs it once a second
/// at most).
const MIN_ROWS: u64 = 100;

/// Notes inserted since the last `ANALYZE`, and how many rows it saw.
#[derive(Default)]
pub(crate) struct Loaded {
    since: AtomicU64,
    rows: AtomicU64,
}

impl Loaded {
    pub(crate) fn added(&self, n: u64) {
        self.since.fetch_add(n, Ordering::Relaxed);
    }

    fn due(&self) -> bool {
        self.since.load(Ordering::Relaxed) >= MIN_ROWS.max(self.rows.load(Ordering::Relaxed) / 10)
    }
}

impl PgStore {
    /// Analyzes the tables that grow with notes if this engine inserted
    /// enough since it last did (see the module's text).
    pub(crate) async fn analyze_if_loaded(&self) -> Result<()> {
        if !self.loaded.due() {
            return Ok(());
        }
        self.loaded.since.store(0, Ordering::Relaxed);
        sqlx::query("ANALYZE entries, vectors, embed_queue")
            .execute(self.pool())
            .await?;
        let rows: f32 =
            sqlx::query_scalar("SELECT reltuples FROM pg_class WHERE oid = 'entries'::regclass")
                .fetch_one(self.pool())
                .await?;
        self.loaded
            .rows
            .store(rows.max(0.0) as u64, Ordering::Relaxed);
        Ok(())
    }
}
