//! A real `corral serve` for the benchmarks that drive it over HTTP (`create`, `http`),
//! and its first admin's signed-in API client.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::BenchError;

const POLL: Duration = Duration::from_millis(250);
/// A job that has not ended by then failed the run (a 1,000-node create takes minutes).
const JOB_LIMIT: Duration = Duration::from_secs(1800);

/// Runs `measure` in a scratch directory, given the data directory of its `corral serve`
/// and the binary to serve with ([`crate::corral_binary`]): its line, or its failure
/// with the end of the server's log.
pub fn run_with_server<F, Fut>(prefix: &str, measure: F) -> Result<String, BenchError>
where
    F: FnOnce(PathBuf, PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<String, BenchError>>,
{
    let corral = crate::corral_binary()?;
    crate::run_in_scratch_dir(prefix, |base| async move {
        let data = base.join("server");
        std::fs::create_dir_all(&data)?;
        measure(data.clone(), corral)
            .await
            .map_err(|error| with_server_log(error, &data))
    })
}

/// `error`, with the end of what the server in `data` logged besides slow statements
/// (the scratch directory, and the log with it, is gone once the run ends).
pub fn with_server_log(error: BenchError, data: &Path) -> BenchError {
    let log = std::fs::read_to_string(data.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log
        .lines()
        .filter(|line| !line.contains("slow statement"))
        .collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    BenchError::Failed(format!("{error}\nthe server's log ends:\n{tail}"))
}

pub fn failed(error: impl std::fmt::Display) -> BenchError {
    BenchError::Failed(error.to_string())
}

/// A running `corral serve` (the `served` crate's process, `::served` since this module
/// has its name, with the settings the benchmarks need); dropping it stops it (SIGTERM,
/// then it drains).
pub struct Server {
    process: ::served::Served,
    pub url: String,
    password: String,
}

impl Server {
    /// Starts `corral serve` on a free loopback port with `worker_slots` task slots,
    /// its data (SQLite, local nodes) in `data` and its log in `data/server.log`.
    pub fn start(corral: &Path, data: &Path, worker_slots: usize) -> Result<Self, BenchError> {
        Self::start_with(corral, data, worker_slots, &[])
    }

    /// [`Server::start`] with more flags for `corral serve`.
    pub fn start_with(
        corral: &Path,
        data: &Path,
        worker_slots: usize,
        flags: &[&str],
    ) -> Result<Self, BenchError> {
        let process = ::served::Options::serve(corral, data)
            .worker_slots(worker_slots)
            // Benches measure past the serving limits: `bench create --nodes` above the
            // default cluster size limit, `bench http`'s 200 stream watchers as one user.
            .args([
                "--max-cluster-nodes",
                "100000",
                "--max-streams-per-user",
                "1000",
            ])
            .args(flags)
            // BENCH_SERVER_LOG sets the server's log filter for a profiling run, e.g.
            // `warn,sqlx::query=debug` logs every statement with its time.
            .env(
                "RUST_LOG",
                std::env::var("BENCH_SERVER_LOG").unwrap_or_else(|_| "warn".to_owned()),
            )
            .start()
            .map_err(failed)?;
        let (Some(url), Some(password)) = (process.url(), process.password()) else {
            return Err(BenchError::Failed(format!(
                "corral serve announced no first admin password: see {}",
                process.log_path().display()
            )));
        };
        Ok(Server {
            url: url.to_owned(),
            password: password.to_owned(),
            process,
        })
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The server's peak resident memory (MiB) and CPU time (s) so far.
    pub fn usage(&self) -> (f64, f64) {
        let pid = self.pid();
        (
            crate::usage::peak_rss_mb_of(&format!("/proc/{pid}/status")),
            crate::usage::cpu_ms_of(&format!("/proc/{pid}/stat")) / 1000.0,
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Gracefully, unlike the process's own drop (SIGKILL): the server drains.
        let _ = self.process.terminate();
    }
}

/// The API client the benchmarks drive a server with.
pub use api_client::Client;

/// The server's first admin's client, signed in with a session cookie and its CSRF
/// token.
pub async fn sign_in(server: &Server) -> Result<Client, BenchError> {
    Ok(Client::signed_in_as(&server.url, "admin", &server.password).await?)
}

/// [`sign_in`], with the catalog of `bench create` ([`crate::create::CATALOG`])
/// imported in the default tenant.
pub async fn sign_in_with_catalog(server: &Server) -> Result<Client, BenchError> {
    let admin = sign_in(server).await?;
    let catalog: serde_json::Value =
        serde_json::from_str(crate::create::CATALOG).map_err(failed)?;
    admin.import_catalog(&catalog, false).await?;
    Ok(admin)
}

/// A tenant named `name` with the default tenant's catalog and local nodes, as the
/// benchmarks add them.
pub fn seeded_tenant(name: &str) -> api_types::TenantRequest {
    api_types::TenantRequest {
        name: name.to_owned(),
        max_clusters: None,
        max_nodes: None,
        seed_catalog_from: Some("default".to_owned()),
        local_nodes: true,
        provider_types: None,
    }
}

/// A plain user of `tenant` (the admin's own when `None`).
pub fn plain_user(username: &str, password: &str, tenant: Option<&str>) -> api_types::UserRequest {
    api_types::UserRequest {
        username: username.to_owned(),
        password: password.to_owned(),
        role: api_types::Role::User,
        tenant: tenant.map(str::to_owned),
    }
}

/// A cluster of `size` nodes from `template`, as the benchmarks create them.
pub fn create_request(name: &str, template: &str, size: usize) -> api_types::ClusterCreateRequest {
    api_types::ClusterCreateRequest {
        name: name.to_owned(),
        template: template.to_owned(),
        size: u32::try_from(size).unwrap_or(u32::MAX),
        ..api_types::ClusterCreateRequest::default()
    }
}

/// Polls the job until it ends; anything but success fails the run.
pub async fn wait_for_job(client: &Client, job_id: &str) -> Result<api_types::JobView, BenchError> {
    let started = Instant::now();
    loop {
        let job = client.job(job_id).await?;
        match job.state {
            api_types::JobState::Succeeded => return Ok(job),
            api_types::JobState::Queued | api_types::JobState::Running
                if started.elapsed() < JOB_LIMIT =>
            {
                tokio::time::sleep(POLL).await;
            }
            _ => return Err(BenchError::Failed(format!("job {job_id} ended: {job:?}"))),
        }
    }
}
