//! Where a batch of embeddings runs: on a thread of its own, at a priority
//! that yields to the machine's other work without starving, in pieces
//! sized to that pace (`Chunks`) so a query never waits long behind it.
//!
//! Embedding a backlog is background work. On a small machine it would
//! otherwise share a core with writes and stretch their tail latency
//! (measured: write p99 400 µs with a backlog draining under SCHED_IDLE,
//! 2.2 ms at nice 19), so a batch runs in Linux's SCHED_IDLE class: only on
//! CPU time nothing else wants. But on a machine busy with other work (a
//! build, a fresh clone's tests beside `stress-ng --cpu 2`) SCHED_IDLE gets
//! next to nothing — 1.2 embeddings a second were measured — and a backlog
//! would take hours. So a batch that was starved (its thread ran under a
//! quarter of its wall time) sends the next ones to nice 5, which still
//! yields three quarters of a contended core to everything at normal
//! priority; once a
//! batch there ran nearly unhindered, the CPU is free again and batches go
//! back to SCHED_IDLE.
//!
//! Each batch gets a fresh thread because an unprivileged thread may lower
//! its own priority but not raise it back (RLIMIT_NICE is 0 by default): a
//! new thread starts from the worker's normal priority and lowers it as the
//! batch needs. The worker itself stays at normal priority, so a search's
//! query embedding (one short text) is not held up by a busy machine.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::priority;

/// What the calling thread does while a run is on a thread of its own.
pub struct Waiting<'a> {
    /// Called on the run's thread once its work is done (and `done` set),
    /// so that a `serve` waiting for something to do returns.
    pub wake: &'a (dyn Fn() + Sync),
    /// Called on the calling thread until the run is done: waits for one
    /// thing to do (a query, or `wake`) and does it.
    pub serve: &'a mut dyn FnMut(&AtomicBool),
}

impl Waiting<'_> {
    /// Until `done`: serve.
    fn until(&mut self, done: &AtomicBool) {
        while !done.load(Ordering::Acquire) {
            (self.serve)(done);
        }
    }
}

/// Where the next batch runs.
#[derive(Default)]
pub struct Lane {
    escalated: Cell<bool>,
}

/// The nice value of a starved backlog's batches.
const ESCALATED_NICE: libc::c_int = 5;
/// A batch shorter than this says nothing about starvation.
const TELLING: Duration = Duration::from_millis(250);

impl Lane {
    /// Runs `work` on a thread at this lane's priority, and moves the lane
    /// by how much of its wall time that thread got the CPU. Meanwhile the
    /// calling thread serves (`Waiting`): it is never blocked behind a
    /// starved run.
    pub fn run<T: Send>(&self, work: impl FnOnce() -> T + Send, waiting: &mut Waiting) -> T {
        let escalated = self.escalated.get();
        let done = AtomicBool::new(false);
        let wake = waiting.wake;
        let (out, cpu, wall) = std::thread::scope(|s| {
            let run = std::thread::Builder::new()
                .name("pad-embed-batch".into())
                .spawn_scoped(s, || {
                    lower(escalated);
                    let (cpu0, t0) = (thread_cpu(), Instant::now());
                    let out = work();
                    let ran = (out, thread_cpu().saturating_sub(cpu0), t0.elapsed());
                    done.store(true, Ordering::Release);
                    wake();
                    ran
                })
                .expect("spawn an embedding thread");
            waiting.until(&done);
            run.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        let next = next_lane(escalated, cpu, wall);
        if next != escalated {
            tracing::debug!(
                "embedding batches now run {} (the last got {:?} of CPU in {:?})",
                if next {
                    "at nice 5: the machine is busy"
                } else {
                    "at idle priority"
                },
                cpu,
                wall
            );
        }
        self.escalated.set(next);
        out
    }

    /// Runs `a` and `b` at once, each on a thread of its own at this
    /// lane's priority; the lane moves by how `a` fared.
    pub fn run_pair<A: Send, B: Send>(
        &self,
        a: impl FnOnce() -> A + Send,
        b: impl FnOnce() -> B + Send,
        waiting: &mut Waiting,
    ) -> (A, B) {
        let escalated = self.escalated.get();
        let done = AtomicBool::new(false);
        let wake = waiting.wake;
        std::thread::scope(|s| {
            let other = std::thread::Builder::new()
                .name("pad-embed-pair".into())
                .spawn_scoped(s, || {
                    lower(escalated);
                    let out = b();
                    done.store(true, Ordering::Release);
                    wake();
                    out
                })
                .expect("spawn an embedding thread");
            let first = self.run(a, waiting);
            waiting.until(&done);
            let second = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (first, second)
        })
    }

    /// Whether batches run at nice 5 because the machine is busy.
    pub fn escalated(&self) -> bool {
        self.escalated.get()
    }
}

/// Moves the calling thread to the lane's priority.
fn lower(escalated: bool) {
    if escalated {
        priority::set_nice(ESCALATED_NICE, "an embedding thread");
    } else {
        priority::set_idle("an embedding thread");
    }
}

/// Escalate after a starved batch (under a quarter of its wall time on the
/// CPU); come back once an escalated batch ran nearly unhindered.
fn next_lane(escalated: bool, cpu: Duration, wall: Duration) -> bool {
    if wall < TELLING {
        return escalated;
    }
    if escalated {
        cpu * 10 < wall * 7
    } else {
        cpu * 4 < wall
    }
}

/// The calling thread's CPU time so far.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a plain syscall writing into `t`.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A batch's texts in runs sized from how fast the last run went: as many
/// texts as fit in `TARGET_RUN` at its pace, at most the batch, at least
/// one. On a free CPU a batch runs whole (batching is what makes embedding
/// fast); where the lane is starved (SCHED_IDLE beside a busy machine) a
/// run is one text, so a search's query embedding, answered between runs,
/// waits for one text rather than a whole batch.
pub struct Chunks<'a, 'b> {
    rest: &'a [&'b str],
    size: &'a Cell<usize>,
    max: usize,
}

/// One run of `Chunks`: its texts, and `done()` to time it.
pub struct Chunk<'a, 'b> {
    pub texts: &'a [&'b str],
    size: &'a Cell<usize>,
    max: usize,
    started: Instant,
}

pub const TARGET_RUN: Duration = Duration::from_millis(250);

impl<'a, 'b> Chunks<'a, 'b> {
    pub fn new(texts: &'a [&'b str], size: &'a Cell<usize>, max: usize) -> Self {
        Chunks {
            rest: texts,
            size,
            max: max.max(1),
        }
    }
}

impl<'a, 'b> Chunks<'a, 'b> {
    /// The next run, of at most `cap` texts (while writes stream, runs are
    /// short: `pace.rs`).
    pub fn next_up_to(&mut self, cap: usize) -> Option<Chunk<'a, 'b>> {
        if self.rest.is_empty() {
            return None;
        }
        let k = self
            .size
            .get()
            .clamp(1, self.max)
            .min(cap.max(1))
            .min(self.rest.len());
        let (now, later) = self.rest.split_at(k);
        self.rest = later;
        Some(Chunk {
            texts: now,
            size: self.size,
            max: self.max,
            started: Instant::now(),
        })
    }
}

impl<'a, 'b> Iterator for Chunks<'a, 'b> {
    type Item = Chunk<'a, 'b>;

    fn next(&mut self) -> Option<Chunk<'a, 'b>> {
        self.next_up_to(self.max)
    }
}

impl Chunk<'_, '_> {
    pub fn done(self) {
        let per_text = self.started.elapsed() / self.texts.len().max(1) as u32;
        let fits = TARGET_RUN.as_micros() / per_text.as_micros().max(1);
        self.size.set((fits as usize).clamp(1, self.max));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_fit_the_pace_of_the_last_one() {
        let texts: Vec<&str> = vec!["t"; 40];
        let size = Cell::new(1);
        let mut sizes = Vec::new();
        for chunk in Chunks::new(&texts, &size, 16) {
            sizes.push(chunk.texts.len());
            // A free CPU: 1 ms a text, so a run grows to the whole batch.
            std::thread::sleep(Duration::from_millis(chunk.texts.len() as u64));
            chunk.done();
        }
        assert_eq!(sizes.iter().sum::<usize>(), 40);
        assert_eq!(sizes[..3], [1, 16, 16]);
        // A starved lane: a text takes longer than a run should: one at a time.
        let slow = ["t"; 4];
        let mut chunks = Chunks::new(&slow, &size, 16);
        let c = chunks.next().unwrap();
        assert_eq!(c.texts.len(), 4);
        std::thread::sleep(Duration::from_millis(1200));
        c.done();
        assert_eq!(size.get(), 1);
        assert_eq!(chunks.next().map(|c| c.texts.len()), None);
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_starved_batch_escalates_and_a_free_one_comes_back() {
        assert!(
            !next_lane(false, ms(900), ms(1000)),
            "got the CPU: stays idle"
        );
        assert!(next_lane(false, ms(20), ms(1000)), "starved: escalates");
        assert!(next_lane(true, ms(100), ms(1000)), "still contended: stays");
        assert!(
            !next_lane(true, ms(950), ms(1000)),
            "free again: back to idle"
        );
        assert!(!next_lane(false, ms(1), ms(100)), "too short to tell");
        assert!(next_lane(true, ms(1), ms(100)), "too short to tell");
    }

    #[test]
    fn a_batch_runs_and_its_result_comes_back() {
        let lane = Lane::default();
        let mut model = vec![1, 2, 3];
        let (tx, rx) = std::sync::mpsc::channel();
        let served = Cell::new(0);
        let sum: i32 = lane.run(
            || {
                model.push(4);
                model.iter().sum()
            },
            &mut Waiting {
                wake: &|| tx.send(()).unwrap(),
                serve: &mut |_| {
                    rx.recv().unwrap();
                    served.set(served.get() + 1);
                },
            },
        );
        assert_eq!(sum, 10);
        assert_eq!(model.len(), 4);
        assert!(!lane.escalated(), "a quick batch moves nothing");
        assert!(served.get() <= 1, "woken once, at its end");
    }

    #[test]
    fn the_caller_serves_while_a_run_is_held_up() {
        // The run waits for the caller to serve: had the caller blocked on
        // the run (its join), neither would go on.
        let lane = Lane::default();
        let (go, started) = std::sync::mpsc::channel::<()>();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let served = Cell::new(0);
        let (a, b) = lane.run_pair(
            move || started.recv().map(|_| 1),
            || 2,
            &mut Waiting {
                wake: &|| tx.send(()).unwrap(),
                serve: &mut |_| {
                    if served.get() == 0 {
                        go.send(()).unwrap();
                    }
                    served.set(served.get() + 1);
                    rx.recv().unwrap();
                },
            },
        );
        assert_eq!((a.unwrap(), b), (1, 2));
        assert!(served.get() >= 1);
    }
}
