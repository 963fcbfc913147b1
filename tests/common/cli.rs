//! The `pad` command line against a test's engine.

use std::process::{Output, Stdio};

use serde_json::Value;
use tokio::process::Command;

use super::Harness;

/// `pad` talking to `h`'s engine only (no autostart, no inherited author or pad).
pub fn pad(h: &Harness) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pad"));
    cmd.env("PAD_SOCKET", &h.socket)
        .env("PAD_NO_AUTOSTART", "1")
        .env_remove("PAD_AUTHOR")
        .env_remove("PAD_PAD")
        .stdin(Stdio::null());
    cmd
}

pub async fn run(h: &Harness, args: &[&str]) -> Output {
    pad(h).args(args).output().await.unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn json_out(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}
