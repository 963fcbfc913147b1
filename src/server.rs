//! The Unix-socket server: a private socket, one engine per socket, a task per
//! connection, and a shutdown that drains.
//!
//! Security: the socket's directory must be the user's own and closed to
//! everyone else (0700; created so if missing, refused if not), the socket is
//! 0600, and every connection's peer uid must be ours. Only one engine serves a
//! socket: it holds an exclusive lock on `<socket>.lock`, so a socket file
//! left by a crashed engine (whose lock the kernel released) is stale and is
//! replaced, while a live one is reported with its pid.

mod connection;
mod socket;

use std::future::Future;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::UnixListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::engine::lock::{DirLock, NotLocked};
use crate::engine::Engine;

/// A bound socket; removes the socket file when dropped.
pub struct Bound {
    pub listener: UnixListener,
    path: PathBuf,
    _lock: DirLock,
}

impl Drop for Bound {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("an engine is already serving {socket}{}. Use it (pad stats), stop it, or set PAD_SOCKET to serve on another socket.", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    InUse { socket: PathBuf, pid: Option<u32> },
    #[error("socket directory {dir} is not private: {why}. Run `chmod 700 {dir}` if it is yours, or set PAD_SOCKET to a path in a directory only you can enter.", dir = dir.display())]
    NotPrivate { dir: PathBuf, why: String },
    #[error("{path} exists and is not a socket; nothing was removed. Set PAD_SOCKET to a new path (e.g. $XDG_RUNTIME_DIR/scratchpad/pad.sock).", path = path.display())]
    NotASocket { path: PathBuf },
    #[error("cannot set up socket {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// Prepares the private directory, takes the socket lock and binds.
pub fn bind(path: &Path) -> Result<Bound, BindError> {
    let io_err = |source| BindError::Io {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    private_dir(dir)?;
    let lock_path = PathBuf::from(format!("{}.lock", path.display()));
    let lock = DirLock::acquire(&lock_path).map_err(|not| match not {
        NotLocked::Held { pid } => BindError::InUse {
            socket: path.to_owned(),
            pid,
        },
        NotLocked::Io(source) => BindError::Io {
            path: lock_path.clone(),
            source,
        },
    })?;
    // We hold the lock, so any socket file here is a crashed engine's; a
    // file of any other kind is someone's, and stays.
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) => {
            return Err(BindError::NotASocket {
                path: path.to_owned(),
            });
        }
        _ => {}
    }
    match std::fs::remove_file(path) {
        Ok(()) => tracing::info!("replaced stale socket {}", path.display()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(e)),
    }
    let listener = UnixListener::bind(path).map_err(io_err)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io_err)?;
    Ok(Bound {
        listener,
        path: path.to_owned(),
        _lock: lock,
    })
}

fn private_dir(dir: &Path) -> Result<(), BindError> {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| BindError::Io {
                path: dir.to_owned(),
                source,
            }),
        Err(source) => Err(BindError::Io {
            path: dir.to_owned(),
            source,
        }),
        Ok(meta) => {
            let me = crate::paths::uid();
            if meta.uid() != me {
                return Err(BindError::NotPrivate {
                    dir: dir.to_owned(),
                    why: format!("it belongs to uid {}, not to you (uid {me})", meta.uid()),
                });
            }
            if meta.mode() & 0o077 != 0 {
                return Err(BindError::NotPrivate {
                    dir: dir.to_owned(),
                    why: format!("its mode is {:o}; others can enter it", meta.mode() & 0o777),
                });
            }
            Ok(())
        }
    }
}

/// Descriptors kept free of client connections: the database and its
/// derived files, the journal, refusals in flight, and the TCP listeners
/// with their connections (at most `tcp::MAX_CONNECTIONS` each, so two
/// listeners' 128 fit).
const FD_RESERVE: u64 = 256;

/// Serves connections until `shutdown` resolves, then stops accepting, lets
/// each connection finish the requests it has received (up to `drain`), and
/// returns.
pub async fn serve(
    listener: &UnixListener,
    engine: Engine,
    shutdown: impl Future<Output = ()>,
    drain: Duration,
) {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut conns = JoinSet::new();
    // Below the descriptor limit, so the engine never runs out of them and a
    // client over the cap is told so instead of hanging unaccepted.
    let cap = engine
        .config()
        .max_connections
        .unwrap_or_else(|| (crate::paths::fd_limit().saturating_sub(FD_RESERVE) as usize).max(64));
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if conns.len() >= cap => {
                    tokio::spawn(connection::refuse_busy(stream, engine.clone(), cap));
                }
                Ok((stream, _)) => {
                    conns.spawn(connection::run(stream, engine.clone(), stop_rx.clone()));
                }
                Err(e) => {
                    // Out of descriptors and the like: back off rather than spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    let _ = stop_tx.send(true);
    // Clients that connected just before the signal wait in the backlog: they
    // are owed answers too, so accept them (in drain mode) before closing.
    while let Ok(Ok((stream, _))) =
        tokio::time::timeout(Duration::from_millis(10), listener.accept()).await
    {
        conns.spawn(connection::run(stream, engine.clone(), stop_rx.clone()));
    }
    let drained =
        tokio::time::timeout(drain, async { while conns.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            "{} connections did not finish in {drain:?}; closing them",
            conns.len()
        );
        conns.shutdown().await;
    }
}

/// A future that resolves on SIGINT or SIGTERM. The handlers are installed
/// when this is called, not when the future is first polled: until then the
/// signals' default action would kill the process without draining.
pub fn signals() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}
