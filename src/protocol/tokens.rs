//! Access tokens: the params and results of `token.create`, `token.list`
//! and `token.revoke` (docs/protocol.md, "Access tokens").

use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct TokenCreateParams {
    pub name: String,
    pub pads: Vec<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub read_only: bool,
    /// Registered agents (`agent.add`) it may hand work to with `to`;
    /// `["*"]` for any. None by default.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<String>>", optional))]
    pub agents: Vec<String>,
    /// It may also remove, clear or hide (supersede, restore over) notes
    /// others wrote in its pads; by default only its own.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub others: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TokenInfo {
    pub name: String,
    pub pads: Vec<String>,
    pub read_only: bool,
    /// Registered agents it may hand work to (`*`: any).
    #[serde(default)]
    pub agents: Vec<String>,
    /// It may remove, clear, hide or reword notes others wrote in its pads.
    #[serde(default)]
    pub others: bool,
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TokenCreateResult {
    pub token: TokenInfo,
    /// The secret, shown this once: the engine keeps only its hash.
    pub secret: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct TokenListParams {}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TokenListResult {
    pub tokens: Vec<TokenInfo>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct TokenRevokeParams {
    pub name: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TokenRevokeResult {
    pub revoked: bool,
}
