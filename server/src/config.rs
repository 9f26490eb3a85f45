//! Server configuration: flags beat `CORRAL_*` environment variables, which beat the
//! optional TOML file, which beats the built-in defaults.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use engine::operations::{SizeLimits, DEFAULT_MAX_CLUSTER_NODES, DEFAULT_TENANT_MAX_NODES};
use engine::store::DatabaseUrl;
use serde::Deserialize;

use crate::tls::TlsFiles;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

/// Settings shared by every command that opens the database. All optional here so
/// that a missing flag can fall back to the environment, the file, then the default.
#[derive(Debug, Clone, Default, Args, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServerArgs {
    /// TOML file with any of the settings below (kebab-case keys).
    #[arg(long, env = "CORRAL_CONFIG")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "CORRAL_LISTEN", value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
    /// Directory for the SQLite database, nodes and uploads [default: ./corral-data].
    #[arg(long, env = "CORRAL_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// sqlite://PATH or postgres://USER@HOST/DB [default: SQLite in the data dir].
    #[arg(long, env = "CORRAL_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
    /// Directory of provider plugins the `exec` provider type may run; catalogs name a
    /// plugin by its file name there [default: <data dir>/provider-plugins].
    #[arg(long, env = "CORRAL_PROVIDER_PLUGINS", value_name = "DIR")]
    pub provider_plugins: Option<PathBuf>,
    /// Log format.
    #[arg(long, env = "CORRAL_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
    /// Serve the browser bundle from this directory's `pkg/` (as `scripts/build.sh`
    /// writes it) instead of the one built into the binary; for development.
    #[arg(long, env = "CORRAL_SITE_DIR", value_name = "DIR")]
    pub site_dir: Option<PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key); SIGHUP reloads
    /// both files.
    #[arg(
        long,
        env = "CORRAL_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key"
    )]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(
        long,
        env = "CORRAL_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert"
    )]
    pub tls_key: Option<PathBuf>,
    /// Mark session cookies Secure (set when users reach Corral over HTTPS; implied by
    /// --tls-cert).
    #[arg(long, env = "CORRAL_SECURE_COOKIES")]
    #[serde(default)]
    pub secure_cookies: bool,
    /// Relay no SSH sessions to nodes (`corral cluster ssh`, the node shell WebSocket):
    /// their endpoints answer 404 for every tenant.
    #[arg(long, env = "CORRAL_NO_NODE_SHELL")]
    #[serde(default)]
    pub no_node_shell: bool,
    /// Seconds a node terminal in the browser may go without a keystroke or output
    /// before it is closed [default: 900].
    #[arg(long, env = "CORRAL_TERMINAL_IDLE_SECS", value_name = "SECONDS")]
    pub terminal_idle_secs: Option<u64>,
    /// Tasks this process runs at once [default: 16].
    #[arg(long, env = "CORRAL_WORKER_SLOTS", value_name = "N")]
    pub worker_slots: Option<usize>,
    /// Seconds before a task of a vanished worker goes back to the queue [default: 30].
    #[arg(long, env = "CORRAL_WORKER_LEASE_SECS", value_name = "SECONDS")]
    pub worker_lease_secs: Option<u64>,
    /// Seconds ended history stays in the database: deleted clusters, ended jobs with
    /// their output (each cluster keeps its latest job), sent hook deliveries; 0 keeps
    /// it forever. The cost ledger is never pruned [default: 7776000, 90 days].
    #[arg(long, env = "CORRAL_HISTORY_RETENTION_SECS", value_name = "SECONDS")]
    pub history_retention_secs: Option<u64>,
    /// Seconds an audit entry stays in the database; 0 keeps them forever [default:
    /// 31536000, 365 days].
    #[arg(long, env = "CORRAL_AUDIT_RETENTION_SECS", value_name = "SECONDS")]
    pub audit_retention_secs: Option<u64>,
    /// Also serve /metrics here, without authentication, for a Prometheus on a private
    /// network (the main listener serves it to superadmins only) [default: none].
    #[arg(long, env = "CORRAL_METRICS_LISTEN", value_name = "ADDR:PORT")]
    pub metrics_listen: Option<SocketAddr>,
    /// Send traces (HTTP requests, task attempts, SSH connections) to this
    /// OpenTelemetry collector, OTLP over HTTP: a base URL gets `/v1/traces` appended,
    /// a URL with a path is used as it is [default: none].
    #[arg(long, env = "CORRAL_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<url::Url>,
    /// On SIGTERM, seconds running steps may take to finish before they are stopped and
    /// their tasks handed back to the queue [default: 30].
    #[arg(long, env = "CORRAL_SHUTDOWN_GRACE_SECS", value_name = "SECONDS")]
    pub shutdown_grace_secs: Option<u64>,
    /// A reverse proxy in front of Corral whose X-Forwarded-For names the client
    /// (login throttling and the audit log); repeat for several [default: none].
    #[arg(
        long = "trusted-proxy",
        env = "CORRAL_TRUSTED_PROXIES",
        value_name = "IP",
        value_delimiter = ','
    )]
    #[serde(default)]
    pub trusted_proxies: Vec<IpAddr>,
    /// An EC2-compatible endpoint (another cloud, an emulator) catalogs' `ec2`
    /// providers may name besides AWS's own; repeat for several [default: none].
    #[arg(
        long = "ec2-endpoint",
        env = "CORRAL_EC2_ENDPOINTS",
        value_name = "URL",
        value_delimiter = ','
    )]
    #[serde(default)]
    pub ec2_endpoints: Vec<String>,
    /// An address range hooks may reach besides public addresses (loopback, a private
    /// network), e.g. 10.0.0.0/8 or 127.0.0.1/32; repeat for several [default: none].
    #[arg(
        long = "hook-allow",
        env = "CORRAL_HOOK_ALLOW",
        value_name = "CIDR",
        value_delimiter = ','
    )]
    #[serde(default)]
    pub hook_allow: Vec<String>,
    /// Seconds a client has to send a request's headers: from connecting (TLS
    /// handshake included) to the first request's end of headers, and from a
    /// keep-alive connection going idle to the next request's [default: 10].
    #[arg(long, env = "CORRAL_HEADER_READ_TIMEOUT_SECS", value_name = "SECONDS")]
    pub header_read_timeout_secs: Option<u64>,
    /// Connections served at once; at the limit a new one displaces the oldest that
    /// has not sent a whole request yet, or waits [default: 1024].
    #[arg(long, env = "CORRAL_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,
    /// Job event streams one user may have open at once [default: 16].
    #[arg(long, env = "CORRAL_MAX_STREAMS_PER_USER", value_name = "N")]
    pub max_streams_per_user: Option<usize>,
    /// The most nodes one cluster may have, whatever its tenant's quota; creates,
    /// grows and their previews past it are refused before they are planned
    /// [default: 1000].
    #[arg(long, env = "CORRAL_MAX_CLUSTER_NODES", value_name = "N")]
    pub max_cluster_nodes: Option<u32>,
    /// The node quota of a tenant created without one (a superadmin can change it
    /// afterwards) [default: 100].
    #[arg(long, env = "CORRAL_DEFAULT_TENANT_MAX_NODES", value_name = "N")]
    pub default_tenant_max_nodes: Option<u32>,
    /// Memory of a docker node whose hardware type names none (or 0), in MiB
    /// [default: 1024].
    #[arg(long, env = "CORRAL_DOCKER_DEFAULT_MEMORY_MB", value_name = "MIB")]
    pub docker_default_memory_mb: Option<u64>,
    /// CPUs of a docker node whose hardware type names none (or 0), fractions allowed
    /// [default: 1].
    #[arg(long, env = "CORRAL_DOCKER_DEFAULT_CPUS", value_name = "CPUS")]
    pub docker_default_cpus: Option<f64>,
    /// Processes and threads one docker node may have at once [default: 1024].
    #[arg(long, env = "CORRAL_DOCKER_PIDS_LIMIT", value_name = "N")]
    pub docker_pids_limit: Option<u64>,
    /// The most memory a hardware type may ask for a docker node, in MiB; a cluster
    /// asking more is refused at preview [default: 8192].
    #[arg(long, env = "CORRAL_DOCKER_MAX_MEMORY_MB", value_name = "MIB")]
    pub docker_max_memory_mb: Option<u64>,
    /// The most CPUs a hardware type may ask for a docker node; a cluster asking more
    /// is refused at preview [default: 4].
    #[arg(long, env = "CORRAL_DOCKER_MAX_CPUS", value_name = "CPUS")]
    pub docker_max_cpus: Option<f64>,
    /// Single sign-on issuers: `[[sso]]` tables of the config file only (see
    /// docs/integrations.md).
    #[arg(skip)]
    #[serde(default)]
    pub sso: Vec<crate::sso::config::IssuerSettings>,
}

/// The resolved configuration every command runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// Where the `exec` provider looks up plugins (only there: catalogs cannot name a
    /// path).
    pub provider_plugins: PathBuf,
    pub database_url: DatabaseUrl,
    pub log_format: LogFormat,
    /// The browser bundle's directory, when not the one built in.
    pub site_dir: Option<PathBuf>,
    pub worker_slots: usize,
    pub worker_lease: Duration,
    pub history_retention: engine::worker::janitor::HistoryRetention,
    pub audit_retention: engine::worker::janitor::HistoryRetention,
    /// Where `/metrics` is served without authentication, when set.
    pub metrics_listen: Option<SocketAddr>,
    /// Where traces are sent (OTLP over HTTP, the full traces URL), when set.
    pub otlp_traces_url: Option<url::Url>,
    /// How long a stopping process lets running steps finish.
    pub shutdown_grace: Duration,
    pub secure_cookies: bool,
    /// Whether SSH sessions to nodes are relayed at all (`--no-node-shell` says no).
    pub node_shell: bool,
    /// How long a node terminal in the browser may stay idle.
    pub terminal_idle: Duration,
    /// HTTPS, when set.
    pub tls: Option<TlsFiles>,
    pub trusted_proxies: Vec<IpAddr>,
    /// Endpoints `ec2` providers may name besides AWS's (a tenant admin's catalog must
    /// not make this server call arbitrary addresses).
    pub ec2_endpoints: Vec<String>,
    /// Where hooks may send: public addresses and the `--hook-allow` ranges (a tenant
    /// admin's hook must not make this server call its own private network).
    pub hook_network: engine::hooks::HookNetwork,
    /// What one client may hold of the listener (see [`ConnectionLimits`]).
    pub connections: ConnectionLimits,
    /// Job event streams one user may have open at once.
    pub max_streams_per_user: usize,
    /// How big a cluster may get, and a new tenant's node quota.
    pub size_limits: SizeLimits,
    /// What docker nodes get when their hardware type names nothing, and the most it
    /// may name.
    pub docker_limits: engine::provider::DockerLimits,
    /// The OpenID Connect issuers users may sign in with (checked, secrets still sealed).
    pub sso: Vec<crate::sso::config::IssuerSettings>,
}

/// How long a client may take to send its request headers, and how many connections
/// are served at once: a client that connects and sends nothing (or half a request)
/// holds a connection for at most `header_read_timeout`, and the listener never holds
/// more than `max_connections`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
}

const DEFAULT_WORKER_SLOTS: usize = 16;
const DEFAULT_WORKER_LEASE_SECS: u64 = 30;
const DEFAULT_SHUTDOWN_GRACE_SECS: u64 = 30;

const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
const DEFAULT_MAX_CONNECTIONS: usize = 1024;

impl Config {
    /// Resolves flags/environment (already merged by clap) over the TOML file.
    pub fn load(args: ServerArgs) -> anyhow::Result<Self> {
        let file = match &args.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read config file {}", path.display()))?;
                toml::from_str::<ServerArgs>(&text)
                    .with_context(|| format!("invalid config file {}", path.display()))?
            }
            None => ServerArgs::default(),
        };
        Self::resolve(args, file)
    }

    fn resolve(args: ServerArgs, file: ServerArgs) -> anyhow::Result<Self> {
        let docker_limits = docker_limits(&args, &file)?;
        let hook_allow = if args.hook_allow.is_empty() {
            &file.hook_allow
        } else {
            &args.hook_allow
        };
        let hook_network = engine::hooks::HookNetwork::allowing(
            hook_allow
                .iter()
                .map(|range| range.parse().with_context(|| "--hook-allow".to_owned()))
                .collect::<anyhow::Result<_>>()?,
        );
        let listen = match args.listen.or(file.listen) {
            Some(listen) => listen,
            None => DEFAULT_LISTEN.parse()?,
        };
        let data_dir = args
            .data_dir
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from("corral-data"));
        let database_url = match args.database_url.or(file.database_url) {
            Some(raw) => DatabaseUrl::parse(&raw)?,
            None => DatabaseUrl::sqlite_file(&absolute(&data_dir)?.join("corral.db")),
        };
        let provider_plugins = args
            .provider_plugins
            .or(file.provider_plugins)
            .unwrap_or_else(|| data_dir.join("provider-plugins"));
        let tls = match (
            args.tls_cert.or(file.tls_cert),
            args.tls_key.or(file.tls_key),
        ) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (None, None) => None,
            (Some(_), None) => anyhow::bail!("tls-cert is set without tls-key"),
            (None, Some(_)) => anyhow::bail!("tls-key is set without tls-cert"),
        };
        crate::sso::config::check_all(&file.sso)?;
        Ok(Self {
            sso: file.sso,
            docker_limits,
            hook_network,
            listen,
            provider_plugins,
            data_dir,
            database_url,
            log_format: args.log_format.or(file.log_format).unwrap_or_default(),
            site_dir: args.site_dir.or(file.site_dir),
            secure_cookies: args.secure_cookies || file.secure_cookies || tls.is_some(),
            node_shell: !(args.no_node_shell || file.no_node_shell),
            terminal_idle: args
                .terminal_idle_secs
                .or(file.terminal_idle_secs)
                .map(|secs| Duration::from_secs(secs.max(1)))
                .unwrap_or(engine::service::DEFAULT_TERMINAL_IDLE),
            tls,
            trusted_proxies: if args.trusted_proxies.is_empty() {
                file.trusted_proxies
            } else {
                args.trusted_proxies
            },
            ec2_endpoints: if args.ec2_endpoints.is_empty() {
                file.ec2_endpoints
            } else {
                args.ec2_endpoints
            },
            worker_slots: args
                .worker_slots
                .or(file.worker_slots)
                .unwrap_or(DEFAULT_WORKER_SLOTS)
                .max(1),
            metrics_listen: args.metrics_listen.or(file.metrics_listen),
            otlp_traces_url: args
                .otlp_endpoint
                .or(file.otlp_endpoint)
                .map(otlp_traces_url)
                .transpose()?,
            shutdown_grace: Duration::from_secs(
                args.shutdown_grace_secs
                    .or(file.shutdown_grace_secs)
                    .unwrap_or(DEFAULT_SHUTDOWN_GRACE_SECS),
            ),
            worker_lease: Duration::from_secs(
                args.worker_lease_secs
                    .or(file.worker_lease_secs)
                    .unwrap_or(DEFAULT_WORKER_LEASE_SECS)
                    .max(2),
            ),
            history_retention: retention(
                args.history_retention_secs.or(file.history_retention_secs),
                engine::worker::janitor::HistoryRetention::default(),
            ),
            audit_retention: retention(
                args.audit_retention_secs.or(file.audit_retention_secs),
                engine::worker::janitor::AUDIT_RETENTION_DEFAULT,
            ),
            connections: ConnectionLimits {
                header_read_timeout: Duration::from_secs(
                    args.header_read_timeout_secs
                        .or(file.header_read_timeout_secs)
                        .unwrap_or(DEFAULT_HEADER_READ_TIMEOUT_SECS)
                        .max(1),
                ),
                max_connections: args
                    .max_connections
                    .or(file.max_connections)
                    .unwrap_or(DEFAULT_MAX_CONNECTIONS)
                    .max(1),
            },
            max_streams_per_user: args
                .max_streams_per_user
                .or(file.max_streams_per_user)
                .unwrap_or(crate::api::DEFAULT_STREAMS_PER_USER)
                .max(1),
            size_limits: SizeLimits {
                max_cluster_nodes: args
                    .max_cluster_nodes
                    .or(file.max_cluster_nodes)
                    .unwrap_or(DEFAULT_MAX_CLUSTER_NODES)
                    .max(1),
                default_tenant_max_nodes: args
                    .default_tenant_max_nodes
                    .or(file.default_tenant_max_nodes)
                    .unwrap_or(DEFAULT_TENANT_MAX_NODES),
            },
        })
    }
}

/// The docker node limits of the flags over the file over the defaults, checked.
fn docker_limits(
    args: &ServerArgs,
    file: &ServerArgs,
) -> anyhow::Result<engine::provider::DockerLimits> {
    let defaults = engine::provider::DockerLimits::default();
    let cpu_millis = |setting: Option<f64>, default: u64, name: &str| -> anyhow::Result<u64> {
        match setting {
            None => Ok(default),
            // Whole thousandths of a bounded positive number, so the cast is exact.
            Some(cpus) if cpus.is_finite() && cpus > 0.0 && cpus <= 1_000_000.0 => {
                Ok((cpus * 1000.0).round() as u64)
            }
            Some(cpus) => anyhow::bail!("--{name} {cpus}: give a positive number of CPUs"),
        }
    };
    engine::provider::DockerLimits::new(
        args.docker_default_memory_mb
            .or(file.docker_default_memory_mb)
            .unwrap_or(defaults.default_memory_mb),
        cpu_millis(
            args.docker_default_cpus.or(file.docker_default_cpus),
            defaults.default_cpu_millis,
            "docker-default-cpus",
        )?,
        args.docker_pids_limit
            .or(file.docker_pids_limit)
            .unwrap_or(defaults.pids),
        args.docker_max_memory_mb
            .or(file.docker_max_memory_mb)
            .unwrap_or(defaults.max_memory_mb),
        cpu_millis(
            args.docker_max_cpus.or(file.docker_max_cpus),
            defaults.max_cpu_millis,
            "docker-max-cpus",
        )?,
    )
    .map_err(|problem| anyhow::anyhow!("docker node limits: {problem}"))
}

/// The URL traces are posted to: OTLP/HTTP's `/v1/traces` under a collector's base URL,
/// or the URL as given when it names a path (a collector behind a proxy's prefix).
fn otlp_traces_url(endpoint: url::Url) -> anyhow::Result<url::Url> {
    if !endpoint.username().is_empty() || endpoint.password().is_some() {
        // It would be printed with the URL; collectors take credentials in headers.
        anyhow::bail!("--otlp-endpoint must not hold a user name or password");
    }
    if !matches!(endpoint.scheme(), "http" | "https") {
        anyhow::bail!(
            "--otlp-endpoint {endpoint}: an OTLP collector is reached over http:// or https://"
        );
    }
    if endpoint.path() == "/" {
        return endpoint
            .join("v1/traces")
            .context("--otlp-endpoint cannot take the /v1/traces path");
    }
    Ok(endpoint)
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_owned());
    }
    Ok(std::env::current_dir()
        .context("cannot read the current directory")?
        .join(path))
}

/// A retention setting: unset is `default`, 0 keeps forever, else that many seconds.
fn retention(
    secs: Option<u64>,
    default: engine::worker::janitor::HistoryRetention,
) -> engine::worker::janitor::HistoryRetention {
    use engine::worker::janitor::HistoryRetention;
    match secs {
        None => default,
        Some(0) => HistoryRetention::Forever,
        Some(secs) => HistoryRetention::For(Duration::from_secs(secs)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_the_file_which_beats_defaults() {
        let flags = ServerArgs {
            listen: Some("127.0.0.1:9000".parse().unwrap()),
            ..Default::default()
        };
        let file: ServerArgs = toml::from_str(
            "listen = \"0.0.0.0:1\"\ndata-dir = \"/srv/corral\"\nlog-format = \"json\"\n",
        )
        .unwrap();
        let config = Config::resolve(flags, file).unwrap();
        assert_eq!(config.listen.port(), 9000);
        assert_eq!(config.data_dir, PathBuf::from("/srv/corral"));
        assert_eq!(
            config.provider_plugins,
            PathBuf::from("/srv/corral/provider-plugins")
        );
        assert_eq!(config.log_format, LogFormat::Json);
        assert_eq!(
            config.database_url.redacted(),
            "sqlite:///srv/corral/corral.db"
        );
    }

    #[test]
    fn an_otlp_endpoint_is_a_collector_base_or_a_full_traces_url() {
        let url = |text: &str| otlp_traces_url(url::Url::parse(text).unwrap());
        assert_eq!(
            url("http://collector:4318").unwrap().as_str(),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            url("https://proxy.example/otel/v1/traces")
                .unwrap()
                .as_str(),
            "https://proxy.example/otel/v1/traces"
        );
        let refused = url("grpc://collector:4317").unwrap_err().to_string();
        assert!(refused.contains("http:// or https://"), "{refused}");
        let refused = url("http://user:secret@collector:4318")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("user name or password"), "{refused}");
        assert!(!refused.contains("secret"), "{refused}");
    }

    #[test]
    fn limits_come_from_flags_or_the_file_else_defaults() {
        let defaults = Config::resolve(ServerArgs::default(), ServerArgs::default()).unwrap();
        assert_eq!(
            defaults.connections,
            ConnectionLimits {
                header_read_timeout: Duration::from_secs(10),
                max_connections: 1024,
            }
        );
        assert_eq!(defaults.max_streams_per_user, 16);
        assert_eq!(defaults.size_limits, SizeLimits::default());
        let file: ServerArgs = toml::from_str(
            "header-read-timeout-secs = 2\nmax-connections = 50\nmax-streams-per-user = 3\n\
             max-cluster-nodes = 400\ndefault-tenant-max-nodes = 20\n",
        )
        .unwrap();
        let flags = ServerArgs {
            max_connections: Some(60),
            default_tenant_max_nodes: Some(0),
            ..Default::default()
        };
        let config = Config::resolve(flags, file).unwrap();
        assert_eq!(
            config.connections.header_read_timeout,
            Duration::from_secs(2)
        );
        assert_eq!(config.connections.max_connections, 60);
        assert_eq!(config.max_streams_per_user, 3);
        assert_eq!(
            config.size_limits,
            SizeLimits {
                max_cluster_nodes: 400,
                default_tenant_max_nodes: 0,
            }
        );
    }

    #[test]
    fn docker_limits_come_from_flags_over_the_file_and_are_checked() {
        let file: ServerArgs =
            toml::from_str("docker-max-memory-mb = 4096\ndocker-default-cpus = 0.5\n").unwrap();
        let flags = ServerArgs {
            docker_pids_limit: Some(256),
            ..Default::default()
        };
        let limits = Config::resolve(flags, file).unwrap().docker_limits;
        assert_eq!(
            limits,
            engine::provider::DockerLimits {
                default_memory_mb: 1024,
                default_cpu_millis: 500,
                pids: 256,
                max_memory_mb: 4096,
                max_cpu_millis: 4000,
            }
        );
        for (flags, problem) in [
            (
                ServerArgs {
                    docker_default_memory_mb: Some(16384),
                    ..Default::default()
                },
                "above the most",
            ),
            (
                ServerArgs {
                    docker_max_cpus: Some(-1.0),
                    ..Default::default()
                },
                "--docker-max-cpus -1",
            ),
        ] {
            let error = Config::resolve(flags, ServerArgs::default())
                .unwrap_err()
                .to_string();
            assert!(error.contains(problem), "{error}");
        }
    }

    #[test]
    fn unknown_file_keys_are_refused() {
        let err = toml::from_str::<ServerArgs>("listne = \"x\"").unwrap_err();
        assert!(err.to_string().contains("listne"), "{err}");
    }

    #[test]
    fn a_bad_database_url_names_the_problem() {
        let flags = ServerArgs {
            database_url: Some("mysql://x/y".into()),
            ..Default::default()
        };
        let err = Config::resolve(flags, ServerArgs::default()).unwrap_err();
        assert!(err.to_string().contains("mysql"), "{err}");
    }
}
