//! Background work: the text indexer, checkpoints, reminders and leases,
//! the expiry sweep, and handing freed memory back to the system.

use std::time::Duration;

use std::sync::Arc;

use super::dispatch::Dispatcher;
use super::Engine;
use crate::clock::QUIET;
use crate::error::Result;
use crate::events::EventType;
use crate::storage::PadSweep;

impl Engine {
    /// Starts the background indexer and expiry sweep; they end on `shutdown`.
    pub fn spawn_background(&self) -> tokio::task::JoinHandle<()> {
        let engine = self.clone();
        let mut stop = self.0.stop.subscribe();
        let dispatcher = Dispatcher {
            agents: self.0.agents.clone(),
            store: self.0.store.clone(),
            said: self.clone(),
            give_up: self.0.config.agent_give_up,
            max_chars: self.0.config.max_content_chars,
        };
        tokio::spawn(Arc::new(dispatcher).run(self.0.stop.subscribe()));
        tokio::spawn(async move {
            let mut checkpoint_tick = tokio::time::interval(Duration::from_secs(1));
            checkpoint_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut checkpointed_epoch = None;
            let mut index_tick = tokio::time::interval(engine.0.config.index_every);
            // The first sweep comes one period after start, not at once: pads
            // expire on a 30 s grain anyway, and an immediate sweep, scheduled
            // late on a busy machine, could run after a test's manual clock
            // has moved on and take the expiry the test itself sweeps for.
            let every = engine.0.config.sweep_every;
            let mut sweep_tick =
                tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            index_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let work_every = engine.0.config.work_every;
            let mut work_tick =
                tokio::time::interval_at(tokio::time::Instant::now() + work_every, work_every);
            work_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            sweep_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Indexing runs only after writes, and a second after the last
            // one the tick stretches to a second: an idle engine stays idle,
            // and wakes seldom. (A search brings the index up to date
            // itself; the tick only keeps that work off the search's path.)
            let mut indexed_epoch = None;
            let mut written_at = tokio::time::Instant::now();
            let mut faults = crate::faults::Faults::default();
            loop {
                tokio::select! {
                    _ = stop.changed() => break,
                    _ = index_tick.tick() => {
                        let Some(epoch) = engine.db().write_epoch() else {
                            // PostgreSQL indexes as it writes.
                            index_tick.reset_after(Duration::from_secs(3600));
                            continue;
                        };
                        if indexed_epoch == Some(epoch) {
                            if written_at.elapsed() >= QUIET {
                                index_tick.reset_after(QUIET);
                            }
                            continue;
                        }
                        written_at = tokio::time::Instant::now();
                        let r = engine.index_now().await;
                        if faults.note("text indexing", r) {
                            indexed_epoch = Some(epoch);
                        }
                    }
                    _ = checkpoint_tick.tick() => {
                        trim_if_wanted();
                        // A store that cannot tell whether anything was
                        // written (PostgreSQL) decides itself, cheaply.
                        let epoch = engine.db().write_epoch();
                        if epoch.is_some() && checkpointed_epoch == epoch {
                            continue;
                        }
                        let r = engine.db().checkpoint().await;
                        if faults.note("checkpoint", r) {
                            checkpointed_epoch = epoch;
                        }
                    }
                    _ = work_tick.tick() => {
                        let r = engine.deliver_reminders().await;
                        faults.note("delivering reminders", r.map(drop));
                        let r = engine.release_leases().await;
                        faults.note("releasing task leases", r.map(drop));
                    }
                    _ = sweep_tick.tick() => {
                        let r = engine.sweep().await;
                        faults.note("the expiry sweep", r.map(drop));
                    }
                }
            }
        })
    }

    /// Brings the text index up to date and drops deleted entries from it.
    /// (PostgreSQL indexes as it writes: nothing to do there.)
    pub async fn index_now(&self) -> Result<()> {
        self.db().index_text().await
    }

    /// Runs one expiry sweep now: archives idle pads, purges old archives.
    pub async fn sweep(&self) -> Result<PadSweep> {
        let retention = self.0.config.retention.as_millis() as i64;
        let now = self.now();
        let done = self.db().sweep(now, retention).await?;
        let (cutoff, max) = (
            now - self.0.config.history.as_millis() as i64,
            self.0.config.history_max,
        );
        let pruned = self.db().prune_history(cutoff, max).await?;
        if pruned > 0 {
            tracing::info!(
                "dropped {pruned} versions and deleted entries kept past the history's retention"
            );
        }
        if let Some(m) = self.metrics() {
            m.swept(done.archived.len(), done.purged_pads, done.purged_entries);
        }
        for pad in &done.archived {
            tracing::info!("pad '{pad}' expired and was archived");
            self.0.bus.publish(EventType::PadExpired, pad, None);
        }
        if done.purged_entries > 0 || done.purged_pads > 0 {
            tracing::info!(
                "purged {} entries and {} pads archived past retention",
                done.purged_entries,
                done.purged_pads
            );
        }
        Ok(done)
    }

    /// Stops background work and closes the store cleanly.
    pub async fn shutdown(&self) {
        let _ = self.0.stop.send(true);
        // The embedding worker applies what it has and saves the index.
        if let Some(s) = self.semantic().cloned() {
            let _ = tokio::task::spawn_blocking(move || s.stop()).await;
        }
        if let Err(e) = self.index_now().await {
            tracing::warn!("final text indexing failed: {e}");
        }
        if let Err(e) = self.db().close().await {
            tracing::warn!("closing the store failed: {e}");
        }
        // Everything is saved: the data directory is free for the next
        // engine, whoever still holds a handle to this one.
        drop(self.0.lock.lock().unwrap_or_else(|p| p.into_inner()).take());
    }
}

/// Has glibc's malloc give blocks of 1 MiB and more straight back to the
/// system when they are freed. By default it raises that threshold as large
/// blocks are freed, up to 32 MiB, and then keeps them in its per-thread
/// arenas: after a few large answers (an export, a batch) the engine would
/// keep their memory for good.
pub(super) fn return_large_blocks() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes malloc's tuning; any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Set when a connection ends: its buffers (128 KiB and more each) went
/// back to malloc, which keeps freed memory below the mmap threshold.
static TRIM_WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a connection's buffers were freed; within a second the
/// background task hands free memory back to the system.
pub(crate) fn memory_freed() {
    TRIM_WANTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Gives freed heap memory back to the system, if connections ended since
/// the last call (so 2,000 closed connections do not keep their ~600 MB),
/// on a blocking thread: a trim walks every arena.
fn trim_if_wanted() {
    if TRIM_WANTED.swap(false, std::sync::atomic::Ordering::Relaxed) {
        #[cfg(target_env = "gnu")]
        tokio::task::spawn_blocking(|| {
            // SAFETY: malloc_trim only returns free memory to the system.
            unsafe { libc::malloc_trim(0) };
        });
    }
}
