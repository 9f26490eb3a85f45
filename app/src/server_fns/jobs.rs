//! Jobs: the live job page's first render, its counts again while it runs, cancel and
//! retry.

pub mod cancel;
pub mod retry;
pub mod show;

use std::str::FromStr;

use api_types::{
    ClusterLink, EventView, JobView, TaskAction, TaskGroupView, TaskState, TaskView, Word,
};
use domain::plan::TaskDag;
use serde::{Deserialize, Serialize};

use crate::error::UiError;

/// Rows of the task table per page.
pub const TASKS_PER_PAGE: u32 = 50;
/// Output lines the log shows at most, the newest (older ones are a link away).
pub const LOG_LINES: usize = 500;
/// The largest job whose whole DAG is drawn (box by box) and listed; larger ones are
/// shown by step, with counts.
pub const PICTURE_MAX_TASKS: u64 = 150;
/// Highest page number accepted: far beyond any job, low enough that offsets fit.
const MAX_PAGE_NUMBER: u32 = 1_000_000;

/// The job page's query string as the browser sent it, unchecked:
/// `?state=failed&node=12&page=3` (task table), `?before=812` (older output).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobPageQuery {
    pub state: Option<String>,
    pub node: Option<String>,
    pub action: Option<String>,
    pub service: Option<String>,
    pub page: Option<String>,
    pub before: Option<String>,
}

/// What the job page lists, checked: which tasks in the task table (state, node,
/// step; one page of them) and which output in the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskListing {
    pub state: Option<TaskState>,
    /// The node number.
    pub node: Option<u32>,
    pub action: Option<TaskAction>,
    pub service: Option<String>,
    /// The table's page, from 1.
    pub page: u32,
    /// Output before this event id (older output) rather than the newest.
    pub before: Option<i64>,
}

impl Default for TaskListing {
    fn default() -> Self {
        Self {
            state: None,
            node: None,
            action: None,
            service: None,
            page: 1,
            before: None,
        }
    }
}

/// An empty value is no value: a GET form sends its empty inputs too.
fn given(value: &Option<String>) -> Option<&str> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

/// `raw` read as one of `all` (a `field` naming a `what`); a word that is none of them
/// is an error listing them.
fn one_of<T: Word + FromStr>(
    field: &str,
    what: &str,
    all: &[T],
    raw: Option<&str>,
) -> Result<Option<T>, UiError> {
    raw.map(|raw| {
        raw.parse::<T>().map_err(|_| {
            let words: Vec<&str> = all.iter().map(|value| value.word()).collect();
            UiError::field(
                field,
                format!("{raw:?} is not a {what} ({})", words.join(", ")),
            )
        })
    })
    .transpose()
}

impl TaskListing {
    /// Checks the query; a value that names nothing (an unknown state or action, a node
    /// or page that is no number) is an error saying which.
    pub fn from_query(query: &JobPageQuery) -> Result<Self, UiError> {
        let state = one_of("state", "task state", TaskState::ALL, given(&query.state))?;
        let action = one_of(
            "action",
            "task action",
            TaskAction::ALL,
            given(&query.action),
        )?;
        let node = given(&query.node)
            .map(|node| {
                node.parse::<u32>()
                    .map_err(|_| UiError::field("node", format!("{node:?} is not a node number")))
            })
            .transpose()?;
        let page = given(&query.page)
            .map(|page| {
                page.parse::<u32>()
                    .ok()
                    .filter(|page| (1..=MAX_PAGE_NUMBER).contains(page))
                    .ok_or_else(|| {
                        UiError::field(
                            "page",
                            format!("{page:?} is not a page number (1 to {MAX_PAGE_NUMBER})"),
                        )
                    })
            })
            .transpose()?
            .unwrap_or(1);
        let before = given(&query.before)
            .map(|before| {
                before
                    .parse::<i64>()
                    .ok()
                    .filter(|before| *before > 0)
                    .ok_or_else(|| {
                        UiError::field("before", format!("{before:?} is not an event id"))
                    })
            })
            .transpose()?;
        let name = |field: &str, value: &Option<String>| match given(value) {
            Some(name) if name.len() > 100 => Err(UiError::field(field, "is too long")),
            other => Ok(other.map(str::to_owned)),
        };
        Ok(Self {
            state,
            node,
            action,
            service: name("service", &query.service)?,
            page,
            before,
        })
    }

    /// Whether the table lists only some tasks.
    pub fn is_filtered(&self) -> bool {
        self.state.is_some()
            || self.node.is_some()
            || self.action.is_some()
            || self.service.is_some()
    }

    /// The first row of the page, counted from 0.
    pub fn offset(&self) -> u32 {
        (self.page - 1).saturating_mul(TASKS_PER_PAGE)
    }

    /// The query string (`?state=failed&page=2`) of this listing at table page `page`,
    /// with the newest output.
    pub fn href(&self, page: u32) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if let Some(state) = self.state {
            pairs.push(("state", state.as_str().to_owned()));
        }
        if let Some(node) = self.node {
            pairs.push(("node", node.to_string()));
        }
        if let Some(action) = self.action {
            pairs.push(("action", action.as_str().to_owned()));
        }
        if let Some(service) = &self.service {
            pairs.push(("service", service.clone()));
        }
        if page > 1 {
            pairs.push(("page", page.to_string()));
        }
        query_string(&pairs)
    }

    /// This listing's table with output before event `before` in the log.
    pub fn href_output_before(&self, before: i64) -> String {
        let base = self.href(self.page);
        let join = if base == "?" { "" } else { "&" };
        format!("{base}{join}before={before}")
    }

    /// The tasks of one step, in one state or all.
    pub fn step_href(
        action: TaskAction,
        service: Option<&str>,
        state: Option<TaskState>,
    ) -> String {
        Self {
            state,
            action: Some(action),
            service: service.map(str::to_owned),
            ..Self::default()
        }
        .href(1)
    }

    /// The tasks of one node.
    pub fn node_href(node: u32) -> String {
        Self {
            node: Some(node),
            ..Self::default()
        }
        .href(1)
    }
}

/// `?a=1&b=2`, values encoded; `?` alone for none (a link to the page without a query).
fn query_string(pairs: &[(&str, String)]) -> String {
    let joined: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{key}={}", crate::query::encode_value(value)))
        .collect();
    format!("?{}", joined.join("&"))
}

/// The whole DAG and every task with its state, for a job small enough to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPicture {
    pub dag: TaskDag,
    pub tasks: Vec<TaskView>,
}

/// The task a failed job stopped at, with its last output lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedTask {
    pub task: TaskView,
    pub output: Vec<String>,
}

/// Everything the job page shows when it is first rendered; live updates follow over
/// the event stream from `last_event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPage {
    pub cluster_id: String,
    pub cluster_name: String,
    pub job: JobView,
    pub listing: TaskListing,
    /// The task table: one page of the tasks `listing` keeps, in plan order.
    pub tasks: Vec<TaskView>,
    /// How many tasks `listing` keeps, over every page.
    pub tasks_matching: u64,
    /// Every task, counted by step and state, in plan order.
    pub groups: Vec<TaskGroupView>,
    /// The DAG and every task, when the job is small enough to draw.
    pub picture: Option<JobPicture>,
    /// The output lines shown, oldest first: the newest, or those before
    /// `listing.before`.
    pub output: Vec<EventView>,
    /// Whether there is older output than `output` shows.
    pub output_older: bool,
    /// The job's newest event when read, which the live stream starts after.
    pub last_event_id: i64,
    /// Where a failed job stopped.
    pub failure: Option<FailedTask>,
    /// The hostnames of the nodes the page names, by node number, where known.
    pub hostnames: Vec<(u32, String)>,
    /// Links the cluster exposes, shown once the job succeeded.
    pub links: Vec<ClusterLink>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> JobPageQuery {
        let mut query = JobPageQuery::default();
        for (key, value) in pairs {
            let value = Some((*value).to_owned());
            match *key {
                "state" => query.state = value,
                "node" => query.node = value,
                "action" => query.action = value,
                "service" => query.service = value,
                "page" => query.page = value,
                "before" => query.before = value,
                _ => unreachable!(),
            }
        }
        query
    }

    #[test]
    fn a_query_becomes_a_listing_and_its_links() {
        let listing = TaskListing::from_query(&query(&[
            ("state", "failed"),
            ("node", "12"),
            ("page", "3"),
            ("service", ""),
        ]))
        .unwrap();
        assert_eq!(listing.state, Some(TaskState::Failed));
        assert_eq!((listing.node, listing.page), (Some(12), 3));
        assert_eq!(listing.service, None);
        assert_eq!(listing.offset(), 100);
        assert_eq!(listing.href(4), "?state=failed&node=12&page=4");
        assert_eq!(listing.href(1), "?state=failed&node=12");
        assert_eq!(
            listing.href_output_before(7),
            "?state=failed&node=12&page=3&before=7"
        );
        assert_eq!(TaskListing::default().href(1), "?");
        assert_eq!(TaskListing::default().href_output_before(7), "?before=7");
        assert_eq!(
            TaskListing::step_href(
                TaskAction::Install,
                Some("hadoop hdfs"),
                Some(TaskState::Running)
            ),
            "?state=running&action=install&service=hadoop%20hdfs"
        );
        assert!(!TaskListing::from_query(&JobPageQuery::default())
            .unwrap()
            .is_filtered());
        let step =
            TaskListing::from_query(&query(&[("action", "install"), ("service", "web")])).unwrap();
        assert_eq!(step.action, Some(TaskAction::Install));
        assert_eq!(step.href(1), "?action=install&service=web");
    }

    #[test]
    fn values_that_name_nothing_are_errors_that_say_which() {
        for (key, value) in [
            ("state", "sleeping"),
            ("node", "-1"),
            ("node", "one"),
            ("page", "0"),
            ("page", "99999999999"),
            ("before", "x"),
            ("action", "sleep"),
        ] {
            let error = TaskListing::from_query(&query(&[(key, value)])).unwrap_err();
            assert_eq!(error.status_code(), 422, "{key}={value}");
            assert!(error.to_string().starts_with(key), "{error}");
        }
        let error = TaskListing::from_query(&query(&[("action", "sleep")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "action: \"sleep\" is not a task action (create, confirm, bootstrap, install, \
             configure, initialize, start, stop, remove, delete, suspend, resume)"
        );
    }
}
