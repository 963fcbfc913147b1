//! Access tokens: issuing, listing, revoking, and turning a `hello` token
//! into what a connection may do (see `crate::access`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::Engine;
use crate::access::{self, Access, Grant, Grants};
use crate::error::{Error, Result};
use crate::model::fmt_time;
use crate::protocol::*;
use crate::storage::TokenRow;

/// Who a secret speaks for: the owner's token (its hash), and the stored
/// tokens' grants by secret hash — changed by this engine's `token.*`
/// calls, replaced when another engine of a team changed them.
pub(super) struct Tokens {
    owner_hash: String,
    /// Refuse connections without a token (`--require-tokens`).
    required: bool,
    grants: RwLock<Grants>,
    /// Moved (under `grants`' write lock) by every change this engine makes
    /// to its grants: a reload after another engine's change replaces them
    /// only if none came in while it read the tokens.
    changed: AtomicU64,
}

impl Tokens {
    pub(super) fn new(owner_hash: String, required: bool, rows: Vec<TokenRow>) -> Tokens {
        Tokens {
            owner_hash,
            required,
            grants: RwLock::new(grants_of(rows)),
            changed: AtomicU64::new(0),
        }
    }

    /// What a connection may do after saying `hello` with `token` (or none).
    fn authenticate(&self, token: Option<&str>) -> Result<Access> {
        let Some(secret) = token.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(if self.required {
                Access::Anonymous
            } else {
                Access::Owner
            });
        };
        let hash = access::hash(secret);
        if hash == self.owner_hash {
            return Ok(Access::Owner);
        }
        match self.read().get(&hash) {
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

    /// The grant a connection holds now (see `Engine::grant`).
    fn grant(&self, access: &Access) -> Result<Option<Arc<Grant>>> {
        match access {
            Access::Owner => Ok(None),
            Access::Token { hash, name } => match self.read().get(hash) {
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

    fn read(&self) -> RwLockReadGuard<'_, Grants> {
        self.grants.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Grants> {
        self.grants.write().unwrap_or_else(|p| p.into_inner())
    }

    /// A change this engine makes to its grants, marked for a reload that
    /// is reading the tokens meanwhile (`replace`).
    fn change(&self, change: impl FnOnce(&mut Grants)) {
        let mut grants = self.write();
        change(&mut grants);
        self.changed.fetch_add(1, Ordering::AcqRel);
    }

    /// Where this engine's changes stand, for `replace`.
    pub(super) fn seen(&self) -> u64 {
        self.changed.load(Ordering::Acquire)
    }

    /// The grants as the store's `rows` say, read after `seen`; refused
    /// (false) when this engine changed them since, as the rows may miss
    /// that change.
    pub(super) fn replace(&self, seen: u64, rows: Vec<TokenRow>) -> bool {
        let mut grants = self.write();
        if self.changed.load(Ordering::Acquire) != seen {
            return false;
        }
        *grants = grants_of(rows);
        true
    }
}

impl Engine {
    /// What a connection may do after saying `hello` with `token` (or none).
    pub fn authenticate(&self, token: Option<&str>) -> Result<Access> {
        self.0.tokens.authenticate(token)
    }

    /// The grant a connection holds now: `None` for the owner. Fails for a
    /// token revoked since `hello`, and for a connection without a token on
    /// an engine that requires one.
    pub fn grant(&self, access: &Access) -> Result<Option<Arc<Grant>>> {
        self.0.tokens.grant(access)
    }

    pub fn describe_access(&self, access: &Access) -> String {
        match self.grant(access) {
            Ok(None) => "owner".into(),
            Ok(Some(g)) => format!("token {}: {}", g.name, g.describe()),
            Err(_) => "none (a token is required)".into(),
        }
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
        self.0.tokens.change(|g| {
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
        self.0.tokens.change(|g| g.retain(|_, g| g.name != name));
        tracing::info!("token '{name}' revoked");
        Ok(TokenRevokeResult { revoked: true })
    }
}

fn grants_of(rows: Vec<TokenRow>) -> Grants {
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
