//! Whose tasks a worker pool takes, as the store's queries filter them.

/// Whose tasks a worker pool takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WorkerScope {
    /// Every tenant's, except the tenants served by dedicated workers only.
    #[default]
    Shared,
    /// Only these tenants' (ids), whether they are served by dedicated workers only or
    /// not: a process whose steps never mix with other tenants'.
    Tenants(Vec<String>),
}

impl WorkerScope {
    /// The SQL condition that keeps the rows whose `tenant_column` names a tenant this
    /// scope serves, its tenant ids bound as `$first_param` onwards (in the order of
    /// [`Self::tenant_ids`]); `None` when the scope serves no tenant at all.
    pub fn served_condition(&self, tenant_column: &str, first_param: usize) -> Option<String> {
        match self {
            WorkerScope::Shared => Some(format!(
                "{tenant_column} NOT IN (SELECT id FROM tenants WHERE dedicated_workers = 1)"
            )),
            WorkerScope::Tenants(tenants) if tenants.is_empty() => None,
            WorkerScope::Tenants(tenants) => {
                let placeholders: Vec<String> = (0..tenants.len())
                    .map(|index| format!("${}", first_param + index))
                    .collect();
                Some(format!("{tenant_column} IN ({})", placeholders.join(", ")))
            }
        }
    }

    /// The tenant ids [`Self::served_condition`]'s parameters take.
    pub fn tenant_ids(&self) -> &[String] {
        match self {
            WorkerScope::Shared => &[],
            WorkerScope::Tenants(tenants) => tenants,
        }
    }
}
