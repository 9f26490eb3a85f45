//! Jobs: the live job page's first render, cancel and retry.

pub mod cancel;
pub mod retry;
pub mod show;

use api_types::{ClusterLink, EventView, JobView, TaskView};
use domain::plan::TaskDag;
use serde::{Deserialize, Serialize};

/// Everything the job page shows when it is first rendered; live updates follow
/// over the event stream from `events`' last id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPage {
    pub cluster_id: String,
    pub cluster_name: String,
    pub job: JobView,
    pub tasks: Vec<TaskView>,
    pub dag: TaskDag,
    pub events: Vec<EventView>,
    /// Whether `events` stops short of the stream's start (very long jobs).
    pub events_truncated: bool,
    /// The node hostnames by node number, where known.
    pub hostnames: Vec<(u32, String)>,
    /// Links the cluster exposes, shown once the job succeeded.
    pub links: Vec<ClusterLink>,
}
