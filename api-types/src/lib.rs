//! Corral's wire contract, in one place: what the REST API, the server functions of the
//! web pages and the CLI send and receive.
//!
//! - [`states`]: the life cycles of clusters, nodes, jobs and tasks, roles and token
//!   scopes, as enums that (de)serialise to the same words the database stores.
//! - [`accounts`], [`clusters`], [`jobs`], [`catalog`]: views (what reads return) and
//!   requests (what writes take).
//! - [`layout`]: a cluster's solved layout and a plan's task DAG.
//! - [`ids`]: the ids of jobs and of their task rows as their own types ([`JobId`],
//!   [`TaskRecordId`]), the same strings on the wire.
//! - [`operation`]: what a job does, the one word jobs, change requests, the CLI and
//!   the pages share.
//! - [`providers`]: credentials (names only) and the provider check.
//! - [`node_shell`]: SSH certificates for reaching a node through Corral.
//! - [`hooks`]: a tenant's lifecycle hooks and gates, their deliveries and the event
//!   body they are sent.
//! - [`rollouts`]: a template's new catalog revision rolled out across its clusters.
//! - [`approvals`]: user groups, approval rules and the requests that wait on them.
//! - [`cost`]: estimated costs, cost so far, budgets and showback.
//! - [`audit`]: the names of what the audit log records (`cluster.create`).
//! - [`error`]: the body of every error response.
//!
//! The engine builds these views from its rows; the server serialises them; the web
//! pages (compiled to wasm too, which is why nothing here touches a database or the
//! network) and the CLI deserialise exactly the same types. The `openapi` feature adds
//! the `utoipa` schemas the server's OpenAPI document is made of.

pub mod accounts;
pub mod approvals;
pub mod audit;
pub mod catalog;
pub mod clusters;
pub mod cost;
pub mod error;
pub mod hooks;
pub mod ids;
pub mod jobs;
pub mod layout;
pub mod node_shell;
pub mod operation;
pub mod providers;
pub mod rollouts;
pub mod states;
pub mod user_keys;

pub use accounts::*;
pub use approvals::*;
pub use audit::AuditAction;
pub use catalog::*;
pub use clusters::*;
pub use cost::*;
pub use error::*;
pub use hooks::*;
pub use ids::{JobId, TaskRecordId};
pub use jobs::*;
pub use layout::*;
pub use node_shell::*;
pub use operation::Operation;
pub use providers::*;
pub use rollouts::*;
pub use states::*;
pub use user_keys::*;

/// One page of a list.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page<T> {
    pub items: Vec<T>,
    /// How many items the whole list has.
    pub total: u64,
    pub offset: u32,
    pub limit: u32,
}
