//! Background threads run on CPU time nothing else wants.

/// Puts the calling thread (and any threads it creates, which inherit it) in
/// Linux's SCHED_IDLE class: it runs only when no ordinary thread wants the
/// CPU, and an ordinary thread that wakes up takes the CPU from it at once.
/// For work nobody is waiting on — applying the insert journal, embedding —
/// which would otherwise share a core with the answers to clients and
/// stretch their latency. Work that must not fall behind for good needs a
/// bound of its own (the journal has one: `JOURNAL_BACKLOG`).
pub(crate) fn spare_cpu_only(what: &str) {
    // SAFETY: a plain syscall about the calling thread (pid 0: this thread).
    let rc = unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param)
    };
    if rc != 0 {
        tracing::debug!(
            "could not move the {what} thread to SCHED_IDLE: {}",
            std::io::Error::last_os_error()
        );
    }
}
