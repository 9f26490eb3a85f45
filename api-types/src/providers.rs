//! A tenant's providers beyond their catalog definition: the credentials set for each
//! (shown as field names only: values never come back) and the provider check.

use serde::{Deserialize, Serialize};

/// What is set for a provider's credentials in the caller's tenant. Never a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderCredentialsView {
    /// The catalog provider's name.
    pub provider: String,
    /// Its provider type (`ec2`, `exec`…).
    pub providertype: String,
    /// Whether the tenant may build on that provider type (superadmins decide).
    pub usable: bool,
    /// Whether credentials are set.
    pub set: bool,
    /// The credentials' field names (`access_key_id`, `secret_access_key`).
    pub fields: Vec<String>,
    /// Who set them last.
    pub updated_by: Option<String>,
    pub updated_at_ms: Option<i64>,
}

/// What `corral provider test` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ProviderTestRequest {
    /// Also make one machine, reach it over SSH where the provider allows it, and
    /// delete it.
    #[serde(default)]
    pub create: bool,
    /// The hardware type of that machine (default: the first mapped to the provider).
    #[serde(default)]
    pub hardwaretype: Option<String>,
    /// Its image type (default: the first mapped to the provider).
    #[serde(default)]
    pub imagetype: Option<String>,
}

/// How a phase of a provider check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PhaseOutcome {
    Passed,
    Failed,
    /// Not run: an earlier phase failed, or the provider does not allow it.
    Skipped,
}

/// One phase of a provider check: `check` (credentials and endpoint), then with a
/// create `create`, `ssh` and `delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderTestPhase {
    pub phase: String,
    pub outcome: PhaseOutcome,
    /// What was done or what went wrong, in words.
    pub detail: String,
    pub elapsed_ms: u64,
}

/// The whole check: passed when no phase failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderTestReport {
    pub provider: String,
    pub providertype: String,
    pub passed: bool,
    pub phases: Vec<ProviderTestPhase>,
}
