//! A small async client for the engine's socket, used by the CLI, the tests
//! and the benchmark.
//!
//! `call` sends one request and waits for its response; notifications that
//! arrive meanwhile are queued for `next_event`. `send` + `flush` + `response`
//! let a caller pipeline many requests before reading.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

use crate::error::code::{OUTCOME_UNKNOWN, UNAVAILABLE};
use crate::protocol::method::{Keyed, Method};
use crate::storage::once::KEY_FIELD;

/// The waits before each retry of a keyed write (`Client::call_keyed`).
pub const WRITE_RETRY_WAITS: [Duration; 3] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// A fresh idempotency key: 128 random bits, as 32 hex digits.
pub fn fresh_key() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A keyed write's failure that may have stored it (refused past the
/// retries, its answer lost, the connection gone), with its key named: the
/// same write sent again with that key is stored once.
fn with_key(e: ClientError, params: &Value) -> ClientError {
    let Some(key) = params.get(KEY_FIELD).and_then(Value::as_str) else {
        return e;
    };
    let note = format!(
        "; its idempotency_key is {key}: send the same write again with it and it is stored once (pad note and pad task add: --idempotency-key {key})"
    );
    match e {
        ClientError::Rpc(mut r) => {
            r.message.push_str(&note);
            ClientError::Rpc(r)
        }
        ClientError::Io(io) => ClientError::Io(io::Error::new(io.kind(), format!("{io}{note}"))),
        other => other,
    }
}

/// An error response from the engine.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the engine: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error("the engine sent something unexpected: {0}")]
    Protocol(String),
}

impl ClientError {
    /// The engine's error code, if the engine answered with an error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            _ => None,
        }
    }
}

/// Connects to the socket at `path` only if this user's engine serves it:
/// the socket's directory must be ours and private (nobody else could have
/// put a socket there), and the peer's uid must be ours (`SO_PEERCRED`).
/// Otherwise nothing is sent — not the `hello`, not a token — and the error
/// says what was found and what to do.
pub async fn connect_own(path: &Path) -> io::Result<UnixStream> {
    use std::os::unix::fs::MetadataExt;
    let me = crate::paths::uid();
    let refuse = |what: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{what}, so it is not your engine and nothing was sent to it. Remove it if you can, or set PAD_SOCKET to a socket in a directory only you can enter"),
        )
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(meta) = std::fs::metadata(dir) {
        if meta.uid() != me {
            return Err(refuse(format!(
                "the socket's directory {} belongs to uid {}, not to you (uid {me})",
                dir.display(),
                meta.uid()
            )));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(refuse(format!(
                "the socket's directory {} is writable by others (mode {:o})",
                dir.display(),
                meta.mode() & 0o777
            )));
        }
    }
    let stream = UnixStream::connect(path).await?;
    let peer = stream.peer_cred()?.uid();
    if peer != me {
        return Err(refuse(format!(
            "{} is served by uid {peer}, not by you (uid {me})",
            path.display()
        )));
    }
    Ok(stream)
}

pub struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: BufWriter<OwnedWriteHalf>,
    next_id: u64,
    events: VecDeque<Value>,
    line: String,
}

impl Client {
    /// Connects to the engine at `path`, only if it is run by this user
    /// (see `connect_own`).
    pub async fn connect(path: &Path) -> io::Result<Client> {
        let stream = connect_own(path).await?;
        let (r, w) = stream.into_split();
        Ok(Client {
            reader: BufReader::new(r),
            writer: BufWriter::new(w),
            next_id: 1,
            events: VecDeque::new(),
            line: String::new(),
        })
    }

    /// Says `hello` with the token in `$PAD_TOKEN`, if set. Otherwise says
    /// it without one and, if the engine requires a token, again with the
    /// owner token from the data directory (`$PAD_HOME/owner.token`), which
    /// only the owner can read.
    pub async fn greet(
        &mut self,
        author: Option<&str>,
        client: &str,
    ) -> Result<Value, ClientError> {
        let token = std::env::var("PAD_TOKEN").ok().filter(|t| !t.is_empty());
        self.greet_as(author, client, token.as_deref()).await
    }

    /// `hello` with this token (or, without one, as `greet` does).
    pub async fn greet_as(
        &mut self,
        author: Option<&str>,
        client: &str,
        token: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut params = json!({"client": client});
        if let Some(a) = author {
            params["author"] = json!(a);
        }
        if let Some(t) = token {
            params["token"] = json!(t);
            return self.call("hello", params).await;
        }
        let hello = self.call("hello", params.clone()).await?;
        if !hello["access"].as_str().unwrap_or("").starts_with("none") {
            return Ok(hello);
        }
        let file = crate::paths::data_dir().join(crate::access::OWNER_TOKEN_FILE);
        match std::fs::read_to_string(&file) {
            Ok(t) => {
                params["token"] = json!(t.trim());
                self.call("hello", params).await
            }
            Err(_) => Ok(hello),
        }
    }

    /// Calls the method `M` with its params and reads the answer as its
    /// type (`protocol::method`).
    pub async fn request<M: Method>(
        &mut self,
        params: &M::Params,
    ) -> Result<M::Answer, ClientError> {
        let params = serde_json::to_value(params)
            .map_err(|e| ClientError::Protocol(format!("{} params: {e}", M::NAME)))?;
        let answer = self.call(M::NAME, params).await?;
        serde_json::from_value(answer)
            .map_err(|e| ClientError::Protocol(format!("{}'s answer: {e}", M::NAME)))
    }

    /// Sends the write `M` with an idempotency key (a fresh one unless the
    /// params carry one), retried as `call_keyed` says: it is stored once.
    pub async fn write<M: Keyed>(
        &mut self,
        mut params: M::Params,
    ) -> Result<M::Answer, ClientError> {
        M::key(&mut params).get_or_insert_with(fresh_key);
        let params = serde_json::to_value(&params)
            .map_err(|e| ClientError::Protocol(format!("{} params: {e}", M::NAME)))?;
        let answer = self.call_keyed(M::NAME, &params).await?;
        serde_json::from_value(answer)
            .map_err(|e| ClientError::Protocol(format!("{}'s answer: {e}", M::NAME)))
    }

    /// Calls a write whose params carry its idempotency key, and calls it
    /// again with them after each of the `WRITE_RETRY_WAITS` while it fails
    /// with `-32005` (unavailable: nothing stored, or the key's first call
    /// still committing) or `-32006` (outcome unknown). Sent again with its
    /// key, a write stored already answers as it did: nothing is stored twice.
    pub async fn call_keyed(&mut self, method: &str, params: &Value) -> Result<Value, ClientError> {
        let mut waits = WRITE_RETRY_WAITS.iter();
        loop {
            match self.call(method, params.clone()).await {
                Err(e) if matches!(e.code(), Some(UNAVAILABLE | OUTCOME_UNKNOWN)) => {
                    match waits.next() {
                        Some(wait) => tokio::time::sleep(*wait).await,
                        None => return Err(with_key(e, params)),
                    }
                }
                Err(e @ ClientError::Io(_)) => return Err(with_key(e, params)),
                done => return done,
            }
        }
    }

    /// Calls `method` and returns its result.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.send(method, params).await?;
        self.flush().await?;
        loop {
            let (got, result) = self.response().await?;
            // An error without an id (a refusal, a line the engine could not
            // read) is about the request in flight.
            if got == id || (got == 0 && result.is_err()) {
                return Ok(result?);
            }
        }
    }

    /// Queues a request without flushing; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> io::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut bytes = serde_json::to_vec(&req).expect("values serialize");
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await?;
        Ok(id)
    }

    /// Writes raw bytes (tests use it to send malformed input).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes).await?;
        self.writer.flush().await
    }

    pub async fn flush(&mut self) -> io::Result<()> {
        self.writer.flush().await
    }

    /// The next response (queueing events that come first).
    pub async fn response(&mut self) -> Result<(u64, Result<Value, RpcError>), ClientError> {
        loop {
            let msg = self.read_message().await?;
            if msg.get("method").and_then(Value::as_str) == Some("event") {
                self.events.push_back(msg["params"].clone());
                continue;
            }
            let id = msg.get("id").and_then(Value::as_u64).unwrap_or(0);
            return Ok((id, parse_outcome(msg)));
        }
    }

    /// The next line from the engine as JSON, whatever it is.
    pub async fn read_message(&mut self) -> Result<Value, ClientError> {
        self.line.clear();
        let n = self.reader.read_line(&mut self.line).await?;
        if n == 0 {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the engine closed the connection",
            )));
        }
        serde_json::from_str(&self.line)
            .map_err(|e| ClientError::Protocol(format!("{e}: {}", self.line)))
    }

    /// The next event notification's params; `None` if the engine hung up.
    pub async fn next_event(&mut self) -> Result<Option<Value>, ClientError> {
        if let Some(e) = self.events.pop_front() {
            return Ok(Some(e));
        }
        loop {
            let msg = match self.read_message().await {
                Ok(m) => m,
                Err(ClientError::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Ok(None)
                }
                Err(e) => return Err(e),
            };
            if msg.get("method").and_then(Value::as_str) == Some("event") {
                return Ok(Some(msg["params"].clone()));
            }
        }
    }
}

/// Splits a response object into its result or error.
pub fn parse_outcome(msg: Value) -> Result<Value, RpcError> {
    if let Some(err) = msg.get("error") {
        return Err(RpcError {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            data: err.get("data").cloned(),
        });
    }
    Ok(msg.get("result").cloned().unwrap_or(Value::Null))
}
