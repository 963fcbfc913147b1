//! A second model for a backlog: while many entries wait to be embedded and
//! the machine has a core to spare, each run of a batch is split between the
//! worker's model and a second copy of it, on two threads at the lane's
//! (idle) priority, so a backlog drains about twice as fast on two cores.
//!
//! One ONNX Runtime session with two threads drains slower (169 turns/s
//! against 185 for two one-thread sessions, the same 2,760 LoCoMo turns,
//! docs/benchmarks.md): its threads meet at every
//! operator of a small batch, and the second one is created at the session's
//! start, at normal priority, where the lane cannot lower it. Two sessions
//! of one thread each share nothing, and each runs on a thread the lane
//! puts in SCHED_IDLE. The copy costs its weights and buffers (~85 MiB at
//! the peak with MiniLM int8) while it lives: it is loaded once the backlog has lasted
//! `LOAD_AFTER` batches and dropped when the backlog is gone or the
//! machine gets busy (the lane escalates: the spare core is someone's).

use super::Model;

/// Whether a backlog may use a second model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Helper {
    /// When a core is spare: the machine has more cores than the model's
    /// threads take twice over, and the lane is not starved.
    #[default]
    Auto,
    /// Never (one model, whatever the backlog).
    Never,
    /// Whenever a backlog lasts, busy machine or not (tests).
    Always,
}

/// Batches in a row with more behind them before the copy is loaded: a
/// burst of a few notes is not a backlog.
const LOAD_AFTER: u32 = 3;

/// The copy and when it is wanted.
#[derive(Default)]
pub struct Backlog {
    helper: Helper,
    /// The machine's cores, read once.
    cores: usize,
    /// Batches in a row that left more to embed.
    streak: u32,
    model: Option<Model>,
}

impl Backlog {
    pub fn new(helper: Helper) -> Backlog {
        Backlog {
            helper,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ..Backlog::default()
        }
    }

    /// Before a batch: loads the copy if the backlog wants one (`load`
    /// builds it), drops it if the machine got busy. Returns the copy to
    /// split the batch with.
    pub fn before_batch(
        &mut self,
        threads: usize,
        starved: bool,
        load: impl FnOnce() -> Result<Model, String>,
    ) -> Option<&mut Model> {
        let wanted =
            self.streak >= LOAD_AFTER && allowed(self.helper, self.cores, threads, starved);
        if !wanted {
            if self.model.take().is_some() {
                tracing::info!("embedding the backlog on one model again (the machine is busy)");
            }
            return None;
        }
        if self.model.is_none() {
            match load() {
                Ok(m) => {
                    tracing::info!(
                        "a backlog: embedding on a second copy of the model at idle priority"
                    );
                    self.model = Some(m);
                }
                Err(why) => {
                    tracing::warn!("a second copy of the model did not load ({why}); one it is");
                    self.helper = Helper::Never;
                }
            }
        }
        self.model.as_mut()
    }

    /// After a batch: `more` says whether the backlog goes on.
    pub fn after_batch(&mut self, more: bool) {
        if more {
            self.streak = self.streak.saturating_add(1);
        } else {
            self.streak = 0;
            if self.model.take().is_some() {
                tracing::info!("the backlog is embedded; the second copy of the model is let go");
            }
        }
    }

    #[cfg(test)]
    fn loaded(&self) -> bool {
        self.model.is_some()
    }
}

/// Whether a copy may run: `Auto` wants a core no one else needs.
fn allowed(helper: Helper, cores: usize, threads: usize, starved: bool) -> bool {
    match helper {
        Helper::Never => false,
        Helper::Always => true,
        Helper::Auto => cores >= 2 * threads.max(1) && !starved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_needs_a_spare_core_and_a_quiet_machine() {
        assert!(allowed(Helper::Auto, 2, 1, false));
        assert!(!allowed(Helper::Auto, 1, 1, false), "one core");
        assert!(!allowed(Helper::Auto, 2, 2, false), "two threads take both");
        assert!(allowed(Helper::Auto, 4, 2, false));
        assert!(!allowed(Helper::Auto, 8, 1, true), "a busy machine");
        assert!(allowed(Helper::Always, 1, 1, true));
        assert!(!allowed(Helper::Never, 8, 1, false));
    }

    #[test]
    fn a_lasting_backlog_wants_the_copy_and_its_end_lets_it_go() {
        let mut b = Backlog::new(Helper::Always);
        let loads = std::cell::Cell::new(0);
        let fail = || -> Result<Model, String> {
            loads.set(loads.get() + 1);
            Err("no model in a unit test".into())
        };
        for _ in 0..LOAD_AFTER {
            assert!(b.before_batch(1, false, fail).is_none());
            b.after_batch(true);
        }
        assert!(b.before_batch(1, false, fail).is_none());
        assert_eq!(loads.get(), 1, "the lasting backlog asked for a copy");
        // It failed to load: never asked again.
        b.after_batch(true);
        assert!(b.before_batch(1, false, fail).is_none());
        assert_eq!(loads.get(), 1);
        assert!(!b.loaded());
        // A burst never asks.
        let mut b = Backlog::new(Helper::Always);
        for _ in 0..10 {
            assert!(b.before_batch(1, false, fail).is_none());
            b.after_batch(true);
            b.after_batch(false);
        }
        assert_eq!(loads.get(), 1);
    }
}
