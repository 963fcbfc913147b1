//! Rows as sqlx returns them from PostgreSQL: the typed reads the shared
//! row reader (`storage::rows`) asks of a row (`store/rows.rs` on SQLite).

use sqlx::postgres::PgRow;
use sqlx::Row;

use crate::error::Error;
use crate::storage::rows::Columns;

impl Columns for PgRow {
    type Error = Error;
    fn int(&self, i: usize) -> Result<i64, Error> {
        Ok(self.try_get(i)?)
    }
    fn opt_int(&self, i: usize) -> Result<Option<i64>, Error> {
        Ok(self.try_get(i)?)
    }
    fn text(&self, i: usize) -> Result<String, Error> {
        Ok(self.try_get(i)?)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>, Error> {
        Ok(self.try_get(i)?)
    }
    fn opt_real(&self, i: usize) -> Result<Option<f64>, Error> {
        Ok(self.try_get(i)?)
    }
    fn flag(&self, i: usize) -> Result<bool, Error> {
        Ok(self.try_get(i)?)
    }
    /// PostgreSQL keeps a list as `text[]`.
    fn texts(&self, i: usize) -> Result<Vec<String>, Error> {
        Ok(self
            .try_get::<Option<Vec<String>>, _>(i)?
            .unwrap_or_default())
    }
}
