//! `corral serve`: open the store, migrate, start the workers, listen, print where to go.

mod listener;

use std::time::Duration;

use anyhow::Context;
use engine::accounts::{ensure_first_admin, FIRST_ADMIN_USERNAME};
use engine::demo::Loaded;
use engine::queue::{Queue, WorkerScope};
use engine::secrets::SecretKey;
use engine::service::Service;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Store};
use engine::worker::Drained;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::Config;
use crate::http::bundle::Bundle;
use crate::http::{leptos_options, router, AppState};
use crate::sessions::SessionBackend;

const SESSION_CLEANUP_EVERY: Duration = Duration::from_secs(600);

/// Opens (and migrates) the configured database, creating the data dir for SQLite,
/// with the server's secret key for the secrets stored in it.
pub async fn open_store(config: &Config) -> anyhow::Result<Store> {
    // It holds the SQLite database, the secret key and node keys: nobody but this server's
    // OS user may read it (local nodes run as other users).
    engine::provider::create_private_dir(&config.data_dir)
        .context("cannot prepare the data directory")?;
    hold_data_dir(&config.data_dir)?;
    let key = SecretKey::load(&config.data_dir)?;
    let store = Store::open(&config.database_url)
        .await?
        .with_secret_key(key)
        .with_docker_limits(config.docker_limits)
        .with_hook_network(config.hook_network.clone());
    Ok(store)
}

/// The data directory's lock file. Every process that opens the store holds it shared
/// until it exits; `corral admin restore` needs it alone, so it never replaces a
/// database under a running server.
pub const DATA_DIR_LOCK: &str = "corral.lock";

/// The data directory's lock file, opened (not locked), and its path.
pub(crate) fn data_dir_lock(
    dir: &std::path::Path,
) -> anyhow::Result<(std::fs::File, std::path::PathBuf)> {
    let path = dir.join(DATA_DIR_LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    Ok((file, path))
}

/// Takes the data directory's lock shared, for the rest of the process.
fn hold_data_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    static HELD: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());
    let (file, path) = data_dir_lock(dir)?;
    match file.try_lock_shared() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "{} is being restored from a backup (corral admin restore holds {}): wait for it to finish",
            dir.display(),
            path.display()
        ),
        Err(std::fs::TryLockError::Error(error)) => {
            return Err(error).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
    // A poisoned list still holds its files: keep this one with them.
    let mut held = HELD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    held.push(file);
    Ok(())
}

pub async fn serve(config: Config) -> anyhow::Result<()> {
    // Certificates first: a bad file stops the server before it touches anything.
    let tls = match &config.tls {
        Some(files) => Some((files.clone(), files.load().await?)),
        None => None,
    };
    let store = open_store(&config).await?;
    // The process's one queue: the workers, the service and the job streams share it
    // (and so its wakes: a stream hears the events its own process's workers write).
    let queue = Queue::new(store.clone());
    // Issuers' client secrets open with the data dir's key: a wrong one stops here.
    let sso = crate::sso::Sso::new(&config.sso, &SecretKey::load(&config.data_dir)?)?;
    let first_admin = ensure_first_admin(&store).await?;
    let bundle = browser_bundle(&config)?;
    match store.seal_pool_host_keys().await {
        Ok(0) => {}
        Ok(sealed) => tracing::info!(hosts = sealed, "pool-host keys sealed with the secret key"),
        Err(error) => tracing::warn!(%error, "sealing stored pool-host keys failed"),
    }
    let resources = crate::workers::resource_files(&config)?;
    // Resources uploaded by an earlier version have their bytes in this data dir only.
    match resources.keep_cached_bytes_in_database(&store).await {
        Ok(0) => {}
        Ok(kept) => tracing::info!(resources = kept, "resource bytes now kept in the database"),
        Err(error) => {
            tracing::warn!(%error, "keeping cached resource bytes in the database failed")
        }
    }
    let demo = engine::demo::load_if_empty(&store, &resources, DEFAULT_TENANT_ID, now_ms())
        .await
        .context("cannot load the demo catalog")?;
    let executor = crate::workers::executor(queue.clone(), &config).await?;
    let workers = crate::workers::start_pool(executor, &config, WorkerScope::Shared);
    // Hook deliveries are sent by every process sharing the database (one each).
    let _deliveries = engine::hooks::deliver::start(store.clone());
    let service = Service::new(queue.clone(), resources)
        .with_size_limits(config.size_limits)
        .with_node_shell(config.node_shell)
        .with_terminal_idle(config.terminal_idle)
        .with_waker(workers.waker());
    let sessions = SessionBackend::connect(&config.database_url)
        .await
        .context("cannot open the session store")?;
    let _cleanup = sessions.clone().spawn_cleanup(SESSION_CLEANUP_EVERY);
    // Streams of jobs that other processes' workers run are woken through PostgreSQL.
    tokio::spawn(queue.forward_notifications(config.database_url.clone()));
    let metrics = crate::metrics::Metrics::install();
    let store_for_metrics = store.clone();
    let state = AppState {
        leptos_options: leptos_options(&bundle),
        bundle,
        store,
        service,
        sessions,
        secure_cookies: config.secure_cookies,
        session_max_age_ms: crate::sessions::ABSOLUTE_EXPIRY_MS,
        trusted_proxies: crate::http::hardening::TrustedProxies(
            config.trusted_proxies.clone().into(),
        ),
        metrics: metrics.clone(),
        job_feeds: crate::api::JobFeeds::with_stream_limit(config.max_streams_per_user),
        sso,
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, database = %config.database_url.redacted(), "corral is serving");
    if let Some(password) = first_admin {
        // Shown once, on the terminal only: never logged.
        println!(
            "First start: sign in as {FIRST_ADMIN_USERNAME} with password {} (shown only now; change it after signing in)",
            password.expose()
        );
    }
    if let Loaded::Loaded { templates } = demo {
        println!(
            "Loaded the demo catalog (templates {}); try: corral apply examples/web-stack.yaml",
            templates.join(", ")
        );
    }
    if let Some(address) = config.metrics_listen {
        let bound = crate::metrics::spawn_listener(address, metrics, store_for_metrics).await?;
        println!("Metrics at http://{bound}/metrics (no sign-in: keep this address private)");
    }
    let stop = StopSignal::on_signals()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    // The last line: whoever waits for it may use everything above.
    println!("Corral is running at {scheme}://{addr}/");
    // The pool drains while the listener closes: both start at the signal.
    let drain = tokio::spawn({
        let stop = stop.clone();
        async move {
            stop.wait().await;
            workers.shutdown().await
        }
    });
    // The listener gives the API each client's address (login throttling, audit).
    let app = router(state);
    // Served over HTTPS here: browsers are told to keep to it (docs/security.md).
    let app = match &tls {
        Some(_) => crate::http::hardening::with_strict_transport_security(app),
        None => app,
    };
    let reloads = tls
        .as_ref()
        .map(|(files, rustls)| crate::tls::reload_on_hangups(files.clone(), rustls.clone()));
    let http = listener::serve(
        listener,
        tls.map(|(_, rustls)| rustls),
        app,
        config.connections,
        stop.clone(),
    );
    // Event streams stay open as long as their job runs: they may not hold the
    // process past the grace period.
    let connections_closed = async {
        stop.clone().wait().await;
        tokio::time::sleep(CONNECTIONS_GRACE).await;
    };
    tokio::select! {
        served = http => served?,
        () = connections_closed => tracing::info!("closing the connections still open"),
    }
    if let Some(reloads) = reloads {
        reloads.abort();
    }
    report_drain(drain.await.context("the worker pool's shutdown failed")?);
    Ok(())
}

/// Says how the pool's drain went (on stderr, where the operator watching a stop looks).
pub fn report_drain(drained: Drained) {
    tracing::info!(
        handed_back = drained.handed_back,
        seconds = drained.took.as_secs_f64(),
        "stopped"
    );
    eprintln!(
        "corral: stopped in {:.1} s; {} running task(s) handed back to the queue",
        drained.took.as_secs_f64(),
        drained.handed_back
    );
}

/// The bundle the pages load: `--site-dir`'s when given, else the one built in. A
/// server without one says so now, and its pages work without scripts rather than
/// naming files it cannot serve.
fn browser_bundle(config: &Config) -> anyhow::Result<Bundle> {
    let (bundle, origin) = match &config.site_dir {
        Some(dir) => (Bundle::from_dir(dir)?, dir.display().to_string()),
        None => (Bundle::embedded(), "built in".to_owned()),
    };
    if bundle.has_scripts() {
        tracing::info!(origin, size = %bundle.summary(), "browser bundle");
    } else {
        tracing::warn!(
            origin,
            "no browser bundle: pages are served without scripts or styles \
             (build one with scripts/build.sh, or pass --site-dir)"
        );
    }
    Ok(bundle)
}

/// How long open connections may go on after a stop was asked for.
pub(crate) const CONNECTIONS_GRACE: Duration = Duration::from_secs(10);

/// A stop asked for with SIGINT or SIGTERM; clones share the one signal.
#[derive(Debug, Clone)]
pub struct StopSignal(watch::Receiver<bool>);

impl StopSignal {
    /// Watches for SIGINT and SIGTERM from now on (the handlers are in place when this
    /// returns, so a signal right after start-up drains rather than kills).
    pub fn on_signals() -> anyhow::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
        let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
        let (stopped, stop) = watch::channel(false);
        tokio::spawn(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            tracing::info!("stop asked for: draining");
            stopped.send_replace(true);
        });
        Ok(Self(stop))
    }

    /// Resolves once a stop was asked for.
    pub async fn wait(mut self) {
        // An error means the sender is gone, which only a stop does.
        let _ = self.0.wait_for(|stopped| *stopped).await;
    }
}
