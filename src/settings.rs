//! The engine's settings, read once for whoever runs it: `pad serve` takes
//! them as flags or `PAD_*` variables, the desktop app (which runs the engine
//! when none is running) from the same variables, through this one parse and
//! these defaults, into the one value an engine is opened with (`Config`).
//! Listeners (`--mcp-http`, `--metrics`) are not the engine's: `pad serve`
//! has its flags for them, the app its own settings.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser};

use crate::clock::Clock;
use crate::model;
use crate::semantic::{Helper, ModelKind, ModelSource, Precision, SemanticConfig};
use crate::store::Durability;

/// What the engine does when neither a flag nor a variable says otherwise;
/// `Config::new` starts from these too.
pub mod defaults {
    /// Idle seconds before a pad an agent creates expires.
    pub const TTL_SECONDS: i64 = 2 * 3600;
    /// Days an expired pad stays archived.
    pub const RETENTION_DAYS: u64 = 7;
    /// Days earlier versions and deleted entries are kept.
    pub const HISTORY_DAYS: u64 = 30;
    /// The most earlier versions and deleted entries kept.
    pub const HISTORY_MAX: i64 = 200_000;
    /// Seconds a note is retried towards an agent out of reach.
    pub const AGENT_RETRY_SECONDS: u64 = 600;
    /// Threads the embedding model may use.
    pub const EMBED_THREADS: usize = 1;
    /// The most entry text (bytes, with some room for each entry's fields)
    /// an export loads at once: a pad holding more is exported only with a
    /// budget.
    pub const MAX_EXPORT_BYTES: usize = 32 << 20;
}

const DAY: u64 = 86_400;

/// How an engine is set up. `Config::new(dir)` gives the defaults `pad serve`
/// starts with.
#[derive(Clone, Debug)]
pub struct Config {
    pub data_dir: PathBuf,
    /// A PostgreSQL URL: keep everything there, shared with the other
    /// engines of a team (`None`: SQLite files in `data_dir`).
    pub database: Option<String>,
    pub durability: Durability,
    pub max_content_chars: usize,
    /// Idle time after which pads that agents create expire (`None`: never).
    pub default_ttl_seconds: Option<i64>,
    /// How long an archived pad is kept before it is purged.
    pub retention: Duration,
    /// How long edits' earlier versions and deleted entries are kept.
    pub history: Duration,
    /// The most kept versions (oldest dropped first past it).
    pub history_max: i64,
    /// How long a note that cannot reach its agent is retried before the
    /// person is asked.
    pub agent_give_up: Duration,
    /// How often the expiry sweep runs.
    pub sweep_every: Duration,
    /// How often the text indexer looks for new changes.
    pub index_every: Duration,
    /// WAL size (4 KiB pages) past which a checkpoint empties the WAL while
    /// holding the writer (a short pause, as it only copies the tail).
    pub wal_restart_pages: i64,
    /// Semantic search (`None`: text search only, no model is loaded).
    pub semantic: Option<SemanticConfig>,
    /// Refuse connections that do not say `hello` with a token (the owner
    /// uses the owner token in `<data>/owner.token`).
    pub require_tokens: bool,
    /// How often due reminders and run-out task leases are looked for.
    pub work_every: Duration,
    /// Record Prometheus metrics (`pad serve --metrics` serves them).
    pub metrics: bool,
    pub clock: Clock,
    /// How long a begun request line may sit unfinished before its
    /// connection is closed (and its buffer freed).
    pub partial_idle: Duration,
    /// The most client connections served at once; `None`: the open-files
    /// limit less a reserve for the engine's own files and listeners.
    pub max_connections: Option<usize>,
    /// The most entry text one export loads (`defaults::MAX_EXPORT_BYTES`).
    pub max_export_bytes: usize,
}

impl Config {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Config {
            data_dir: data_dir.into(),
            database: None,
            durability: Durability::Normal,
            max_content_chars: model::DEFAULT_MAX_CONTENT_CHARS,
            default_ttl_seconds: Some(defaults::TTL_SECONDS),
            retention: Duration::from_secs(defaults::RETENTION_DAYS * 86_400),
            history: Duration::from_secs(defaults::HISTORY_DAYS * 86_400),
            history_max: defaults::HISTORY_MAX,
            agent_give_up: Duration::from_secs(defaults::AGENT_RETRY_SECONDS),
            sweep_every: Duration::from_secs(30),
            index_every: Duration::from_millis(100),
            wal_restart_pages: 8192,
            semantic: Some(SemanticConfig::new(ModelSource::Download)),
            require_tokens: false,
            work_every: Duration::from_secs(1),
            metrics: false,
            clock: Clock::system(),
            partial_idle: Duration::from_secs(30),
            max_connections: None,
            max_export_bytes: defaults::MAX_EXPORT_BYTES,
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct EngineSettings {
    /// normal: survives a killed engine; full: also survives power loss (slower writes).
    #[arg(long, env = "PAD_DURABILITY", default_value_t = Durability::default())]
    pub durability: Durability,
    /// Longest entry, in characters.
    #[arg(long, env = "PAD_MAX_CONTENT", default_value_t = crate::model::DEFAULT_MAX_CONTENT_CHARS)]
    pub max_content: usize,
    /// Idle seconds before a new pad expires (0 or less: never). `inbox` never expires.
    #[arg(long, env = "PAD_DEFAULT_TTL", default_value_t = defaults::TTL_SECONDS)]
    pub default_ttl: i64,
    /// Days an expired pad stays archived (restorable) before it is deleted.
    #[arg(long, env = "PAD_RETENTION_DAYS", default_value_t = defaults::RETENTION_DAYS)]
    pub retention_days: u64,
    /// Days an edit's earlier version, and a deleted entry in the trash, are
    /// kept (restorable with `pad restore`); 0 keeps nothing.
    #[arg(long, env = "PAD_HISTORY_DAYS", default_value_t = defaults::HISTORY_DAYS)]
    pub history_days: u64,
    /// The most earlier versions and deleted entries kept; past it the
    /// oldest go first (docs/operations.md has the sizes).
    #[arg(long, env = "PAD_HISTORY_MAX", default_value_t = defaults::HISTORY_MAX)]
    pub history_max: i64,
    /// Seconds a note that cannot reach its A2A agent is retried (with
    /// back-off) before the person is asked whether to go on.
    #[arg(long, env = "PAD_AGENT_RETRY_SECONDS", default_value_t = defaults::AGENT_RETRY_SECONDS)]
    pub agent_retry_seconds: u64,
    /// The embedding model: all-MiniLM-L6-v2 (English, fastest) or
    /// multilingual-e5-small (any language, better at questions, ~3× the
    /// embedding time). Switching re-embeds every entry in the background.
    #[arg(long, env = "PAD_MODEL", default_value_t = ModelKind::default())]
    pub model: ModelKind,
    /// Folder with the model's ONNX export and tokenizer files, or a folder
    /// of model folders named after the models; without it the model is
    /// downloaded once into the data directory.
    #[arg(long, env = "PAD_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Model weights: int8 (faster, smaller) or fp32. Default: int8 from
    /// --model-dir, fp32 when downloading.
    #[arg(long, env = "PAD_MODEL_PRECISION")]
    pub model_precision: Option<Precision>,
    /// Threads the embedding model may use.
    #[arg(long, env = "PAD_EMBED_THREADS", default_value_t = defaults::EMBED_THREADS)]
    pub embed_threads: usize,
    /// Never embed a backlog on a second copy of the model. By default a
    /// lasting backlog is split with one when a core is spare and the
    /// machine is not busy (both at idle priority; ~30 MiB while it lasts).
    #[arg(long, env = "PAD_NO_EMBED_COPY", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_embed_copy: bool,
    /// Refuse connections that do not say hello with a token (`pad token
    /// create`); the owner's CLI uses <data dir>/owner.token by itself.
    #[arg(long, env = "PAD_REQUIRE_TOKENS", value_parser = clap::builder::FalseyValueParser::new())]
    pub require_tokens: bool,
    /// Keep everything in this PostgreSQL database, shared with the engines
    /// of a team on other machines (docs/teams.md), e.g.
    /// postgres://pad@db-host/pad?sslmode=verify-full. Default: SQLite files
    /// in the data directory.
    #[arg(long, env = "PAD_DATABASE_URL", hide_env_values = true)]
    pub database: Option<String>,
    /// Text search only: never load the embedding model.
    #[arg(long, env = "PAD_NO_SEMANTIC", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_semantic: bool,
}

/// The settings alone, parsed from the environment with no flags.
#[derive(Parser)]
struct FromEnv {
    #[command(flatten)]
    settings: EngineSettings,
}

impl EngineSettings {
    /// The settings the `PAD_*` variables give, as `pad serve` with no flags
    /// would take them; a bad value is an error naming its variable.
    pub fn from_env() -> anyhow::Result<Self> {
        FromEnv::try_parse_from(["pad"])
            .map(|e| e.settings)
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))
    }

    /// The engine's configuration for the data directory `data_dir`.
    pub fn config(self, data_dir: PathBuf) -> anyhow::Result<Config> {
        if self.default_ttl > crate::model::MAX_FUTURE_SECONDS {
            anyhow::bail!(
                "--default-ttl (PAD_DEFAULT_TTL) {}: give 0 (never expire) to {} seconds (ten years)",
                self.default_ttl,
                crate::model::MAX_FUTURE_SECONDS
            );
        }
        let mut config = Config::new(data_dir);
        config.durability = self.durability;
        config.database = self.database;
        config.max_content_chars = self.max_content;
        config.default_ttl_seconds = (self.default_ttl > 0).then_some(self.default_ttl);
        config.retention = Duration::from_secs(self.retention_days.saturating_mul(DAY));
        config.history = Duration::from_secs(self.history_days.saturating_mul(DAY));
        config.history_max = self.history_max.max(0);
        config.agent_give_up = Duration::from_secs(self.agent_retry_seconds);
        config.require_tokens = self.require_tokens;
        config.semantic = (!self.no_semantic).then(|| {
            let mut s = SemanticConfig::new(match self.model_dir {
                Some(dir) if !dir.as_os_str().is_empty() => ModelSource::Dir(dir),
                _ => ModelSource::Download,
            });
            s.kind = self.model;
            s.precision = self.model_precision;
            s.threads = self.embed_threads;
            if self.no_embed_copy {
                s.helper = Helper::Never;
            }
            s
        });
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With no flag and no variable, the parse gives what `Config::new` does:
    /// one set of defaults.
    #[test]
    fn the_parsed_defaults_are_the_engines() {
        let parsed = FromEnv::try_parse_from(["pad"]).unwrap().settings;
        // The test's own environment may set PAD_*: compare field by field
        // only what no test run sets.
        let c = EngineSettings {
            no_semantic: false,
            model_dir: None,
            model_precision: None,
            database: None,
            ..parsed
        }
        .config("/tmp/x".into())
        .unwrap();
        let d = Config::new("/tmp/x");
        assert_eq!(c.durability, d.durability);
        assert_eq!(c.max_content_chars, d.max_content_chars);
        assert_eq!(c.default_ttl_seconds, d.default_ttl_seconds);
        assert_eq!(c.retention, d.retention);
        assert_eq!(c.history, d.history);
        assert_eq!(c.history_max, d.history_max);
        assert_eq!(c.agent_give_up, d.agent_give_up);
        assert_eq!(c.require_tokens, d.require_tokens);
        let (s, t) = (c.semantic.unwrap(), d.semantic.unwrap());
        assert_eq!((s.kind, s.threads), (t.kind, t.threads));
    }

    /// The variables are read as `pad serve` reads them, a falsey value
    /// meaning off (`PAD_NO_SEMANTIC=false` leaves meaning search on; the
    /// app once read it as on). Run in a child process of this test binary,
    /// so no other test sees the variables.
    #[test]
    fn the_variables_are_read_as_pad_serve_reads_them() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "settings::tests::child_reading_the_variables",
                "--nocapture",
            ])
            .env("PAD_SETTINGS_CHILD", "1")
            .env("PAD_NO_SEMANTIC", "false")
            .env("PAD_DEFAULT_TTL", "60")
            .env("PAD_DURABILITY", "full")
            .env("PAD_HISTORY_DAYS", "2")
            .env("PAD_EMBED_THREADS", "2")
            .env_remove("PAD_DATABASE_URL")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && said.contains("1 passed"), "{said}");
        assert!(
            said.contains("read the variables"),
            "the child did not run: {said}"
        );
    }

    #[test]
    fn child_reading_the_variables() {
        if std::env::var_os("PAD_SETTINGS_CHILD").is_none() {
            return;
        }
        let c = EngineSettings::from_env()
            .unwrap()
            .config("/tmp/x".into())
            .unwrap();
        assert!(c.semantic.as_ref().is_some_and(|s| s.threads == 2));
        assert_eq!(c.default_ttl_seconds, Some(60));
        assert_eq!(c.durability, Durability::Full);
        assert_eq!(c.history, Duration::from_secs(2 * DAY));
        println!("read the variables");
    }

    #[test]
    fn a_bad_ttl_names_its_flag_and_variable() {
        let s = FromEnv::try_parse_from(["pad", "--default-ttl=400000000"])
            .unwrap()
            .settings;
        let e = s.config("/tmp/x".into()).unwrap_err().to_string();
        assert!(e.contains("PAD_DEFAULT_TTL"), "{e}");
        // 0 or less: never, as before.
        let never = FromEnv::try_parse_from(["pad", "--default-ttl=-1"])
            .unwrap()
            .settings;
        assert_eq!(
            never.config("/tmp/x".into()).unwrap().default_ttl_seconds,
            None
        );
    }
}
