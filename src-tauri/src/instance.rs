//! One app per data directory. The first instance holds an exclusive lock
//! on `<data>/app.lock` and listens on `<data>/app.sock` (the data directory
//! is private, 0700); a second launch finds the lock taken, asks the first
//! to show its window over that socket, and exits — so there is never a
//! second window, a second hotkey, or every notification twice.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Duration;

/// This process is the app for its data directory while this lives.
pub struct Instance {
    _lock: File,
}

/// What `claim` found.
pub enum Claim {
    /// This is the first instance: serve `listen` for later launches.
    First(Instance, UnixListener),
    /// Another instance runs and was asked to show itself.
    Shown,
}

const LOCK: &str = "app.lock";
const SOCKET: &str = "app.sock";

/// Takes the data directory's app lock, or asks its holder to show itself.
pub fn claim(data_dir: &Path) -> std::io::Result<Claim> {
    std::fs::create_dir_all(data_dir)?;
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(data_dir.join(LOCK))?;
    // SAFETY: flock on a descriptor this process owns.
    let taken = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0;
    let socket = data_dir.join(SOCKET);
    if taken {
        // The first instance may still be starting: its socket comes a
        // moment after its lock.
        for _ in 0..50 {
            if let Ok(mut s) = UnixStream::connect(&socket) {
                s.write_all(b"show\n")?;
                return Ok(Claim::Shown);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        return Err(std::io::Error::other(format!(
            "another Scratchpad app holds {} but does not answer on {}",
            data_dir.join(LOCK).display(),
            socket.display()
        )));
    }
    // We hold the lock, so a socket file left here is a dead instance's.
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)?;
    Ok(Claim::First(Instance { _lock: lock }, listener))
}

/// Serves later launches on its own thread: each `show` line calls `show`.
pub fn serve(listener: UnixListener, show: impl Fn() + Send + 'static) {
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut line = String::new();
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            if BufReader::new(&stream).read_line(&mut line).is_ok() && line.trim() == "show" {
                show();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_asks_the_first_to_show_itself() {
        let dir = tempfile::tempdir().unwrap();
        let Claim::First(_first, listener) = claim(dir.path()).unwrap() else {
            panic!("the first claim wins");
        };
        let (tx, rx) = std::sync::mpsc::channel();
        serve(listener, move || {
            let _ = tx.send(());
        });
        assert!(matches!(claim(dir.path()).unwrap(), Claim::Shown));
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the first instance was asked to show");
    }
}
