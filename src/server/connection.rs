//! One client connection: newline-delimited JSON-RPC in, responses and event
//! notifications out.
//!
//! The task owns both halves of the socket. Requests are handled in arrival
//! order; when a client pipelines, responses are written as they are ready
//! but flushed only once no complete request is left in the read buffer, so a
//! burst costs one write. Events from this connection's subscriptions arrive
//! on a bounded channel and are written between requests; if the client reads
//! too slowly the channel fills, its subscription falls behind on the bus and
//! receives a `lagged` notice — writers are never held up.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, watch};

use crate::engine::Engine;
use crate::error::Error;
use crate::protocol::MAX_LINE_BYTES;
use crate::rpc::{self, Session};

use super::socket::Reader;

/// Events queued for one connection before its subscriptions start to lag.
const EVENT_QUEUE: usize = 256;
/// The largest line buffer a connection keeps for its next line.
const RECYCLED_LINE: usize = 4096;
/// On shutdown, how long to wait for more of what a client already sent.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

pub async fn run(stream: UnixStream, engine: Engine, mut stop: watch::Receiver<bool>) {
    let me = crate::paths::uid();
    let peer = stream.peer_cred().map(|c| c.uid()).ok();
    if peer != Some(me) {
        tracing::warn!("refused a connection from uid {peer:?}");
        refuse_stranger(stream, &engine, me).await;
        return;
    }

    let (read, write) = match super::socket::split(stream) {
        Ok(halves) => halves,
        Err(e) => {
            tracing::warn!("cannot serve a connection: {e}");
            return;
        }
    };
    let mut out = BufWriter::with_capacity(64 * 1024, write);
    engine.connection_opened();
    let (events_tx, mut events_rx) = mpsc::channel::<Value>(EVENT_QUEUE);
    let mut session = Session::new(Some(events_tx));
    // A silent half-sent line must not hold up to 1 MiB for ever.
    let mut lines = LineReader::new(read, engine.config().partial_idle);
    // Made once: waiting on the stop signal anew each turn of the loop
    // registered and dropped a waiter on every request.
    let stopping = async {
        let _ = stop.wait_for(|stopping| *stopping).await;
    };
    tokio::pin!(stopping);
    loop {
        tokio::select! {
            biased;
            line = lines.next() => {
                let reply = match line {
                    Ok(Line::Complete(bytes)) => {
                        let reply = rpc::handle_line(&engine, &mut session, &bytes).await;
                        lines.recycle(bytes);
                        reply
                    }
                    Ok(Line::TooLong) => Some(too_long(&engine)),
                    Ok(Line::Stalled) => {
                        let _ = write_line(&mut out, &stalled(&engine)).await;
                        let _ = out.flush().await;
                        break;
                    }
                    Ok(Line::Eof) | Err(_) => break,
                };
                if let Some(reply) = reply {
                    if write_line(&mut out, &reply).await.is_err() {
                        break;
                    }
                }
                if !lines.has_complete_line() && out.flush().await.is_err() {
                    break;
                }
            }
            Some(event) = events_rx.recv() => {
                let note = json!({"jsonrpc": "2.0", "method": "event", "params": event});
                let bytes = serde_json::to_vec(&note).expect("events serialize");
                if write_line(&mut out, &bytes).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
            // Fires at once for a connection accepted after the stop signal.
            () = &mut stopping => {
                // Drain: answer what the client has already sent — including
                // what is still in the kernel's buffer — then close. A client
                // that keeps sending is cut off by the server's drain deadline.
                while let Ok(Ok(Line::Complete(bytes))) =
                    tokio::time::timeout(DRAIN_GRACE, lines.next()).await
                {
                    if let Some(reply) = rpc::handle_line(&engine, &mut session, &bytes).await {
                        if write_line(&mut out, &reply).await.is_err() {
                            break;
                        }
                    }
                    if !lines.has_complete_line() && out.flush().await.is_err() {
                        break;
                    }
                }
                let _ = out.flush().await;
                break;
            }
        }
    }
    drop(session);
    drop(lines);
    drop(out);
    crate::engine::memory_freed();
    engine.connection_closed();
}

/// Says why to a connection of another user, then lingers briefly,
/// discarding input, so a client that is mid-write reads the refusal
/// instead of failing with a broken pipe.
async fn refuse_stranger(stream: UnixStream, engine: &Engine, me: u32) {
    let (mut read, write) = stream.into_split();
    let mut out = BufWriter::new(write);
    let refusal = rpc::refused(
        engine,
        Value::Null,
        &Error::Forbidden(format!(
            "this engine belongs to uid {me}; connections from other users are refused."
        )),
    );
    let _ = write_line(&mut out, &serde_json::to_vec(&refusal).unwrap_or_default()).await;
    let _ = out.shutdown().await;
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        while matches!(tokio::io::AsyncReadExt::read(&mut read, &mut buf).await, Ok(n) if n > 0) {}
    })
    .await;
}

async fn write_line<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    bytes: &[u8],
) -> std::io::Result<()> {
    out.write_all(bytes).await?;
    out.write_all(b"\n").await
}

/// Tells a client over the connection cap so, then closes.
pub async fn refuse_busy(stream: UnixStream, engine: Engine, cap: usize) {
    tracing::warn!("refused a connection: {cap} are open, the limit");
    let e = Error::Unavailable(format!(
        "the engine already serves {cap} connections, its limit; close idle ones (each client needs only one) or raise the engine's open-files limit (ulimit -n) and restart it."
    ));
    let line =
        serde_json::to_vec(&rpc::refused(&engine, Value::Null, &e)).expect("values serialize");
    let (_read, write) = stream.into_split();
    let mut out = BufWriter::new(write);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        let _ = write_line(&mut out, &line).await;
        let _ = out.flush().await;
    })
    .await;
}

fn stalled(engine: &Engine) -> Vec<u8> {
    let e = Error::InvalidRequest(format!(
        "a request line was left unfinished for {} s; the connection is closed. End each request with a newline.",
        engine.config().partial_idle.as_secs()
    ));
    serde_json::to_vec(&rpc::refused(engine, Value::Null, &e)).expect("values serialize")
}

fn too_long(engine: &Engine) -> Vec<u8> {
    let e = Error::TooLarge {
        field: None,
        message: format!(
            "request line is over {MAX_LINE_BYTES} bytes (1 MiB), the limit; it was discarded. Send large content in several entries, or keep it in a file and put the path in 'meta'."
        ),
        limit: MAX_LINE_BYTES as u64,
        got: MAX_LINE_BYTES as u64 + 1,
    };
    serde_json::to_vec(&rpc::refused(engine, Value::Null, &e)).expect("values serialize")
}

enum Line {
    Complete(Vec<u8>),
    TooLong,
    /// A line begun and then left unfinished for `PARTIAL_IDLE`.
    Stalled,
    Eof,
}

/// Splits the stream into lines of at most `MAX_LINE_BYTES`. Cancel-safe: all
/// progress lives in `self`, so a `select!` may drop `next()` at any await.
struct LineReader {
    inner: BufReader<Reader>,
    partial: Vec<u8>,
    /// Skipping the rest of an over-long line.
    discarding: bool,
    /// How long a begun line may wait for its next byte (`Line::Stalled`).
    idle: std::time::Duration,
}

impl LineReader {
    fn new(read: Reader, idle: std::time::Duration) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, read),
            partial: Vec::new(),
            discarding: false,
            idle,
        }
    }

    /// Takes a handled line's buffer back for the next line, unless it is
    /// large (a long line's memory is not kept for the connection's life).
    fn recycle(&mut self, mut line: Vec<u8>) {
        if self.partial.capacity() == 0 && line.capacity() <= RECYCLED_LINE {
            line.clear();
            self.partial = line;
        }
    }

    fn has_complete_line(&self) -> bool {
        self.inner.buffer().contains(&b'\n')
    }

    async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            let midline = !self.partial.is_empty() || self.discarding;
            let buf = if midline {
                match tokio::time::timeout(self.idle, self.inner.fill_buf()).await {
                    Ok(read) => read?,
                    Err(_) => {
                        self.partial = Vec::new();
                        return Ok(Line::Stalled);
                    }
                }
            } else {
                self.inner.fill_buf().await?
            };
            if buf.is_empty() {
                // A last request that ends at EOF without its newline is a
                // request like any other.
                let mut last = std::mem::take(&mut self.partial);
                if !self.discarding && !last.iter().all(u8::is_ascii_whitespace) {
                    if last.last() == Some(&b'\r') {
                        last.pop();
                    }
                    return Ok(Line::Complete(last));
                }
                return Ok(Line::Eof);
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let done_discarding = self.discarding;
                    if !self.discarding {
                        self.partial.extend_from_slice(&buf[..i]);
                    }
                    self.inner.consume(i + 1);
                    self.discarding = false;
                    if done_discarding {
                        continue;
                    }
                    if self.partial.len() > MAX_LINE_BYTES {
                        self.partial = Vec::new();
                        return Ok(Line::TooLong);
                    }
                    let mut line = std::mem::take(&mut self.partial);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue; // blank keep-alive lines are allowed and ignored
                    }
                    return Ok(Line::Complete(line));
                }
                None => {
                    let n = buf.len();
                    if !self.discarding {
                        self.partial.extend_from_slice(buf);
                    }
                    self.inner.consume(n);
                    if !self.discarding && self.partial.len() > MAX_LINE_BYTES {
                        self.partial = Vec::new();
                        self.discarding = true;
                        return Ok(Line::TooLong);
                    }
                }
            }
        }
    }
}
