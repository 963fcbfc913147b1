//! The app's link to the engine: attach to the one serving the socket, or
//! run one in-process when none does — never a second engine.
//!
//! Either way the app talks to the engine over the socket, with one
//! connection: the same protocol, checks and limits as every agent, and no
//! business logic here. Calls are pipelined (a writer task assigns ids, a
//! reader task hands each response to its caller); the connection
//! subscribes to every event once, and each event goes to `on_event`.
//!
//! An engine that goes away (a `pad serve` restarted) is reconnected to
//! with back-off (0.5 s doubling to 10 s): the windows get a `disconnected`
//! event (with when the next try is) and, once back, `reconnected` — they
//! reload what they show, as after `lagged`. Calls made meanwhile fail at
//! once with -32005 rather than hang.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scratchpad::protocol::method::{self as m, Method};
use scratchpad::protocol::{HelloParams, SubscribeParams};
use scratchpad::{server, Config, Engine};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

type Reply = oneshot::Sender<Result<Value, Value>>;

/// An engine this app runs, and how to stop it.
struct Owned {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

pub struct Backend {
    pub socket: PathBuf,
    /// Whether this app runs the engine (else it attached to one).
    pub in_process: bool,
    calls: mpsc::Sender<(String, Value, Reply)>,
    owned: Mutex<Option<Owned>>,
}

/// The error object of a call that never reached the engine.
fn unreachable_error(why: &str) -> Value {
    json!({"code": -32005, "message": format!("the engine is not reachable: {why}")})
}

impl Backend {
    /// Attaches to the engine on `socket`, or starts one in-process.
    pub async fn start(
        socket: PathBuf,
        author: &str,
        metrics: Option<std::net::SocketAddr>,
        config: impl FnOnce() -> Result<Config, String>,
        on_event: impl Fn(Value) + Send + Sync + 'static,
    ) -> Result<Backend, String> {
        let mut owned = None;
        let stream = match connect(&socket).await {
            Some(s) => s,
            None => match run_engine(&socket, config()?, metrics).await {
                Ok(o) => {
                    owned = Some(o);
                    connect(&socket)
                        .await
                        .ok_or("the engine this app started does not answer")?
                }
                // Someone else started serving meanwhile: attach to it.
                Err(e) => connect(&socket).await.ok_or(e)?,
            },
        };
        let in_process = owned.is_some();
        tracing::info!(
            "{} the engine on {}",
            if in_process { "running" } else { "attached to" },
            socket.display()
        );
        let (tx, rx) = mpsc::channel(256);
        // Said again on every connection after the first: the same calls,
        // through their types.
        let hello = HelloParams {
            author: Some(author.to_owned()),
            client: Some("scratchpad-app".into()),
            token: None,
        };
        let greeting = vec![
            (m::Hello::NAME.to_owned(), json!(hello)),
            (
                m::Subscribe::NAME.to_owned(),
                json!(SubscribeParams::default()),
            ),
        ];
        tokio::spawn(link(
            stream,
            socket.clone(),
            greeting,
            rx,
            Arc::new(on_event),
        ));
        let backend = Backend {
            socket,
            in_process,
            calls: tx,
            owned: Mutex::new(owned),
        };
        backend
            .send::<m::Hello>(hello)
            .await
            .map_err(|e| e.to_string())?;
        backend
            .send::<m::Subscribe>(SubscribeParams::default())
            .await
            .map_err(|e| e.to_string())?;
        Ok(backend)
    }

    /// Calls the method `M` with its own params type (`protocol::method`):
    /// a field it does not take, or one missing, does not compile.
    pub async fn send<M: Method>(&self, params: M::Params) -> Result<Value, Value> {
        let params = serde_json::to_value(&params)
            .map_err(|e| json!({"code": -32603, "message": format!("{} params: {e}", M::NAME)}))?;
        self.call(M::NAME, params).await
    }

    /// One JSON-RPC call; the error is the engine's error object.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, Value> {
        let (tx, rx) = oneshot::channel();
        self.calls
            .send((method.to_string(), params, tx))
            .await
            .map_err(|_| unreachable_error("the connection closed"))?;
        rx.await
            .map_err(|_| unreachable_error("the connection closed"))?
    }

    /// Stops the in-process engine cleanly (drains connections, saves
    /// indexes, checkpoints); nothing to do when attached.
    pub async fn shutdown(&self) {
        let owned = self.owned.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(o) = owned {
            let _ = o.stop.send(());
            let _ = o.task.await;
        }
    }
}

/// A connection that says hello, or `None` when no engine answers.
async fn connect(socket: &Path) -> Option<UnixStream> {
    match scratchpad::client::connect_own(socket).await {
        Ok(stream) => Some(stream),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            tracing::warn!("{e}");
            None
        }
        Err(_) => None,
    }
}

/// Binds the socket and serves an engine from this process (and its
/// metrics, when asked).
async fn run_engine(
    socket: &Path,
    mut config: Config,
    metrics: Option<std::net::SocketAddr>,
) -> Result<Owned, String> {
    let bound = server::bind(socket).map_err(|e| e.to_string())?;
    config.metrics = metrics.is_some();
    let engine = Engine::open(config).await.map_err(|e| e.to_string())?;
    // Clients whose environment lost XDG_RUNTIME_DIR find the socket here.
    if let Err(e) = scratchpad::paths::record_socket(&engine.config().data_dir, socket) {
        tracing::warn!("cannot record the socket in the data directory: {e}");
    }
    let (stop, stopped) = oneshot::channel::<()>();
    let (metrics_stop, metrics_stopped) = oneshot::channel::<()>();
    if let Some(addr) = metrics {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => {
                if let Ok(local) = listener.local_addr() {
                    engine.set_metrics_address(format!("http://{local}/metrics"));
                }
                let engine = engine.clone();
                tokio::spawn(async move {
                    let stopped = async {
                        let _ = metrics_stopped.await;
                    };
                    engine.serve_metrics(listener, None, stopped).await
                });
            }
            // The app still runs; stats (and the activity view) say no metrics.
            Err(e) => tracing::warn!("metrics: cannot listen on {addr}: {e}"),
        }
    }
    let task = tokio::spawn(async move {
        let background = engine.spawn_background();
        server::serve(
            &bound.listener,
            engine.clone(),
            async {
                let _ = stopped.await;
            },
            Duration::from_secs(5),
        )
        .await;
        let _ = metrics_stop.send(());
        engine.shutdown().await;
        let _ = background.await;
        drop(bound);
        tracing::info!("in-process engine stopped");
    });
    Ok(Owned { stop, task })
}

/// The longest wait between tries to reach an engine that went away.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Keeps the app linked to the engine: runs the connection, and when it
/// closes, tries again with back-off, greeting (hello, subscribe) each new
/// connection before any call; calls made while there is none fail at once.
async fn link(
    first: UnixStream,
    socket: PathBuf,
    greeting: Vec<(String, Value)>,
    mut calls: mpsc::Receiver<(String, Value, Reply)>,
    on_event: Arc<dyn Fn(Value) + Send + Sync>,
) {
    let mut stream = Some(first);
    let mut greet = false;
    loop {
        if let Some(s) = stream.take() {
            if !connected(s, &greeting, greet, &mut calls, on_event.clone()).await {
                return; // the app is going away
            }
            greet = true;
        }
        let mut wait = Duration::from_millis(500);
        while stream.is_none() {
            on_event(json!({
                "type": "disconnected",
                "socket": socket.display().to_string(),
                "retry_in_ms": wait.as_millis() as u64,
            }));
            let retry = tokio::time::sleep(wait);
            tokio::pin!(retry);
            loop {
                tokio::select! {
                    _ = &mut retry => break,
                    call = calls.recv() => match call {
                        Some((_, _, reply)) => {
                            let _ = reply.send(Err(unreachable_error("the engine went away; the app is reconnecting")));
                        }
                        None => return,
                    },
                }
            }
            stream = connect(&socket).await;
            wait = (wait * 2).min(MAX_BACKOFF);
        }
        tracing::info!("reconnected to the engine on {}", socket.display());
    }
}

/// Runs one connection: writes calls as they come, reads responses and
/// events; with `greet`, first says hello and subscribes again (and tells
/// the windows it is back). Returns `false` when the app drops its side
/// (quitting), `true` when the connection closed. Pending calls then fail
/// with -32005.
async fn connected(
    stream: UnixStream,
    greeting: &[(String, Value)],
    greet: bool,
    calls: &mut mpsc::Receiver<(String, Value, Reply)>,
    on_event: Arc<dyn Fn(Value) + Send + Sync>,
) -> bool {
    let (read, mut write) = stream.into_split();
    let pending: Arc<Mutex<HashMap<u64, Reply>>> = Arc::default();
    let next = AtomicU64::new(1);
    let reader = {
        let pending = pending.clone();
        let on_event = on_event.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if msg["method"] == "event" {
                    on_event(msg["params"].clone());
                    continue;
                }
                let Some(id) = msg["id"].as_u64() else {
                    continue;
                };
                let reply = pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id);
                if let Some(reply) = reply {
                    let _ = reply.send(match msg.get("error") {
                        Some(e) => Err(e.clone()),
                        None => Ok(msg["result"].clone()),
                    });
                }
            }
            tracing::warn!("the connection to the engine closed");
            for (_, reply) in pending.lock().unwrap_or_else(|p| p.into_inner()).drain() {
                let _ = reply.send(Err(unreachable_error("the connection closed")));
            }
        })
    };
    // A new connection is greeted before any call: hello, subscribe; once
    // the engine has answered both, the windows hear it is back.
    let mut queued: std::collections::VecDeque<(String, Value, Reply)> = Default::default();
    if greet {
        let mut last = None;
        for (method, params) in greeting {
            let (tx, rx) = oneshot::channel();
            queued.push_back((method.clone(), params.clone(), tx));
            last = Some(rx);
        }
        let on_event = on_event.clone();
        tokio::spawn(async move {
            if let Some(rx) = last {
                if rx.await.is_ok_and(|r| r.is_ok()) {
                    on_event(json!({"type": "reconnected"}));
                }
            }
        });
    }
    let mut reader = reader;
    loop {
        let (method, params, reply) = match queued.pop_front() {
            Some(c) => c,
            None => tokio::select! {
                call = calls.recv() => match call {
                    Some(c) => c,
                    None => return false,
                },
                _ = &mut reader => return true,
            },
        };
        let id = next.fetch_add(1, Ordering::Relaxed);
        pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, reply);
        let mut line = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .unwrap_or_default();
        line.push(b'\n');
        if write.write_all(&line).await.is_err() {
            if let Some(r) = pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id)
            {
                let _ = r.send(Err(unreachable_error("the connection closed")));
            }
        }
    }
}
