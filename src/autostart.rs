//! Starting the engine on demand: when `pad mcp` or the CLI finds no engine
//! on its socket, it starts `pad serve` in the background (same socket, same
//! data directory, same environment) and goes on. Several clients starting at
//! once still end with one engine: every `pad serve` but the first loses the
//! socket's lock and exits, and every client connects to the winner.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::paths;

/// How long a client waits for an engine it started to answer.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// Connects to the engine at `socket`, first starting one if there is none
/// and `autostart` allows it.
pub async fn connect(socket: &Path, autostart: bool) -> io::Result<Client> {
    match Client::connect(socket).await {
        Ok(c) => return Ok(c),
        Err(e)
            if autostart
                && matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
                ) => {}
        Err(e) => return Err(e),
    }
    let log = start_engine(socket)?;
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        match Client::connect(socket).await {
            Ok(c) => return Ok(c),
            Err(e) if Instant::now() >= deadline => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                    "started `pad serve` for {}, but it did not answer within {}s; its log is {}",
                    socket.display(),
                    START_TIMEOUT.as_secs(),
                    log.display()
                ),
                ))
            }
            Err(_) => {}
        }
    }
}

/// Starts `pad serve` detached (its own session, output to `engine.log` in
/// the data directory); returns the log's path.
fn start_engine(socket: &Path) -> io::Result<std::path::PathBuf> {
    use std::os::unix::process::CommandExt;
    let data = paths::data_dir();
    std::fs::create_dir_all(&data)?;
    let log_path = data.join("engine.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)?;
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.arg("--socket")
        .arg(socket)
        .arg("serve")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    // SAFETY: setsid is async-signal-safe; it detaches the engine from our
    // session, so it outlives us and our terminal's signals.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    // Reap it if it exits while we live (it lost the race to another
    // starter); if we exit first, init adopts it.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(log_path)
}
