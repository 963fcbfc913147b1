//! Starting the engine on demand: when `pad mcp` or the CLI finds no engine
//! on its socket, it starts `pad serve` in the background (same socket, same
//! data directory, same environment) and goes on. Several clients starting at
//! once still end with one engine: every `pad serve` but the first loses the
//! socket's lock and exits, and every client connects to the winner.

use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::paths;

/// How long a client waits for an engine it started to answer.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long after our `pad serve` stopped another starter's may take to answer.
const LOSER_GRACE: Duration = Duration::from_secs(2);

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
    let (log, exited) = start_engine(socket)?;
    let deadline = Instant::now() + START_TIMEOUT;
    let mut exited_at = None;
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if exited_at.is_none() && exited.load(std::sync::atomic::Ordering::Acquire) {
            exited_at = Some(Instant::now());
        }
        match Client::connect(socket).await {
            Ok(c) => return Ok(c),
            // It stopped without serving. If it lost a race to another
            // starter, the winner answers within moments; otherwise (another
            // engine holds the data directory, say) say so now rather than
            // at the time-out.
            Err(e) if exited_at.is_some_and(|t| t.elapsed() > LOSER_GRACE) => {
                let last = std::fs::read_to_string(&log)
                    .ok()
                    .and_then(|l| {
                        l.lines()
                            .rev()
                            .find(|l| !l.trim().is_empty())
                            .map(str::to_string)
                    })
                    .unwrap_or_default();
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "started `pad serve` for {}, but it stopped at once: {last} (log: {})",
                        socket.display(),
                        log.display()
                    ),
                ));
            }
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
/// the data directory); returns the log's path and a flag set once it exits.
fn start_engine(
    socket: &Path,
) -> io::Result<(
    std::path::PathBuf,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
)> {
    use std::os::unix::process::CommandExt;
    let data = paths::data_dir();
    std::fs::create_dir_all(&data)?;
    let log_path = data.join("engine.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
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
    let exited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = exited.clone();
    std::thread::spawn(move || {
        let _ = child.wait();
        flag.store(true, std::sync::atomic::Ordering::Release);
    });
    Ok((log_path, exited))
}
