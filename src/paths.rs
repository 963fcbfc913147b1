//! Where the socket and the data live (DESIGN.md, "The wire").

use std::path::PathBuf;

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
