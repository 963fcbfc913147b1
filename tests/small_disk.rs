//! A small disk that fills, has room given back, and is written to at once:
//! `pad.db`'s WAL stays within a share of the room left (it is copied into
//! `pad.db` before more goes in), so the room that came back goes to
//! storing what was acknowledged, and the journal drains. Before, the WAL
//! grew to 5–14 MiB on this 24 MiB disk and could take the room that came
//! back, leaving acknowledged entries queued until a restart.
//!
//! Keyed writes (committed directly, not journaled) are held to it too.
//!
//! A real small file system (tmpfs) needs root to mount: without it the
//! test says so and passes (CI runs it as root).

mod common;

use std::time::{Duration, Instant};

use common::{ok, spawn_engine};
use scratchpad::client::{Client, ClientError};
use serde_json::json;

struct SmallDisk {
    root: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let root = tempfile::tempdir().unwrap();
        let m = root.path().join("mnt");
        std::fs::create_dir(&m).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&m)
            .output()
            .unwrap();
        assert!(out.status.success(), "mount: {out:?}");
        SmallDisk { root }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.root.path().join("mnt").join(name)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.root.path().join("mnt"))
            .status();
    }
}

fn wal_bytes(home: &std::path::Path) -> u64 {
    std::fs::metadata(home.join("pad.db-wal")).map_or(0, |m| m.len())
}

#[tokio::test]
async fn room_given_back_stores_the_journal_and_the_wal_stays_small() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a small file system needs root");
        return;
    }
    let disk = SmallDisk::mount("24m");
    let home = disk.path("home");
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run").join("pad.sock");
    let engine = spawn_engine(&home, &socket).await;
    let mut c = Client::connect(&socket).await.unwrap();
    // Half the disk taken by something else.
    std::fs::write(disk.path("filler"), vec![b'x'; 12 << 20]).unwrap();
    // Every other note with an idempotency key, as the CLI and the clients
    // send them: committed directly on the writer, not journaled, and held
    // to the same room.
    let note = |i: usize| {
        let mut n = json!({"pad": "p", "content": format!("{i} {}", "words ".repeat(250))});
        if i.is_multiple_of(2) {
            n["idempotency_key"] = json!(format!("small-disk-{i}"));
        }
        n
    };
    let mut most_wal = 0;
    let (mut i, mut refusals) = (0, 0);
    let started = Instant::now();
    while refusals < 50 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the disk never filled"
        );
        match c.call("entry.add", note(i)).await {
            Ok(_) => {}
            Err(ClientError::Rpc(e)) if e.code == -32005 => {
                refusals += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e:?}"),
        }
        i += 1;
        most_wal = most_wal.max(wal_bytes(&home));
    }
    // Room given back, and a burst at once.
    std::fs::remove_file(disk.path("filler")).unwrap();
    for _ in 0..400 {
        let _ = c.call("entry.add", note(i)).await;
        i += 1;
        most_wal = most_wal.max(wal_bytes(&home));
    }
    let given_back = Instant::now();
    loop {
        let queued = ok(&mut c, "stats", json!({})).await["journal_queue"]
            .as_i64()
            .unwrap();
        most_wal = most_wal.max(wal_bytes(&home));
        if queued == 0 {
            break;
        }
        assert!(
            given_back.elapsed() < Duration::from_secs(20),
            "{queued} acknowledged entries still wait in the journal 20 s after the room came back (pad.db-wal {} bytes)",
            wal_bytes(&home)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "journal stored {:?} after the burst; pad.db-wal at most {:.1} MiB",
        given_back.elapsed(),
        most_wal as f64 / (1 << 20) as f64
    );
    assert!(
        most_wal < 4 << 20,
        "pad.db-wal grew to {most_wal} bytes with 12 MiB of room: a quarter of the room at most, and a batch"
    );
    drop(engine);
}
