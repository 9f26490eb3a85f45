//! The lifecycle test catalog (`testdata/lifecycle`) set up in a store as an
//! administrator would: its JSON imported into the default tenant and its script
//! uploaded where the server keeps resources (`<data dir>/resources`).

use std::path::Path;

use domain::catalog::coopr::import_bundle;
use engine::resources::{ResourceFiles, ResourceKind, Upload};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Store};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/lifecycle");

/// The catalog as JSON, for a test to adjust before [`seed`].
pub fn catalog() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap())
        .unwrap()
}

/// Imports `catalog` into the default tenant and uploads the catalog's script.
pub async fn seed(store: &Store, data_dir: &Path, catalog: &serde_json::Value) {
    let catalog = import_bundle(&catalog.to_string()).unwrap();
    engine::catalog::import(store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .unwrap();
    let resources = ResourceFiles::in_directory(data_dir.join("resources"));
    let upload = Upload {
        tenant_id: DEFAULT_TENANT_ID,
        kind: ResourceKind::Scripts,
        name: "web.sh",
        author_id: None,
    };
    let script = std::fs::read(format!("{FIXTURES}/web.sh")).unwrap();
    let version = resources
        .upload(store, &upload, &script, now_ms())
        .await
        .unwrap();
    resources
        .stage(
            store,
            DEFAULT_TENANT_ID,
            ResourceKind::Scripts,
            "web.sh",
            version.version,
        )
        .await
        .unwrap();
}
