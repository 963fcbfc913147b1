//! Idempotency keys: a write sent with a key is stored once, however often
//! it is sent (Stripe's `Idempotency-Key`, Kafka's idempotent producer,
//! NATS's `Msg-Id` are the models).
//!
//! A key belongs to its caller (`Key::caller`: the owner, or one token), so
//! one token never meets another's write, and names one call: the same key
//! with other params is refused, never taken for the first call's retry
//! (`Key::fingerprint`). Its row is written in the write's own transaction
//! (`taken` and `keep`, over a store's `KeyTx`, by the write sequences that
//! take a key: `storage::write::add` and `claim`), before the write's
//! statements, and holds the id of the entry the write answered with (a
//! claim: the task it took) — never its content, which a delete or a
//! purge must erase: the write and its key commit together or not at all.
//! A second call with the key finds the row and answers with that entry as
//! it is now, read as any `entry.get` reads it (gone: as a get of it
//! answers), writing nothing; one sent while the first is still
//! committing waits on the row (PostgreSQL's unique index; SQLite's single
//! writer) and then finds it. Rows live a day (`KEY_LIFE_MS`): the sweep
//! deletes older ones, and a row past that age is taken as new.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::query::{Arg, Query, Select};
use crate::access::Access;
use crate::error::{Error, Result};

/// How long a key holds its write's entry id.
pub const KEY_LIFE_MS: i64 = 24 * 3600 * 1000;
/// The longest key, in bytes: a UUID (36) or a ULID (26) fits with room.
pub const MAX_KEY_LEN: usize = 128;
/// The params field carrying the key.
pub const KEY_FIELD: &str = "idempotency_key";

/// A write's idempotency key: whose it is, the key, and what call it names.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// `owner`, or `token:<its secret's hash>`: a token made again under a
    /// revoked one's name is another caller, with no keys.
    pub caller: String,
    pub key: String,
    /// SHA-256 of the method's name and its params without the key.
    pub fingerprint: String,
    /// A check's refusal (field, message) the call passed only because its
    /// key named a write stored already: the write goes ahead only as that
    /// retry, and is refused so if the key's row is gone meanwhile (a day
    /// old, swept).
    pub unless_kept: Option<(&'static str, String)>,
}

impl Key {
    /// The key sent with a call of `method` by `access`, if any, checked.
    pub fn of(
        access: &Access,
        method: &str,
        key: Option<&str>,
        params: &impl Serialize,
    ) -> Result<Option<Key>> {
        let Some(key) = key else {
            return Ok(None);
        };
        checked(key)?;
        let mut sent = serde_json::to_value(params)
            .map_err(|e| Error::Internal(format!("params as JSON: {e}")))?;
        if let Some(fields) = sent.as_object_mut() {
            fields.remove(KEY_FIELD);
        }
        let mut hash = Sha256::new();
        hash.update(method.as_bytes());
        hash.update(b"\n");
        hash.update(sent.to_string().as_bytes());
        let fingerprint = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let caller = match access {
            Access::Owner => "owner".to_string(),
            Access::Token { hash, .. } => format!("token:{hash}"),
            Access::Anonymous => "anonymous".to_string(),
        };
        Ok(Some(Key {
            caller,
            key: key.to_string(),
            fingerprint,
            unless_kept: None,
        }))
    }
}

/// A key is 1 to `MAX_KEY_LEN` printable ASCII characters, no spaces.
fn checked(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(Error::over_limit(
            KEY_FIELD,
            format!(
                "idempotency_key is {} bytes long; give 1 to {MAX_KEY_LEN}, e.g. a fresh UUID per write (the same one again only when retrying that write).",
                key.len()
            ),
            MAX_KEY_LEN as u64,
            key.len() as u64,
        ));
    }
    if let Some(c) = key.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(Error::invalid(
            KEY_FIELD,
            format!(
                "idempotency_key holds {c:?}; use printable ASCII without spaces (letters, digits, '-', '_', ...), e.g. a UUID."
            ),
        ));
    }
    Ok(())
}

/// What a keyed write did: written now, or by an earlier call with its key.
#[derive(Debug)]
pub enum Once<T> {
    Wrote(T),
    /// The id of the entry the first call answered with (a claim: the task
    /// it took), to be read again now.
    Again(String),
}

/// The statements keeping keys, on a write's transaction.
#[allow(async_fn_in_trait)]
pub trait KeyTx {
    /// Takes `key` for this write: `None` when it is new (or its row a day
    /// old), its row now written and held by this transaction;
    /// else the fingerprint and entry id of the write that took it. Waits
    /// while another transaction holding the key is committing.
    async fn take_key(&mut self, key: &Key, now: i64) -> Result<Option<(String, String)>>;
    /// Keeps the id of the entry the write answered with in its key's row.
    async fn keep_entry(&mut self, key: &Key, id: &str) -> Result<()>;
}

/// Before a keyed write, in its transaction: the id of the first call's
/// entry when its key was taken already (write nothing then, and answer
/// with that entry), or `None` when the write is new, its key now held by
/// this transaction (`keep` its entry's id after the write).
pub async fn taken(tx: &mut impl KeyTx, key: &Key, now: i64) -> Result<Option<String>> {
    let Some((fingerprint, first)) = tx.take_key(key, now).await? else {
        return match &key.unless_kept {
            // The transaction is rolled back, and the key's row with it.
            Some((field, message)) => Err(Error::NotFound {
                field,
                message: message.clone(),
            }),
            None => Ok(None),
        };
    };
    if fingerprint != key.fingerprint {
        return Err(Error::invalid(
            KEY_FIELD,
            format!(
                "idempotency_key '{}' was sent within the last day with another call (another method or other params); a key names one write. Send a fresh key for a new write, and the same key only to retry that write with the same params.",
                key.key
            ),
        ));
    }
    Ok(Some(first))
}

/// After a keyed write, in its transaction: keeps the id of the entry it
/// answers with (a claim: the task it took) for the key's retries.
pub async fn keep(tx: &mut impl KeyTx, key: &Key, id: &str) -> Result<()> {
    tx.keep_entry(key, id).await
}

/// Whether `key` names a write stored already: its caller's, the same
/// call, within the day (`Entries::kept`), on a read connection.
pub async fn kept<S: Select>(s: &mut S, key: &Key, now: i64) -> Result<bool> {
    let q = Query::bound(
        S::DIALECT,
        sql::KEPT,
        vec![
            Arg::Text(key.caller.clone()),
            Arg::Text(key.key.clone()),
            Arg::Text(key.fingerprint.clone()),
            Arg::Int(expired(now)),
        ],
    );
    let mut found = false;
    s.scan(&q, |_| {
        found = true;
        Ok(std::ops::ControlFlow::Break(()))
    })
    .await?;
    Ok(found)
}

/// The statements on the key's rows, the same on both stores: each `$n`
/// first appears in order, so SQLite binds them by position as PostgreSQL
/// does.
pub mod sql {
    /// Takes a key: a row written now (`RETURNING` a row), or the row of
    /// a call that took it within the day left as it is. Binds caller,
    /// key, fingerprint, now, and `expired(now)`.
    pub const TAKE: &str = "INSERT INTO idempotency (caller, key, fingerprint, entry, created_at) \
         VALUES ($1, $2, $3, '', $4) \
         ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
             entry = '', created_at = excluded.created_at \
         WHERE idempotency.created_at < $5 RETURNING 1";
    /// The fingerprint and entry id of a key taken. Binds caller, key.
    pub const FIRST: &str =
        "SELECT fingerprint, entry FROM idempotency WHERE caller = $1 AND key = $2";
    /// Keeps the entry's id. Binds the id, caller, key.
    pub const KEEP: &str = "UPDATE idempotency SET entry = $1 WHERE caller = $2 AND key = $3";
    /// Whether a key names a write stored already (`Entries::kept`).
    /// Binds caller, key, fingerprint, and `expired(now)`.
    pub const KEPT: &str = "SELECT 1 FROM idempotency WHERE caller = $1 AND key = $2 \
         AND fingerprint = $3 AND created_at >= $4 AND entry <> ''";
}

/// Keys whose rows are older than this, at `now`, are forgotten.
pub fn expired(now: i64) -> i64 {
    now - KEY_LIFE_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_and_name_one_call() {
        let p = serde_json::json!({"pad": "p", "content": "x", "idempotency_key": "k1"});
        let a = Key::of(&Access::Owner, "entry.add", Some("k1"), &p)
            .unwrap()
            .unwrap();
        // The key itself is not part of what the call is.
        let q = serde_json::json!({"pad": "p", "content": "x", "idempotency_key": "k2"});
        let b = Key::of(&Access::Owner, "entry.add", Some("k2"), &q)
            .unwrap()
            .unwrap();
        assert_eq!(a.fingerprint, b.fingerprint);
        let other = serde_json::json!({"pad": "p", "content": "y"});
        let c = Key::of(&Access::Owner, "entry.add", Some("k1"), &other)
            .unwrap()
            .unwrap();
        assert_ne!(a.fingerprint, c.fingerprint);
        let claim = Key::of(&Access::Owner, "task.claim", Some("k1"), &p)
            .unwrap()
            .unwrap();
        assert_ne!(a.fingerprint, claim.fingerprint);
        let token = Access::Token {
            hash: "h".into(),
            name: "ci".into(),
        };
        let t = Key::of(&token, "entry.add", Some("k1"), &p)
            .unwrap()
            .unwrap();
        assert_eq!(t.caller, "token:h", "a token's keys are its secret's");
        assert_ne!(t.caller, a.caller);
        assert!(Key::of(&Access::Owner, "entry.add", None, &p)
            .unwrap()
            .is_none());
        for bad in ["", "has space", "tab\t", &"x".repeat(MAX_KEY_LEN + 1)] {
            let e = Key::of(&Access::Owner, "entry.add", Some(bad), &p).unwrap_err();
            assert!(e.to_string().contains("idempotency_key"), "{e}");
        }
        assert!(Key::of(
            &Access::Owner,
            "entry.add",
            Some(&"x".repeat(MAX_KEY_LEN)),
            &p
        )
        .is_ok());
    }
}
