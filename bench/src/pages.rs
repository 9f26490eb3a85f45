//! `pages`: how the portal's two heaviest pages render for a 1,000-node cluster: the
//! cluster page (its node table) and its create job's page (12 tasks a node, and the
//! output a run of them leaves), against a 10-node cluster measured in the same run.
//!
//! A release `corral serve` (the binary next to this one, or `CORRAL_BIN`) on the
//! embedded default (SQLite) gets the `create` benchmark's three-service catalog, and
//! the admin's tenant is marked for dedicated workers, which the server's own workers
//! never serve: each cluster is created through the API and its create job stays
//! queued with its whole task list, so the pages are measured as they are, not while
//! a thousand nodes start. What running the job would have recorded besides its
//! tasks' states is then written to the database the way the server records it: a
//! node row per node (as a provider records a node it made) and 20 output lines per
//! node (as workers record a step's output).
//!
//! Each page is fetched signed in (warm-up 3, then 20 times one after another): the
//! server's render time is the whole response's (median and slowest), and the
//! elements are the start tags of the HTML outside scripts (what the browser builds
//! before hydrating).
//!
//! Prints one line per size: `pages nodes= tasks= output_lines= cluster_render_ms=
//! cluster_max_ms= cluster_elements= cluster_kb= job_render_ms= job_max_ms=
//! job_elements= job_kb=`, the N line with the 10-node baseline's render times and
//! elements. Targets: render ≤ 150 ms and fewer than 5,000 elements at 1,000 nodes.

use std::time::{Duration, Instant};

use api_types::{DedicatedWorkersUpdate, JobState};
use engine::queue::{JobId, NewEvent, Queue};
use engine::store::clusters::nodes::{NodeRow, NodeState};
use engine::store::{DatabaseUrl, Store};

use crate::served::{create_request, failed, sign_in, Client, Server};
use crate::BenchError;

const BASELINE_NODES: usize = 10;
const TEMPLATE: &str = "three-services";
const OUTPUT_LINES_PER_NODE: usize = 20;
const WARM_UP: usize = 3;
const RUNS: usize = 20;

/// `--nodes N` (default 1,000).
pub fn run(args: &[String]) -> Result<String, BenchError> {
    let nodes = crate::parse_count(args, "--nodes", 1000)?;
    let corral = crate::corral_binary()?;
    crate::run_in_scratch_dir("corral-pages-", |base| async move {
        // One worker slot is the least there is; the tenant's tasks never reach it.
        let server = Server::start(&corral, &base, 1)?;
        let client = sign_in(&server).await?;
        let catalog = serde_json::from_str(crate::create::CATALOG).map_err(failed)?;
        client.import_catalog(&catalog, false).await?;
        let me = client.me().await?;
        client
            .set_dedicated_workers(
                &me.tenant_id,
                &DedicatedWorkersUpdate {
                    dedicated_workers: true,
                },
            )
            .await?;
        let store = Store::connect(&DatabaseUrl::sqlite_file(&base.join("corral.db"))).await?;
        // This process's queue, on the server's database: it writes the jobs' output.
        let queue = Queue::new(store);
        let mut lines = Vec::new();
        let mut baseline: Option<Measured> = None;
        let mut sizes = vec![BASELINE_NODES];
        if nodes != BASELINE_NODES {
            sizes.push(nodes);
        }
        for size in sizes {
            let measured = measure(&client, &queue, size).await?;
            let mut line = measured.line();
            match &baseline {
                None => baseline = Some(measured),
                Some(base) => line.push_str(&format!(
                    " baseline_nodes={} baseline_cluster_render_ms={:.1} \
                     baseline_cluster_elements={} baseline_job_render_ms={:.1} \
                     baseline_job_elements={} target_render_ms=150 target_elements=5000",
                    base.nodes,
                    base.cluster.median_ms,
                    base.cluster.elements,
                    base.job.median_ms,
                    base.job.elements
                )),
            }
            eprintln!("{line}");
            lines.push(line);
        }
        drop(server);
        Ok(lines.join("\n"))
    })
}

/// One page's render times and size.
struct PageStats {
    median_ms: f64,
    max_ms: f64,
    elements: usize,
    kb: f64,
}

struct Measured {
    nodes: usize,
    tasks: usize,
    output_lines: usize,
    cluster: PageStats,
    job: PageStats,
}

impl Measured {
    fn line(&self) -> String {
        format!(
            "pages nodes={} tasks={} output_lines={} cluster_render_ms={:.1} cluster_max_ms={:.1} \
             cluster_elements={} cluster_kb={:.0} job_render_ms={:.1} job_max_ms={:.1} \
             job_elements={} job_kb={:.0}",
            self.nodes,
            self.tasks,
            self.output_lines,
            self.cluster.median_ms,
            self.cluster.max_ms,
            self.cluster.elements,
            self.cluster.kb,
            self.job.median_ms,
            self.job.max_ms,
            self.job.elements,
            self.job.kb
        )
    }
}

async fn measure(client: &Client, queue: &Queue, nodes: usize) -> Result<Measured, BenchError> {
    let created = client
        .create_cluster(&create_request(&format!("pages-{nodes}"), TEMPLATE, nodes))
        .await?;
    let cluster = created.cluster.id;
    // The API names the job by its text.
    let job = JobId::from(created.job_id);
    let tasks = queue.job_tasks(&job).await?;
    let now = engine::store::now_ms();
    for number in 1..=nodes {
        let record = NodeRow {
            cluster_id: cluster.clone(),
            number: number as i64,
            hostname: Some(format!("pages{nodes}-node{number}")),
            hardwaretype: "plain".to_owned(),
            imagetype: "host".to_owned(),
            services_json: r#"["base","store","app"]"#.to_owned(),
            provider_json: None,
            state: NodeState::Ready,
        };
        queue.store().save_node(&record, now).await?;
    }
    // Each line from one of the node's tasks, in plan order: a run's output.
    let output: Vec<NewEvent> = tasks
        .iter()
        .cycle()
        .take(nodes * OUTPUT_LINES_PER_NODE)
        .enumerate()
        .map(|(line, task)| NewEvent {
            job_id: job.clone(),
            task_id: Some(task.id.clone()),
            attempt: Some(1),
            kind: api_types::EventKind::Output,
            stream: Some(api_types::OutputStream::Stdout),
            data: format!("line {line} of {} on node {}\n", task.action, task.node),
        })
        .collect();
    for chunk in output.chunks(4096) {
        queue.append_events(chunk, now).await?;
    }
    let state = client.job(job.as_str()).await?;
    if state.state != JobState::Queued {
        return Err(failed(format!("the job did not stay queued: {state:?}")));
    }
    Ok(Measured {
        nodes,
        tasks: tasks.len(),
        output_lines: output.len(),
        cluster: page_stats(client, &format!("/clusters/{cluster}")).await?,
        job: page_stats(client, &format!("/clusters/{cluster}/jobs/{job}")).await?,
    })
}

/// GETs `path` signed in, `WARM_UP` then `RUNS` times, one request at a time.
async fn page_stats(client: &Client, path: &str) -> Result<PageStats, BenchError> {
    let url = client.url(path);
    let mut took: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut html = String::new();
    for run in 0..WARM_UP + RUNS {
        let started = Instant::now();
        let response = client.http().get(&url).send().await.map_err(failed)?;
        let status = response.status();
        html = response.text().await.map_err(failed)?;
        if !status.is_success() {
            return Err(failed(format!("GET {path}: {status}")));
        }
        if run >= WARM_UP {
            took.push(started.elapsed());
        }
    }
    took.sort();
    let ms = |at: Duration| at.as_secs_f64() * 1000.0;
    Ok(PageStats {
        median_ms: ms(took[took.len() / 2]),
        max_ms: took.last().map_or(0.0, |max| ms(*max)),
        elements: start_tags(&html),
        kb: html.len() as f64 / 1024.0,
    })
}

/// The start tags in `html` outside `<script>` elements and comments: the elements a
/// browser makes of it.
fn start_tags(html: &str) -> usize {
    let lower = html.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut count = 0;
    let mut at = 0;
    while let Some(offset) = lower[at..].find('<') {
        let tag = at + offset;
        at = tag + 1;
        if lower[at..].starts_with("!--") {
            match lower[at..].find("-->") {
                Some(end) => at += end,
                None => break,
            }
        } else if bytes.get(at).is_some_and(u8::is_ascii_alphabetic) {
            count += 1;
            if lower[at..].starts_with("script") {
                match lower[at..].find("</script") {
                    Some(end) => at += end,
                    None => break,
                }
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::start_tags;

    #[test]
    fn start_tags_count_elements_but_not_script_text() {
        let html = "<!DOCTYPE html><html><head><script>if (a<b) x = '<div>';</script></head>\
                    <body><p>a &lt; b</p><br/><!-- <i> --></body></html>";
        // html, head, script, body, p, br.
        assert_eq!(start_tags(html), 6);
    }
}
