//! The `corral` CLI as an API client, against a real `corral serve`: login saves a
//! 0600 token file, commands print tables or JSON, and errors say what to do. The
//! server's log is captured and must not contain the password or the token.

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

const CORRAL: &str = env!("CARGO_BIN_EXE_corral");
const CATALOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/lifecycle/catalog.json"
);

struct Served {
    child: Child,
    url: String,
    password: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path) -> Served {
    let log = std::fs::File::create(data.join("server.log")).unwrap();
    let mut child = Command::new(CORRAL)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--worker-slots",
            "1",
            "--data-dir",
        ])
        .arg(data)
        // Debug level: whatever the server logs about requests must still hold no secret.
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut password = String::new();
    let mut url = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(rest) = line.split("with password ").nth(1) {
            password = rest.split_whitespace().next().unwrap().to_owned();
        }
        if let Some(rest) = line.strip_prefix("Corral is running at ") {
            url = rest.trim_end_matches('/').to_owned();
            break;
        }
    }
    Served {
        child,
        url,
        password,
    }
}

fn corral(config: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(CORRAL)
        .args(args)
        .env("CORRAL_CONFIG_DIR", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
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
        Some("not the password\n"),
    );
    assert!(!wrong.status.success());
    assert!(
        text(&wrong.stderr).contains("wrong username or password"),
        "{}",
        text(&wrong.stderr)
    );

    let before = corral(config.path(), &["cluster", "list"], None);
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
        Some(&format!("{}\n", server.password)),
    );
    assert!(login.status.success(), "{}", text(&login.stderr));
    let file = config.path().join("cli.toml");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is private");
    assert!(
        !text(&login.stdout).contains("corral_"),
        "the token is not printed"
    );

    let import = corral(config.path(), &["catalog", "import", CATALOG], None);
    assert!(import.status.success(), "{}", text(&import.stderr));
    assert!(
        text(&import.stdout).contains("imported"),
        "{}",
        text(&import.stdout)
    );

    let export = corral(config.path(), &["catalog", "export"], None);
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
        None,
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
        None,
    );
    assert!(!too_small.status.success());
    assert!(
        text(&too_small.stderr).contains("size"),
        "{}",
        text(&too_small.stderr)
    );

    let listed = corral(config.path(), &["cluster", "list", "--json"], None);
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

    let logout = corral(config.path(), &["logout"], None);
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
        Some(&format!("{}\n", server.password)),
    );
    assert!(login.status.success(), "{}", text(&login.stderr));
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../demo");

    // The first start staged these very scripts.
    let import = corral(
        config.path(),
        &["catalog", "import", &format!("{demo}/catalog.json")],
        None,
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
        None,
    );
    assert!(
        text(&dry.stdout).contains("scripts/corral-demo.sh: would be uploaded and staged"),
        "{}",
        text(&dry.stdout)
    );
    let import = corral(
        config.path(),
        &["catalog", "import", bundle.to_str().unwrap()],
        None,
    );
    assert!(import.status.success(), "{}", text(&import.stderr));
    assert!(
        text(&import.stdout).contains("scripts/corral-demo.sh: version 2 uploaded and staged"),
        "{}",
        text(&import.stdout)
    );
}
