//! HTTP over TCP (`--mcp-http`, `--metrics`), bounded.
//!
//! These listeners are on loopback or a private address, which every local
//! account (and, on a bridge, every container) reaches before any token is
//! checked. So a connection starts as a newcomer: at most `MAX_NEWCOMERS`
//! at once; its first request the app lets through (a valid token) makes it
//! a member, of which each listener serves `MAX_CONNECTIONS` more, at most
//! `MAX_CONNECTIONS_PER_CLIENT` of them one access token's, and
//! `OWNER_CONNECTIONS` beside them kept for the owner — so connections
//! without a token, however many, never take the places of clients that
//! showed one, and no token's take every other client's. When every
//! member place is taken, the member idle longest (no request or event
//! stream in progress for `IDLE_MEMBER`) is closed for the one that waits:
//! idle keep-alive and HTTP/2 connections hold no place against a client
//! with work. A newcomer past the cap takes the place of the oldest
//! newcomer of the peer address holding the most (closed: a client with a
//! token sends its request at once, so connections that send nothing, or
//! their headers slowly, are the ones pushed out, and a flood from one
//! address pushes out its own); if none frees in time it is answered `503`
//! and closed at once, never left hanging; a refused request closes its
//! connection. Over HTTP/2 a connection carries at most `MAX_STREAMS`
//! requests at once. A request head must arrive whole within `HEAD_TIMEOUT`
//! and a request body within `BODY_TIMEOUT`, or the connection is closed.
//! Refusals are counted (`Refusals`: a metric, and one log line a minute at
//! most), not logged one by one. Nothing reached over TCP can take the
//! descriptors or memory the owner's socket needs: those come out of
//! `server::FD_RESERVE`.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::model;

/// Connections that made a request the app let through, per listener.
pub const MAX_CONNECTIONS: usize = 64;
/// Of those, what one client (an access token) may hold: one token's
/// connections never take every place.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 16;
/// Places beside those kept for the owner (the listener's own token), so
/// the owner's client is served however many the tokens hold.
pub const OWNER_CONNECTIONS: usize = 8;
/// Connections yet to make one, per listener.
pub const MAX_NEWCOMERS: usize = 32;
/// Requests one HTTP/2 connection may have in progress at once (HTTP/1.1
/// carries one).
pub const MAX_STREAMS: u32 = 8;
/// A request's head (request line and headers) must arrive within this.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's body must arrive within this (MCP messages are small).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stop waits for requests in progress (an SSE stream never ends).
const DRAIN: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `shutdown`, within the bounds above.
/// The app calls `Standing::admit` on a request it lets through.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    refusals: Refusals,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let app = app.layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
        BODY_TIMEOUT,
    ));
    let newcomers = Arc::new(Semaphore::new(MAX_NEWCOMERS));
    let members = Arc::new(Members {
        shared: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        owner: Arc::new(Semaphore::new(OWNER_CONNECTIONS)),
        by_client: Mutex::default(),
        all: Mutex::default(),
    });
    // The newcomers, oldest first: each one's signal to close.
    let waiting: Arc<Mutex<VecDeque<Weak<StandingOf>>>> = Arc::default();
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => (tcp, peer.ip()),
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
        let Some(permit) = newcomers_place(&newcomers, &waiting).await else {
            refusals.note(&format!(
                "{MAX_NEWCOMERS} connections without a valid request yet, the limit"
            ));
            refuse(tcp);
            continue;
        };
        let standing = Standing::newcomer(permit, &members, peer);
        {
            let mut w = waiting.lock().expect("newcomers lock");
            keep_newcomers(&mut w);
            w.push_back(Arc::downgrade(&standing.0));
        }
        let service = TowerToHyperService::new(standing.serving(app.clone()));
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            tokio::select! {
                _ = conn => {}
                // Pushed out by a newer newcomer: the connection closes.
                _ = standing.0.evict.notified() => {}
            }
            drop(standing);
        });
    }
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    Ok(())
}

/// A newcomer's place: one free, or the oldest newcomer of the peer holding
/// the most makes room (`None`: none freed in time).
async fn newcomers_place(
    newcomers: &Arc<Semaphore>,
    waiting: &Mutex<VecDeque<Weak<StandingOf>>>,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    if let Ok(p) = newcomers.clone().try_acquire_owned() {
        return Some(p);
    }
    evict_newcomer(waiting);
    tokio::time::timeout(EVICTING, newcomers.clone().acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
}

/// Where a connection stands: a newcomer, or a member once a request of its
/// was let through. In every request's extensions.
#[derive(Clone)]
pub struct Standing(Arc<StandingOf>);

struct StandingOf {
    /// Its place among the newcomers, then among the members (locked while
    /// one request is admitted: HTTP/2 streams arrive together).
    permit: tokio::sync::Mutex<Option<OwnedSemaphorePermit>>,
    member: AtomicBool,
    members: Arc<Members>,
    /// The client it was admitted for (none: the owner).
    client: Mutex<Option<String>>,
    /// Told when a newer newcomer takes its place, or a member that waits
    /// for a place takes its idle one.
    evict: tokio::sync::Notify,
    peer: IpAddr,
    /// Requests in progress (until their answer's body ends).
    busy: AtomicUsize,
    /// When the last of them ended.
    idle_since: Mutex<Instant>,
    /// Its place is one of those kept for the owner.
    owners_place: AtomicBool,
}

/// A request in progress on a connection.
struct Busy(Arc<StandingOf>);

impl Busy {
    fn new(s: &Arc<StandingOf>) -> Busy {
        s.busy.fetch_add(1, Ordering::AcqRel);
        Busy(s.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.idle_since.lock().expect("standing lock") = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body, holding its request busy until it ends.
struct Held {
    body: axum::body::Body,
    _busy: Busy,
}

impl http_body::Body for Held {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A listener's member places: shared, the owner's own, and how many each
/// client holds.
struct Members {
    shared: Arc<Semaphore>,
    owner: Arc<Semaphore>,
    by_client: Mutex<HashMap<String, usize>>,
    /// Every member, for the one idle longest to make room.
    all: Mutex<Vec<Weak<StandingOf>>>,
}

impl Drop for StandingOf {
    fn drop(&mut self) {
        let Some(who) = self.client.get_mut().ok().and_then(Option::take) else {
            return;
        };
        let mut m = self.members.by_client.lock().expect("members lock");
        if let Some(n) = m.get_mut(&who) {
            *n -= 1;
            if *n == 0 {
                m.remove(&who);
            }
        }
    }
}

/// How long a newcomer past the cap waits for the one it pushed out to close.
const EVICTING: Duration = Duration::from_millis(200);

/// Tells the oldest newcomer of the peer holding the most newcomers to
/// close: a peer that opens many connections and sends nothing pushes out
/// its own, not other peers'.
fn evict_newcomer(waiting: &Mutex<VecDeque<Weak<StandingOf>>>) {
    let mut w = waiting.lock().expect("newcomers lock");
    keep_newcomers(&mut w);
    let mut held: HashMap<IpAddr, usize> = HashMap::new();
    for s in w.iter().filter_map(Weak::upgrade) {
        *held.entry(s.peer).or_default() += 1;
    }
    let Some((&most, _)) = held.iter().max_by_key(|(_, n)| **n) else {
        return;
    };
    let at = w
        .iter()
        .position(|s| s.upgrade().is_some_and(|s| s.peer == most));
    if let Some(oldest) = at.and_then(|i| w.remove(i)).and_then(|s| s.upgrade()) {
        oldest.evict.notify_one();
    }
}

/// Drops from the newcomers' queue those closed or made members since.
fn keep_newcomers(w: &mut VecDeque<Weak<StandingOf>>) {
    w.retain(|s| {
        s.upgrade()
            .is_some_and(|s| !s.member.load(Ordering::Acquire))
    });
}

/// The peer a connection from `ip` counts as: every loopback address
/// (127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6) is one, as one
/// local account can speak from all of them (else a flood spread over
/// 127.0.0.2… would aim the push at the one address a victim uses).
fn peer_of(ip: IpAddr) -> IpAddr {
    let loopback = match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    };
    if loopback {
        IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
    } else {
        ip
    }
}

/// Why a client at its share of a listener's places is refused.
fn at_share(who: &str) -> String {
    format!("'{who}' already holds {MAX_CONNECTIONS_PER_CLIENT} connections to this listener, the most one client may, and none has been idle for {} s; reuse one (keep-alive) or close one", IDLE_MEMBER.as_secs())
}

/// A member idle at least this long may be closed for one that waits.
pub const IDLE_MEMBER: Duration = Duration::from_secs(1);

/// Which members an eviction may close.
enum Of<'a> {
    /// Holders of shared places (what a token may take).
    Shared,
    /// Any member (the owner may take a shared place or one of its own).
    Any,
    /// The client's own connections.
    Client(&'a str),
}

/// Tells the member idle longest among `of` (no request in progress for at
/// least `IDLE_MEMBER`) to close; whether there was one.
fn evict_idle(members: &Members, of: Of<'_>) -> bool {
    let mut all = members.all.lock().expect("members lock");
    all.retain(|s| s.strong_count() > 0);
    let idle = all
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|s| match of {
            Of::Any => true,
            Of::Shared => !s.owners_place.load(Ordering::Acquire),
            Of::Client(who) => s.client.lock().expect("standing lock").as_deref() == Some(who),
        })
        .filter(|s| s.busy.load(Ordering::Acquire) == 0)
        .map(|s| {
            let since = *s.idle_since.lock().expect("standing lock");
            (since, s)
        })
        .filter(|(since, _)| since.elapsed() >= IDLE_MEMBER)
        .min_by_key(|(since, _)| *since);
    match idle {
        Some((_, s)) => {
            all.retain(|m| !std::ptr::eq(m.as_ptr(), Arc::as_ptr(&s)));
            s.evict.notify_one();
            true
        }
        None => false,
    }
}

impl Standing {
    /// A connection just accepted from `peer`, holding a newcomer's place.
    fn newcomer(
        permit: tokio::sync::OwnedSemaphorePermit,
        members: &Arc<Members>,
        peer: IpAddr,
    ) -> Standing {
        Standing(Arc::new(StandingOf {
            permit: tokio::sync::Mutex::new(Some(permit)),
            member: AtomicBool::new(false),
            members: members.clone(),
            client: Mutex::new(None),
            evict: tokio::sync::Notify::new(),
            peer: peer_of(peer),
            busy: AtomicUsize::new(0),
            owners_place: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
        }))
    }

    /// `app` for this connection: its standing in every request's
    /// extensions, and each request holding the connection busy until its
    /// answer's body ends (an event stream: while it is open).
    fn serving(&self, app: axum::Router) -> axum::Router {
        let busy = self.clone();
        app.layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let held = Busy::new(&busy.0);
                async move {
                    let (parts, body) = next.run(req).await.into_parts();
                    let body = axum::body::Body::new(Held { body, _busy: held });
                    axum::response::Response::from_parts(parts, body)
                }
            },
        ))
        .layer(axum::Extension(self.clone()))
    }

    /// Makes the connection a member (its request was let through) for
    /// `client` (`None`: the owner, who has places of its own); why not,
    /// when its client holds its share or the places are all taken by
    /// connections in use (an idle one makes room).
    pub async fn admit(&self, client: Option<&str>) -> Result<(), String> {
        // One admission at a time per connection (HTTP/2 streams arrive
        // together): it is counted once.
        let mut permit = self.0.permit.lock().await;
        if self.0.member.load(Ordering::Acquire) {
            return Ok(());
        }
        let members = &self.0.members;
        let share = |who: &str| {
            let held = members.by_client.lock().expect("members lock");
            match held.get(who).copied().unwrap_or(0) {
                n if n >= MAX_CONNECTIONS_PER_CLIENT => Err(at_share(who)),
                _ => Ok(()),
            }
        };
        if let Some(who) = client {
            // At its share: its own connection idle longest makes room.
            if share(who).is_err() && evict_idle(members, Of::Client(who)) {
                soon(|| share(who).ok()).await;
            }
            share(who)?;
        }
        let Some((place, owners)) = self.place(client).await else {
            return Err(match client {
                Some(_) => format!("this listener already serves {MAX_CONNECTIONS} connections in use, its limit; retry in a moment"),
                None => format!("this listener already serves {} connections of the owner's in use, its limit; retry in a moment", MAX_CONNECTIONS + OWNER_CONNECTIONS),
            });
        };
        if let Some(who) = client {
            // Another connection of the same client may have been let in
            // while this one waited for its place: checked and counted
            // under one lock.
            let mut held = members.by_client.lock().expect("members lock");
            let mine = held.entry(who.to_owned()).or_default();
            if *mine >= MAX_CONNECTIONS_PER_CLIENT {
                return Err(at_share(who));
            }
            *mine += 1;
            *self.0.client.lock().expect("standing lock") = Some(who.to_owned());
        }
        *permit = Some(place);
        self.0.owners_place.store(owners, Ordering::Release);
        members
            .all
            .lock()
            .expect("members lock")
            .push(Arc::downgrade(&self.0));
        self.0.member.store(true, Ordering::Release);
        Ok(())
    }

    /// A member's place for `client`, and whether it is one kept for the
    /// owner: a shared one (the owner's own when those are taken); when
    /// none is free, the member idle longest whose place `client` could take
    /// is closed and its place taken, if it frees in time.
    async fn place(&self, client: Option<&str>) -> Option<(OwnedSemaphorePermit, bool)> {
        let members = &self.0.members;
        let free = || {
            let shared = members.shared.clone().try_acquire_owned();
            match client {
                Some(_) => shared.ok().map(|p| (p, false)),
                None => shared.map(|p| (p, false)).ok().or_else(|| {
                    let owners = members.owner.clone().try_acquire_owned();
                    owners.ok().map(|p| (p, true))
                }),
            }
        };
        if let Some(place) = free() {
            return Some(place);
        }
        let of = if client.is_some() {
            Of::Shared
        } else {
            Of::Any
        };
        if !evict_idle(members, of) {
            return None;
        }
        soon(free).await
    }
}

/// `ready`'s answer once it has one, within `EVICTING` (while a closed
/// connection gives back what it held); `None` past it.
async fn soon<T>(mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + EVICTING;
    loop {
        if let Some(t) = ready() {
            return Some(t);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Makes the connection of a request the app lets through a member for
/// `client` (`Standing::admit`); when there is no place for it, the answer
/// to send instead (the connection then closes: it holds no place).
pub fn admit(
    req: &axum::extract::Request,
    client: Option<&str>,
) -> impl Future<Output = Option<axum::response::Response>> + Send + 'static {
    let standing = req.extensions().get::<Standing>().cloned();
    let client = client.map(str::to_owned);
    async move {
        let refused = standing?.admit(client.as_deref()).await.err()?;
        Some(axum::response::IntoResponse::into_response((
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [
                (axum::http::header::RETRY_AFTER, "5"),
                (axum::http::header::CONNECTION, "close"),
            ],
            format!("{refused}\n"),
        )))
    }
}

/// Requests one client (an access token, or the MCP server's token) may
/// have in progress at once over HTTP: each holds a connection to the
/// engine (a waiting `ask` among them).
pub const MAX_IN_FLIGHT_PER_CLIENT: usize = 16;
/// Requests in progress over HTTP altogether: the engine's descriptors are
/// for its owner first.
pub const MAX_IN_FLIGHT: usize = 128;
/// MCP sessions one client may hold open at once.
pub const MAX_SESSIONS_PER_CLIENT: usize = 16;

/// What each client of the HTTP listeners holds, by who it is: requests in
/// progress and MCP sessions. No client's use takes another's places.
#[derive(Default, Debug)]
pub struct Budget {
    in_flight: Mutex<HashMap<String, usize>>,
    /// Each open MCP session's client.
    sessions: Mutex<HashMap<String, String>>,
}

/// A request in progress, counted against its client until dropped.
pub struct InFlight {
    budget: Arc<Budget>,
    who: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut m = self.budget.in_flight.lock().expect("budget lock");
        if let Some(n) = m.get_mut(&self.who) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.who);
            }
        }
    }
}

impl Budget {
    /// A place for one more request of `who`'s, or why there is none.
    pub fn take(self: &Arc<Self>, who: &str) -> Result<InFlight, String> {
        let mut m = self.in_flight.lock().expect("budget lock");
        let mine = m.get(who).copied().unwrap_or(0);
        if mine >= MAX_IN_FLIGHT_PER_CLIENT {
            return Err(format!(
                "'{who}' already has {MAX_IN_FLIGHT_PER_CLIENT} requests in progress over HTTP, the most one client may; wait for one to finish (a waiting ask counts until it returns)"
            ));
        }
        if m.values().sum::<usize>() >= MAX_IN_FLIGHT {
            return Err(format!(
                "the engine serves {MAX_IN_FLIGHT} requests over HTTP at once, its limit; retry in a moment"
            ));
        }
        *m.entry(who.to_owned()).or_default() += 1;
        Ok(InFlight {
            budget: self.clone(),
            who: who.to_owned(),
        })
    }

    /// Refuses a new MCP session of `who`'s when it holds its share of the
    /// sessions still open (`open`: their ids).
    pub fn session_room(
        &self,
        who: &str,
        open: &std::collections::HashSet<String>,
    ) -> Result<(), String> {
        let mut s = self.sessions.lock().expect("budget lock");
        s.retain(|id, _| open.contains(id));
        let mine = s.values().filter(|w| *w == who).count();
        if mine >= MAX_SESSIONS_PER_CLIENT {
            return Err(format!(
                "'{who}' already holds {MAX_SESSIONS_PER_CLIENT} MCP sessions, the most one client may: end finished ones with HTTP DELETE (idle ones close by themselves)"
            ));
        }
        Ok(())
    }

    /// Counts the new MCP session `id` as `who`'s.
    pub fn session_opened(&self, id: &str, who: &str) {
        self.sessions
            .lock()
            .expect("budget lock")
            .insert(id.to_owned(), who.to_owned());
    }
}

/// Requests and connections a listener refused: counted (in a metric,
/// when the engine keeps them) and said in the log at most once a minute,
/// so a flood of them costs neither the disk nor the log's reader.
#[derive(Clone)]
pub struct Refusals {
    what: &'static str,
    counter: Option<prometheus::IntCounter>,
    said: Arc<Mutex<(Option<Instant>, u64)>>,
}

/// How often the log says how many were refused.
const SAY_EVERY: Duration = Duration::from_secs(60);

impl Refusals {
    pub fn new(what: &'static str, counter: Option<prometheus::IntCounter>) -> Refusals {
        Refusals {
            what,
            counter,
            said: Arc::default(),
        }
    }

    /// Counts one refusal, `why` it was.
    pub fn note(&self, why: &str) {
        if let Some(c) = &self.counter {
            c.inc();
        }
        let mut said = self.said.lock().expect("refusals lock");
        said.1 += 1;
        if said.0.is_none_or(|at| at.elapsed() >= SAY_EVERY) {
            tracing::warn!(
                "{}: refused {} since this was last said; the latest: {}",
                self.what,
                model::count(said.1 as i64, "request", "requests"),
                why.trim_end()
            );
            *said = (Some(Instant::now()), 0);
        }
    }

    /// How many were refused since the last line in the log.
    #[cfg(test)]
    fn unsaid(&self) -> u64 {
        self.said.lock().expect("refusals lock").1
    }
}

/// Tells a connection over the cap why, without waiting on it, and closes it.
fn refuse(tcp: tokio::net::TcpStream) {
    let body = format!(
        "this listener already serves {MAX_NEWCOMERS} connections that have not shown a valid token yet, its limit; retry in a moment\n"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nRetry-After: 5\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // A fresh socket's send buffer takes this whole; if not, the close says enough.
    let _ = tcp.try_write(answer.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_and_said_once_a_minute() {
        let counter = prometheus::IntCounter::new("t", "t").unwrap();
        let r = Refusals::new("test", Some(counter.clone()));
        for _ in 0..1000 {
            r.note("no token");
        }
        assert_eq!(counter.get(), 1000);
        assert_eq!(
            r.unsaid(),
            999,
            "the first was said; the rest wait a minute"
        );
    }
}
