//! `create`: a whole cluster through the real server, at 200 nodes and at N (1,000 by
//! default) in the same run: submit → solve → plan → queue → SSH → recorded result,
//! then the delete, as a user's API client sees it.
//!
//! Each size gets a fresh `corral serve` (the binary next to this one, or `CORRAL_BIN`)
//! on the embedded default (SQLite, local nodes) with `--worker-slots 64`, so the 200
//! run is the baseline the N run is compared with. The client signs in as the first
//! admin, imports a catalog whose template puts three services on every node (12 tasks
//! a node: create, confirm, bootstrap, then install, configure and start of each
//! service), creates the cluster, polls its job every 250 ms, deletes it and polls
//! again. The server's peak RSS and CPU time are read from /proc when it has stopped
//! serving the run; what is left running under its nodes' directory afterwards is
//! counted (and killed).
//!
//! Prints one line per size: `create nodes= tasks= create_s= delete_s= per_node_ms=
//! server_peak_rss_mb= server_cpu_s= left_running=`, the N line with `baseline_create_s=`
//! and `ratio=` (the target is ≤ 5.5 for 1,000 against 200: no worse than linear).

use std::path::Path;
use std::time::Instant;

use crate::served::{create_request, sign_in_with_catalog, wait_for_job, with_server_log, Server};
use crate::BenchError;

pub(crate) const CATALOG: &str = include_str!("create/catalog.json");
const TEMPLATE: &str = "three-services";
const BASELINE_NODES: usize = 200;
const WORKER_SLOTS: usize = 64;

pub fn run(args: &[String]) -> Result<String, BenchError> {
    let nodes = crate::parse_count(args, "--nodes", 1000)?;
    let corral = crate::corral_binary()?;
    crate::run_in_scratch_dir("corral-create-", |base| async move {
        let mut sizes = vec![BASELINE_NODES];
        if nodes != BASELINE_NODES {
            sizes.push(nodes);
        }
        let mut lines = Vec::new();
        let mut baseline: Option<f64> = None;
        for size in sizes {
            let data = base.join(format!("n{size}"));
            let run = create_and_delete(&data, &corral, size)
                .await
                .map_err(|error| with_server_log(error, &data))?;
            let mut line = run.line();
            match baseline {
                None => baseline = Some(run.create_s),
                Some(base_s) => line.push_str(&format!(
                    " baseline_nodes={BASELINE_NODES} baseline_create_s={base_s:.2} ratio={:.2}",
                    run.create_s / base_s
                )),
            }
            eprintln!("{line}");
            lines.push(line);
        }
        Ok(lines.join("\n"))
    })
}

struct Measured {
    nodes: usize,
    tasks: u64,
    create_s: f64,
    delete_s: f64,
    server_peak_rss_mb: f64,
    server_cpu_s: f64,
    left_running: usize,
}

impl Measured {
    fn line(&self) -> String {
        format!(
            "create nodes={} tasks={} create_s={:.2} delete_s={:.2} per_node_ms={:.1} \
             server_peak_rss_mb={:.1} server_cpu_s={:.1} left_running={}",
            self.nodes,
            self.tasks,
            self.create_s,
            self.delete_s,
            self.create_s * 1000.0 / self.nodes as f64,
            self.server_peak_rss_mb,
            self.server_cpu_s,
            self.left_running
        )
    }
}

async fn create_and_delete(
    data: &Path,
    corral: &Path,
    nodes: usize,
) -> Result<Measured, BenchError> {
    std::fs::create_dir_all(data)?;
    let server = Server::start(corral, data, WORKER_SLOTS)?;
    let client = sign_in_with_catalog(&server).await?;

    let started = Instant::now();
    let created = client
        .create_cluster(&create_request("bench", TEMPLATE, nodes))
        .await?;
    let cluster = created.cluster.id;
    let job = wait_for_job(&client, &created.job_id).await?;
    let create_s = started.elapsed().as_secs_f64();
    let tasks = u64::try_from(job.tasks_total).unwrap_or(0);
    eprintln!("create: {nodes} nodes, {tasks} tasks in {create_s:.1} s; deleting");

    let started = Instant::now();
    let deleted = client.delete_cluster(&cluster, false).await?;
    wait_for_job(&client, &deleted.job_id).await?;
    let delete_s = started.elapsed().as_secs_f64();

    let (server_peak_rss_mb, server_cpu_s) = server.usage();
    drop(server);
    let left_running = engine::provider::LocalProvider::kill_everything_under(&data.join("nodes"));
    Ok(Measured {
        nodes,
        tasks,
        create_s,
        delete_s,
        server_peak_rss_mb,
        server_cpu_s,
        left_running,
    })
}
