//! HTTPS end to end with a private certificate authority made up for each test:
//! `corral serve --tls-cert --tls-key` answers curl and the CLI (`--ca-cert`), marks
//! its session cookie Secure, tells browsers to keep to HTTPS (HSTS), and takes a
//! renewed certificate on SIGHUP without dropping the old one when the new files are
//! bad.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::support::test_server::{self, corral, corral_to_its_end, text, Served};

/// A certificate authority and a server certificate it issued for 127.0.0.1, as PEM
/// files in `dir` named `<name>-ca.pem`, `<name>-cert.pem` and `<name>-key.pem`.
struct Authority {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn authority(dir: &Path, name: &str) -> Authority {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("Corral test CA {name}"));
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&server_key, &issuer)
        .unwrap();
    let authority = Authority {
        ca: dir.join(format!("{name}-ca.pem")),
        cert: dir.join(format!("{name}-cert.pem")),
        key: dir.join(format!("{name}-key.pem")),
    };
    std::fs::write(&authority.ca, ca_cert.pem()).unwrap();
    std::fs::write(&authority.cert, server_cert.pem()).unwrap();
    std::fs::write(&authority.key, server_key.serialize_pem()).unwrap();
    authority
}

fn serve_tls(data: &Path, cert: &Path, key: &Path) -> Served {
    test_server::serve(
        data,
        1,
        &[
            ("CORRAL_TLS_CERT", cert.to_str().unwrap()),
            ("CORRAL_TLS_KEY", key.to_str().unwrap()),
        ],
    )
}

/// curl's exit code fetching `/healthz` trusting only `ca` (0: it worked; 60: the
/// certificate was not trusted).
fn curl_with(ca: &Path, url: &str) -> Option<i32> {
    Command::new("curl")
        .args(["--silent", "--fail", "--output", "/dev/null", "--cacert"])
        .arg(ca)
        .arg(format!("{url}/healthz"))
        .status()
        .unwrap()
        .code()
}

#[test]
fn curl_and_the_cli_reach_an_https_server_through_its_private_ca() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let first = authority(dir.path(), "first");
    let server = serve_tls(data.path(), &first.cert, &first.key);
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );

    assert_eq!(curl_with(&first.ca, &server.url), Some(0));
    let other = authority(dir.path(), "other");
    assert_eq!(
        curl_with(&other.ca, &server.url),
        Some(60),
        "an unknown CA is refused"
    );

    let login =
        |extra: &[&str]| test_server::login(config.path(), &server, &server.password, extra);
    let untrusted = login(&[]);
    assert!(!untrusted.status.success());
    let refusal = text(&untrusted.stderr);
    assert!(
        refusal.contains("certificate") && refusal.contains("--ca-cert"),
        "{refusal}"
    );
    let missing = login(&["--ca-cert", "/nonexistent/ca.pem"]);
    assert!(text(&missing.stderr).contains("cannot read the CA certificate /nonexistent/ca.pem"));
    let not_pem = login(&[
        "--ca-cert",
        dir.path().join("first-key.pem").to_str().unwrap(),
    ]);
    assert!(!not_pem.status.success(), "a key is not a CA certificate");

    let signed_in = login(&["--ca-cert", first.ca.to_str().unwrap()]);
    assert!(signed_in.status.success(), "{}", text(&signed_in.stderr));
    // Later commands trust the same CA without being told again.
    let listed = corral(config.path(), &["cluster", "list"], "");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
}

#[tokio::test]
async fn sessions_over_https_get_secure_cookies() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = authority(dir.path(), "first");
    let server = serve_tls(data.path(), &first.cert, &first.key);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&first.ca).unwrap()).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .unwrap();
    let response = client
        .post(format!("{}/api/v1/session", server.url))
        .json(&serde_json::json!({"username": "admin", "password": server.password}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let cookie = response.headers()["set-cookie"].to_str().unwrap();
    assert!(cookie.contains("Secure"), "{cookie}");
}

/// Without `Strict-Transport-Security` a browser that once used Corral over HTTPS still
/// follows a plain `http://` link or typed address to it, which a network attacker can
/// answer in its place. Every response over HTTPS carries it (pages, the API, errors,
/// the bundle); over plain HTTP, where it means nothing, none does.
#[tokio::test]
async fn https_responses_tell_browsers_to_keep_to_https_and_plain_http_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let tls_data = tempfile::tempdir().unwrap();
    let plain_data = tempfile::tempdir().unwrap();
    let first = authority(dir.path(), "first");
    let https = serve_tls(tls_data.path(), &first.cert, &first.key);
    let plain = test_server::serve(plain_data.path(), 1, &[]);
    assert!(plain.url.starts_with("http://"), "{}", plain.url);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&first.ca).unwrap()).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(ca)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let paths = [
        "/healthz",
        "/login",
        "/",
        "/api/v1/clusters",
        "/pkg/no-such-file",
    ];
    for path in paths {
        let response = client
            .get(format!("{}{path}", https.url))
            .send()
            .await
            .unwrap();
        assert_eq!(
            response
                .headers()
                .get("strict-transport-security")
                .map(|value| value.to_str().unwrap()),
            Some("max-age=31536000"),
            "{path} over HTTPS ({})",
            response.status()
        );
        let response = client
            .get(format!("{}{path}", plain.url))
            .send()
            .await
            .unwrap();
        assert!(
            response
                .headers()
                .get("strict-transport-security")
                .is_none(),
            "{path} over plain HTTP"
        );
    }
}

#[test]
fn sighup_reloads_the_certificate_and_a_bad_one_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = authority(dir.path(), "first");
    let second = authority(dir.path(), "second");
    // The server reads the files it was started with, which are renewed in place.
    let cert = dir.path().join("served-cert.pem");
    let key = dir.path().join("served-key.pem");
    std::fs::copy(&first.cert, &cert).unwrap();
    std::fs::copy(&first.key, &key).unwrap();
    let server = serve_tls(data.path(), &cert, &key);
    assert_eq!(curl_with(&first.ca, &server.url), Some(0));
    let hangup = || {
        let sent = Command::new("kill")
            .args(["-HUP", &server.pid().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };

    // A half-renewed pair (the new certificate, the old key) is refused: still first.
    std::fs::copy(&second.cert, &cert).unwrap();
    hangup();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(curl_with(&first.ca, &server.url), Some(0));

    std::fs::copy(&second.key, &key).unwrap();
    hangup();
    let deadline = Instant::now() + Duration::from_secs(10);
    while curl_with(&second.ca, &server.url) != Some(0) {
        assert!(
            Instant::now() < deadline,
            "the renewed certificate was not taken"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(curl_with(&first.ca, &server.url), Some(60));
    drop(server);
    let log = std::fs::read_to_string(data.path().join("server.log")).unwrap();
    assert!(log.contains("TLS certificate not reloaded"), "{log}");
    assert!(log.contains("TLS certificate reloaded"), "{log}");
}

#[test]
fn bad_tls_settings_stop_the_server_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = authority(dir.path(), "first");
    let data_dir = data.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let serve = ["serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir];
        corral_to_its_end([&serve[..], args].concat())
    };
    let missing = run(&[
        "--tls-cert",
        "/nonexistent/cert.pem",
        "--tls-key",
        first.key.to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = text(&missing.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot use the TLS certificate /nonexistent/cert.pem"),
        "{stderr}"
    );

    let swapped = run(&[
        "--tls-cert",
        first.key.to_str().unwrap(),
        "--tls-key",
        first.cert.to_str().unwrap(),
    ]);
    assert_eq!(swapped.status.code(), Some(1), "{}", text(&swapped.stderr));
    assert!(text(&swapped.stderr).contains("cannot use the TLS certificate"));

    let alone = run(&["--tls-cert", first.cert.to_str().unwrap()]);
    assert_eq!(
        alone.status.code(),
        Some(2),
        "clap refuses a certificate without its key"
    );
    assert!(
        text(&alone.stderr).contains("--tls-key"),
        "{}",
        text(&alone.stderr)
    );
    // Nothing was created: the database was never opened.
    assert!(std::fs::read_dir(data.path()).unwrap().next().is_none());
}
