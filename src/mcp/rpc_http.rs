//! The engine's own protocol over HTTP, beside MCP on the `--mcp-http`
//! listener: `POST /rpc` with one JSON-RPC 2.0 request, for clients that
//! cannot reach the socket — Agent Zero's plugin in a container above all.
//!
//! Each request needs an access token (`pad token create`) as its bearer,
//! and runs as that token on a connection of its own: the token's pads, its
//! name as author. The MCP server's own token is refused here (it would be
//! the owner's whole protocol on TCP). Events have no channel over plain
//! HTTP, so `subscribe` is refused with the way to poll instead.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::Caller;
use crate::client::ClientError;
use crate::error::code;

/// The path it is served at.
pub const PATH: &str = "/rpc";

/// Methods a request over HTTP cannot use, and what to do instead.
fn refused(method: &str) -> Option<&'static str> {
    match method {
        "subscribe" | "unsubscribe" => {
            Some("needs the socket (events have no channel over HTTP); poll `inbox` instead")
        }
        _ => None,
    }
}

fn json_response(v: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&v).expect("json"),
    )
        .into_response()
}

fn error(id: &Value, code: i64, message: String) -> Response {
    json_response(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// Answers one request, as `caller` (None: the server's token, refused).
pub async fn handle(
    socket: &std::path::Path,
    budget: &std::sync::Arc<crate::tcp::Budget>,
    caller: Option<Caller>,
    body: &[u8],
) -> Response {
    let Some(caller) = caller else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer realm=\"scratchpad\"")],
            "POST /rpc takes an access token, not the MCP server's token: create one with \
             `pad token create --name agent-zero --pads '*'` and send it as `Authorization: Bearer <token>`.\n",
        )
            .into_response();
    };
    let request: Value = match serde_json::from_slice(body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return error(
                &Value::Null,
                code::PARSE,
                "the body is not one JSON-RPC 2.0 request object, e.g. \
                 {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"search\",\"params\":{\"query\":\"…\"}}"
                    .to_owned(),
            )
        }
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return error(
            &id,
            code::INVALID_REQUEST,
            "the request has no `method`".to_owned(),
        );
    };
    if let Some(why) = refused(method) {
        return error(&id, code::METHOD_NOT_FOUND, format!("`{method}` {why}"));
    }
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    // One of the token's places while its connection to the engine is open.
    let _held = match budget.take(&caller.name) {
        Ok(held) => held,
        Err(why) => return error(&id, code::UNAVAILABLE, why),
    };
    let mut client = match crate::client::Client::connect(socket).await {
        Ok(c) => c,
        Err(e) => {
            return error(
                &id,
                code::UNAVAILABLE,
                format!("the engine is not reachable ({e}); try again shortly"),
            )
        }
    };
    // `hello` is said for the request, with its token (the token names
    // the author); asked for, its answer is the request's.
    let answer = async {
        let hello = client
            .greet_as(None, "http-rpc", Some(&caller.token))
            .await?;
        if method == "hello" {
            return Ok(hello);
        }
        client.call(method, params).await
    }
    .await;
    match answer {
        Ok(result) => json_response(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        Err(ClientError::Rpc(e)) => {
            let mut err = json!({"code": e.code, "message": e.message});
            if let Some(data) = e.data {
                err["data"] = data;
            }
            json_response(json!({"jsonrpc": "2.0", "id": id, "error": err}))
        }
        Err(e) => error(
            &id,
            code::UNAVAILABLE,
            format!("the engine did not answer: {e}"),
        ),
    }
}
