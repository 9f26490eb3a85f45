//! Fuzzes the Coopr catalog importer the way the server uses it on an upload
//! (`POST /api/v1/catalog/import`, the console's import page, `corral catalog
//! import`): the input is the JSON text of a whole-catalog bundle, and the same
//! text is also read as one entity of each kind and as one file of the
//! folder-per-kind layout. An accepted catalog is validated, every template
//! resolved, and exported and imported again, which must give the same catalog
//! (the importer's documented lossless round trip).

#![no_main]

use domain::catalog::coopr::{self, CooprEntity};
use domain::catalog::validate::validate;
use domain::catalog::{
    Catalog, ClusterTemplate, HardwareType, ImageType, PartialTemplate, Provider, Service,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Lossy, so mutations that break UTF-8 still reach the JSON parser.
    let text = String::from_utf8_lossy(data);

    if let Ok(catalog) = coopr::import_bundle(&text) {
        check_catalog(&catalog);
    }

    // One entity of each kind, as `PUT /api/v1/catalog/{kind}/{name}` reads it.
    entity::<Provider>(&text);
    entity::<HardwareType>(&text);
    entity::<ImageType>(&text);
    entity::<Service>(&text);
    entity::<ClusterTemplate>(&text);
    entity::<PartialTemplate>(&text);

    // One file of the folder layout (`corral catalog import DIR`).
    let files = [("catalog/services/fuzz.json".to_owned(), text.into_owned())];
    if let Ok(catalog) = coopr::import_files(&files) {
        check_catalog(&catalog);
    }
});

/// What the server does with an accepted catalog, and the round trip it relies on.
fn check_catalog(catalog: &Catalog) {
    let report = validate(catalog);
    let _ = report.has_errors();
    for name in catalog.clustertemplates.keys() {
        let _ = catalog.resolved_template(name);
    }
    let exported = coopr::export_bundle(catalog);
    match coopr::import_bundle_value(exported) {
        Ok(again) => assert!(again == *catalog, "export then import changed the catalog"),
        Err(error) => panic!("an exported catalog does not import again: {error}"),
    }
    match coopr::import_files(&coopr::export_files(catalog)) {
        Ok(again) => assert!(
            again.len() == catalog.len(),
            "the folder export lost entities"
        ),
        Err(error) => panic!("an exported folder does not import again: {error}"),
    }
}

fn entity<T: CooprEntity + std::fmt::Debug>(text: &str) {
    let Ok(entity) = coopr::entity_from_str::<T>(text) else {
        return;
    };
    let value = coopr::entity_to_value(&entity);
    match coopr::entity_from_value::<T>(value) {
        Ok(again) => assert!(again == entity, "entity round trip changed {entity:?}"),
        Err(error) => panic!("a written entity does not read again: {error}"),
    }
}
