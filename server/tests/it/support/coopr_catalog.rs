//! Coopr's published catalog (`testdata/coopr-catalog`, one folder per kind of entity,
//! one JSON file per entity) as the catalog CLI tests read it, and copies of it
//! without the cluster templates known to be defective.

use std::fs;
use std::path::Path;

pub const CATALOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/coopr-catalog");

/// The cluster templates of Coopr's catalog that do not validate.
pub const BROKEN: [&str; 3] = ["cdap-singlenode", "coopr-standalone-docker", "docker-base"];

/// Copies the catalog's JSON files into `to`, leaving out the named cluster templates.
pub fn copy_catalog(to: &Path, without: &[&str]) {
    for kind in fs::read_dir(CATALOG).unwrap() {
        let kind = kind.unwrap().path();
        if !kind.is_dir() {
            continue;
        }
        let folder = to.join(kind.file_name().unwrap());
        fs::create_dir_all(&folder).unwrap();
        for file in fs::read_dir(&kind).unwrap() {
            let file = file.unwrap().path();
            let stem = file.file_stem().unwrap().to_str().unwrap();
            if kind.ends_with("clustertemplates") && without.contains(&stem) {
                continue;
            }
            fs::copy(&file, folder.join(file.file_name().unwrap())).unwrap();
        }
    }
}

/// A temp path as the `&str` argument of a command.
pub fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}
