//! Access tokens on PostgreSQL (`store/tokens.rs` on SQLite): every change
//! tells the other engines to reload their grants.

use super::{bounded, PgStore};
use crate::error::{Error, Result};
use crate::storage::Fut;
use crate::storage::TokenRow;
use crate::storage::Tokens;
use sqlx::Row;

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
            let added = sqlx::query(
                "INSERT INTO tokens (name, hash, pads, read_only, created_at, agents, others) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(&t.name)
            .bind(&t.hash)
            .bind(serde_json::to_string(&t.pads).expect("strings serialize"))
            .bind(t.read_only)
            .bind(t.created_at)
            .bind(serde_json::to_string(&t.agents).expect("strings serialize"))
            .bind(t.others)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if added == 0 {
                return Err(Error::Conflict {
                    message: format!(
                        "a token named '{}' exists; revoke it first (token.revoke) or pick another name.",
                        t.name
                    ),
                    expected: None,
                    actual: None,
                });
            }
            PgStore::tokens_changed(&mut tx).await?;
            tx.commit().await
        })
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        bounded(async move {
            let rows = sqlx::query(
                "SELECT name, hash, pads, read_only, created_at, agents, others FROM tokens ORDER BY name",
            )
            .fetch_all(self.pool())
            .await?;
            rows.iter()
                .map(|r| {
                    let pads: String = r.try_get(2)?;
                    Ok(TokenRow {
                        name: r.try_get(0)?,
                        hash: r.try_get(1)?,
                        pads: serde_json::from_str(&pads).unwrap_or_default(),
                        read_only: r.try_get(3)?,
                        created_at: r.try_get(4)?,
                        agents: serde_json::from_str(&r.try_get::<String, _>(5)?)
                            .unwrap_or_default(),
                        others: r.try_get(6)?,
                    })
                })
                .collect()
        })
    }

    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        bounded(async move {
            let mut tx = self.begin_write().await?;
            let gone = sqlx::query("DELETE FROM tokens WHERE name = $1")
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
