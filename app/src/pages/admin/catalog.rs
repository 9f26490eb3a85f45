//! Catalog entity pages, one set for all six kinds: the list, an entity's page
//! (definition, history with diff, delete; the try-it panel for templates) and the
//! create/edit/clone form.

pub mod fields;
pub mod form;
pub mod list;
pub mod show;
pub mod structured;

/// A pretty-printed starting point for a new entity of each kind (the form's JSON
/// field), showing the fields Coopr's format has.
pub fn starter(kind: crate::server_fns::admin::EntityKind) -> &'static str {
    use crate::server_fns::admin::EntityKind;
    match kind {
        EntityKind::Provider => "{\n  \"providertype\": \"local\",\n  \"provisioner\": {}\n}",
        EntityKind::HardwareType => "{\n  \"providermap\": {\n    \"local\": { \"flavor\": \"small\" }\n  }\n}",
        EntityKind::ImageType => "{\n  \"providermap\": {\n    \"local\": { \"image\": \"debian-12\" }\n  }\n}",
        EntityKind::Service => "{\n  \"dependencies\": {\n    \"provides\": [],\n    \"conflicts\": [],\n    \"install\": { \"requires\": [], \"uses\": [] },\n    \"runtime\": { \"requires\": [], \"uses\": [] }\n  },\n  \"provisioner\": {\n    \"actions\": {\n      \"install\": { \"type\": \"shell\", \"fields\": { \"script\": \"echo install\" } },\n      \"start\": { \"type\": \"shell\", \"fields\": { \"script\": \"echo start\" } }\n    }\n  }\n}",
        EntityKind::ClusterTemplate => "{\n  \"compatibility\": { \"services\": [], \"hardwaretypes\": [], \"imagetypes\": [] },\n  \"defaults\": { \"services\": [], \"provider\": \"local\", \"hardwaretype\": \"\", \"imagetype\": \"\", \"config\": {} },\n  \"constraints\": {\n    \"size\": { \"min\": 1, \"max\": 10 },\n    \"layout\": { \"mustcoexist\": [], \"cantcoexist\": [] },\n    \"services\": {}\n  },\n  \"administration\": { \"leaseduration\": { \"initial\": \"7d\", \"max\": \"30d\", \"step\": \"1d\" } }\n}",
            EntityKind::PartialTemplate => "{\n  \"compatibility\": { \"services\": [], \"hardwaretypes\": [], \"imagetypes\": [] },\n  \"defaults\": { \"services\": [], \"config\": {} },\n  \"immutable\": false\n}",
    }
}
