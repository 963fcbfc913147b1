//! Scratchpad: a local-first shared scratch-pad for a person and their AI agents.
//!
//! The engine crate: model, store (SQLite), text index, events, expiry, the
//! JSON-RPC protocol and its dispatch, the socket server, a client, and the
//! `pad` command line. ARCHITECTURE.md maps the parts; docs/protocol.md is the
//! wire contract.

pub mod access;
pub mod agents;
#[cfg(test)]
mod architecture;
pub mod autostart;
pub mod cli;
pub mod client;
pub mod clock;
pub mod engine;
pub mod error;
pub mod events;
pub(crate) mod faults;
pub mod guard;
pub mod id;
pub mod mcp;
pub mod metrics;
pub mod model;
pub mod paths;
pub mod pg;
mod priority;
pub mod protocol;
pub mod rpc;
pub mod seal;
pub mod semantic;
pub mod server;
pub mod settings;
pub mod storage;
pub mod store;
pub mod tcp;
pub mod terms;
#[cfg(test)]
mod typescript;

pub use engine::{Config, Engine};
pub use error::{Error, Result};
