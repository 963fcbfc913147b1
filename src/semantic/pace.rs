//! When the encoders may run: not while writes stream in.
//!
//! The lane (`lane.rs`) keeps a batch off the CPU a writer wants, but a
//! run on the other core still costs the writer (the model's weights
//! stream through the caches both cores share, and the worker commits
//! what it encoded at normal priority), so the worker also stays out of
//! the way in time:
//!
//! - **Gather**: a run starts only once the engine's writes have been
//!   quiet for `GATHER`; a burst of notes is encoded together after it,
//!   not one run per note as they arrive, and a stream is not run into.
//! - **Yield, with a bound**: while writes keep arriving, runs wait; once
//!   they have waited `YIELD_MAX`, one short batch (`STREAMING_BATCH`
//!   notes) goes anyway, so a steady stream is still encoded, slowly,
//!   and the rest once it pauses.
//! - **Never past what a search waits for**: runs hold back at most
//!   `HELD_AT_MOST` notes; past that, a whole batch goes, stream or not,
//!   so a search right after a stream still finds the backlog small
//!   enough to wait for (`SETTLE_MAX_BACKLOG`) and reads its writes by
//!   meaning. Past that too (more waiting than a search waits for: it
//!   answers at once and says what is not encoded yet), whole batches
//!   still go for `CATCH_UP`, which brings a stream the encoders outpace
//!   back under the bound; a flood still over it then outruns them, and
//!   is yielded to like any stream until it pauses: running into it
//!   would cost every write and keep no search's read.
//! - **Hurry**: a search waiting for its writes (`settle`) wakes the
//!   worker, which then runs at once, whole batches, until nothing is
//!   left or the search has stopped waiting (`SETTLE_TIMEOUT`).
//!
//! The writes yielded to are this engine's own (`VectorSource::own_writes`):
//! the encoders share this machine's cores with its writers, not with
//! another engine's. On PostgreSQL, where other engines write to the same
//! queue, that is the write transactions this engine began.

use std::time::{Duration, Instant};

use super::{SETTLE_MAX_BACKLOG, SETTLE_TIMEOUT};

/// Writes closer together than this are a stream; a run waits for a gap
/// this long.
pub const GATHER: Duration = Duration::from_millis(100);
/// The longest runs wait for a stream to pause.
pub const YIELD_MAX: Duration = Duration::from_secs(1);
/// How long whole batches go into a backlog past what a search waits for
/// before it is a flood that outruns them: about one batch (16 notes at
/// the ~70 a second both encoders manage on one thread). A second cost
/// the writer's p99 1.7–3.5× Redis's with each process on its own core;
/// 250 ms kept it under Redis's (docs/benchmarks.md, issue 71, session 7).
pub const CATCH_UP: Duration = Duration::from_millis(250);
/// Notes in a batch that runs while writes still stream.
pub const STREAMING_BATCH: usize = 2;

/// The most notes runs hold back for a stream: half of what a search
/// still waits for, so the notes written while a batch runs fit too.
pub const HELD_AT_MOST: i64 = SETTLE_MAX_BACKLOG / 2;

/// What the worker does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Encode a batch of at most this many notes.
    Run(usize),
    /// Writes are streaming: look again after this long.
    Wait(Duration),
}

/// The writes seen and the runs held back.
#[derive(Debug)]
pub struct Pace {
    /// The engine's write counter as last seen, and when it last moved.
    epoch: u64,
    moved_at: Instant,
    /// Since when runs have been held back for a stream.
    held_since: Option<Instant>,
    /// Until when someone waits for the backlog.
    hurry_until: Option<Instant>,
    /// Since when the backlog has been over what a search waits for.
    flooded_since: Option<Instant>,
}

impl Pace {
    pub fn new(now: Instant) -> Pace {
        Pace {
            epoch: 0,
            moved_at: now,
            held_since: None,
            hurry_until: None,
            flooded_since: None,
        }
    }

    /// The engine's write counter, read now.
    pub fn saw(&mut self, epoch: u64, now: Instant) {
        if epoch != self.epoch {
            self.moved_at = now;
        }
        self.epoch = epoch;
    }

    /// Someone waits for what is written to be encoded.
    pub fn hurry(&mut self, now: Instant) {
        self.hurry_until = Some(now + SETTLE_TIMEOUT);
    }

    /// Nothing is left to encode: a hurry, a flood are over.
    pub fn caught_up(&mut self) {
        self.hurry_until = None;
        self.flooded_since = None;
    }

    /// Whether a run of at most `batch` notes may start now; `backlog`
    /// counts the notes waiting, up to one past `SETTLE_MAX_BACKLOG`
    /// (asked only while writes stream).
    pub fn next(
        &mut self,
        batch: usize,
        now: Instant,
        backlog: impl FnOnce() -> Option<i64>,
    ) -> Next {
        let hurried = self.hurry_until.is_some_and(|until| now < until);
        let quiet = now.saturating_duration_since(self.moved_at);
        if hurried || quiet >= GATHER || self.catching_up(now, backlog()) {
            self.held_since = None;
            return Next::Run(batch);
        }
        let held = *self.held_since.get_or_insert(now);
        let waited = now.saturating_duration_since(held);
        if waited >= YIELD_MAX {
            self.held_since = None;
            return Next::Run(STREAMING_BATCH.min(batch));
        }
        Next::Wait((GATHER - quiet).min(YIELD_MAX - waited))
    }

    /// While writes stream: whether `waiting` notes call for a whole batch
    /// (more than runs hold back, and not a flood that has outrun whole
    /// batches for `CATCH_UP` already).
    fn catching_up(&mut self, now: Instant, waiting: Option<i64>) -> bool {
        match waiting {
            Some(n) if n > SETTLE_MAX_BACKLOG => {
                let since = *self.flooded_since.get_or_insert(now);
                now.saturating_duration_since(since) < CATCH_UP
            }
            Some(n) => {
                self.flooded_since = None;
                n >= HELD_AT_MOST
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_burst_is_gathered_and_run_after_it() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        p.saw(1, t0);
        // Writes 20 ms apart: wait.
        for i in 1..10u64 {
            let now = t0 + ms(20 * i);
            p.saw(1 + i, now);
            assert!(matches!(p.next(16, now, || Some(0)), Next::Wait(d) if d <= GATHER));
        }
        // The burst is over: one whole batch once it has been quiet a while.
        let end = t0 + ms(180);
        assert!(matches!(
            p.next(16, end + ms(50), || Some(0)),
            Next::Wait(_)
        ));
        assert_eq!(p.next(16, end + GATHER, || Some(0)), Next::Run(16));
    }

    #[test]
    fn a_steady_stream_still_gets_short_runs() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        let mut runs = Vec::new();
        // A write every 10 ms for 3.5 s; the worker looks every 10 ms.
        for i in 0..350u64 {
            let now = t0 + ms(10 * i);
            p.saw(i, now);
            if let Next::Run(n) = p.next(16, now, || Some(0)) {
                runs.push((i * 10, n));
            }
        }
        assert_eq!(
            runs.iter().map(|r| r.1).collect::<Vec<_>>(),
            [STREAMING_BATCH; 3],
            "{runs:?}"
        );
        assert!(runs.iter().all(|r| r.0 >= 1000), "{runs:?}");
    }

    #[test]
    fn a_waiting_search_hurries() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        p.saw(1, t0);
        assert!(matches!(p.next(16, t0, || Some(0)), Next::Wait(_)));
        p.hurry(t0);
        p.saw(2, t0 + ms(5));
        assert_eq!(p.next(16, t0 + ms(5), || Some(0)), Next::Run(16));
        p.caught_up();
        p.saw(3, t0 + ms(6));
        assert!(matches!(p.next(16, t0 + ms(6), || Some(0)), Next::Wait(_)));
        // A hurry ends by itself once no search waits any longer.
        let mut p = Pace::new(t0);
        p.hurry(t0);
        p.saw(1, t0 + SETTLE_TIMEOUT);
        assert!(matches!(
            p.next(16, t0 + SETTLE_TIMEOUT, || Some(0)),
            Next::Wait(_)
        ));
    }

    #[test]
    fn a_stream_holds_back_no_more_than_a_search_waits_for() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        p.saw(1, t0);
        p.saw(2, t0 + ms(10));
        let now = t0 + ms(20);
        assert!(matches!(
            p.next(16, now, || Some(HELD_AT_MOST - 1)),
            Next::Wait(_)
        ));
        assert_eq!(p.next(16, now, || Some(HELD_AT_MOST)), Next::Run(16));
        const { assert!(HELD_AT_MOST + 16 <= SETTLE_MAX_BACKLOG) };
    }

    #[test]
    fn a_flood_that_outruns_whole_batches_is_yielded_to() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        let flood = SETTLE_MAX_BACKLOG + 1;
        let at = |p: &mut Pace, ms_: u64, waiting: i64| {
            let now = t0 + ms(ms_);
            p.saw(ms_, now);
            p.next(16, now, || Some(waiting))
        };
        // Over the bound: whole batches for a while, to catch up.
        assert_eq!(at(&mut p, 10, flood), Next::Run(16));
        assert_eq!(at(&mut p, 200, flood), Next::Run(16));
        // Still over it past `CATCH_UP`: the flood outruns them; yield.
        assert!(matches!(at(&mut p, 300, flood), Next::Wait(_)));
        assert!(matches!(at(&mut p, 1200, flood), Next::Wait(_)));
        // A short batch once runs have waited their bound.
        assert_eq!(at(&mut p, 1310, flood), Next::Run(STREAMING_BATCH));
        // Back under the bound (the stream slowed): whole batches again,
        // and a later flood gets its second of catching up anew.
        assert_eq!(at(&mut p, 2100, SETTLE_MAX_BACKLOG), Next::Run(16));
        assert_eq!(at(&mut p, 2200, flood), Next::Run(16));
    }
}
