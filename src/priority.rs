//! Lowering the calling thread's CPU priority, for background work that
//! must never hold up a request: the embedding lane (`semantic/lane.rs`)
//! and the journal's applying thread (`store.rs`). An unprivileged thread
//! may lower its own priority but not raise it back, so the callers lower
//! threads of their own.

/// The calling thread's id (its priority is per thread on Linux).
fn tid() -> libc::pid_t {
    // SAFETY: a plain syscall about the calling thread.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::pid_t }
}

/// Puts the calling thread (and the threads it creates) in SCHED_IDLE: it
/// runs only on CPU time nothing else wants. `what` names it in the log.
pub fn set_idle(what: &str) {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a plain syscall about the calling thread.
    if unsafe { libc::sched_setscheduler(tid(), libc::SCHED_IDLE, &param) } != 0 {
        tracing::debug!("could not move {what} to SCHED_IDLE");
    }
}

/// Lowers the calling thread to `nice`. `what` names it in the log.
pub fn set_nice(nice: libc::c_int, what: &str) {
    // SAFETY: a plain syscall about the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid() as libc::id_t, nice) } != 0 {
        tracing::debug!("could not lower {what} to nice {nice}");
    }
}
