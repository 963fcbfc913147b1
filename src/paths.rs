//! Where the socket and the data live (docs/protocol.md, "Transport").

use std::path::{Path, PathBuf};

/// `$PAD_SOCKET`, else `$XDG_RUNTIME_DIR/scratchpad/pad.sock`, else `/tmp/scratchpad-$UID/pad.sock`.
pub fn socket_path() -> PathBuf {
    if let Some(p) = non_empty("PAD_SOCKET") {
        return PathBuf::from(p);
    }
    if let Some(run) = non_empty("XDG_RUNTIME_DIR") {
        return PathBuf::from(run).join("scratchpad").join("pad.sock");
    }
    PathBuf::from(format!("/tmp/scratchpad-{}", uid())).join("pad.sock")
}

/// The file in the data directory where a serving engine records its
/// socket.
pub const SOCKET_RECORD: &str = "engine.socket";

/// Where a client looks for the engine: `$PAD_SOCKET`, else
/// `$XDG_RUNTIME_DIR/scratchpad/pad.sock`; without either, the socket the
/// engine of this data directory recorded — MCP clients start `pad mcp` with
/// only HOME, LOGNAME, PATH, SHELL, TERM and USER, and HOME still leads to
/// the data directory — else `/tmp/scratchpad-$UID/pad.sock`.
pub fn client_socket_path() -> PathBuf {
    if non_empty("PAD_SOCKET").is_some() || non_empty("XDG_RUNTIME_DIR").is_some() {
        return socket_path();
    }
    std::fs::read_to_string(data_dir().join(SOCKET_RECORD))
        .ok()
        .map(|s| PathBuf::from(s.trim_end_matches('\n')))
        .filter(|p| p.is_absolute())
        .unwrap_or_else(socket_path)
}

/// Records in the data directory the socket an engine serves, so clients
/// with a stripped environment find it.
pub fn record_socket(data_dir: &std::path::Path, socket: &std::path::Path) -> std::io::Result<()> {
    let socket = std::path::absolute(socket)?;
    write_private(
        &data_dir.join(SOCKET_RECORD),
        &format!("{}\n", socket.display()),
    )
}

/// Writes `text` to `path` readable only by its owner (0600), whole: into a
/// temp file beside it, synced, then renamed over it — a crash never leaves
/// half a file.
pub fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// `$PAD_HOME`, else `$XDG_DATA_HOME/scratchpad`, else `~/.local/share/scratchpad`.
pub fn data_dir() -> PathBuf {
    if let Some(p) = non_empty("PAD_HOME") {
        return PathBuf::from(p);
    }
    if let Some(d) = non_empty("XDG_DATA_HOME") {
        return PathBuf::from(d).join("scratchpad");
    }
    let home = non_empty("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".local/share/scratchpad")
}

/// Takes group and other permissions off every file of ours in `dir` and
/// its subdirectories (files an older version, or another umask, left
/// readable); errors are logged, not fatal.
pub fn seal_files(dir: &Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.uid() != uid() || meta.file_type().is_symlink() {
            continue;
        }
        if meta.is_dir() {
            seal_files(&path);
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            if let Err(e) =
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o700))
            {
                tracing::warn!("cannot make {} private: {e}", path.display());
            }
        }
    }
}

/// This process's limits on open files, `(soft, hard)`.
fn nofile() -> Option<libc::rlimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct we pass.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0).then_some(lim)
}

/// Raises this process's soft limit on open files to its hard limit: every
/// client is a descriptor, and the usual soft limit (1,024) is far below
/// what the system allows.
pub fn raise_fd_limit() {
    let Some(mut lim) = nofile().filter(|l| l.rlim_cur < l.rlim_max) else {
        return;
    };
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: setrlimit only reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        tracing::warn!("cannot raise the open-files limit to {}", lim.rlim_max);
    }
}

/// This process's soft limit on open files.
pub fn fd_limit() -> u64 {
    nofile().map_or(1024, |l| l.rlim_cur)
}

pub fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn non_empty(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// Creates `dir` (and missing parents) readable only by its owner; an
/// existing directory is left as it is. The data directory holds every note.
pub fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
