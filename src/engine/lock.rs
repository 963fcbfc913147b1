//! Advisory file locks that say who holds them.
//!
//! One engine per data directory and one per socket: the holder keeps an
//! exclusive `flock` on a lock file for its lifetime and writes its pid into
//! it. The kernel drops the lock when the process dies, however it dies, so a
//! crash never leaves a lock behind that needs cleaning up by hand.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;

#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum NotLocked {
    /// Another process holds it; `pid` is who wrote it, if readable.
    Held { pid: Option<u32> },
    /// The lock file cannot be opened or locked at all (a read-only or
    /// failing file system, no permission): nobody holds it.
    Io(std::io::Error),
}

impl DirLock {
    pub fn acquire(path: &Path) -> Result<DirLock, NotLocked> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(NotLocked::Io)?;
        // SAFETY: flock on a descriptor we own; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(NotLocked::Io(e));
            }
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(NotLocked::Held {
                pid: text.trim().parse().ok(),
            });
        }
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(DirLock { _file: file })
    }
}
