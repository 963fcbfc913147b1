//! Access tokens as both stores keep them, written once: the statements
//! (the same SQL on both; the lists of pads and agents are JSON text in
//! either), reading a row back, and the answer to a name already taken.
//! Each store runs them (`store/tokens.rs`, `pg/tokens.rs`); PostgreSQL
//! also tells the other engines of a change.

use super::query::Columns;
use super::TokenRow;
use crate::error::Error;

/// Every token, by name; read with `read_token`.
pub const ALL: &str =
    "SELECT name, hash, pads, read_only, created_at, agents, others FROM tokens ORDER BY name";

/// Binds the values `insert_args` gives; adds nothing when the name is
/// taken (`taken`).
pub const INSERT: &str =
    "INSERT INTO tokens (name, hash, pads, read_only, created_at, agents, others) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING";

/// Binds the name.
pub const REVOKE: &str = "DELETE FROM tokens WHERE name = $1";

/// A token's lists as stored: its pads and its agents as JSON text.
pub fn stored_lists(t: &TokenRow) -> (String, String) {
    (
        serde_json::to_string(&t.pads).expect("strings serialize"),
        serde_json::to_string(&t.agents).expect("strings serialize"),
    )
}

/// Reads a row of `ALL`.
pub fn read_token<R: Columns>(row: &R) -> Result<TokenRow, R::Error> {
    Ok(TokenRow {
        name: row.text(0)?,
        hash: row.text(1)?,
        pads: serde_json::from_str(&row.text(2)?).unwrap_or_default(),
        read_only: row.flag(3)?,
        created_at: row.int(4)?,
        agents: serde_json::from_str(&row.text(5)?).unwrap_or_default(),
        others: row.flag(6)?,
    })
}

/// A token's name already taken.
pub fn taken(name: &str) -> Error {
    Error::Conflict {
        message: format!(
            "a token named '{name}' exists; revoke it first (token.revoke) or pick another name."
        ),
        expected: None,
        actual: None,
    }
}
