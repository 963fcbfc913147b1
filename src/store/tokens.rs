//! Access tokens as stored: a name, the pads they cover, and a hash of the
//! secret (the secret itself is shown once, at creation, and never kept).

use rusqlite::{params, OptionalExtension};

use super::Sqlite;
use super::Store;
use crate::error::{Error, Result};
use crate::storage::Fut;
use crate::storage::TokenRow;
use crate::storage::Tokens;

impl Store {
    pub fn tokens(&self) -> Result<Vec<TokenRow>> {
        let conn = self.reader()?;
        let rows = conn
            .prepare_cached(
                "SELECT name, hash, pads, read_only, created_at, agents, others FROM tokens ORDER BY name",
            )?
            .query_map([], |r| {
                let pads: String = r.get(2)?;
                Ok(TokenRow {
                    name: r.get(0)?,
                    hash: r.get(1)?,
                    pads: serde_json::from_str(&pads).unwrap_or_default(),
                    read_only: r.get(3)?,
                    created_at: r.get(4)?,
                    agents: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default(),
                    others: r.get(6)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    pub fn add_token(&self, t: &TokenRow) -> Result<()> {
        let w = self.writer();
        let taken: Option<i64> = w
            .conn
            .query_row("SELECT 1 FROM tokens WHERE name = ?", [&t.name], |r| {
                r.get(0)
            })
            .optional()?;
        if taken.is_some() {
            return Err(Error::Conflict {
                message: format!(
                    "a token named '{}' exists; revoke it first (token.revoke) or pick another name.",
                    t.name
                ),
                expected: None,
                actual: None,
            });
        }
        w.conn.execute(
            "INSERT INTO tokens (name, hash, pads, read_only, created_at, agents, others) VALUES (?, ?, ?, ?, ?, ?, ?)",
            params![
                t.name,
                t.hash,
                serde_json::to_string(&t.pads).expect("strings serialize"),
                t.read_only,
                t.created_at,
                serde_json::to_string(&t.agents).expect("strings serialize"),
                t.others,
            ],
        )?;
        Ok(())
    }

    /// Removes a token; returns whether there was one by that name.
    pub fn revoke_token(&self, name: &str) -> Result<bool> {
        let w = self.writer();
        Ok(w.conn
            .execute("DELETE FROM tokens WHERE name = ?", [name])?
            > 0)
    }
}

impl Tokens for Sqlite {
    fn add_token<'a>(&'a self, token: &'a TokenRow) -> Fut<'a, ()> {
        self.inline(move |s| s.add_token(token))
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        self.inline(|s| s.tokens())
    }

    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        self.inline(move |s| s.revoke_token(name))
    }
}
