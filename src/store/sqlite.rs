//! The SQLite store behind the store contract (`storage::Storage`): the
//! handle the engine holds and where an operation runs (its upkeep in
//! `upkeep.rs`).
//!
//! The store itself is synchronous. Each operation (implemented beside its
//! statements: `impl Entries for Sqlite` in `entries.rs`, …) chooses where
//! it runs: point operations inline (a thread hop would cost more than the
//! work), scans and upkeep on a blocking thread (`Sqlite::blocking`) so they
//! never stall the connections sharing the runtime. The engine takes a
//! scan's turn before calling; this only decides the thread.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;

use super::Store;
use crate::error::{Error, Result};
use crate::storage::Fut;

pub struct Sqlite {
    pub(super) store: Arc<Store>,
    /// Pads with a rolling window (`max_entries`): the only pads whose
    /// writes need a second statement, so an add checks this map, not the
    /// database. Only this engine writes these files, so it stays true.
    pub(super) windows: Mutex<HashMap<String, i64>>,
}

impl Sqlite {
    /// The contract's side of an opened store: starts applying its journal.
    pub fn new(store: Store) -> Result<Sqlite> {
        let store = Arc::new(store);
        // Detached: the thread ends with the store.
        store.start_applier();
        let windows = store.windows()?.into_iter().collect();
        Ok(Sqlite {
            store,
            windows: Mutex::new(windows),
        })
    }

    /// The store's files, for tests and benchmarks that look at them.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(super) fn window(&self, pad: &str) -> Option<i64> {
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.is_empty() {
            None
        } else {
            windows.get(pad).copied()
        }
    }

    /// Runs `f` when the future is polled, on the polling thread.
    pub(super) fn inline<'a, T: Send + 'a>(
        &'a self,
        f: impl FnOnce(&Store) -> Result<T> + Send + 'a,
    ) -> Fut<'a, T> {
        Box::pin(async move { f(&self.store) })
    }

    /// Runs `f` on a blocking thread: this one, when it runs a whole scan
    /// (`storage::run_on_scan_thread`), else one of the runtime's.
    pub(super) fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T> + Send + 'static,
    ) -> Fut<'static, T> {
        let store = self.store.clone();
        if crate::storage::on_scan_thread() {
            return Box::pin(async move { f(&store) });
        }
        Box::pin(async move {
            tokio::task::spawn_blocking(move || f(&store))
                .await
                .map_err(|e| Error::Internal(format!("background task failed: {e}")))?
        })
    }
}

/// A sequence written once above the stores (`storage::write`,
/// `storage::inbox`) run on SQLite's synchronous statements: its futures
/// never wait, so it is done when first polled.
pub(super) fn ready<T>(sequence: impl Future<Output = Result<T>>) -> Result<T> {
    sequence.now_or_never().unwrap_or_else(|| {
        Err(Error::Internal(
            "a sequence on SQLite waited on something; its statements never wait".into(),
        ))
    })
}
