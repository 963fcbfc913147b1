//! A real PostgreSQL for the tests: a cluster of Debian's packaged server,
//! initialised into a temporary directory and listening on loopback and a
//! socket in that directory, stopped and removed when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    /// PostgreSQL's own durability (`fsync` on): for benchmarks. Tests run
    /// with `fsync=off`.
    durable: bool,
}

impl Postgres {
    /// Starts a cluster with an empty database `pad`.
    pub fn start() -> Postgres {
        Postgres::start_with(false)
    }

    /// The same with PostgreSQL's default durability.
    pub fn start_durable() -> Postgres {
        Postgres::start_with(true)
    }

    fn start_with(durable: bool) -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| d.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).max())
            .filter(|b| b.join("initdb").exists())
            .expect("PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb): run ./scripts/test, which installs Debian's postgresql package");
        let dir = tempfile::Builder::new()
            .prefix("pad-pg-")
            .tempdir()
            .expect("temp dir");
        let as_root = unsafe { libc::geteuid() } == 0;
        if as_root {
            // initdb refuses to run as root: the cluster belongs to `postgres`.
            run(Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path()));
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let pg = Postgres {
            dir,
            bin,
            port,
            durable,
        };
        let data = pg.data();
        run(pg
            .tool("initdb")
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "-D",
            ])
            .arg(&data));
        pg.ctl("start");
        run(pg.tool("psql").args([
            "-h",
            &pg.socket_dir().display().to_string(),
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            "-q",
            "-c",
            "CREATE DATABASE pad",
        ]));
        pg
    }

    /// The URL engines connect with (loopback, trust authentication).
    pub fn url(&self) -> String {
        self.url_of("pad")
    }

    pub fn url_of(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// A new empty database on this cluster; its URL.
    pub fn new_database(&self) -> String {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let name = format!(
            "t{}",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url_of(&name)
    }

    /// Runs `sql` in `database` as the superuser; what it printed.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = self
            .tool("psql")
            .args(["-h", &self.socket_dir().display().to_string()])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-q",
                "-A",
                "-t",
            ])
            .args(["-d", database, "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if unsafe { libc::geteuid() } == 0 {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// `pg_ctl start`, `stop` (fast: connections are cut) or `restart`.
    pub fn ctl(&self, action: &str) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync={} -c max_connections=200",
            self.port,
            self.socket_dir().display(),
            if self.durable { "on" } else { "off" }
        );
        let log = self.dir.path().join("log");
        run(self
            .tool("pg_ctl")
            .args(["-w", "-m", "fast", "-D"])
            .arg(self.data())
            .arg("-l")
            .arg(log)
            .args(["-o", &options, action]));
    }
}

impl Postgres {
    /// The cluster's processes: the postmaster and every process it started
    /// (backends, the checkpointer, the WAL writer, …).
    pub fn processes(&self) -> Vec<i32> {
        let pid_file = std::fs::read_to_string(self.data().join("postmaster.pid"))
            .expect("the cluster runs (postmaster.pid)");
        let postmaster: i32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // `pid (name) state ppid …`: the name may hold spaces.
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
            if ppid == Some(postmaster) {
                pids.push(pid);
            }
        }
        pids
    }

    /// Freezes the whole cluster (`SIGSTOP` to every process of it), as a
    /// paused VM or a network partition looks to its clients.
    pub fn freeze(&self) {
        for pid in self.processes() {
            // SAFETY: signalling the cluster's own processes.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        }
    }

    /// Sessions of database `pad` idle in a transaction: an engine frozen
    /// between two statements of a write.
    pub fn idle_in_transaction(&self) -> usize {
        let out = self
            .tool("psql")
            .args(["-h", &self.socket_dir().display().to_string(), "-p"])
            .arg(self.port.to_string())
            .args(["-U", "postgres", "-d", "pad", "-Atc"])
            .arg("SELECT count(*) FROM pg_stat_activity WHERE datname = 'pad' AND state = 'idle in transaction'")
            .output()
            .expect("psql runs");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// Lets a frozen cluster run again.
    pub fn thaw(&self) {
        for pid in self.processes() {
            // SAFETY: as in `freeze`.
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }

    /// Stops the cluster hard, as a crash or a power cut does (`pg_ctl -m
    /// immediate`: no shutdown checkpoint, connections cut); `ctl("start")`
    /// brings it back, recovering from its WAL.
    pub fn crash(&self) {
        run(self
            .tool("pg_ctl")
            .args(["-m", "immediate", "-D"])
            .arg(self.data())
            .arg("stop"));
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // A frozen cluster cannot stop.
        if self.data().join("postmaster.pid").exists() {
            self.thaw();
        }
        let _ = self
            .tool("pg_ctl")
            .args(["-m", "immediate", "-D"])
            .arg(self.data())
            .arg("stop")
            .output();
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("the PostgreSQL tool runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `PAD_TEST_BACKEND=postgres`: the integration suites run their engines on
/// PostgreSQL (`scripts/test` runs them once on each store).
pub fn wanted() -> bool {
    std::env::var("PAD_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// One cluster for the whole test process, each engine on a database of
/// its own; stopped and removed when the process exits.
static SHARED: std::sync::Mutex<Option<Postgres>> = std::sync::Mutex::new(None);

extern "C" fn stop_shared() {
    let taken = SHARED.lock().map(|mut s| s.take()).unwrap_or(None);
    drop(taken);
}

/// A fresh database on the process's cluster (started on first use).
pub fn shared_database() -> String {
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if shared.is_none() {
        *shared = Some(Postgres::start());
        // SAFETY: registers a plain function to run at exit.
        unsafe { libc::atexit(stop_shared) };
    }
    shared.as_ref().expect("started").new_database()
}
