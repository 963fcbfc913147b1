//! MCP's older HTTP transport, "HTTP with SSE" (protocol 2024-11-05), on the
//! same `/mcp` path as streamable HTTP: a `GET` without a session opens an
//! event stream whose first event, `endpoint`, names where to `POST` the
//! client's messages (`/mcp?sessionId=…`); the server's messages come back
//! as `message` events. Agent Zero speaks it to an entry with a `url` and no
//! `type`, so such an entry works too. Each stream is one session running
//! the same tools; it ends when the client drops the stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::sync::mpsc;

use super::{Caller, McpConfig, PadTools};

/// The open SSE sessions: where each one's posted messages go.
#[derive(Clone, Default)]
pub struct Sessions(Arc<Mutex<HashMap<String, mpsc::Sender<ClientJsonRpcMessage>>>>);

impl Sessions {
    /// The ids of the sessions open now.
    pub fn ids(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }
}

/// Whether `req` belongs to the SSE transport rather than streamable HTTP.
pub fn is_sse(req: &Request) -> bool {
    let accepts_events = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    let no_session = !req.headers().contains_key("mcp-session-id");
    (req.method() == Method::GET && accepts_events && no_session) || session_of(req).is_some()
}

fn session_of(req: &Request) -> Option<String> {
    req.uri()
        .query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix("sessionId="))
        .map(str::to_owned)
}

/// Serves one SSE-transport request: opens a stream, or takes a message.
pub async fn handle(sessions: Sessions, config: McpConfig, req: Request) -> Response {
    match session_of(&req) {
        Some(id) if req.method() == Method::POST => post(&sessions, &id, req).await,
        Some(_) => (
            StatusCode::METHOD_NOT_ALLOWED,
            "POST messages to the session's endpoint\n",
        )
            .into_response(),
        None => {
            let caller = req.extensions().get::<Caller>().cloned();
            open(sessions, config, caller, req.uri().path())
        }
    }
}

fn open(sessions: Sessions, config: McpConfig, caller: Option<Caller>, path: &str) -> Response {
    let Ok(id) = crate::access::random_hex() else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot make a session id\n",
        )
            .into_response();
    };
    let (to_server, from_client) = mpsc::channel(64);
    let (to_client, from_server) = mpsc::channel::<ServerJsonRpcMessage>(64);
    sessions
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id.clone(), to_server);
    let who = caller
        .as_ref()
        .map_or(config.author.as_str(), |c| c.name.as_str());
    config.budget.session_opened(&id, who);
    let transport = Channels {
        to_client,
        from_client,
    };
    tokio::spawn(async move {
        if let Ok(running) = PadTools::new(config)
            .speaking_for(caller)
            .serve(transport)
            .await
        {
            let _ = running.waiting().await;
        }
    });
    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("{path}?sessionId={id}"));
    // The guard ends the session when the client drops the stream.
    let guard = Closer { sessions, id };
    let messages =
        futures_util::stream::unfold((from_server, guard), |(mut rx, guard)| async move {
            let msg = rx.recv().await?;
            let data = serde_json::to_string(&msg).unwrap_or_default();
            Some((
                Ok::<_, std::convert::Infallible>(Event::default().event("message").data(data)),
                (rx, guard),
            ))
        });
    let stream = futures_util::StreamExt::chain(
        futures_util::stream::once(async { Ok(endpoint) }),
        messages,
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

async fn post(sessions: &Sessions, id: &str, req: Request) -> Response {
    let tx = sessions
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(id)
        .cloned();
    let Some(tx) = tx else {
        return (
            StatusCode::NOT_FOUND,
            "no such session: open the event stream again (GET /mcp)\n",
        )
            .into_response();
    };
    let body = match axum::body::to_bytes(req.into_body(), 4 << 20).await {
        Ok(b) => b,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("cannot read the body: {e}\n"),
            )
                .into_response()
        }
    };
    let msg: ClientJsonRpcMessage = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("not a JSON-RPC message: {e}\n"),
            )
                .into_response()
        }
    };
    match tx.send(msg).await {
        Ok(()) => (StatusCode::ACCEPTED, "Accepted").into_response(),
        Err(_) => (
            StatusCode::NOT_FOUND,
            "the session ended: open the event stream again (GET /mcp)\n",
        )
            .into_response(),
    }
}

struct Closer {
    sessions: Sessions,
    id: String,
}

impl Drop for Closer {
    fn drop(&mut self) {
        self.sessions
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// The rmcp transport of one session: messages posted in, events out.
struct Channels {
    to_client: mpsc::Sender<ServerJsonRpcMessage>,
    from_client: mpsc::Receiver<ClientJsonRpcMessage>,
}

impl Transport<RoleServer> for Channels {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let tx = self.to_client.clone();
        async move {
            tx.send(item).await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the event stream closed")
            })
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.from_client.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.from_client.close();
        Ok(())
    }
}
