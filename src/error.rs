//! The one error type of the engine and its mapping to JSON-RPC codes.
//!
//! Every failure a client can cause is a variant here, with a message written
//! for whoever must fix the call (a person or a model): what was wrong, the
//! limit, what to do. `code()` and `data()` are the only place where errors
//! become wire codes; clients branch on the code, never on the text.

use serde_json::{json, Value};

/// JSON-RPC 2.0 and Scratchpad error codes (docs/protocol.md lists them all).
pub mod code {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    pub const NOT_FOUND: i64 = -32001;
    pub const CONFLICT: i64 = -32002;
    pub const FORBIDDEN: i64 = -32003;
    pub const TOO_LARGE: i64 = -32004;
    pub const UNAVAILABLE: i64 = -32005;
    pub const OUTCOME_UNKNOWN: i64 = -32006;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    InvalidRequest(String),
    #[error("no method '{method}'. {hint}")]
    MethodNotFound { method: String, hint: String },
    #[error("{message}")]
    InvalidParams {
        field: Option<String>,
        message: String,
        limit: Option<Value>,
        got: Option<Value>,
    },
    #[error("{message}")]
    NotFound {
        field: &'static str,
        message: String,
    },
    #[error("{message}")]
    Conflict {
        message: String,
        expected: Option<i64>,
        actual: Option<i64>,
    },
    #[error("{0}")]
    Forbidden(String),
    #[error("{message}")]
    TooLarge {
        field: Option<String>,
        message: String,
        limit: u64,
        got: u64,
    },
    #[error("{0}")]
    Unavailable(String),
    /// A write whose commit reached the store but whose answer was lost,
    /// and which could not be found out: it may be stored.
    #[error("{0}")]
    OutcomeUnknown(String),
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An invalid-params error about one field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidParams {
            field: Some(field.into()),
            message: message.into(),
            limit: None,
            got: None,
        }
    }

    /// An invalid-params error about one field that broke a numeric limit.
    pub fn over_limit(
        field: impl Into<String>,
        message: impl Into<String>,
        limit: impl Into<Value>,
        got: impl Into<Value>,
    ) -> Self {
        Error::InvalidParams {
            field: Some(field.into()),
            message: message.into(),
            limit: Some(limit.into()),
            got: Some(got.into()),
        }
    }

    /// The same error, about `field` (an id checked under another name).
    pub fn for_field(self, field: &'static str) -> Self {
        match self {
            Error::NotFound { message, .. } => Error::NotFound { field, message },
            Error::InvalidParams {
                message,
                limit,
                got,
                ..
            } => Error::InvalidParams {
                field: Some(field.into()),
                message,
                limit,
                got,
            },
            other => other,
        }
    }

    pub fn code(&self) -> i64 {
        match self {
            Error::Parse(_) => code::PARSE,
            Error::InvalidRequest(_) => code::INVALID_REQUEST,
            Error::MethodNotFound { .. } => code::METHOD_NOT_FOUND,
            Error::InvalidParams { .. } => code::INVALID_PARAMS,
            Error::NotFound { .. } => code::NOT_FOUND,
            Error::Conflict { .. } => code::CONFLICT,
            Error::Forbidden(_) => code::FORBIDDEN,
            Error::TooLarge { .. } => code::TOO_LARGE,
            Error::Unavailable(_) => code::UNAVAILABLE,
            Error::OutcomeUnknown(_) => code::OUTCOME_UNKNOWN,
            Error::Internal(_) => code::INTERNAL,
        }
    }

    /// The machine-readable `data` member: `field`, `limit`, `got` where known.
    pub fn data(&self) -> Option<Value> {
        let mut data = serde_json::Map::new();
        match self {
            Error::InvalidParams {
                field, limit, got, ..
            } => {
                if let Some(f) = field {
                    data.insert("field".into(), json!(f));
                }
                if let Some(l) = limit {
                    data.insert("limit".into(), l.clone());
                }
                if let Some(g) = got {
                    data.insert("got".into(), g.clone());
                }
            }
            Error::TooLarge {
                field, limit, got, ..
            } => {
                if let Some(f) = field {
                    data.insert("field".into(), json!(f));
                }
                data.insert("limit".into(), json!(limit));
                data.insert("got".into(), json!(got));
            }
            Error::NotFound { field, .. } => {
                data.insert("field".into(), json!(field));
            }
            Error::Conflict {
                expected, actual, ..
            } => {
                data.insert("field".into(), json!("if_version"));
                if let Some(e) = expected {
                    data.insert("expected".into(), json!(e));
                }
                if let Some(a) = actual {
                    data.insert("got".into(), json!(a));
                }
            }
            Error::MethodNotFound { method, .. } => {
                data.insert("got".into(), json!(method));
            }
            _ => return None,
        }
        Some(Value::Object(data))
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                Error::Unavailable(format!(
                    "the store is locked by another process ({e}) — a sqlite3 shell or a backup holding a write transaction on the engine's files? The engine waits at most 2 s for it; retry once that transaction ends"
                ))
            }
            Some(rusqlite::ErrorCode::DiskFull) => Error::Unavailable(format!(
                "the disk is full ({e}); free some space, then retry"
            )),
            Some(
                rusqlite::ErrorCode::SystemIoFailure
                | rusqlite::ErrorCode::CannotOpen
                | rusqlite::ErrorCode::ReadOnly
                | rusqlite::ErrorCode::OutOfMemory,
            ) => Error::Unavailable(format!(
                "the store cannot write its files ({e}); check the disk (space, errors, permissions) and the engine's log, then retry"
            )),
            _ => Error::Internal(format!("store: {e}")),
        }
    }
}

/// An engine message reworded for a reader who knows another surface than
/// the wire protocol (the MCP tools, the CLI): each `(from, to)` replaced,
/// and the pointer to docs/protocol.md dropped.
pub fn reword(message: &str, table: &[(&str, &str)]) -> String {
    let mut m = message.to_owned();
    if let Some(at) = m.find(" See docs/protocol.md") {
        m.truncate(at);
    }
    for (from, to) in table {
        m = m.replace(from, to);
    }
    m
}
