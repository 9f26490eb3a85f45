//! Logging and tracing through `tracing`: log lines on stderr (human-readable, or JSON
//! lines with a flag), and with `--otlp-endpoint` the same spans sent to an
//! OpenTelemetry collector as traces (OTLP over HTTP, protobuf bodies).
//!
//! The spans worth a trace: each HTTP request (named `METHOD /route/{pattern}`, never the
//! path itself, so no id or name a user typed becomes a span name), each task attempt
//! (job, task, node, action, service, outcome) and each SSH connection it opens. The
//! SDK's batch processor sends them from its own thread; [`Telemetry::shutdown`] sends
//! what is left when the process stops.

use anyhow::Context;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::config::LogFormat;

/// What [`init`] set up that must be flushed at exit.
#[must_use = "shut telemetry down at exit, or the last spans are lost"]
pub struct Telemetry {
    traces: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Sends the spans not sent yet (waiting for the collector up to the exporter's
    /// timeout). Call outside the async runtime: it blocks.
    pub fn shutdown(self) {
        if let Some(traces) = self.traces {
            if let Err(error) = traces.shutdown() {
                eprintln!("corral: the last traces were not sent: {error}");
            }
        }
    }
}

/// Installs the global subscriber: log lines in `format` (`RUST_LOG` overrides the
/// default `info` level) and, with `otlp_traces_url`, traces sent there as `role`
/// (`serve`, `worker`). Call before the async runtime starts.
pub fn init(
    format: LogFormat,
    otlp_traces_url: Option<&url::Url>,
    role: &'static str,
) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let lines: Box<dyn Layer<Registry> + Send + Sync> = match format {
        LogFormat::Human => lines.boxed(),
        LogFormat::Json => lines.json().boxed(),
    };
    let traces = otlp_traces_url
        .map(|url| tracer_provider(url, role))
        .transpose()?;
    let exported = traces
        .as_ref()
        .map(|provider| tracing_opentelemetry::layer().with_tracer(provider.tracer("corral")));
    // A second init (tests that start several servers) is harmless: keep the first.
    let _ = tracing_subscriber::registry()
        .with(lines)
        .with(exported)
        .with(filter)
        .try_init();
    Ok(Telemetry { traces })
}

fn tracer_provider(url: &url::Url, role: &'static str) -> anyhow::Result<SdkTracerProvider> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.as_str())
        .build()
        .with_context(|| format!("cannot send traces to {url}"))?;
    let resource = Resource::builder()
        .with_service_name("corral")
        .with_attributes([
            opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            opentelemetry::KeyValue::new("corral.role", role),
        ])
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}
