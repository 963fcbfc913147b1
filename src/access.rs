//! Who may do what: the owner, or an agent holding a scoped token.
//!
//! The socket already admits only its owner's uid; tokens narrow that down
//! for agents the person runs: a token names the pads it covers (exact names
//! and `prefix*` patterns) and whether it may write. A connection that says
//! `hello` with a token gets that token's grant; without one it is the owner,
//! unless the engine runs with `--require-tokens`, where the owner proves
//! itself with the owner token in `<data>/owner.token` (0600) that the `pad`
//! CLI reads by itself.
//!
//! Grants are looked up by the secret's hash on every call, so a revoked
//! token stops working at once, even on connections already open.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::model;

/// The file beside the database holding the owner token.
pub const OWNER_TOKEN_FILE: &str = "owner.token";
/// Every secret starts with this, so a token is recognisable in a config file.
pub const SECRET_PREFIX: &str = "padt_";
pub const MAX_PATTERNS: usize = 32;

/// What a token allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub name: String,
    /// Pad names and `prefix*` patterns, case-folded.
    pub pads: Vec<String>,
    pub read_only: bool,
    /// Registered agents it may hand work to (`*`: any).
    pub agents: Vec<String>,
    /// It may remove, clear, hide or reword notes others wrote in its pads.
    pub others: bool,
}

/// What a connection may do, as of its `hello`.
#[derive(Debug, Clone, Default)]
pub enum Access {
    /// Everything (the owner, on an engine that does not require tokens).
    #[default]
    Owner,
    /// What the token with this secret hash allows, while it exists.
    Token { hash: String, name: String },
    /// Nothing yet: this engine requires a token and none was given.
    Anonymous,
}

impl Grant {
    /// Whether `pad` (a valid, case-folded name) is one of this token's pads.
    pub fn covers(&self, pad: &str) -> bool {
        self.pads.iter().any(|p| pattern_matches(p, pad))
    }

    /// Whether every pad `pattern` can match is covered (for subscriptions).
    pub fn covers_pattern(&self, pattern: &str) -> bool {
        match pattern.strip_suffix('*') {
            None => self.covers(pattern),
            Some(prefix) => self.pads.iter().any(|p| match p.strip_suffix('*') {
                Some(mine) => prefix.starts_with(mine),
                None => false,
            }),
        }
    }

    /// Refuses reading `pad` unless covered.
    pub fn check_read(&self, pad: &str) -> Result<()> {
        self.check(pad, "read")
    }

    fn check(&self, pad: &str, what: &str) -> Result<()> {
        if self.covers(pad) {
            Ok(())
        } else {
            Err(Error::Forbidden(format!(
                "token '{}' may not {what} pad '{pad}': it allows {}. Use a pad it covers, or ask the person for a token that covers '{pad}' (pad token create --pads …).",
                self.name,
                self.describe()
            )))
        }
    }

    /// Refuses writing `pad` unless covered and not read-only.
    /// Refuses handing work to the registered agent `agent` unless the
    /// grant names it (or `*`).
    pub fn check_dispatch(&self, agent: &str) -> Result<()> {
        if self.agents.iter().any(|a| a == "*" || a == agent) {
            return Ok(());
        }
        Err(Error::Forbidden(format!(
            "token '{}' may not hand work to the registered agent '{agent}': its grant names {}. Drop '{agent}' from 'to', or ask the person for a token whose agents include it (pad token create --agents {agent}).",
            self.name,
            if self.agents.is_empty() { "no agents".to_string() } else { format!("only {}", self.agents.join(", ")) }
        )))
    }

    pub fn check_write(&self, pad: &str) -> Result<()> {
        self.check(pad, "write to")?;
        if self.read_only {
            return Err(Error::Forbidden(format!(
                "token '{}' is read-only: it may read {} but not write. Ask the person for a token with write access.",
                self.name,
                self.pads.join(", ")
            )));
        }
        Ok(())
    }

    /// Refuses a read-only token before a call that writes (a restore).
    pub fn check_any_write(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::Forbidden(format!(
                "token '{}' is read-only: it may read {} but not restore or change entries. Ask the person for a token with write access.",
                self.name,
                self.pads.join(", ")
            )));
        }
        Ok(())
    }

    /// "pads proj-*, shared (read and write)".
    pub fn describe(&self) -> String {
        format!(
            "pads {} ({})",
            self.pads.join(", "),
            if self.read_only {
                "read-only"
            } else {
                "read and write"
            }
        )
    }
}

/// Whether a token's pads (names and `prefix*` patterns) are every pad:
/// `*` among them.
pub fn covers_all(pads: &[String]) -> bool {
    pads.iter().any(|p| p == "*")
}

/// `proj-*` matches by prefix; anything else only itself.
pub fn pattern_matches(pattern: &str, pad: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => pad.starts_with(prefix),
        None => pattern == pad,
    }
}

/// Checks and case-folds a token's pad patterns: names, `prefix*`, or `*`.
/// Checks a token's `agents`: author names, or `*` for any; at most 32.
pub fn agent_names(raw: &[String]) -> Result<Vec<String>> {
    if raw.len() > MAX_PATTERNS {
        return Err(Error::over_limit(
            "agents",
            format!(
                "{} agents; the limit is {MAX_PATTERNS}. Give '*' for any.",
                raw.len()
            ),
            MAX_PATTERNS,
            raw.len(),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for a in raw {
        let a = a.trim();
        let name = if a == "*" {
            "*".to_string()
        } else {
            model::author("agents", a.trim_start_matches('@'))?
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

pub fn patterns(raw: &[String]) -> Result<Vec<String>> {
    if raw.is_empty() {
        return Err(Error::invalid(
            "pads",
            "a token needs at least one pad: a name ('inbox'), a prefix pattern ('proj-*'), or '*' for every pad.",
        ));
    }
    if raw.len() > MAX_PATTERNS {
        return Err(Error::over_limit(
            "pads",
            format!(
                "{} pad patterns; the limit is {MAX_PATTERNS}. Use prefix patterns such as 'proj-*'.",
                raw.len()
            ),
            MAX_PATTERNS,
            raw.len(),
        ));
    }
    let mut out = Vec::with_capacity(raw.len());
    for p in raw {
        let p = p.trim().to_lowercase();
        let folded = match p.strip_suffix('*') {
            Some("") => "*".to_string(),
            Some(prefix) if !prefix.contains('*') => {
                format!("{}*", model::pad_name("pads", prefix)?)
            }
            _ if p.contains('*') => {
                return Err(Error::invalid(
                    "pads",
                    format!("pad pattern '{p}' has '*' in the middle; only a trailing '*' is a wildcard, e.g. 'proj-*'."),
                ))
            }
            _ => model::pad_name("pads", &p)?,
        };
        if !out.contains(&folded) {
            out.push(folded);
        }
    }
    Ok(out)
}

/// Checks a token name: the same rules as an author name.
pub fn token_name(raw: &str) -> Result<String> {
    model::author("name", raw)
}

/// A new token's name: as `token_name`, and none the engine gives a
/// meaning (`user`, `engine`, `anonymous`, …): a token writes under its
/// name, and a token named `user` would write as the person.
pub fn new_token_name(raw: &str) -> Result<String> {
    let name = token_name(raw)?;
    // Plain ASCII, so no look-alike (a Cyrillic 'е') passes for a reserved
    // name; and a reserved name with punctuation about it is that name.
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '@' | '-')))
    {
        return Err(Error::invalid(
            "name",
            format!("a token's name is ASCII letters, digits, '.', '_', ':', '@' and '-' (so no look-alike passes for another name); '{raw}' has '{bad}' (U+{:04X}). E.g. 'agent-zero'.", bad as u32),
        ));
    }
    let bare = name.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if model::RESERVED_AGENT_NAMES.contains(&bare) {
        return Err(Error::invalid(
            "name",
            format!(
                "'{name}' cannot be a token's name: the engine gives it a meaning ({}), and a token writes under its name. Name the token after the agent that holds it, e.g. 'agent-zero'.",
                model::RESERVED_AGENT_NAMES.join(", ")
            ),
        ));
    }
    Ok(name)
}

/// A fresh secret: the prefix and 32 random bytes in hex.
pub fn new_secret() -> Result<String> {
    Ok(format!("{SECRET_PREFIX}{}", random_hex()?))
}

/// The hex SHA-256 of a secret, as stored and looked up.
pub fn hash(secret: &str) -> String {
    hex(&Sha256::digest(secret.trim().as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Reads the owner token from the data directory, creating it (0600) the
/// first time. Returns the secret.
pub fn owner_token(data_dir: &Path) -> Result<String> {
    let path = data_dir.join(OWNER_TOKEN_FILE);
    private_secret(&path, |s| s.starts_with(SECRET_PREFIX), new_secret).map_err(|e| {
        Error::Internal(format!(
            "cannot write the owner token {}: {e}",
            path.display()
        ))
    })
}

/// The secret kept in `path` if it holds a `valid` one; else a new secret
/// from `make`, written there first (0600, through a temp file and rename,
/// so a crash never leaves half a secret).
pub fn private_secret(
    path: &Path,
    valid: impl Fn(&str) -> bool,
    make: impl FnOnce() -> Result<String>,
) -> std::io::Result<String> {
    if let Ok(s) = std::fs::read_to_string(path) {
        if valid(s.trim()) {
            return Ok(s.trim().to_string());
        }
    }
    let secret = make().map_err(|e| std::io::Error::other(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    crate::paths::write_private(path, &format!("{secret}\n"))?;
    Ok(secret)
}

/// 32 random bytes in hex.
pub fn random_hex() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Internal(format!("no randomness for a secret: {e}")))?;
    Ok(hex(&bytes))
}

/// The grants of stored tokens, by secret hash.
pub type Grants = std::collections::HashMap<String, Arc<Grant>>;

/// Whether an HTTP request's `Host` header (its name, without the port) is
/// one of `allowed`: what stops a web page from reaching a local endpoint by
/// DNS rebinding. No header at all is refused.
pub fn host_allowed(host: Option<&str>, allowed: &[String]) -> bool {
    let Some(host) = host else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}

/// The secret a TCP endpoint's clients must send as a bearer token (the
/// MCP HTTP endpoint's, the metrics'), kept in `path`: created 0600 and
/// random on first use, the same across restarts.
pub fn bearer_secret(path: &Path) -> std::io::Result<String> {
    private_secret(path, |t| t.len() >= 32, random_hex)
}

/// The token of an `Authorization: Bearer <token>` header value. The
/// scheme's name is case-insensitive (RFC 9110): `bearer` is as good.
pub fn bearer(authorization: Option<&str>) -> &str {
    let Some(v) = authorization.map(str::trim) else {
        return "";
    };
    match v.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => "",
    }
}

/// Compares two secrets in time independent of where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for h in ["Bearer abc", "bearer abc", "BEARER  abc ", " Bearer abc"] {
            assert_eq!(bearer(Some(h)), "abc", "{h:?}");
        }
        for h in ["Basic abc", "Bearerabc", "abc", ""] {
            assert_eq!(bearer(Some(h)), "", "{h:?}");
        }
        assert_eq!(bearer(None), "");
    }

    fn grant(pads: &[&str], read_only: bool) -> Grant {
        Grant {
            name: "agent-x".into(),
            pads: pads.iter().map(|s| s.to_string()).collect(),
            read_only,
            agents: Vec::new(),
            others: false,
        }
    }

    #[test]
    fn only_named_agents_take_a_tokens_work() {
        let mut g = grant(&["*"], false);
        assert!(g.check_dispatch("agent-zero").is_err());
        g.agents = vec!["agent-zero".into()];
        assert!(g.check_dispatch("agent-zero").is_ok());
        assert!(g.check_dispatch("helper").is_err());
        g.agents = vec!["*".into()];
        assert!(g.check_dispatch("helper").is_ok());
        assert_eq!(
            agent_names(&["@Agent-Zero".into(), "*".into(), "agent-zero".into()]).unwrap(),
            ["agent-zero", "*"]
        );
        assert!(agent_names(&["bad name".into()]).is_err());
    }

    #[test]
    fn patterns_match_names_and_prefixes_only() {
        let g = grant(&["proj-*", "shared"], false);
        assert!(g.covers("proj-a"));
        assert!(g.covers("proj-"));
        assert!(g.covers("shared"));
        assert!(!g.covers("shared2"));
        assert!(!g.covers("other"));
        assert!(g.covers_pattern("proj-a*"));
        assert!(!g.covers_pattern("pro*"));
        assert!(!g.covers_pattern("*"));
        assert!(grant(&["*"], false).covers_pattern("*"));
        let e = g.check_read("other").unwrap_err().to_string();
        assert!(e.contains("proj-*, shared"), "{e}");
    }

    #[test]
    fn read_only_grants_refuse_writes() {
        let g = grant(&["proj-*"], true);
        assert!(g.check_read("proj-a").is_ok());
        assert!(g
            .check_write("proj-a")
            .unwrap_err()
            .to_string()
            .contains("read-only"));
    }

    #[test]
    fn patterns_are_checked_and_folded() {
        assert_eq!(
            patterns(&["Proj-*".into(), "inbox".into(), "inbox".into()]).unwrap(),
            vec!["proj-*", "inbox"]
        );
        assert!(patterns(&[]).is_err());
        assert!(patterns(&["a*b".into()]).is_err());
        assert!(patterns(&["../x".into()]).is_err());
    }

    #[test]
    fn secrets_are_random_and_hashes_stable() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 64);
        assert_eq!(hash(&a), hash(&format!("{a}\n")));
        assert_eq!(hash(&a).len(), 64);
    }

    #[test]
    fn host_names_are_matched_without_their_port() {
        let allowed: Vec<String> = ["localhost", "172.17.0.1", "::1"].map(String::from).into();
        assert!(host_allowed(Some("localhost:8765"), &allowed));
        assert!(host_allowed(Some("172.17.0.1"), &allowed));
        assert!(host_allowed(Some("[::1]:8765"), &allowed));
        assert!(host_allowed(Some("LOCALHOST:1"), &allowed));
        assert!(!host_allowed(Some("evil.example:8765"), &allowed));
        assert!(!host_allowed(Some("localhost.evil.example"), &allowed));
        assert!(!host_allowed(None, &allowed));
    }
}
