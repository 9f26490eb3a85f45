//! Rolling a template's new catalog revision out across the tenant's clusters built
//! from it (`POST /catalog/rollouts`): the request, the listing a dry run answers with
//! (each cluster that is behind, its plan summary, whether its owner pinned it), and the
//! durable rollout record with each cluster's outcome and job.

use serde::{Deserialize, Serialize};

use crate::states::{RolloutClusterState, RolloutState};

fn one() -> u32 {
    1
}

/// Start a rollout of `template`'s current revision (or, with `dry_run`, only list
/// what it would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RolloutRequest {
    pub template: String,
    /// Clusters upgraded at once (at least 1; default 1).
    #[serde(default = "one")]
    pub max_parallel: u32,
    #[serde(default)]
    pub dry_run: bool,
}

/// A cluster of the template that is behind its current revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RolloutCandidate {
    pub cluster_id: String,
    pub cluster_name: String,
    /// The owner's username, when the owner still exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The template revision the cluster was built from (or last upgraded to); the
    /// listing's `revision` is the one it moves to.
    #[serde(default)]
    pub from_revision: i64,
    /// Pinned by its owner: listed, and passed over.
    pub pinned: bool,
    /// What the upgrade changes and runs, in a line.
    pub summary: String,
}

/// The answer to `POST /catalog/rollouts`: the listing, and the rollout started (none
/// for a dry run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RolloutStarted {
    pub template: String,
    /// The template's current revision the clusters move to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// In the order they are upgraded.
    pub clusters: Vec<RolloutCandidate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutView>,
}

/// A template of the tenant's catalog as the console's rollout form offers it: how
/// many of its live clusters there are and how many of them are behind its current
/// revision (the ones a rollout would upgrade).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RolloutTemplate {
    pub template: String,
    /// The template's current revision.
    pub revision: i64,
    pub clusters: u32,
    pub behind: u32,
}

/// One cluster of a rollout and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RolloutClusterView {
    pub cluster_id: String,
    pub cluster_name: String,
    pub position: u32,
    pub state: RolloutClusterState,
    /// Its upgrade job, once submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Why it failed, or what was done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<i64>,
    pub updated_at_ms: i64,
}

/// A rollout: its record and its clusters in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RolloutView {
    pub id: String,
    pub template: String,
    pub max_parallel: u32,
    pub state: RolloutState,
    /// Why it stopped (naming the cluster), or what it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whose upgrades these are.
    pub created_by: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub clusters: Vec<RolloutClusterView>,
}
