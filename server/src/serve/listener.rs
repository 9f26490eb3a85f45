//! The listener's accept loop: each connection served by hyper (HTTP/1.1 or HTTP/2,
//! over TLS when configured) within bounds a slow or idle client cannot stretch.
//!
//! A client that connects and sends nothing, half a request line or half its headers
//! (slowloris) would otherwise hold a task and a file descriptor for ever, and enough
//! of them would hold the server. So:
//! - A connection must deliver its first request's headers within the header read
//!   timeout of being accepted: the TLS handshake and hyper-util's protocol detection
//!   count too (hyper's own timer only starts after the detection). After that,
//!   hyper's header read timeout bounds each later request's headers and the idle wait
//!   of a keep-alive connection between requests.
//! - At most `max_connections` are open ([`Gate`]). At the limit, a new connection
//!   displaces the oldest one with no request in flight (one that has not sent a whole
//!   request yet, or is idle between requests): half-open connections cannot crowd out
//!   `/healthz` or a user's request. When every open connection is serving a request,
//!   the loop stops accepting until one ends, and the kernel's backlog holds the rest.
//! - HTTP/2 connections run at most [`H2_MAX_STREAMS`] requests at once and are pinged,
//!   so a vanished peer's connection ends.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use axum_server::tls_rustls::RustlsConfig;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::Sleep;
use tower::Service;

use crate::config::ConnectionLimits;
use crate::serve::StopSignal;

/// Requests one HTTP/2 connection may have in flight at once.
pub const H2_MAX_STREAMS: u32 = 100;

/// How often an HTTP/2 connection is pinged, and how long its answer may take.
const H2_PING_EVERY: Duration = Duration::from_secs(30);
const H2_PING_TIMEOUT: Duration = Duration::from_secs(20);

/// How long the loop waits after a failed accept (out of file descriptors, say)
/// before it tries again, instead of spinning.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` (over TLS with `tls`) within `limits` until `stop`;
/// returns once every connection has ended (open ones are asked to finish their
/// requests and close).
pub async fn serve(
    listener: TcpListener,
    tls: Option<RustlsConfig>,
    app: Router,
    limits: ConnectionLimits,
    stop: StopSignal,
) -> anyhow::Result<()> {
    let gate = Gate::new(limits.max_connections);
    let builder = Arc::new(http_builder(limits.header_read_timeout));
    let mut stopping = std::pin::pin!(stop.clone().wait());
    loop {
        let slot = tokio::select! {
            slot = gate.admit() => slot,
            () = &mut stopping => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = &mut stopping => break,
        };
        let connection = Connection {
            slot,
            peer,
            app: app.clone(),
            builder: builder.clone(),
            header_read_timeout: limits.header_read_timeout,
            stop: stop.clone(),
        };
        tokio::spawn(connection.run(tcp, tls.clone()));
    }
    drop(listener);
    gate.all_closed().await;
    Ok(())
}

/// hyper's settings: a timer (without one hyper enforces no timeout at all), the
/// header read timeout, and HTTP/2's stream limit and pings.
fn http_builder(header_read_timeout: Duration) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(H2_MAX_STREAMS)
        .keep_alive_interval(H2_PING_EVERY)
        .keep_alive_timeout(H2_PING_TIMEOUT);
    builder
}

/// One accepted connection and what serving it needs.
struct Connection {
    slot: Slot,
    peer: SocketAddr,
    app: Router,
    builder: Arc<Builder<TokioExecutor>>,
    header_read_timeout: Duration,
    stop: StopSignal,
}

impl Connection {
    async fn run(self, tcp: TcpStream, tls: Option<RustlsConfig>) {
        // Small writes (event stream frames) go out at once.
        let _ = tcp.set_nodelay(true);
        let first_request = tokio::time::sleep(self.header_read_timeout);
        let mut first_request = std::pin::pin!(first_request);
        let Some(config) = tls else {
            return self.serve(tcp, first_request).await;
        };
        let acceptor = tokio_rustls::TlsAcceptor::from(config.get_inner());
        let handshake = tokio::select! {
            handshake = acceptor.accept(tcp) => handshake,
            () = &mut first_request => return,
            () = self.slot.displaced() => return,
        };
        match handshake {
            Ok(stream) => self.serve(stream, first_request).await,
            // A scanner, a client that does not trust the certificate: nothing to serve.
            Err(error) => tracing::debug!(%error, peer = %self.peer, "TLS handshake failed"),
        }
    }

    /// Serves HTTP on `io` until the client closes, the first request is late, the
    /// connection is displaced while idle, or a stop has let its requests finish.
    async fn serve<I>(self, io: I, mut first_request: Pin<&mut Sleep>)
    where
        I: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let Connection {
            slot,
            peer,
            app,
            builder,
            stop,
            ..
        } = self;
        let shared = slot.shared();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            let in_flight = shared.begin();
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut app = app.clone();
            async move {
                let response = app.call(request).await?;
                Ok::<_, Infallible>(response.map(|body| {
                    Body::new(Tracked {
                        body,
                        _in_flight: in_flight,
                    })
                }))
            }
        });
        let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
        let mut connection = std::pin::pin!(connection);
        let mut stopping = std::pin::pin!(stop.wait());
        let (mut late, mut shutting_down) = (false, false);
        loop {
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(error) = served {
                        tracing::debug!(%error, %peer, "connection ended with an error");
                    }
                    return;
                }
                () = &mut first_request, if !late => {
                    late = true;
                    if !slot.used() {
                        tracing::debug!(%peer, "no request headers within the header read timeout: closing");
                        return;
                    }
                }
                () = slot.displaced() => {
                    if slot.idle() {
                        tracing::debug!(%peer, "displaced by a new connection at the connection limit");
                        return;
                    }
                }
                () = &mut stopping, if !shutting_down => {
                    shutting_down = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// A response body that counts as its connection's request in flight until it is
/// sent or dropped (an event stream stays in flight as long as it is open).
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// What the gate and a connection's task share about the connection.
#[derive(Default)]
struct Use {
    /// Whether a request's headers have arrived yet.
    used: AtomicBool,
    /// Requests whose response is not yet sent.
    in_flight: AtomicUsize,
    /// Told when the gate wants the connection's place.
    displace: Notify,
}

impl Use {
    fn idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        self.used.store(true, Ordering::Release);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }
}

/// One request in flight on a connection; ends when dropped.
struct InFlight(Arc<Use>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What the gate does for a connection about to be accepted.
#[derive(Debug, PartialEq, Eq)]
enum Admission {
    /// There is room: take a place.
    Admit,
    /// No room: displace the open connection at this position of the queue (the
    /// oldest with no request in flight), then look again once a place is free.
    Displace(usize),
    /// No room, and every open connection is serving a request: wait for one to end.
    Wait,
}

/// The decision, from how many are open, the limit, and whether each open connection
/// (oldest first) is idle.
fn admission(open: usize, max: usize, idle: impl IntoIterator<Item = bool>) -> Admission {
    if open < max {
        return Admission::Admit;
    }
    match idle.into_iter().position(|idle| idle) {
        Some(position) => Admission::Displace(position),
        None => Admission::Wait,
    }
}

/// The open connections, oldest first, and the most there may be.
struct Gate {
    max: usize,
    open: Mutex<VecDeque<Weak<Use>>>,
    /// Told whenever a connection ends.
    freed: Notify,
}

impl Gate {
    fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            open: Mutex::new(VecDeque::new()),
            freed: Notify::new(),
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, VecDeque<Weak<Use>>> {
        // A poisoned queue is still the queue: its entries are weak references.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for the next connection, once there is one.
    async fn admit(self: &Arc<Self>) -> Slot {
        loop {
            // Made before looking, so an end between the look and the wait is not missed.
            let freed = self.freed.notified();
            {
                let mut open = self.open();
                open.retain(|entry| entry.strong_count() > 0);
                let uses: Vec<Arc<Use>> = open.iter().filter_map(Weak::upgrade).collect();
                match admission(open.len(), self.max, uses.iter().map(|u| u.idle())) {
                    Admission::Admit => {
                        let shared = Arc::new(Use::default());
                        open.push_back(Arc::downgrade(&shared));
                        return Slot {
                            shared,
                            gate: self.clone(),
                        };
                    }
                    Admission::Displace(position) => uses[position].displace.notify_one(),
                    Admission::Wait => {}
                }
            }
            freed.await;
        }
    }

    /// Resolves once no connection is open.
    async fn all_closed(&self) {
        loop {
            let freed = self.freed.notified();
            let any_open = {
                let mut open = self.open();
                open.retain(|entry| entry.strong_count() > 0);
                !open.is_empty()
            };
            if !any_open {
                return;
            }
            freed.await;
        }
    }
}

/// A connection's place at the gate, given back when its task ends.
struct Slot {
    shared: Arc<Use>,
    gate: Arc<Gate>,
}

impl Slot {
    fn shared(&self) -> Arc<Use> {
        self.shared.clone()
    }

    fn used(&self) -> bool {
        self.shared.used.load(Ordering::Acquire)
    }

    fn idle(&self) -> bool {
        self.shared.idle()
    }

    async fn displaced(&self) {
        self.shared.displace.notified().await;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // The gate holds weak references: this one is dead once `shared` goes, which the
        // requests in flight (their bodies) may outlive only until hyper drops them.
        let gate = self.gate.clone();
        let mut open = gate.open();
        if let Some(position) = open
            .iter()
            .position(|entry| std::ptr::eq(entry.as_ptr(), Arc::as_ptr(&self.shared)))
        {
            open.remove(position);
        }
        drop(open);
        gate.freed.notify_waiters();
        gate.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_limit_the_oldest_idle_connection_makes_room() {
        use Admission::*;
        let cases: [(usize, usize, &[bool], Admission); 6] = [
            (0, 3, &[], Admit),
            (2, 3, &[false, false], Admit),
            (3, 3, &[true, true, true], Displace(0)),
            (3, 3, &[false, true, true], Displace(1)),
            (3, 3, &[false, false, true], Displace(2)),
            (3, 3, &[false, false, false], Wait),
        ];
        for (open, max, idle, expected) in cases {
            assert_eq!(
                admission(open, max, idle.iter().copied()),
                expected,
                "{open} open of {max}, idle {idle:?}"
            );
        }
    }

    #[tokio::test]
    async fn the_gate_displaces_an_idle_connection_and_admits_once_it_ends() {
        let gate = Gate::new(2);
        let first = gate.admit().await;
        let second = gate.admit().await;
        let busy = second.shared.begin();
        // Full: the third waits, having told the oldest idle connection to go.
        let third = tokio::spawn({
            let gate = gate.clone();
            async move { gate.admit().await }
        });
        first.displaced().await;
        assert!(!third.is_finished());
        drop(first);
        let third = third.await.unwrap();
        assert!(!third.used());
        // Both open connections now: one busy, one idle (the new one).
        drop(busy);
        assert!(second.idle() && second.used());
        drop((second, third));
        gate.all_closed().await;
    }
}
