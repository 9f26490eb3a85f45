//! HTTPS for `corral serve`: a certificate chain and key from PEM files, served with
//! rustls (on `ring`), and read again on SIGHUP so a renewed certificate takes effect
//! without a restart. A reload that fails (a half-written file, a key that does not
//! match) keeps the certificate being served and says why.

use std::path::PathBuf;

use anyhow::Context;
use axum_server::tls_rustls::RustlsConfig;

/// The PEM files `--tls-cert` and `--tls-key` name.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The server's certificate, then any intermediates.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl TlsFiles {
    /// Reads both files now, so a bad one stops the server before it says it runs.
    pub async fn load(&self) -> anyhow::Result<RustlsConfig> {
        RustlsConfig::from_pem_file(&self.cert, &self.key)
            .await
            .with_context(|| self.describe())
    }

    fn describe(&self) -> String {
        format!(
            "cannot use the TLS certificate {} with the key {}",
            self.cert.display(),
            self.key.display()
        )
    }
}

/// Reads the certificate and key again on every SIGHUP, into `config`, which the
/// listener takes each new connection's TLS settings from (see `serve::listener`).
pub fn reload_on_hangups(files: TlsFiles, config: RustlsConfig) -> tokio::task::JoinHandle<()> {
    tokio::spawn(reload_on_hangup(files, config))
}

async fn reload_on_hangup(files: TlsFiles, config: RustlsConfig) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(hangups) => hangups,
        Err(error) => {
            tracing::warn!(%error, "cannot watch for SIGHUP: the TLS certificate is never reloaded");
            return;
        }
    };
    while hangups.recv().await.is_some() {
        match config.reload_from_pem_file(&files.cert, &files.key).await {
            Ok(()) => tracing::info!(cert = %files.cert.display(), "TLS certificate reloaded"),
            Err(error) => tracing::error!(
                error = %format!("{}: {error}", files.describe()),
                "TLS certificate not reloaded: still serving the previous one"
            ),
        }
    }
}
