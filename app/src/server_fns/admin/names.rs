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
    use crate::server_fns::admin::Kind;

    for kind in Kind::ALL {
        let mut list: Vec<String> = service
            .list_entities(&caller, kind.key(), super::caller::all())
            .await?
            .items
            .into_iter()
            .map(|entity| entity.name)
            .collect();
        list.sort();
        *match kind {
            Kind::Providers => &mut names.providers,
            Kind::Hardware => &mut names.hardware,
            Kind::Images => &mut names.images,
            Kind::Services => &mut names.services,
            Kind::Templates => &mut names.templates,
            Kind::Partials => &mut names.partials,
        } = list;
    }
    Ok(names)
}
