//! HTTP over TCP (`--mcp-http`, `--metrics`), bounded.
//!
//! These listeners are on loopback or a private address, which every local
//! account (and, on a bridge, every container) reaches before any token is
//! checked. So each listener serves at most `MAX_CONNECTIONS` at once — one
//! more is answered `503` and closed at once, never left hanging — a request
//! head must arrive whole within `HEAD_TIMEOUT` and a request body within
//! `BODY_TIMEOUT`, or the connection is closed. Nothing reached over TCP can
//! take the descriptors or memory the owner's socket needs: those come out
//! of `server::FD_RESERVE`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Connections one TCP listener serves at once.
pub const MAX_CONNECTIONS: usize = 64;
/// A request's head (request line and headers) must arrive within this.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's body must arrive within this (MCP messages are small).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stop waits for requests in progress (an SSE stream never ends).
const DRAIN: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `shutdown`, within the bounds above.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let app = app.layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
        BODY_TIMEOUT,
    ));
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors, most likely: let some close.
                    tracing::warn!("HTTP listener: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        // Small requests on a kept-alive connection must not wait for
        // Nagle's algorithm (~40 ms each).
        let _ = tcp.set_nodelay(true);
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            refuse(tcp);
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    Ok(())
}

/// Tells a connection over the cap why, without waiting on it, and closes it.
fn refuse(tcp: tokio::net::TcpStream) {
    let body = format!(
        "this listener already serves {MAX_CONNECTIONS} connections, its limit; retry in a moment\n"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nRetry-After: 5\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // A fresh socket's send buffer takes this whole; if not, the close says enough.
    let _ = tcp.try_write(answer.as_bytes());
}
