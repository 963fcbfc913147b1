//! Access tokens: issuing, listing, revoking, and turning a `hello` token
//! into what a connection may do (see `crate::access`).

use std::sync::Arc;

use super::Engine;
use crate::access::{self, Access, Grant, Grants};
use crate::error::{Error, Result};
use crate::model::fmt_time;
use crate::protocol::*;
use crate::storage::TokenRow;

impl Engine {
    /// What a connection may do after saying `hello` with `token` (or none).
    pub fn authenticate(&self, token: Option<&str>) -> Result<Access> {
        let Some(secret) = token.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(if self.0.config.require_tokens {
                Access::Anonymous
            } else {
                Access::Owner
            });
        };
        let hash = access::hash(secret);
        if hash == self.0.owner_hash {
            return Ok(Access::Owner);
        }
        match self.grants().get(&hash) {
            // Made before such names were refused: it would write as the
            // person or the engine.
            Some(g) if crate::model::RESERVED_AGENT_NAMES.contains(&g.name.as_str()) => {
                Err(Error::Forbidden(format!(
                    "token '{}' is named as the engine names the person or itself, so it is not accepted: the person revokes it (pad token revoke {}) and creates one named after its agent.",
                    g.name, g.name
                )))
            }
            Some(g) => Ok(Access::Token {
                name: g.name.clone(),
                hash,
            }),
            None => Err(Error::Forbidden(
                "this token is unknown or was revoked; ask the person for a current one (pad token list shows the names of valid tokens).".into(),
            )),
        }
    }

    /// The grant a connection holds now: `None` for the owner. Fails for a
    /// token revoked since `hello`, and for a connection without a token on
    /// an engine that requires one.
    pub fn grant(&self, access: &Access) -> Result<Option<Arc<Grant>>> {
        match access {
            Access::Owner => Ok(None),
            Access::Token { hash, name } => match self.grants().get(hash) {
                Some(g) => Ok(Some(g.clone())),
                None => Err(Error::Forbidden(format!(
                    "token '{name}' was revoked; this connection can do nothing more. Ask the person for a new token."
                ))),
            },
            Access::Anonymous => Err(Error::Forbidden(
                "this engine requires a token (it runs with --require-tokens): say hello with {\"token\": \"padt_…\"} first. The person issues tokens with `pad token create`.".into(),
            )),
        }
    }

    pub fn describe_access(&self, access: &Access) -> String {
        match self.grant(access) {
            Ok(None) => "owner".into(),
            Ok(Some(g)) => format!("token {}: {}", g.name, g.describe()),
            Err(_) => "none (a token is required)".into(),
        }
    }

    fn grants(&self) -> std::sync::RwLockReadGuard<'_, Grants> {
        self.0.grants.read().unwrap_or_else(|p| p.into_inner())
    }

    /// A change this engine makes to its grants, marked for a reload that
    /// is reading the tokens meanwhile (`reload_grants`).
    fn change_grants(&self, change: impl FnOnce(&mut Grants)) {
        let mut grants = self.0.grants.write().unwrap_or_else(|p| p.into_inner());
        change(&mut grants);
        self.0
            .grants_changed
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    pub async fn token_create(&self, p: TokenCreateParams) -> Result<TokenCreateResult> {
        let row = TokenRow {
            name: access::new_token_name(&p.name)?,
            hash: String::new(),
            pads: access::patterns(&p.pads)?,
            read_only: p.read_only,
            agents: access::agent_names(&p.agents)?,
            others: p.others,
            created_at: self.now(),
        };
        let secret = access::new_secret()?;
        let row = TokenRow {
            hash: access::hash(&secret),
            ..row
        };
        self.db().add_token(&row).await?;
        self.change_grants(|g| {
            g.insert(row.hash.clone(), Arc::new(grant_of(&row)));
        });
        tracing::info!("token '{}' created for {:?}", row.name, row.pads);
        Ok(TokenCreateResult {
            token: info(&row),
            secret,
        })
    }

    pub async fn token_list(&self) -> Result<TokenListResult> {
        Ok(TokenListResult {
            tokens: self.db().tokens().await?.iter().map(info).collect(),
        })
    }

    pub async fn token_revoke(&self, p: TokenRevokeParams) -> Result<TokenRevokeResult> {
        let name = access::token_name(&p.name)?;
        if !self.db().revoke_token(&name).await? {
            let names: Vec<String> = self
                .db()
                .tokens()
                .await?
                .into_iter()
                .map(|t| t.name)
                .collect();
            return Err(Error::NotFound {
                field: "name",
                message: format!(
                    "no token named '{name}'; tokens: {}.",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            });
        }
        self.change_grants(|g| g.retain(|_, g| g.name != name));
        tracing::info!("token '{name}' revoked");
        Ok(TokenRevokeResult { revoked: true })
    }
}

pub(super) fn load_grants(rows: Vec<TokenRow>) -> Grants {
    rows.into_iter()
        .map(|r| {
            let g = grant_of(&r);
            (r.hash, Arc::new(g))
        })
        .collect()
}

fn grant_of(r: &TokenRow) -> Grant {
    Grant {
        name: r.name.clone(),
        pads: r.pads.clone(),
        read_only: r.read_only,
        agents: r.agents.clone(),
        others: r.others,
    }
}

fn info(r: &TokenRow) -> TokenInfo {
    TokenInfo {
        name: r.name.clone(),
        pads: r.pads.clone(),
        read_only: r.read_only,
        agents: r.agents.clone(),
        others: r.others,
        created_at: fmt_time(r.created_at),
    }
}
