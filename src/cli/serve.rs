//! `pad serve`: the engine in the foreground, until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::engine::{Config, Engine};
use crate::semantic::{ModelSource, Precision, SemanticConfig};
use crate::store::Durability;
use crate::{paths, server};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// normal: survives a killed engine; full: also survives power loss (slower writes).
    #[arg(long, env = "PAD_DURABILITY", default_value = "normal")]
    durability: Durability,
    /// Longest entry, in characters.
    #[arg(long, env = "PAD_MAX_CONTENT", default_value_t = crate::model::DEFAULT_MAX_CONTENT_CHARS)]
    max_content: usize,
    /// Idle seconds before a new pad expires (0: never). `inbox` never expires.
    #[arg(long, env = "PAD_DEFAULT_TTL", default_value_t = 7200)]
    default_ttl: i64,
    /// Days an expired pad stays archived (restorable) before it is deleted.
    #[arg(long, env = "PAD_RETENTION_DAYS", default_value_t = 7)]
    retention_days: u64,
    /// Days an edit's earlier version, and a deleted entry in the trash, are
    /// kept (restorable with `pad restore`); 0 keeps nothing.
    #[arg(long, env = "PAD_HISTORY_DAYS", default_value_t = 30)]
    history_days: u64,
    /// The most earlier versions and deleted entries kept; past it the
    /// oldest go first (docs/operations.md has the sizes).
    #[arg(long, env = "PAD_HISTORY_MAX", default_value_t = 200_000)]
    history_max: i64,
    /// Seconds a note that cannot reach its A2A agent is retried (with
    /// back-off) before the person is asked whether to go on.
    #[arg(long, env = "PAD_AGENT_RETRY_SECONDS", default_value_t = 600)]
    agent_retry_seconds: u64,
    /// The embedding model: all-MiniLM-L6-v2 (English, fastest) or
    /// multilingual-e5-small (any language, better at questions, ~3× the
    /// embedding time). Switching re-embeds every entry in the background.
    #[arg(long, env = "PAD_MODEL", default_value = "all-MiniLM-L6-v2")]
    model: crate::semantic::ModelKind,
    /// Folder with the model's ONNX export and tokenizer files, or a folder
    /// of model folders named after the models; without it the model is
    /// downloaded once into the data directory.
    #[arg(long, env = "PAD_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Model weights: int8 (faster, smaller) or fp32. Default: int8 from
    /// --model-dir, fp32 when downloading.
    #[arg(long, env = "PAD_MODEL_PRECISION")]
    model_precision: Option<Precision>,
    /// Threads the embedding model may use.
    #[arg(long, env = "PAD_EMBED_THREADS", default_value_t = 1)]
    embed_threads: usize,
    /// Never embed a backlog on a second copy of the model. By default a
    /// lasting backlog is split with one when a core is spare and the
    /// machine is not busy (both at idle priority; ~30 MiB while it lasts).
    #[arg(long, env = "PAD_NO_EMBED_COPY", value_parser = clap::builder::FalseyValueParser::new())]
    no_embed_copy: bool,
    /// Also serve the MCP tools over HTTP (streamable HTTP) on this address,
    /// for agents that cannot reach the socket: loopback (127.0.0.1:8765), or
    /// a private address of this machine a container reaches, such as the
    /// docker0 gateway (172.17.0.1:8765). Repeat it for both. Every request
    /// must carry the bearer token in <data dir>/mcp-http.token.
    #[arg(long, env = "PAD_MCP_HTTP", value_delimiter = ',')]
    mcp_http: Vec<std::net::SocketAddr>,
    /// Allow --mcp-http on 0.0.0.0, [::] or a public address: every network
    /// this machine is on could then try the token.
    #[arg(long)]
    mcp_http_allow_public: bool,
    /// The most MCP-over-HTTP sessions open at once; a client starting one
    /// more gets 503 saying so. Idle sessions end after two minutes.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    mcp_http_max_sessions: u32,
    /// The pad HTTP tools use when the agent names none.
    #[arg(long, default_value = "inbox")]
    mcp_pad: String,
    /// The author of notes written through the HTTP tools.
    #[arg(long, default_value = "agent")]
    mcp_author: String,
    /// Which tools HTTP clients get: all, or core (see `pad mcp --tools`).
    #[arg(long, value_enum, default_value_t)]
    mcp_tools: crate::mcp::ToolSet,
    /// Serve Prometheus metrics at http://ADDR/metrics (GET only), e.g.
    /// 127.0.0.1:9464. Loopback only unless --metrics-allow-remote.
    #[arg(long, env = "PAD_METRICS")]
    metrics: Option<std::net::SocketAddr>,
    /// Allow --metrics on a non-loopback address (they show pad and tag
    /// names and activity, never content).
    #[arg(long)]
    metrics_allow_remote: bool,
    /// Serve metrics only to requests with `Authorization: Bearer <token>`,
    /// the token in <data dir>/metrics.token (Prometheus: bearer_token_file).
    #[arg(long)]
    metrics_require_token: bool,
    /// Refuse connections that do not say hello with a token (`pad token
    /// create`); the owner's CLI uses <data dir>/owner.token by itself.
    #[arg(long, env = "PAD_REQUIRE_TOKENS", value_parser = clap::builder::FalseyValueParser::new())]
    require_tokens: bool,
    /// Keep everything in this PostgreSQL database, shared with the engines
    /// of a team on other machines (docs/teams.md), e.g.
    /// postgres://pad@db-host/pad?sslmode=verify-full. Default: SQLite files
    /// in the data directory.
    #[arg(long, env = "PAD_DATABASE_URL", hide_env_values = true)]
    database: Option<String>,
    /// Text search only: never load the embedding model.
    #[arg(long, env = "PAD_NO_SEMANTIC", value_parser = clap::builder::FalseyValueParser::new())]
    no_semantic: bool,
}

pub fn main(args: ServeArgs, socket: Option<PathBuf>) -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    let ran = rt.block_on(run(args, socket.unwrap_or_else(paths::socket_path)));
    // The engine has stopped and saved everything: a call still waiting on a
    // hanging agent (up to its 15 s time-out) is not waited for.
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pad serve: {}", super::chain(&e));
            ExitCode::from(7)
        }
    }
}

async fn run(args: ServeArgs, socket: PathBuf) -> anyhow::Result<()> {
    // Handle signals before anything else, so none kills us mid-start.
    let shutdown = server::signals()?;
    // Bind first: a second `pad serve` learns at once who already serves.
    let bound = server::bind(&socket)?;
    let mut config = Config::new(paths::data_dir());
    config.durability = args.durability;
    config.database = args.database;
    config.max_content_chars = args.max_content;
    if args.default_ttl > crate::model::MAX_FUTURE_SECONDS {
        anyhow::bail!(
            "--default-ttl {}: give 0 (never expire) to {} seconds (ten years)",
            args.default_ttl,
            crate::model::MAX_FUTURE_SECONDS
        );
    }
    config.default_ttl_seconds = (args.default_ttl > 0).then_some(args.default_ttl);
    config.retention = Duration::from_secs(args.retention_days * 86400);
    config.history = Duration::from_secs(args.history_days * 86400);
    config.history_max = args.history_max.max(0);
    config.agent_give_up = Duration::from_secs(args.agent_retry_seconds);
    config.require_tokens = args.require_tokens;
    config.metrics = args.metrics.is_some();
    if let Some(addr) = args.metrics {
        crate::metrics::check_address(addr, args.metrics_allow_remote)?;
    }
    config.semantic = (!args.no_semantic).then(|| {
        let mut s = SemanticConfig::new(match args.model_dir {
            Some(dir) => ModelSource::Dir(dir),
            None => ModelSource::Download,
        });
        s.kind = args.model;
        s.precision = args.model_precision;
        s.threads = args.embed_threads;
        if args.no_embed_copy {
            s.helper = crate::semantic::Helper::Never;
        }
        s
    });
    for addr in &args.mcp_http {
        crate::mcp::http_bind_allowed(*addr, args.mcp_http_allow_public)?;
    }
    let engine = Engine::open(config).await?;
    // Clients whose environment lost XDG_RUNTIME_DIR find the socket here.
    if let Err(e) = paths::record_socket(&engine.config().data_dir, &socket) {
        tracing::warn!("cannot record the socket in the data directory: {e}");
    }
    let background = engine.spawn_background();
    let (http_stop, http_stopped) = tokio::sync::oneshot::channel::<()>();
    let http = if args.mcp_http.is_empty() {
        None
    } else {
        let token = crate::mcp::http_token(&engine.config().data_dir)?;
        let mut listeners = Vec::new();
        for addr in &args.mcp_http {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("--mcp-http {addr}: cannot listen there: {e}"))?;
            tracing::info!(
                "MCP over HTTP on http://{}/mcp (bearer token in {})",
                listener.local_addr()?,
                engine
                    .config()
                    .data_dir
                    .join(crate::mcp::TOKEN_FILE)
                    .display()
            );
            listeners.push(listener);
        }
        let tools = crate::mcp::McpConfig {
            socket: socket.clone(),
            pad: args.mcp_pad,
            author: args.mcp_author,
            autostart: false,
            tools: args.mcp_tools,
            budget: Default::default(),
        };
        Some(tokio::spawn(crate::mcp::serve_http(
            listeners,
            token,
            tools,
            args.mcp_http_max_sessions as usize,
            engine.http_refusals("MCP over HTTP", "mcp"),
            async {
                let _ = http_stopped.await;
            },
        )))
    };
    let (metrics_stop, metrics_stopped) = tokio::sync::oneshot::channel::<()>();
    let metrics = match args.metrics {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("--metrics {addr}: cannot listen there: {e}"))?;
            let url = format!("http://{}/metrics", listener.local_addr()?);
            tracing::info!("Prometheus metrics on {url}");
            engine.set_metrics_address(url);
            let token = if args.metrics_require_token {
                let t = crate::metrics::token(&engine.config().data_dir)?;
                tracing::info!(
                    "metrics require the bearer token in {}",
                    engine
                        .config()
                        .data_dir
                        .join(crate::metrics::TOKEN_FILE)
                        .display()
                );
                Some(t)
            } else {
                None
            };
            let engine = engine.clone();
            Some(tokio::spawn(async move {
                let stopped = async {
                    let _ = metrics_stopped.await;
                };
                engine.serve_metrics(listener, token, stopped).await
            }))
        }
        None => None,
    };
    tracing::info!(
        "scratchpad {} serving {} (data in {})",
        env!("CARGO_PKG_VERSION"),
        socket.display(),
        engine.config().data_dir.display()
    );
    server::serve(
        &bound.listener,
        engine.clone(),
        shutdown,
        Duration::from_secs(5),
    )
    .await;
    let _ = http_stop.send(());
    let _ = metrics_stop.send(());
    if let Some(m) = metrics {
        // A scrape in flight finishes; a stuck one does not hold the stop.
        let _ = tokio::time::timeout(Duration::from_secs(2), m).await;
    }
    if let Some(mut http) = http {
        // Open event streams would hold a graceful stop forever: give them 2 s.
        match tokio::time::timeout(Duration::from_secs(2), &mut http).await {
            Ok(Ok(Err(e))) => tracing::warn!("MCP over HTTP stopped with an error: {e}"),
            Ok(Err(e)) => tracing::warn!("MCP over HTTP task failed: {e}"),
            Ok(Ok(Ok(()))) => {}
            Err(_) => http.abort(),
        }
    }
    engine.shutdown().await;
    let _ = background.await;
    drop(bound);
    tracing::info!("stopped");
    Ok(())
}
