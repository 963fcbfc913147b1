//! `pad serve`: the engine in the foreground, until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use tokio::sync::oneshot;

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
    let mut config = args.engine.clone().config(paths::data_dir())?;
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
    let http = serve_mcp_http(&args, &engine, &socket).await?;
    let metrics = serve_metrics(&args, &engine).await?;
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
    // A scrape in flight finishes, and open event streams would hold a
    // graceful stop forever: each side gets 2 s.
    let sides = [(metrics, "metrics"), (http, "MCP over HTTP")];
    let stopping = sides
        .into_iter()
        .filter_map(|(side, what)| side.map(|s| s.stop(what)));
    futures_util::future::join_all(stopping).await;
    engine.shutdown().await;
    let _ = background.await;
    drop(bound);
    tracing::info!("stopped");
    Ok(())
}

/// A listener served beside the socket (MCP over HTTP, metrics).
struct Side {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Side {
    /// Serves `serve(stopped)` until `stop`.
    fn spawn<F>(serve: impl FnOnce(oneshot::Receiver<()>) -> F) -> Side
    where
        F: std::future::Future<Output = std::io::Result<()>> + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel();
        Side {
            stop,
            task: tokio::spawn(serve(stopped)),
        }
    }

    /// Asks it to stop at once, then waits 2 s at most.
    fn stop(mut self, what: &str) -> impl std::future::Future<Output = ()> + '_ {
        let _ = self.stop.send(());
        async move {
            match tokio::time::timeout(Duration::from_secs(2), &mut self.task).await {
                Ok(Ok(Err(e))) => tracing::warn!("{what} stopped with an error: {e}"),
                Ok(Err(e)) => tracing::warn!("{what} task failed: {e}"),
                Ok(Ok(Ok(()))) => {}
                Err(_) => self.task.abort(),
            }
        }
    }
}

/// `--mcp-http`: the MCP tools (and `/rpc`) over HTTP on each address.
async fn serve_mcp_http(
    args: &ServeArgs,
    engine: &Engine,
    socket: &std::path::Path,
) -> anyhow::Result<Option<Side>> {
    if args.mcp_http.is_empty() {
        return Ok(None);
    }
    let data_dir = &engine.config().data_dir;
    let token = crate::mcp::http_token(data_dir)?;
    let mut listeners = Vec::new();
    for addr in &args.mcp_http {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("--mcp-http {addr}: cannot listen there: {e}"))?;
        tracing::info!(
            "MCP over HTTP on http://{}/mcp (bearer token in {})",
            listener.local_addr()?,
            data_dir.join(crate::mcp::TOKEN_FILE).display()
        );
        listeners.push(listener);
    }
    let tools = crate::mcp::McpConfig {
        socket: socket.to_path_buf(),
        pad: args.mcp_pad.clone(),
        author: args.mcp_author.clone(),
        autostart: false,
        tools: args.mcp_tools,
        budget: Default::default(),
    };
    let max_sessions = args.mcp_http_max_sessions as usize;
    let refusals = engine.http_refusals("MCP over HTTP", "mcp");
    Ok(Some(Side::spawn(move |stopped| {
        crate::mcp::serve_http(listeners, token, tools, max_sessions, refusals, async {
            let _ = stopped.await;
        })
    })))
}

/// `--metrics`: Prometheus metrics over HTTP, with a bearer token when
/// `--metrics-require-token`.
async fn serve_metrics(args: &ServeArgs, engine: &Engine) -> anyhow::Result<Option<Side>> {
    let Some(addr) = args.metrics else {
        return Ok(None);
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("--metrics {addr}: cannot listen there: {e}"))?;
    let url = format!("http://{}/metrics", listener.local_addr()?);
    tracing::info!("Prometheus metrics on {url}");
    engine.set_metrics_address(url);
    let token = if args.metrics_require_token {
        let data_dir = &engine.config().data_dir;
        let t = crate::metrics::token(data_dir)?;
        tracing::info!(
            "metrics require the bearer token in {}",
            data_dir.join(crate::metrics::TOKEN_FILE).display()
        );
        Some(t)
    } else {
        None
    };
    let engine = engine.clone();
    Ok(Some(Side::spawn(move |stopped| async move {
        let stopped = async {
            let _ = stopped.await;
        };
        engine.serve_metrics(listener, token, stopped).await
    })))
}
