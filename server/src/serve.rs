//! `corral serve`: open the store, migrate, start the workers, listen, print where to go.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use engine::accounts::{ensure_first_admin, FIRST_ADMIN_USERNAME};
use engine::demo::Loaded;
use engine::secrets::SecretKey;
use engine::service::Service;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Store};
use tokio::net::TcpListener;

use crate::config::Config;
use crate::http::bundle::Bundle;
use crate::http::{leptos_options, router, AppState};
use crate::sessions::SessionBackend;

const SESSION_CLEANUP_EVERY: Duration = Duration::from_secs(600);

/// Opens (and migrates) the configured database, creating the data dir for SQLite,
/// with the server's secret key for the secrets stored in it.
pub async fn open_store(config: &Config) -> anyhow::Result<Store> {
    create_private_dir(&config.data_dir)?;
    let key = SecretKey::load(&config.data_dir)?;
    let store = Store::open(&config.database_url)
        .await?
        .with_secret_key(key);
    Ok(store)
}

/// The data dir holds the SQLite database, the secret key and node keys: nobody but
/// this server's OS user may read it (local nodes run as other users; see
/// `engine::provider::LocalProvider`).
fn create_private_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the data directory {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot make the data directory {} private", dir.display()))
}

pub async fn serve(config: Config) -> anyhow::Result<()> {
    // Certificates first: a bad file stops the server before it touches anything.
    let tls = match &config.tls {
        Some(files) => Some((files.clone(), files.load().await?)),
        None => None,
    };
    let store = open_store(&config).await?;
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
    let executor = crate::workers::executor(store.clone(), &config).await?;
    let workers = crate::workers::start_pool(executor.clone(), &config);
    let service = Service::new(store.clone(), resources)
        .with_waker(workers.waker())
        .with_executor(executor);
    let sessions = SessionBackend::connect(&config.database_url)
        .await
        .context("cannot open the session store")?;
    let _cleanup = sessions.clone().spawn_cleanup(SESSION_CLEANUP_EVERY);
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
    let scheme = if tls.is_some() { "https" } else { "http" };
    println!("Corral is running at {scheme}://{addr}/");
    // Connection info gives the API each client's address (login throttling, audit).
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    match tls {
        Some((files, rustls)) => crate::tls::serve(listener, files, rustls, app).await?,
        None => axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .context("server error")?,
    }
    workers.shutdown().await;
    Ok(())
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

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
