//! The `corral` binary as a user runs it: errors, first start, user administration.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::test_server::{corral_alone, corral_to_its_end, CORRAL};

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A one-line error naming the problem, exit 1, and no panic.
fn assert_one_line_error(output: &Output, expected: &str) {
    let stderr = stderr_of(output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_database_urls_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let cases = [
        (
            "mysql://db/corral",
            "unsupported database URL scheme \"mysql\"",
        ),
        ("no-scheme-here", "invalid database URL"),
        ("postgres://corral@127.0.0.1:1/corral", "Connection refused"),
        (
            "postgres://postgres:hunter2@127.0.0.1:5432/corral_no_such_db",
            "does not exist",
        ),
    ];
    for (url, expected) in cases {
        let output = corral_to_its_end(["serve", "--data-dir", data, "--database-url", url]);
        assert_one_line_error(&output, expected);
        assert!(!stderr_of(&output).contains("hunter2"), "password leaked");
    }
}

#[test]
fn a_bad_config_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("corral.toml");
    std::fs::write(&file, "lisen = \"127.0.0.1:1\"\n").unwrap();
    let output = corral_alone(&["migrate", "--config", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("corral.toml") && stderr.contains("lisen"),
        "{stderr}"
    );
}

/// `corral serve` on a free port over `data`, as a user starts it (no flags but those).
fn start_server(data: &Path) -> served::Served {
    served::Options::serve(CORRAL, data)
        .start()
        .unwrap_or_else(|error| panic!("{error}"))
}

/// Every line the latest start printed up to and including the URL line (the
/// first-admin line, when there is one, comes first).
fn printed(server: &served::Served) -> Vec<String> {
    let mut lines = server.announced().to_vec();
    lines.extend(server.running_line().map(str::to_owned));
    lines
}

/// Kills the server; its log of that start (its standard error, and what it printed
/// once it ran).
fn stop(server: &mut served::Served) -> String {
    server.kill().unwrap();
    std::fs::read_to_string(server.log_path()).unwrap()
}

#[test]
fn first_start_prints_the_admin_login_and_loads_the_demo_once() {
    let dir = tempfile::tempdir().unwrap();

    let mut server = start_server(dir.path());
    let lines = printed(&server);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[1].starts_with(
            "Loaded the demo catalog (templates web-stack, kv-cluster, paas, kv-automated)"
        ),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("Corral is running at http://127.0.0.1:"),
        "{lines:?}"
    );
    let password = lines[0]
        .strip_prefix("First start: sign in as admin with password ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    assert_eq!(password.len(), 20);
    let logs = stop(&mut server);
    assert!(!logs.contains(&password), "password in logs:\n{logs}");

    // The demo catalog is loaded once: the tenant's catalog is no longer empty.
    server.start().unwrap_or_else(|error| panic!("{error}"));
    let lines = printed(&server);
    assert_eq!(lines.len(), 1, "a second start printed {lines:?}");
    stop(&mut server);
}

#[test]
fn admin_create_user_reads_the_password_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let create = |name: &str, password: &str| {
        let mut child = Command::new(CORRAL)
            .args([
                "admin",
                "create-user",
                name,
                "--role",
                "tenant-admin",
                "--password-stdin",
                "--data-dir",
                data,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
        child.wait_with_output().unwrap()
    };

    let output = create("alice", "a very long password");
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "created tenant-admin alice"
    );
    assert_one_line_error(&create("alice", "another long password"), "already exists");
    assert_one_line_error(&create("bob", "short"), "too short");
    assert_one_line_error(
        &create("Bob Smith", "a very long password"),
        "invalid username",
    );
}

/// Built by the scripts (which embed the bundle), the binary serves it, hashed and
/// precompressed, whatever directory it runs from; built bare, it says at start-up that
/// it has none, and its pages name no script it cannot serve.
#[tokio::test]
async fn the_binary_serves_the_bundle_it_was_built_with() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start_server(dir.path());
    let url = server
        .running_line()
        .and_then(|line| line.strip_prefix("Corral is running at "))
        .unwrap()
        .to_owned();
    let html = reqwest::get(format!("{url}login"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    if option_env!("CORRAL_EMBED_SITE_DIR").is_some() {
        let preload = "rel=\"modulepreload\" href=\"/";
        let start = html.find(preload).expect("a preloaded loader in the page") + preload.len();
        let loader = &html[start..start + html[start..].find('"').unwrap()];
        assert!(
            loader.starts_with("pkg/corral-") && loader.ends_with("/corral.js"),
            "{loader}"
        );
        let response = reqwest::Client::new()
            .get(format!("{url}{loader}"))
            .header("accept-encoding", "gzip, br")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{loader}");
        assert_eq!(response.headers()["content-encoding"], "br");
        assert!(response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable"));
        // The login route is lazy: its chunks are named by the split manifest beside
        // the main module, and served from the same directory. (The page usually
        // preloads them too, but Leptos leaves the links out of some renders.)
        let scripts = &loader[..loader.rfind('/').unwrap()];
        let manifest: serde_json::Value =
            reqwest::get(format!("{url}{scripts}/__wasm_split_manifest.json"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
        let (_, login_chunks) = manifest
            .as_object()
            .unwrap()
            .iter()
            .find(|(split, _)| split.contains("login_route"))
            .expect("the login route is a split point");
        let login_chunks = login_chunks.as_array().unwrap();
        assert!(!login_chunks.is_empty(), "{manifest}");
        for chunk in login_chunks {
            let chunk = format!("{url}{scripts}/{}.wasm", chunk.as_str().unwrap());
            let response = reqwest::get(&chunk).await.unwrap();
            assert_eq!(response.status(), 200, "{chunk}");
            assert_eq!(response.headers()["content-type"], "application/wasm");
        }
        for preloaded in html
            .split("rel=\"preload\" href=\"/")
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
        {
            assert!(
                preloaded.starts_with(scripts),
                "{preloaded} is not in {scripts}"
            );
        }
        stop(&mut server);
    } else {
        assert!(!html.contains("/pkg/"), "{html}");
        let logs = stop(&mut server);
        assert!(logs.contains("no browser bundle"), "{logs}");
    }
}

#[test]
fn completions_and_manual_pages_come_from_the_parser() {
    let bash = corral_alone(&["completions", "bash"]);
    assert!(bash.status.success(), "{}", stderr_of(&bash));
    let script = String::from_utf8(bash.stdout).unwrap();
    // Bash accepts the script and registers it for `corral`, subcommands included.
    let check = Command::new("bash")
        .args(["-c", "source /dev/stdin && complete -p corral"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut shell| {
            shell.stdin.take().unwrap().write_all(script.as_bytes())?;
            shell.wait_with_output()
        })
        .unwrap();
    assert!(check.status.success());
    assert!(String::from_utf8_lossy(&check.stdout).contains("corral"));
    assert!(script.contains("remove-nodes"), "subcommands complete too");
    let unknown = corral_alone(&["completions", "tcsh"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr_of(&unknown).contains("invalid value 'tcsh'"));

    let page = corral_alone(&["man"]);
    assert!(page.status.success(), "{}", stderr_of(&page));
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(page.contains(".TH corral 1"), "{page}");
    assert!(page.contains("completions"), "every command is listed");

    let dir = tempfile::tempdir().unwrap();
    let written = corral_alone(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    assert!(written.status.success(), "{}", stderr_of(&written));
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    for expected in ["corral.1", "corral-cluster.1", "corral-serve.1"] {
        assert!(pages.iter().any(|page| page == expected), "{pages:?}");
    }
}
