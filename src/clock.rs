//! Wall-clock time for the engine, injectable so tests can travel in time.
//!
//! Everything that stamps or expires data asks the engine's `Clock` for "now"
//! in Unix milliseconds. The system clock is the normal source; a manual clock
//! starts at a given instant and only moves when a test advances it, so expiry
//! and retention are tested without sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Background work that looks for writes every fraction of a second (the
/// text index's tick, the embedding worker) looks once per `QUIET` after
/// this long without one, so an idle engine wakes seldom.
pub const QUIET: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, Default)]
pub struct Clock {
    manual: Option<Arc<AtomicI64>>,
}

impl Clock {
    pub fn system() -> Self {
        Clock { manual: None }
    }

    /// A clock frozen at `start_ms` (Unix milliseconds) until advanced.
    pub fn manual(start_ms: i64) -> Self {
        Clock {
            manual: Some(Arc::new(AtomicI64::new(start_ms))),
        }
    }

    pub fn now_ms(&self) -> i64 {
        match &self.manual {
            Some(t) => t.load(Ordering::SeqCst),
            None => system_now_ms(),
        }
    }

    /// Moves a manual clock forward. Panics on the system clock: a test that
    /// thinks it controls time but does not must fail loudly.
    pub fn advance(&self, by: Duration) {
        let t = self
            .manual
            .as_ref()
            .expect("advance() needs a manual clock");
        t.fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }
}

pub fn system_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
