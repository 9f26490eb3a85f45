//! Every name in the tenant's catalog, per kind, for the forms' pickers.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::CatalogNames;

#[server(prefix = "/sfn", endpoint = "admin-catalog-names")]
pub async fn list_catalog_names() -> Result<CatalogNames, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let mut names = CatalogNames::default();
    use crate::server_fns::admin::EntityKind;

    for kind in EntityKind::ALL {
        let mut list: Vec<String> = service
            .list_entities(&caller, kind.key(), super::caller::all())
            .await?
            .items
            .into_iter()
            .map(|entity| entity.name)
            .collect();
        list.sort();
        *match kind {
            EntityKind::Provider => &mut names.providers,
            EntityKind::HardwareType => &mut names.hardware,
            EntityKind::ImageType => &mut names.images,
            EntityKind::Service => &mut names.services,
            EntityKind::ClusterTemplate => &mut names.templates,
            EntityKind::PartialTemplate => &mut names.partials,
        } = list;
    }
    Ok(names)
}
