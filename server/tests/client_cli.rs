//! The `corral` CLI as an API client, against a real `corral serve`: login saves a
//! 0600 token file, commands print tables or JSON, and errors say what to do. The
//! server's log is captured and must not contain the password or the token.

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[path = "support/served.rs"]
#[allow(dead_code)] // Shared with apply_cli.rs, which uses what this file does not.
mod served;

use served::{corral, text, Served};

const CATALOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/lifecycle/catalog.json"
);

/// A server logging at debug level: whatever it logs about requests must still
/// hold no secret.
fn serve(data: &Path) -> Served {
    served::serve(data, 1, &[("RUST_LOG", "debug")])
}

#[test]
fn login_then_manage_the_catalog_and_clusters() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = serve(data.path());

    let wrong = corral(
        config.path(),
        &[
            "login",
            "--server",
            &server.url,
            "--username",
            "admin",
            "--password-stdin",
        ],
        "not the password\n",
    );
    assert!(!wrong.status.success());
    assert!(
        text(&wrong.stderr).contains("wrong username or password"),
        "{}",
        text(&wrong.stderr)
    );

    let before = corral(config.path(), &["cluster", "list"], "");
    assert!(!before.status.success());
    assert!(
        text(&before.stderr).contains("corral login"),
        "{}",
        text(&before.stderr)
    );

    let login = corral(
        config.path(),
        &[
            "login",
            "--server",
            &server.url,
            "--username",
            "admin",
            "--password-stdin",
        ],
        &format!("{}\n", server.password),
    );
    assert!(login.status.success(), "{}", text(&login.stderr));
    let file = config.path().join("cli.toml");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is private");
    assert!(
        !text(&login.stdout).contains("corral_"),
        "the token is not printed"
    );

    let import = corral(config.path(), &["catalog", "import", CATALOG], "");
    assert!(import.status.success(), "{}", text(&import.stderr));
    assert!(
        text(&import.stdout).contains("imported"),
        "{}",
        text(&import.stdout)
    );

    let export = corral(config.path(), &["catalog", "export"], "");
    let bundle: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(bundle["clustertemplates"][0]["name"], "lifecycle");

    let plan = corral(
        config.path(),
        &[
            "cluster",
            "create",
            "demo",
            "--template",
            "lifecycle",
            "--size",
            "3",
            "--dry-run",
        ],
        "",
    );
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    assert!(
        text(&plan.stdout).contains("task(s):"),
        "{}",
        text(&plan.stdout)
    );

    let too_small = corral(
        config.path(),
        &[
            "cluster",
            "create",
            "demo",
            "--template",
            "lifecycle",
            "--size",
            "1",
        ],
        "",
    );
    assert!(!too_small.status.success());
    assert!(
        text(&too_small.stderr).contains("size"),
        "{}",
        text(&too_small.stderr)
    );

    let listed = corral(config.path(), &["cluster", "list", "--json"], "");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let page: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(page["total"], 0, "a dry run creates nothing");

    let saved = std::fs::read_to_string(&file).unwrap();
    let token = saved
        .lines()
        .find_map(|line| line.strip_prefix("token = "))
        .unwrap()
        .trim_matches('"')
        .to_owned();
    assert!(token.starts_with("corral_"));

    let logout = corral(config.path(), &["logout"], "");
    assert!(logout.status.success(), "{}", text(&logout.stderr));
    assert!(!file.exists());

    let log = std::fs::read_to_string(data.path().join("server.log")).unwrap();
    assert!(
        log.contains("corral is serving"),
        "the log was captured: {log}"
    );
    assert!(
        !log.contains(&server.password),
        "the admin password is in the log"
    );
    assert!(!log.contains(&token), "the API token is in the log");
}

/// `corral catalog import demo/catalog.json` brings the scripts beside the bundle:
/// unchanged ones stay as they are, a changed one becomes a new staged version.
#[test]
fn catalog_import_uploads_the_scripts_beside_the_bundle() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = serve(data.path());
    let login = corral(
        config.path(),
        &[
            "login",
            "--server",
            &server.url,
            "--username",
            "admin",
            "--password-stdin",
        ],
        &format!("{}\n", server.password),
    );
    assert!(login.status.success(), "{}", text(&login.stderr));
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../demo");

    // The first start staged these very scripts.
    let import = corral(
        config.path(),
        &["catalog", "import", &format!("{demo}/catalog.json")],
        "",
    );
    let out = text(&import.stdout);
    assert!(import.status.success(), "{}", text(&import.stderr));
    assert!(out.contains("imported"), "{out}");
    assert!(
        out.contains("scripts/corral-demo.sh: staged already"),
        "{out}"
    );

    let copy = tempfile::tempdir().unwrap();
    std::fs::create_dir(copy.path().join("scripts")).unwrap();
    std::fs::copy(
        format!("{demo}/catalog.json"),
        copy.path().join("catalog.json"),
    )
    .unwrap();
    let script = std::fs::read_to_string(format!("{demo}/scripts/corral-demo.sh")).unwrap();
    std::fs::write(
        copy.path().join("scripts/corral-demo.sh"),
        format!("{script}# changed\n"),
    )
    .unwrap();
    let bundle = copy.path().join("catalog.json");
    let dry = corral(
        config.path(),
        &["catalog", "import", bundle.to_str().unwrap(), "--dry-run"],
        "",
    );
    assert!(
        text(&dry.stdout).contains("scripts/corral-demo.sh: would be uploaded and staged"),
        "{}",
        text(&dry.stdout)
    );
    let import = corral(
        config.path(),
        &["catalog", "import", bundle.to_str().unwrap()],
        "",
    );
    assert!(import.status.success(), "{}", text(&import.stderr));
    assert!(
        text(&import.stdout).contains("scripts/corral-demo.sh: version 2 uploaded and staged"),
        "{}",
        text(&import.stdout)
    );
}
