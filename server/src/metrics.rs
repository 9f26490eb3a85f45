//! `GET /metrics`: the process's metrics in Prometheus's text format.
//!
//! Three sources, one page:
//! - what this process did, counted in memory as it happened: HTTP requests by route
//!   and status ([`track_requests`]), and the engine's claims, task attempts, slots
//!   and SSH handshakes (`engine::metrics`);
//! - the control plane's state, read from the database at each scrape (jobs and tasks
//!   by state, claimable tasks, nodes by provider, service health): every process
//!   answers the same numbers, so a dashboard takes `max` across processes;
//! - `corral_database_up` and `corral_build_info`.
//!
//! Who may read it: on the main listener, a superadmin (a session, or an API token in
//! `Authorization: Bearer`, which is how Prometheus is configured to scrape it). With
//! `--metrics-listen ADDR` the page is also served without authentication on its own
//! listener, for a scraper on a private network, and that is the only way to scrape a
//! `corral worker`, which has no other listener. No label names a tenant, a user or a
//! cluster: the page says how busy Corral is, not who uses it.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::Context;
use api_types::{JobState, NodeState, ServiceHealth, TaskState};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use engine::store::gauges::Gauges;
use engine::store::{now_ms, Store};
use metrics::{counter, gauge, histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;
use tracing::Instrument;

use crate::api::error::ApiError;
use crate::api::extract::Authenticated;

const HTTP_REQUESTS: &str = "corral_http_requests_total";
const HTTP_DURATION: &str = "corral_http_request_duration_seconds";
const JOBS: &str = "corral_jobs";
const TASKS: &str = "corral_tasks";
const CLAIMABLE: &str = "corral_queue_claimable_tasks";
const NODES: &str = "corral_nodes";
const SERVICE_HEALTH: &str = "corral_service_health";
const DATABASE_UP: &str = "corral_database_up";
const BUILD_INFO: &str = "corral_build_info";

/// Seconds a page or API answer takes to start: a healthy one answers in milliseconds.
const HTTP_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How often histogram samples are folded into their buckets between scrapes.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The provider types a node's record may name; anything else counts as `other`, so a
/// plugin cannot grow the label set.
const PROVIDER_TYPES: &[&str] = &[
    engine::provider::LOCAL_PROVIDER,
    engine::provider::SSH_POOL_PROVIDER,
    engine::provider::DOCKER_PROVIDER,
    engine::provider::EC2_PROVIDER,
    engine::provider::EXEC_PROVIDER,
];

/// The process's recorder; cloning shares it.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    /// The process's recorder, installed on first use (a process has one recorder;
    /// tests start many servers in one process and share it). Call from within the
    /// runtime: the first call starts the upkeep task.
    pub fn install() -> Self {
        static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
        let handle = HANDLE.get_or_init(|| {
            let handle = match builder().and_then(PrometheusBuilder::install_recorder) {
                Ok(handle) => handle,
                Err(error) => {
                    // Only a bug gets here (bad buckets, a recorder installed elsewhere):
                    // serve an empty page rather than no server.
                    tracing::error!(%error, "metrics recorder not installed");
                    PrometheusBuilder::new().build_recorder().handle()
                }
            };
            describe();
            gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
            let upkeep = handle.clone();
            tokio::spawn(async move {
                let mut every = tokio::time::interval(UPKEEP_EVERY);
                loop {
                    every.tick().await;
                    upkeep.run_upkeep();
                }
            });
            handle
        });
        Self {
            handle: handle.clone(),
        }
    }

    /// The page: the database counts refreshed, then everything rendered.
    pub async fn render(&self, store: &Store) -> String {
        match store.gauges(now_ms()).await {
            Ok(gauges) => {
                record_gauges(&gauges);
                gauge!(DATABASE_UP).set(1.0);
            }
            Err(error) => {
                tracing::warn!(%error, "metrics: reading the database counts failed");
                gauge!(DATABASE_UP).set(0.0);
            }
        }
        self.handle.render()
    }
}

fn builder() -> Result<PrometheusBuilder, metrics_exporter_prometheus::BuildError> {
    let fast = [HTTP_DURATION, engine::metrics::CLAIM_DURATION];
    let mut builder = PrometheusBuilder::new();
    for name in fast {
        builder = builder.set_buckets_for_metric(Matcher::Full(name.to_owned()), HTTP_BUCKETS)?;
    }
    builder
        .set_buckets_for_metric(
            Matcher::Full(engine::metrics::SSH_HANDSHAKE_DURATION.to_owned()),
            engine::metrics::FAST_BUCKETS,
        )?
        .set_buckets_for_metric(
            Matcher::Full(engine::metrics::TASK_DURATION.to_owned()),
            engine::metrics::TASK_DURATION_BUCKETS,
        )
}

fn describe() {
    engine::metrics::describe();
    metrics::describe_counter!(HTTP_REQUESTS, "HTTP requests answered, by route and status");
    metrics::describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time until an HTTP answer's head was ready (a stream's body goes on after), by route"
    );
    metrics::describe_gauge!(JOBS, "Jobs by state (all of them, finished ones too)");
    metrics::describe_gauge!(TASKS, "Tasks of unfinished jobs, by state");
    metrics::describe_gauge!(
        CLAIMABLE,
        "Ready tasks a free worker could claim now (the queue's depth)"
    );
    metrics::describe_gauge!(NODES, "Nodes of live clusters by provider type and state");
    metrics::describe_gauge!(
        SERVICE_HEALTH,
        "Services on nodes by the result of their last health check"
    );
    metrics::describe_gauge!(
        DATABASE_UP,
        "1 when the last scrape could read the database"
    );
    metrics::describe_gauge!(BUILD_INFO, "Always 1; the version is a label");
}

/// Sets every database gauge, zero for the states nobody is in (a state that empties
/// must read 0, not its last count).
fn record_gauges(gauges: &Gauges) {
    for state in JobState::ALL {
        let count = count_of(&gauges.jobs, *state);
        gauge!(JOBS, "state" => state.as_str()).set(count);
    }
    for state in TaskState::ALL {
        let count = count_of(&gauges.active_tasks, *state);
        gauge!(TASKS, "state" => state.as_str()).set(count);
    }
    gauge!(CLAIMABLE).set(gauges.claimable as f64);
    for health in ServiceHealth::ALL {
        let count = count_of(&gauges.service_health, *health);
        gauge!(SERVICE_HEALTH, "health" => health.as_str()).set(count);
    }
    let providers = PROVIDER_TYPES.iter().copied().chain(["other"]);
    for provider in providers {
        for state in NodeState::ALL {
            let count: i64 = gauges
                .nodes
                .iter()
                .filter(|(named, counted, _)| counted == state && provider_label(named) == provider)
                .map(|(_, _, count)| count)
                .sum();
            gauge!(NODES, "provider" => provider, "state" => state.as_str()).set(count as f64);
        }
    }
}

fn count_of<T: PartialEq>(counts: &[(T, i64)], wanted: T) -> f64 {
    counts
        .iter()
        .filter(|(state, _)| *state == wanted)
        .map(|(_, count)| *count as f64)
        .sum()
}

fn provider_label(named: &str) -> &'static str {
    PROVIDER_TYPES
        .iter()
        .copied()
        .find(|known| *known == named)
        .unwrap_or("other")
}

/// Counts and times every request by its route pattern (`/api/v1/clusters/{id}`,
/// never the path itself: ids would grow the label set without end).
pub async fn track_requests(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    // One span per request, named by the route's pattern like the metrics (an exported
    // trace names no id or path a user typed).
    let span = tracing::info_span!(
        "request",
        otel.name = format!("{method} {route}"),
        otel.kind = "server",
        http.request.method = method,
        http.route = route.as_str(),
        http.response.status_code = tracing::field::Empty,
    );
    let response = next.run(request).instrument(span.clone()).await;
    // As i64: OpenTelemetry has no unsigned integers, and a u64 would be sent as text.
    span.record(
        "http.response.status_code",
        i64::from(response.status().as_u16()),
    );
    let status = response.status().as_u16().to_string();
    histogram!(HTTP_DURATION, "method" => method, "route" => route.clone())
        .record(started.elapsed().as_secs_f64());
    counter!(HTTP_REQUESTS, "method" => method, "route" => route, "status" => status).increment(1);
    response
}

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// `GET /metrics` on the main listener: superadmins only.
pub async fn scrape_as_superadmin(
    State(metrics): State<Metrics>,
    State(store): State<Store>,
    Authenticated(caller): Authenticated,
) -> Result<Response, ApiError> {
    if !caller.principal.is_superadmin() {
        return Err(ApiError::forbidden(
            "metrics are for superadmins (or scrape the --metrics-listen address)",
        ));
    }
    Ok(page(metrics.render(&store).await))
}

fn page(text: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// Serves `/metrics` alone, without authentication, on `address` (the operator's
/// `--metrics-listen`), until the process ends.
pub async fn spawn_listener(
    address: SocketAddr,
    metrics: Metrics,
    store: Store,
) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen for metrics on {address}"))?;
    let bound = listener.local_addr()?;
    let router = Router::new().route(
        "/metrics",
        get(move || {
            let metrics = metrics.clone();
            let store = store.clone();
            async move { page(metrics.render(&store).await) }
        }),
    );
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(%error, "the metrics listener stopped");
        }
    });
    tracing::info!(address = %bound, "metrics served without authentication");
    Ok(bound)
}
