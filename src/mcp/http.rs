//! The MCP tools over HTTP (`pad serve --mcp-http`): streamable HTTP, with
//! a bearer token on every request, on loopback or on private addresses the
//! owner names (the docker0 gateway, for a container on Docker's bridge).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};

use super::{Caller, McpConfig, PadTools};

/// An MCP-over-HTTP session nobody used for this long is closed, so clients
/// that never end theirs (Agent Zero opens one per tool call) cannot pile
/// them up (~56 KB each).
pub const SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(120);

/// The largest body `POST /rpc` reads.
const RPC_BODY_LIMIT: usize = 1 << 20;
/// The most an MCP message over HTTP may hold (a note is 4,000 characters).
const MCP_BODY_LIMIT: usize = 4 << 20;

/// The bearer token file for `--mcp-http`, in the data directory.
pub const TOKEN_FILE: &str = "mcp-http.token";

/// The token HTTP clients must send, created (0600, random) on first use.
pub fn http_token(data_dir: &std::path::Path) -> std::io::Result<String> {
    crate::access::bearer_secret(&data_dir.join(TOKEN_FILE))
}

/// Whether `--mcp-http` may listen on `addr`: loopback and private
/// addresses (RFC 1918, IPv6 unique-local, link-local) on the owner's word —
/// the flag naming them; the wildcard or a public address only with
/// `--mcp-http-allow-public` as well.
pub fn http_bind_allowed(addr: SocketAddr, allow_public: bool) -> anyhow::Result<()> {
    let ip = addr.ip();
    let private = match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.is_unique_local() || v6.is_unicast_link_local(),
    };
    if private || allow_public {
        return Ok(());
    }
    let what = if ip.is_unspecified() {
        "every interface of this machine, public ones included"
    } else {
        "a public address"
    };
    anyhow::bail!(
        "--mcp-http {addr}: that is {what}, so every network this machine is on could try the token. \
         For a container on Docker's bridge, give the docker0 gateway instead (e.g. 172.17.0.1:{port}; \
         `ip -4 addr show docker0` shows it); if you do mean {ip}, add --mcp-http-allow-public.",
        port = addr.port()
    )
}

/// The `Host` names requests may carry: loopback names, the addresses
/// served, and `host.docker.internal` (Docker Desktop, and Linux containers
/// started with `--add-host=host.docker.internal:host-gateway`). The check
/// stays: it stops DNS rebinding from a browser.
fn allowed_hosts(listeners: &[tokio::net::TcpListener]) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "host.docker.internal"]
        .map(String::from)
        .into();
    for l in listeners {
        if let Ok(a) = l.local_addr() {
            if !a.ip().is_unspecified() {
                hosts.push(a.ip().to_string());
            }
        }
    }
    hosts
}

/// What every layer of the HTTP front shares (axum's state).
struct Front {
    /// The server's own bearer token (`mcp-http.token`).
    token: String,
    socket: PathBuf,
    /// The `Host` names a request may carry (`allowed_hosts`).
    hosts: Vec<String>,
    budget: Arc<crate::tcp::Budget>,
    /// Who writes when the server's own token is used.
    server_author: String,
    /// Streamable HTTP's sessions, and the older SSE transport's.
    mcp_sessions: Arc<LocalSessionManager>,
    sse_sessions: super::sse::Sessions,
    sse_config: McpConfig,
    max_sessions: usize,
    refusals: crate::tcp::Refusals,
}

type Shared = State<Arc<Front>>;

/// Serves the MCP tools over streamable HTTP on every listener until
/// `shutdown`; every request must carry `Authorization: Bearer <token>`.
pub async fn serve_http(
    listeners: Vec<tokio::net::TcpListener>,
    token: String,
    config: McpConfig,
    max_sessions: usize,
    refusals: crate::tcp::Refusals,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let hosts = allowed_hosts(&listeners);
    let mut http = StreamableHttpServerConfig::default().with_allowed_hosts(hosts.clone());
    // No SSE priming event: clients of protocols before 2025-11-25 (Agent
    // Zero's among them) choke on its empty data, and without an event
    // store there is nothing to resume from anyway.
    http.sse_retry = None;
    let mut sessions = LocalSessionManager::default();
    // The session layer primes each request's stream too.
    sessions.session_config.sse_retry = None;
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    let sessions = Arc::new(sessions);
    let front = Arc::new(Front {
        token,
        socket: config.socket.clone(),
        hosts,
        budget: config.budget.clone(),
        server_author: config.author.clone(),
        mcp_sessions: sessions.clone(),
        sse_sessions: super::sse::Sessions::default(),
        sse_config: config.clone(),
        max_sessions,
        refusals: refusals.clone(),
    });
    let mcp = StreamableHttpService::new(move || Ok(PadTools::new(config.clone())), sessions, http);
    serve_each(listeners, router(front, mcp), refusals, shutdown).await
}

/// The routes and their layers, outermost last: every request passes the
/// door (Host, path), is authenticated and admitted to a connection place;
/// `/rpc` then takes one JSON-RPC request, `/mcp` counts and bounds its
/// sessions and serves either MCP transport.
fn router(front: Arc<Front>, mcp: StreamableHttpService<PadTools, LocalSessionManager>) -> Router {
    Router::new()
        .route_service("/mcp", mcp)
        .layer(from_fn_with_state(front.clone(), older_sse))
        .layer(from_fn_with_state(front.clone(), sessions))
        .route(super::rpc_http::PATH, post(rpc).fallback(rpc_not_post))
        .fallback(not_here)
        .layer(from_fn_with_state(front.clone(), admit))
        .layer(from_fn_with_state(front.clone(), authenticate))
        .layer(from_fn_with_state(front.clone(), door))
        .with_state(front)
}

/// Serves `app` on every listener until `shutdown`.
async fn serve_each(
    listeners: Vec<tokio::net::TcpListener>,
    app: Router,
    refusals: crate::tcp::Refusals,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let mut servers = tokio::task::JoinSet::new();
    for listener in listeners {
        let mut stopped = stopped.clone();
        servers.spawn(crate::tcp::serve(
            listener,
            app.clone(),
            refusals.clone(),
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
    }
    while let Some(done) = servers.join_next().await {
        done.map_err(std::io::Error::other)??;
    }
    Ok(())
}

/// One Host check for every path (DNS rebinding: a page whose name resolves
/// here must not reach the engine; HTTP/2 names the host in the URI's
/// authority). Only /mcp and /rpc are served: anything else — the OAuth
/// discovery paths clients probe after a 401 above all — is 404 without
/// asking for a token: we are not an OAuth server, and a 401 there starts an
/// OAuth dance.
async fn door(State(front): Shared, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    if !crate::access::host_allowed(host, &front.hosts) {
        return (
            StatusCode::FORBIDDEN,
            [(header::CONNECTION, "close")],
            "Forbidden: Host header is not allowed\n",
        )
            .into_response();
    }
    let path = req.uri().path();
    if path != "/mcp" && path != super::rpc_http::PATH {
        return not_here().await;
    }
    next.run(req).await
}

/// The server's token, or an engine access token (`pad token create`),
/// whose `Caller` goes with the request. Some clients (Agent Zero's) show
/// only "401": the owner finds the reason in the log, said once a minute
/// with how many there were. The connection closes: without a token it
/// holds no place.
async fn authenticate(State(front): Shared, mut req: Request, next: Next) -> Response {
    let given = crate::access::bearer(
        req.headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
    )
    .to_owned();
    if !crate::access::same_secret(&given, &front.token) {
        match access_token(&front.socket, &given).await {
            Ok(c) => {
                req.extensions_mut().insert(c);
            }
            Err(why) => {
                front.refusals.note(&why);
                return (
                    StatusCode::UNAUTHORIZED,
                    [
                        (header::WWW_AUTHENTICATE, challenge(&why)),
                        (header::CONNECTION, "close".into()),
                    ],
                    why,
                )
                    .into_response();
            }
        }
    }
    next.run(req).await
}

/// A place among the listener's connections (`tcp::admit`), per client.
async fn admit(req: Request, next: Next) -> Response {
    let client = req.extensions().get::<Caller>().map(|c| c.name.clone());
    if let Some(full) = crate::tcp::admit(&req, client.as_deref()).await {
        return full;
    }
    next.run(req).await
}

/// `POST /rpc`: one JSON-RPC request to the engine, as the caller.
async fn rpc(State(front): Shared, req: Request) -> Response {
    let caller = req.extensions().get::<Caller>().cloned();
    match axum::body::to_bytes(req.into_body(), RPC_BODY_LIMIT).await {
        Ok(body) => super::rpc_http::handle(&front.socket, &front.budget, caller, &body).await,
        Err(_) => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "a request to /rpc is at most 1 MiB\n",
        )
            .into_response(),
    }
}

async fn not_here() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONNECTION, "close")],
        NOT_HERE,
    )
        .into_response()
}

async fn rpc_not_post() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        "POST one JSON-RPC 2.0 request to /rpc\n",
    )
        .into_response()
}

/// An MCP session's bounds: a new one (a POST without a session id, or the
/// older transport's GET asking for events) within the caller's share and
/// the server's cap; a POST's body read whole, so one that ends before its
/// length (or its chunks) is the client's mistake, said as one, not the MCP
/// layer's 500; a token's event stream ended once the token is revoked.
async fn sessions(State(front): Shared, req: Request, next: Next) -> Response {
    let caller = req.extensions().get::<Caller>().cloned();
    let new_session = req.method() == Method::POST
        && !req.headers().contains_key("mcp-session-id")
        && !super::sse::is_sse(&req);
    let new_sse = req.method() == Method::GET
        && super::sse::is_sse(&req)
        && !req.uri().query().is_some_and(|q| q.contains("sessionId="));
    let who = caller
        .as_ref()
        .map_or(&front.server_author, |c| &c.name)
        .clone();
    if new_session || new_sse {
        let mut open: std::collections::HashSet<String> = front
            .mcp_sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        open.extend(front.sse_sessions.ids());
        if let Err(why) = front.budget.session_room(&who, &open) {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "30")],
                format!("{why}.\n"),
            )
                .into_response();
        }
    }
    let max = front.max_sessions;
    if new_session && front.mcp_sessions.sessions.read().await.len() >= max {
        tracing::warn!("MCP over HTTP: {max} sessions open, the limit; refused a new one");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "30")],
            format!(
                "{max} MCP sessions are open, the limit (pad serve --mcp-http-max-sessions). \
                 End finished sessions with HTTP DELETE, or retry: idle ones close after {} s.\n",
                SESSION_IDLE.as_secs()
            ),
        )
            .into_response();
    }
    let delete = req.method() == Method::DELETE;
    let req = if req.method() == Method::POST {
        let (parts, body) = req.into_parts();
        match axum::body::to_bytes(body, MCP_BODY_LIMIT).await {
            Ok(b) => Request::from_parts(parts, axum::body::Body::from(b)),
            Err(e) => {
                return (
                    StatusCode::BAD_REQUEST,
                    [(header::CONNECTION, "close")],
                    format!("the request body could not be read whole ({e}): send all of it, as its Content-Length (or chunked encoding) says, within {} MiB\n", MCP_BODY_LIMIT >> 20),
                )
                    .into_response();
            }
        }
    } else {
        req
    };
    let mut response = next.run(req).await;
    if new_session {
        if let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            front.budget.session_opened(id, &who);
        }
    }
    // Ending a session: clients expect 200 or 204, not 202.
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    match caller {
        Some(c) => until_revoked(response, front.socket.clone(), c.name),
        None => response,
    }
}

/// The older SSE transport on the same path (an entry without `type`).
async fn older_sse(State(front): Shared, req: Request, next: Next) -> Response {
    if !super::sse::is_sse(&req) {
        return next.run(req).await;
    }
    super::sse::handle(front.sse_sessions.clone(), front.sse_config.clone(), req).await
}

/// The body of a 404: what is served here, and how to authenticate.
const NOT_HERE: &str = "Scratchpad serves MCP at /mcp (and its own protocol at POST /rpc) only. It is not an OAuth server: \
    authenticate with a static bearer token (`Authorization: Bearer <token>`), \
    the one in mcp-http.token in the engine's data directory or one from `pad token create --name <agent>`.\n";

/// A 401's `WWW-Authenticate` (RFC 6750): the scheme, and why in words,
/// for clients that show the header rather than the body.
fn challenge(why: &str) -> String {
    let said: String = why
        .trim_end()
        .chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => ' ',
        })
        .collect();
    format!("Bearer realm=\"scratchpad\", error=\"invalid_token\", error_description=\"{said}\"")
}

/// Checks a bearer that is not the server's token as an engine access token
/// (`pad token create`): who it speaks for, or the 401's text.
/// How often a token's open stream asks whether the token still holds.
pub const REVOCATION_CHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// A token's event stream (an MCP session's, or one answer's) ends once the
/// token is revoked (or revoked and made again under its name): asked of
/// the token list, as the owner, every `REVOCATION_CHECK` — not with the
/// token itself, which would keep its presence fresh; an engine that does
/// not answer is not taken for a revocation. Other answers pass as they are.
fn until_revoked(response: Response, socket: PathBuf, name: String) -> Response {
    use futures_util::StreamExt;
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !streams {
        return response;
    }
    let revoked = async move {
        // When the token was made, as first seen: gone, or another token
        // made under its name since, it was revoked.
        let mut made = None;
        loop {
            if let Some(now) = token_made(&socket, &name).await {
                let first = made.get_or_insert_with(|| now.clone());
                if now.is_none() || *first != now {
                    return;
                }
            }
            tokio::time::sleep(REVOCATION_CHECK).await;
        }
    };
    let (parts, body) = response.into_parts();
    let body = axum::body::Body::from_stream(body.into_data_stream().take_until(revoked));
    axum::response::Response::from_parts(parts, body)
}

/// When the token `name` was made (`Some(None)`: there is none), asked as
/// the owner; `None` when the engine does not answer.
async fn token_made(socket: &std::path::Path, name: &str) -> Option<Option<String>> {
    use crate::protocol::method::TokenList;
    let mut client = crate::client::Client::connect(socket).await.ok()?;
    client.greet_as(None, "pad-mcp-http", None).await.ok()?;
    let list = client
        .request::<TokenList>(&crate::protocol::TokenListParams {})
        .await
        .ok()?;
    Some(
        list.tokens
            .into_iter()
            .find(|t| t.name == name)
            .map(|t| t.created_at),
    )
}

async fn access_token(socket: &std::path::Path, given: &str) -> Result<Caller, String> {
    const HOW: &str = "send `Authorization: Bearer <token>` with the token from mcp-http.token in the engine's data directory, or an access token from `pad token create --name <agent>`";
    if given.is_empty() {
        return Err(format!("missing bearer token: {HOW}\n"));
    }
    let mut client = crate::client::Client::connect(socket)
        .await
        .map_err(|e| format!("the engine is not reachable to check the token ({e})\n"))?;
    match client.greet_as(None, "pad-mcp-http", Some(given)).await {
        Ok(hello) => match hello["token"].as_str() {
            Some(name) => Ok(Caller {
                token: given.to_owned(),
                name: name.to_owned(),
            }),
            // The owner's own token: it speaks for the server's author.
            None => Err(format!("wrong bearer token: {HOW}\n")),
        },
        Err(_) => Err(format!("wrong bearer token (unknown, or revoked): {HOW}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_private_addresses_are_the_owners_word_public_ones_need_a_second_flag() {
        for ok in [
            "127.0.0.1:1",
            "172.17.0.1:1",
            "10.0.0.5:1",
            "192.168.1.2:1",
            "[::1]:1",
            "[fd00::1]:1",
        ] {
            assert!(
                http_bind_allowed(ok.parse().unwrap(), false).is_ok(),
                "{ok}"
            );
        }
        let wild = http_bind_allowed("0.0.0.0:8765".parse().unwrap(), false)
            .unwrap_err()
            .to_string();
        assert!(
            wild.contains("every interface")
                && wild.contains("172.17.0.1:8765")
                && wild.contains("--mcp-http-allow-public"),
            "{wild}"
        );
        let public = http_bind_allowed("8.8.8.8:1".parse().unwrap(), false)
            .unwrap_err()
            .to_string();
        assert!(public.contains("a public address"), "{public}");
        assert!(http_bind_allowed("0.0.0.0:8765".parse().unwrap(), true).is_ok());
        assert!(http_bind_allowed("[::]:8765".parse().unwrap(), false).is_err());
    }
}
