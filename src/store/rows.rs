//! Rows as rusqlite returns them: the typed reads the shared row reader
//! (`storage::rows`) asks of a row (`pg/rows.rs` on PostgreSQL), and the
//! readers typed for rusqlite's callbacks.

use rusqlite::Row;

use crate::model::{Entry, Pad};
use crate::protocol::Version;
use crate::storage::rows::{self, Columns};
pub use crate::storage::rows::{
    returning_columns, ENTRY_COLUMNS, ENTRY_COLUMN_COUNT, PAD_COLUMNS, REPORT_COLUMNS,
    VERSION_COLUMNS,
};

impl Columns for Row<'_> {
    type Error = rusqlite::Error;
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn opt_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.get(i)
    }
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn opt_real(&self, i: usize) -> rusqlite::Result<Option<f64>> {
        self.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.get(i)
    }
    /// SQLite keeps a list as JSON text; one that does not parse reads as
    /// empty.
    fn texts(&self, i: usize) -> rusqlite::Result<Vec<String>> {
        Ok(self
            .get::<_, Option<String>>(i)?
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default())
    }
}

pub fn read_entry(row: &Row<'_>) -> rusqlite::Result<Entry> {
    rows::read_entry(row)
}

pub fn read_pad(row: &Row<'_>) -> rusqlite::Result<Pad> {
    rows::read_pad(row)
}

/// A history row read with `ENTRY_COLUMNS, VERSION_COLUMNS`: (n, seq, version).
pub fn read_version(row: &Row<'_>) -> rusqlite::Result<(i64, i64, Version)> {
    rows::read_version(row)
}
