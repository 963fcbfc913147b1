//! Access tokens on PostgreSQL (`store/tokens.rs` on SQLite): every change
//! tells the other engines to reload their grants.

use super::{bounded, PgStore};
use crate::error::Result;
use crate::storage::tokens::{read_token, stored_lists, taken, ALL, INSERT, REVOKE};
use crate::storage::Fut;
use crate::storage::TokenRow;
use crate::storage::Tokens;

impl PgStore {
    /// Tells every engine to reload its grants (`relay.rs`) once the
    /// change on `conn` commits.
    async fn tokens_changed(conn: &mut sqlx::PgConnection) -> Result<()> {
        sqlx::query("SELECT pg_notify('pad_tokens', '')")
            .execute(conn)
            .await?;
        Ok(())
    }
}

impl Tokens for PgStore {
    fn add_token<'a>(&'a self, t: &'a TokenRow) -> Fut<'a, ()> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let (pads, agents) = stored_lists(t);
            let added = sqlx::query(INSERT)
                .bind(&t.name)
                .bind(&t.hash)
                .bind(pads)
                .bind(t.read_only)
                .bind(t.created_at)
                .bind(agents)
                .bind(t.others)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if added == 0 {
                return Err(taken(&t.name));
            }
            PgStore::tokens_changed(&mut tx).await?;
            tx.commit().await
        })
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        bounded(async move {
            sqlx::query(ALL)
                .fetch_all(self.pool())
                .await?
                .iter()
                .map(read_token)
                .collect()
        })
    }

    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let gone = sqlx::query(REVOKE)
                .bind(name)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                > 0;
            if gone {
                PgStore::tokens_changed(&mut tx).await?;
            }
            tx.commit().await?;
            Ok(gone)
        })
    }
}
