//! `corral catalog import` of Coopr's folder-per-kind directory and `corral catalog
//! export` to either layout and format, against a real `corral serve`: a directory
//! imports with its scripts, an exported directory imports back to the same
//! catalog, and a directory with anything wrong changes nothing on the server.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::coopr_catalog::{copy_catalog, path_str, BROKEN};
use crate::support::test_server::{self, corral, login_as_admin, text, Served};

/// A signed-in CLI against a fresh server (which holds the demo catalog).
struct Session {
    _data: tempfile::TempDir,
    config: tempfile::TempDir,
    _server: Served,
}

impl Session {
    fn start() -> Self {
        let data = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        let server = test_server::serve(data.path(), 1, &[]);
        login_as_admin(config.path(), &server);
        Self {
            _data: data,
            config,
            _server: server,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        corral(self.config.path(), args, "")
    }

    /// `corral catalog export` (a bundle, as the server stores it) as JSON.
    fn export(&self) -> Value {
        let output = self.run(&["catalog", "export"]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

fn names(bundle: &Value, kind: &str) -> Vec<String> {
    bundle[kind]
        .as_array()
        .unwrap()
        .iter()
        .map(|entity| entity["name"].as_str().unwrap().to_owned())
        .collect()
}

fn json_count(dir: &Path, kind: &str) -> usize {
    fs::read_dir(dir.join(kind)).unwrap().count()
}

#[test]
fn a_coopr_directory_imports_with_its_scripts_and_round_trips_through_export() {
    let session = Session::start();
    let work = tempfile::tempdir().unwrap();
    let coopr = work.path().join("coopr");
    copy_catalog(&coopr, &BROKEN);
    fs::create_dir(coopr.join("scripts")).unwrap();
    fs::write(coopr.join("scripts/hello.sh"), "echo hello\n").unwrap();

    let import = session.run(&["catalog", "import", path_str(&coopr)]);
    let out = text(&import.stdout);
    assert!(import.status.success(), "{}", text(&import.stderr));
    for count in [
        "imported",
        "8 providers",
        "5 hardwaretypes",
        "11 imagetypes",
        "53 services",
        "12 clustertemplates",
        "scripts/hello.sh: version 1 uploaded and staged",
    ] {
        assert!(out.contains(count), "{count}: {out}");
    }
    let imported = session.export();
    assert_eq!(names(&imported, "providers").len(), 8);
    assert_eq!(names(&imported, "clustertemplates").len(), 12);
    assert!(names(&imported, "services").contains(&"hadoop-hdfs-namenode".to_owned()));
    assert!(!names(&imported, "clustertemplates").contains(&"web-stack".to_owned()));

    // Exported as a directory and imported back: the same catalog, scripts unchanged.
    let exported = work.path().join("exported");
    let export = session.run(&[
        "catalog",
        "export",
        "--layout",
        "directory",
        "--out",
        path_str(&exported),
    ]);
    assert!(export.status.success(), "{}", text(&export.stderr));
    assert!(
        text(&export.stdout).contains("wrote 89 entities in 89 files"),
        "{}",
        text(&export.stdout)
    );
    assert_eq!(json_count(&exported, "services"), 53);
    assert!(exported
        .join("clustertemplates/hadoop-distributed.json")
        .is_file());
    let again = session.run(&["catalog", "import", path_str(&exported)]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(session.export(), imported);

    let into_full = session.run(&[
        "catalog",
        "export",
        "--layout",
        "directory",
        "--out",
        path_str(&exported),
    ]);
    assert!(!into_full.status.success());
    assert!(
        text(&into_full.stderr).contains("is not empty"),
        "{}",
        text(&into_full.stderr)
    );
    let without_out = session.run(&["catalog", "export", "--layout", "directory"]);
    assert_eq!(without_out.status.code(), Some(2), "a usage error");
}

#[test]
fn export_writes_either_format_in_either_layout() {
    let session = Session::start();
    let work = tempfile::tempdir().unwrap();
    let coopr = work.path().join("coopr");
    copy_catalog(&coopr, &BROKEN);
    let import = session.run(&["catalog", "import", path_str(&coopr)]);
    assert!(import.status.success(), "{}", text(&import.stderr));
    let lease = |bundle: &Value| {
        bundle["clustertemplates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|template| template["name"] == "hadoop-distributed")
            .unwrap()["administration"]["leaseduration"]["initial"]
            .clone()
    };

    let corral_form = session.run(&["catalog", "export", "--format", "corral"]);
    assert!(
        corral_form.status.success(),
        "{}",
        text(&corral_form.stderr)
    );
    let bundle: Value = serde_json::from_slice(&corral_form.stdout).unwrap();
    assert!(lease(&bundle).is_string(), "a duration: {}", lease(&bundle));
    let coopr_form = session.run(&["catalog", "export", "--format", "coopr"]);
    let bundle: Value = serde_json::from_slice(&coopr_form.stdout).unwrap();
    assert!(
        lease(&bundle).is_number(),
        "milliseconds: {}",
        lease(&bundle)
    );

    let dir = work.path().join("corral-form");
    let export = session.run(&[
        "catalog",
        "export",
        "--layout",
        "directory",
        "--format",
        "corral",
        "--out",
        path_str(&dir),
    ]);
    assert!(export.status.success(), "{}", text(&export.stderr));
    let file = fs::read_to_string(dir.join("clustertemplates/hadoop-distributed.json")).unwrap();
    let template: Value = serde_json::from_str(&file).unwrap();
    assert!(
        template["administration"]["leaseduration"]["initial"].is_string(),
        "{file}"
    );
    let validate = session.run(&["catalog", "validate", path_str(&dir)]);
    assert!(validate.status.success(), "{}", text(&validate.stderr));
}

/// Each way a directory can be wrong is refused before anything is written: the
/// server's catalog is what it was.
#[test]
fn a_directory_with_anything_wrong_changes_nothing() {
    let session = Session::start();
    let before = session.export();
    let work = tempfile::tempdir().unwrap();

    // An entity file that does not decode: named with the field.
    let broken = work.path().join("broken");
    copy_catalog(&broken, &BROKEN);
    let base = broken.join("services/base.json");
    fs::write(
        &base,
        r#"{"name": "base", "dependencies": {"provides": [7]}}"#,
    )
    .unwrap();
    let refused = session.run(&["catalog", "import", path_str(&broken)]);
    let err = text(&refused.stderr);
    assert!(!refused.status.success());
    assert!(err.contains(path_str(&base)), "{err}");
    assert!(
        err.contains("services.base.dependencies.provides[0]"),
        "{err}"
    );

    // A catalog that does not validate: each error names its entity's file.
    let invalid = work.path().join("invalid");
    copy_catalog(&invalid, &[]);
    let refused = session.run(&["catalog", "import", path_str(&invalid)]);
    let err = text(&refused.stderr);
    assert!(!refused.status.success());
    let file = invalid.join("clustertemplates/docker-base.json");
    assert!(
        err.contains(&format!(
            "{}: clustertemplates.docker-base.compatibility.imagetypes[2]: unknown image type",
            file.display()
        )),
        "{err}"
    );
    assert!(err.contains("nothing was sent to the server"), "{err}");

    // A resource the server would refuse, beside a valid catalog.
    let bad_script = work.path().join("bad-script");
    copy_catalog(&bad_script, &BROKEN);
    fs::create_dir(bad_script.join("scripts")).unwrap();
    fs::write(bad_script.join("scripts/ok.sh"), "true\n").unwrap();
    fs::write(bad_script.join("scripts/not ok.sh"), "true\n").unwrap();
    let refused = session.run(&["catalog", "import", path_str(&bad_script)]);
    let err = text(&refused.stderr);
    assert!(!refused.status.success());
    assert!(err.contains("scripts/not ok.sh"), "{err}");
    assert!(err.contains("not a valid resource name"), "{err}");

    // One entity file alone would replace the catalog with that entity.
    let entity = work.path().join("invalid/services/base.json");
    let refused = session.run(&["catalog", "import", path_str(&entity)]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("replaces the whole catalog"),
        "{}",
        text(&refused.stderr)
    );

    assert_eq!(
        session.export(),
        before,
        "the server's catalog is unchanged"
    );
    let dry = session.run(&["catalog", "import", path_str(&bad_script), "--dry-run"]);
    assert!(!dry.status.success(), "a dry run refuses it too");
}

/// The attack of issue 38: a catalog directory whose `scripts/web.sh` was a link to the
/// CLI's own token file uploaded the token as a plugin resource. Links inside the
/// directory are refused, naming the link, before anything is sent; so is a link
/// standing for a whole resource folder, and an entity file that is a link. A resource
/// too big for the server is refused from its size before it is read: here a sparse
/// terabyte, which reading would never finish.
#[test]
fn links_and_too_big_files_in_a_catalog_directory_are_refused() {
    let session = Session::start();
    let before = session.export();
    let token_file = session.config.path().join("cli.toml");
    assert!(token_file.is_file(), "the CLI keeps its token there");
    let token_text = fs::read_to_string(&token_file).unwrap();
    let work = tempfile::tempdir().unwrap();
    let refused_with = |dir: &Path, needle: &str| {
        let refused = session.run(&["catalog", "import", path_str(dir)]);
        let err = text(&refused.stderr);
        assert!(!refused.status.success(), "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(
            err.contains("symbolic link") || err.contains("bytes"),
            "{err}"
        );
        assert!(!err.contains(token_text.trim()), "{err}");
    };

    let linked_script = work.path().join("linked-script");
    copy_catalog(&linked_script, &BROKEN);
    fs::create_dir(linked_script.join("scripts")).unwrap();
    fs::write(linked_script.join("scripts/ok.sh"), "true\n").unwrap();
    let link = linked_script.join("scripts/web.sh");
    std::os::unix::fs::symlink(&token_file, &link).unwrap();
    refused_with(&linked_script, path_str(&link));

    let linked_folder = work.path().join("linked-folder");
    copy_catalog(&linked_folder, &BROKEN);
    std::os::unix::fs::symlink(session.config.path(), linked_folder.join("files")).unwrap();
    refused_with(&linked_folder, path_str(&linked_folder.join("files")));

    let linked_entity = work.path().join("linked-entity");
    copy_catalog(&linked_entity, &BROKEN);
    let base = linked_entity.join("services/base.json");
    let elsewhere = work.path().join("base.json");
    fs::rename(&base, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &base).unwrap();
    refused_with(&linked_entity, path_str(&base));

    let too_big = work.path().join("too-big");
    copy_catalog(&too_big, &BROKEN);
    fs::create_dir(too_big.join("files")).unwrap();
    let huge = too_big.join("files/huge.tar");
    fs::File::create(&huge).unwrap().set_len(1 << 40).unwrap();
    refused_with(&too_big, path_str(&huge));

    // Every refusal came before the CLI signed in to send anything.
    assert_eq!(
        session.export(),
        before,
        "the server's catalog is unchanged"
    );
}
