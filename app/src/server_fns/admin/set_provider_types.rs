//! A superadmin sets which provider types a tenant may build on (one checkbox each;
//! `local` runs node steps on the Corral server's own host).

use leptos::prelude::*;

use crate::error::UiError;

/// The checkboxes' names: the provider types with `-` as `_`.
#[server(prefix = "/sfn", endpoint = "admin-set-provider-types")]
pub async fn set_provider_types(
    csrf: String,
    id: String,
    local: Option<String>,
    ssh_pool: Option<String>,
    docker: Option<String>,
    ec2: Option<String>,
    exec: Option<String>,
) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let ticked = [
        ("local", local),
        ("ssh-pool", ssh_pool),
        ("docker", docker),
        ("ec2", ec2),
        ("exec", exec),
    ];
    let update = engine::service::ProviderTypesUpdate {
        provider_types: ticked
            .into_iter()
            .filter(|(_, ticked)| ticked.is_some())
            .map(|(providertype, _)| providertype.to_owned())
            .collect(),
    };
    crate::session::service()?
        .set_provider_types(&caller, &id, &update)
        .await?;
    leptos_axum::redirect("/admin/tenants?saved=1");
    Ok(())
}
