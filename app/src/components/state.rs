//! A state shown as colour plus text (never colour alone), for clusters, jobs, tasks
//! and nodes alike. Each state enum says which tone it has; the words are its own.

use api_types::{ClusterState, JobState, NodeState, PoolHostState, TaskState, Word};
use leptos::prelude::*;

/// How a state reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Done, up, healthy.
    Ok,
    /// Something is happening or waiting to happen.
    Busy,
    /// Needs someone's attention.
    Bad,
    /// At rest.
    Idle,
}

impl Tone {
    pub fn class(self) -> &'static str {
        match self {
            Tone::Ok => "state state-ok",
            Tone::Busy => "state state-busy",
            Tone::Bad => "state state-bad",
            Tone::Idle => "state state-idle",
        }
    }
}

/// A state a badge can show: its word, in its tone.
pub trait Shown: Word + Send + Sync + 'static {
    fn tone(self) -> Tone;
}

impl Shown for ClusterState {
    fn tone(self) -> Tone {
        match self {
            ClusterState::Active => Tone::Ok,
            ClusterState::Creating | ClusterState::Updating | ClusterState::Deleting => Tone::Busy,
            // Waiting to happen: a person decides, then its job runs.
            ClusterState::AwaitingApproval => Tone::Busy,
            ClusterState::Failed => Tone::Bad,
            ClusterState::Deleted => Tone::Idle,
        }
    }
}

impl Shown for JobState {
    fn tone(self) -> Tone {
        match self {
            JobState::Succeeded => Tone::Ok,
            JobState::Queued | JobState::Running | JobState::Cancelling => Tone::Busy,
            JobState::Failed => Tone::Bad,
            JobState::Cancelled => Tone::Idle,
        }
    }
}

impl Shown for TaskState {
    fn tone(self) -> Tone {
        match self {
            TaskState::Succeeded => Tone::Ok,
            TaskState::Ready | TaskState::Running => Tone::Busy,
            TaskState::Failed => Tone::Bad,
            TaskState::Pending | TaskState::Cancelled | TaskState::Skipped => Tone::Idle,
        }
    }
}

/// A `ready` node is up, unlike a `ready` task, which is waiting to run.
impl Shown for NodeState {
    fn tone(self) -> Tone {
        match self {
            NodeState::Ready => Tone::Ok,
            NodeState::Created | NodeState::Confirmed => Tone::Busy,
            // Stopped on purpose (a lease's grace), not broken.
            NodeState::Stopped => Tone::Idle,
        }
    }
}

impl Shown for PoolHostState {
    fn tone(self) -> Tone {
        match self {
            PoolHostState::Free => Tone::Idle,
            PoolHostState::CheckedOut => Tone::Busy,
        }
    }
}

/// The badge of one state; for a state that changes, render it inside a closure.
#[component]
pub fn StateBadge<S: Shown>(state: S) -> impl IntoView {
    view! {
        <span class=state.tone().class() data-state=state.word()>
            {state.word()}
        </span>
    }
}
