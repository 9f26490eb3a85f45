//! From the engine's views to the pages' (server side only).

use std::collections::HashMap;

use engine::service::{ClusterView, EventView, JobView, LeaseLimits, NodeView, TaskView};

use super::{ClusterRow, EventRow, JobRow, NodeRow, ServiceLink, TaskRow};

impl ClusterRow {
    /// `usernames` maps user ids to names, for the owner column; `limits` are the
    /// template's lease limits.
    pub fn from_view(
        view: ClusterView,
        usernames: &HashMap<String, String>,
        limits: LeaseLimits,
    ) -> Self {
        let owner = view
            .owner_id
            .as_ref()
            .map(|id| usernames.get(id).cloned().unwrap_or_else(|| id.clone()));
        Self {
            id: view.id,
            name: view.name,
            state: view.state,
            template: view.template,
            size: view.size,
            owner,
            lease_next_end_ms: limits.next_end(view.lease_expires_ms, engine::store::now_ms()),
            lease_latest_end_ms: limits.latest_end_ms,
            lease_expires_ms: view.lease_expires_ms,
            created_at_ms: view.created_at_ms,
        }
    }
}

impl From<NodeView> for NodeRow {
    fn from(node: NodeView) -> Self {
        Self {
            number: node.number,
            hostname: node.hostname,
            address: node.address,
            hardwaretype: node.hardwaretype,
            imagetype: node.imagetype,
            services: node.services,
            state: node.state,
        }
    }
}

impl From<JobView> for JobRow {
    fn from(job: JobView) -> Self {
        Self {
            id: job.id,
            operation: job.operation,
            state: job.state,
            tasks_total: job.tasks_total,
            tasks_succeeded: job.tasks_succeeded,
            created_at_ms: job.created_at_ms,
            started_at_ms: job.started_at_ms,
            finished_at_ms: job.finished_at_ms,
            error: job.error,
            forced: job.forced,
        }
    }
}

impl From<TaskView> for TaskRow {
    fn from(task: TaskView) -> Self {
        Self {
            id: task.id,
            number: task.number,
            node: task.node,
            service: task.service,
            action: task.action,
            state: task.state,
            attempts: task.attempts,
            max_attempts: task.max_attempts,
            started_at_ms: task.started_at_ms,
            finished_at_ms: task.finished_at_ms,
            error: task.error,
        }
    }
}

impl From<EventView> for EventRow {
    fn from(event: EventView) -> Self {
        Self {
            id: event.id,
            task_id: event.task_id,
            at_ms: event.at_ms,
            kind: event.kind,
            stream: event.stream,
            data: event.data,
        }
    }
}

impl From<engine::links::ClusterLink> for ServiceLink {
    fn from(link: engine::links::ClusterLink) -> Self {
        Self {
            label: link.label,
            url: link.url,
        }
    }
}
