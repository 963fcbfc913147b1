//! Access tokens on SQLite (`pg/tokens.rs` on PostgreSQL): the statements
//! written once (`storage::tokens`), on the writer and a reader. A name, the
//! pads they cover, and a hash of the secret (the secret itself is shown
//! once, at creation, and never kept).

use rusqlite::params;

use super::Sqlite;
use crate::storage::tokens::{read_token, stored_lists, taken, ALL, INSERT, REVOKE};
use crate::storage::Fut;
use crate::storage::TokenRow;
use crate::storage::Tokens;

impl Tokens for Sqlite {
    fn add_token<'a>(&'a self, t: &'a TokenRow) -> Fut<'a, ()> {
        self.inline(move |s| {
            let (pads, agents) = stored_lists(t);
            let added = s.writer().conn.execute(
                INSERT,
                params![
                    t.name,
                    t.hash,
                    pads,
                    t.read_only,
                    t.created_at,
                    agents,
                    t.others
                ],
            )?;
            if added == 0 {
                return Err(taken(&t.name));
            }
            Ok(())
        })
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        self.inline(|s| {
            Ok(s.reader()?
                .prepare_cached(ALL)?
                .query_map([], |r| read_token(r))?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Removes a token; whether there was one by that name.
    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        self.inline(move |s| Ok(s.writer().conn.execute(REVOKE, [name])? > 0))
    }
}
