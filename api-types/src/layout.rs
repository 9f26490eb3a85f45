//! A cluster's solved layout and a plan's task DAG as the wire carries them: the
//! engine's `domain::layout::Layout` and `domain::plan::TaskDag`, field for field and
//! with the same JSON, but with plain strings for names so this crate stays free of
//! the domain (it compiles to wasm on its own). The engine converts its values into
//! these; nothing here checks names or the DAG's order again.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::states::{word_enum, Word};

/// The solved shape of a whole cluster: its template and each node with its hardware,
/// image and services.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LayoutView {
    // Both default so a cluster row stored without a layout (`{}`, as the store's
    // bare test clusters are) still reads as an empty layout rather than a corrupt row;
    // both always written, so the schema says required.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub template: String,
    /// Ordered by node number.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub nodes: Vec<NodeLayoutView>,
}

impl LayoutView {
    pub fn size(&self) -> usize {
        self.nodes.len()
    }
}

/// One node of a layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeLayoutView {
    /// The node's stable identity across layouts (numbered from 1000).
    pub number: u32,
    pub hardwaretype: String,
    pub imagetype: String,
    /// Sorted, without repeats.
    pub services: Vec<String>,
}

/// A plan's tasks in topological order, each with its predecessors: a task's `id` is
/// its position in `tasks`, and every id in its `after` is smaller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanDag {
    pub tasks: Vec<PlanTask>,
}

/// One unit of work on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanTask {
    pub id: u32,
    /// The node's number.
    pub node: u32,
    /// `null` for node tasks (create, confirm, bootstrap, delete, suspend, resume).
    // Always written, `null` included: the DAG's JSON has always carried the key.
    pub service: Option<String>,
    pub action: TaskAction,
    /// The ids of the tasks that must be done first (those implied by another listed
    /// one are left out: ordering is by reachability).
    pub after: Vec<u32>,
    /// The stage Coopr's barrier scheduler would run the task in (0-based).
    pub stage: u32,
}

impl PlanTask {
    /// A readable, unique name such as `1000-install-hdfs` or `1001-create`.
    pub fn label(&self) -> String {
        match &self.service {
            Some(service) => format!("{}-{}-{service}", self.node, self.action.as_str()),
            None => format!("{}-{}", self.node, self.action.as_str()),
        }
    }
}

word_enum!(
    /// What a plan's task does: a node task (no service) or a service step. The same
    /// words as the domain's `plan::Action` (the tasks table stores them).
    TaskAction, "task action" {
        Create => "create",
        Confirm => "confirm",
        Bootstrap => "bootstrap",
        Install => "install",
        Configure => "configure",
        Initialize => "initialize",
        Start => "start",
        Stop => "stop",
        Remove => "remove",
        Delete => "delete",
        /// Stops the node's machine, keeping it (a lease's grace).
        Suspend => "suspend",
        /// Starts a suspended node's machine again and waits until it answers.
        Resume => "resume",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    // Both literals are the engine's own output (`serde_json::to_string` of a domain
    // `Layout` and `TaskDag`), as stored in testdata/upgrade/98c181a.
    const LAYOUT: &str = r#"{"template":"box","nodes":[{"number":1000,"hardwaretype":"small","imagetype":"debian","services":["base","note"]},{"number":1001,"hardwaretype":"small","imagetype":"debian","services":["base","note"]}]}"#;
    const EMPTY_LAYOUT: &str = r#"{"template":"box","nodes":[]}"#;
    const DAG: &str = r#"{"tasks":[{"id":0,"node":1000,"service":null,"action":"create","after":[],"stage":0},{"id":1,"node":1000,"service":null,"action":"confirm","after":[0],"stage":1},{"id":2,"node":1000,"service":null,"action":"bootstrap","after":[1],"stage":2},{"id":3,"node":1000,"service":"note","action":"configure","after":[2],"stage":3},{"id":4,"node":1000,"service":"base","action":"install","after":[2,3],"stage":4},{"id":5,"node":1000,"service":"note","action":"start","after":[3,4],"stage":5}]}"#;

    #[test]
    fn a_layout_reads_and_writes_back_the_same_json() {
        for text in [LAYOUT, EMPTY_LAYOUT] {
            let layout: LayoutView = serde_json::from_str(text).expect("parses");
            assert_eq!(serde_json::to_string(&layout).expect("serialises"), text);
        }
        let layout: LayoutView = serde_json::from_str(LAYOUT).expect("parses");
        assert_eq!(layout.size(), 2);
        assert_eq!(layout.nodes[1].number, 1001);
        assert_eq!(layout.nodes[0].services, ["base", "note"]);
    }

    #[test]
    fn a_dag_reads_and_writes_back_the_same_json() {
        let dag: PlanDag = serde_json::from_str(DAG).expect("parses");
        assert_eq!(serde_json::to_string(&dag).expect("serialises"), DAG);
        let labels: Vec<String> = dag.tasks.iter().map(PlanTask::label).collect();
        assert_eq!(labels[0], "1000-create");
        assert_eq!(labels[4], "1000-install-base");
        assert_eq!(dag.tasks[4].after, [2, 3]);
    }

    #[test]
    fn every_action_is_written_as_its_word() {
        let actions = [
            TaskAction::Create,
            TaskAction::Confirm,
            TaskAction::Bootstrap,
            TaskAction::Install,
            TaskAction::Configure,
            TaskAction::Initialize,
            TaskAction::Start,
            TaskAction::Stop,
            TaskAction::Remove,
            TaskAction::Delete,
            TaskAction::Suspend,
            TaskAction::Resume,
        ];
        for action in actions {
            let json = serde_json::to_value(action).expect("serialises");
            assert_eq!(json, action.as_str());
            assert_eq!(
                serde_json::from_value::<TaskAction>(json).ok(),
                Some(action)
            );
            assert_eq!(action.as_str().parse::<TaskAction>(), Ok(action));
        }
        // The list above is every action.
        assert_eq!(TaskAction::ALL, actions);
        let error = "sleep".parse::<TaskAction>().expect_err("no such action");
        assert_eq!(error.to_string(), "unknown task action \"sleep\"");
    }

    #[test]
    fn a_row_without_a_layout_reads_as_an_empty_one() {
        let layout: LayoutView = serde_json::from_str("{}").expect("parses");
        assert_eq!(layout, LayoutView::default());
    }
}
