//! What service calls return: the wire contract's views ([`api_types`]), with no
//! secrets (no password hashes, no token secrets, no node keys) and with JSON columns
//! parsed, so the API and the pages show exactly these. A stored row's view is made
//! beside the row (`store::views`, `queue::views`, as the orphan rule wants); the
//! views of what the engine computes (a layout, a plan's DAG) are made here.

use api_types::{LayoutView, NodeLayoutView, PlanDag, PlanTask};
use domain::layout::Layout;
use domain::plan::TaskDag;

use crate::queue::views::task_action;

pub use api_types::{
    AttemptView, AuditView, ClusterDetail, ClusterLink, ClusterView, EntityView, EventView,
    JobView, NodeView, PlanView, ResourceView, RevisionView, SubmittedJob, TaskGroupView,
    TaskStateChange, TaskStateCount, TaskView, TenantView, TokenView, UserView,
};

/// The wire's view of a solved layout: the same JSON as the layout itself.
pub fn layout_view(layout: &Layout) -> LayoutView {
    LayoutView {
        template: layout.template.to_string(),
        nodes: layout
            .nodes
            .iter()
            .map(|node| NodeLayoutView {
                number: node.number,
                hardwaretype: node.hardwaretype.to_string(),
                imagetype: node.imagetype.to_string(),
                services: node.services.iter().map(ToString::to_string).collect(),
            })
            .collect(),
    }
}

/// The wire's view of a plan's task DAG: the same JSON as the DAG itself.
pub fn plan_dag(dag: &TaskDag) -> PlanDag {
    PlanDag {
        tasks: dag
            .tasks()
            .iter()
            .map(|task| PlanTask {
                id: task.id.0,
                node: task.node,
                service: task.service.as_ref().map(ToString::to_string),
                action: task_action(task.action),
                after: task.after.iter().map(|id| id.0).collect(),
                stage: task.stage,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(layout_json: &str) -> crate::store::clusters::Cluster {
        crate::testing::stored_cluster(layout_json, "{}")
    }

    const TWO_NODES: &str = r#"{"template":"web","nodes":[{"number":1000,"hardwaretype":"small","imagetype":"debian","services":["base"]},{"number":1001,"hardwaretype":"small","imagetype":"debian","services":["base","nginx"]}]}"#;

    #[test]
    fn the_layout_and_the_dag_views_write_the_domain_s_own_json() {
        let layout: Layout = serde_json::from_str(TWO_NODES).expect("a layout");
        let view = ClusterView::try_from(cluster(TWO_NODES)).expect("a view");
        assert_eq!(view.layout, layout_view(&layout));
        assert_eq!(
            serde_json::to_value(layout_view(&layout)).expect("serialises"),
            serde_json::to_value(&layout).expect("serialises")
        );
        let every_step = domain::plan::ServiceNode {
            actions: domain::plan::ServiceAction::ALL.iter().copied().collect(),
            ..Default::default()
        };
        let graph: domain::plan::ServiceGraph = ["base", "nginx"]
            .into_iter()
            .map(|name| {
                let name = domain::names::ServiceName::parse(name).expect("a name");
                (name, every_step.clone())
            })
            .collect();
        let dag = domain::plan::plan_create(&layout, &graph).expect("a plan");
        assert!(!dag.is_empty());
        assert_eq!(
            serde_json::to_value(plan_dag(&dag)).expect("serialises"),
            serde_json::to_value(&dag).expect("serialises")
        );
    }
}
