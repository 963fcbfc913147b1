//! `pad serve`: the engine in the foreground, until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::engine::Engine;
use crate::settings::EngineSettings;
use crate::{paths, server};

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    engine: EngineSettings,
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
    let mut config = args.engine.config(paths::data_dir())?;
    config.metrics = args.metrics.is_some();
    if let Some(addr) = args.metrics {
        crate::metrics::check_address(addr, args.metrics_allow_remote)?;
    }
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
