//! The `corral` CLI as an API client, against a real `corral serve`: login saves a
//! 0600 token file, commands print tables or JSON, and errors say what to do. The
//! server's log is captured and must not contain the password or the token.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::test_server::{self, corral, login_as_admin, text, Served};

const CATALOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/lifecycle/catalog.json"
);

/// A server logging at debug level: whatever it logs about requests must still
/// hold no secret.
fn serve(data: &Path) -> Served {
    test_server::serve(data, 1, &[("RUST_LOG", "debug")])
}

#[test]
fn login_then_manage_the_catalog_and_clusters() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = serve(data.path());

    let wrong = test_server::login(config.path(), &server, "not the password", &[]);
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

    // Signed in by hand: what the login prints is checked too.
    let login = test_server::login(config.path(), &server, &server.password, &[]);
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
    login_as_admin(config.path(), &server);
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

/// The automators through the CLI: importing a catalog uploads the playbooks and
/// manifests of `files/` beside it; a chef-solo service is refused at dry-run, naming
/// service, action and automator; a failing playbook's task is named by `--wait` and
/// by `corral job show`.
#[test]
fn automators_from_the_cli() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = serve(data.path());
    login_as_admin(config.path(), &server);
    let bundle = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/automators/catalog.json"
    );
    let import = corral(config.path(), &["catalog", "import", bundle], "");
    let out = text(&import.stdout);
    assert!(import.status.success(), "{}{out}", text(&import.stderr));
    assert!(
        out.contains("files/broken.yml: version 1 uploaded and staged"),
        "{out}"
    );

    let legacy = corral(
        config.path(),
        &[
            "cluster",
            "create",
            "old",
            "--template",
            "legacy",
            "--size",
            "1",
            "--dry-run",
        ],
        "",
    );
    assert!(!legacy.status.success());
    assert!(
        text(&legacy.stderr).contains(
            "service legacy: action install uses automator chef-solo, which is not available \
             here: automators are shell, ansible, puppet"
        ),
        "{}",
        text(&legacy.stderr)
    );

    let broken = corral(
        config.path(),
        &[
            "cluster",
            "create",
            "broken",
            "--template",
            "broken",
            "--size",
            "1",
            "--wait",
        ],
        "",
    );
    let waited = text(&broken.stdout);
    assert!(!broken.status.success(), "{waited}");
    let named = "failed at Ansible task \"Check the impossible\"";
    let failed_line = waited
        .lines()
        .find(|line| line.starts_with("job ") && line.contains(" failed: "))
        .unwrap_or_else(|| panic!("no failure line in {waited}"));
    assert!(failed_line.contains(named), "{failed_line}");
    let job = failed_line.split_whitespace().nth(1).unwrap();
    let show = corral(config.path(), &["job", "show", job], "");
    let shown = text(&show.stdout);
    assert!(show.status.success(), "{}", text(&show.stderr));
    assert!(shown.contains(named), "{shown}");
}

/// `corral provider credentials set` takes a provider's credentials from standard
/// input or a file (never the command line), refuses a bad object without quoting it,
/// and shows back field names only; `corral provider test docker --create` makes a
/// container, reaches it over SSH and deletes it, printing each phase. The secret is
/// then looked for in the server's debug log, the catalog export and the database's
/// own files.
#[test]
fn provider_credentials_and_check_from_the_cli() {
    const SECRET: &str = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = serve(data.path());
    login_as_admin(config.path(), &server);

    let bad = corral(
        config.path(),
        &["provider", "credentials", "set", "docker", "--stdin"],
        &format!("{{\"token\": \"{SECRET}\""),
    );
    assert!(!bad.status.success());
    let refusal = text(&bad.stderr);
    assert!(refusal.contains("JSON object"), "{refusal}");
    assert!(!refusal.contains(SECRET), "{refusal}");
    let show = corral(
        config.path(),
        &["provider", "credentials", "show", "docker"],
        "",
    );
    assert!(
        text(&show.stdout).contains("no credentials set"),
        "a refused object stores nothing: {}",
        text(&show.stdout)
    );

    let set = corral(
        config.path(),
        &["provider", "credentials", "set", "docker", "--stdin"],
        &format!("{{\"token\": \"{SECRET}\"}}"),
    );
    assert!(set.status.success(), "{}", text(&set.stderr));
    let file = config.path().join("docker-credentials.json");
    std::fs::write(
        &file,
        format!("{{\"token\": \"{SECRET}\", \"region\": \"lab\"}}"),
    )
    .unwrap();
    let from_file = corral(
        config.path(),
        &[
            "provider",
            "credentials",
            "set",
            "docker",
            "--from-file",
            file.to_str().unwrap(),
        ],
        "",
    );
    assert!(from_file.status.success(), "{}", text(&from_file.stderr));
    let show = corral(
        config.path(),
        &["provider", "credentials", "show", "docker"],
        "",
    );
    let shown = text(&show.stdout);
    assert!(shown.contains("fields region, token (by admin)"), "{shown}");

    let test = corral(
        config.path(),
        &["provider", "test", "docker", "--create"],
        "",
    );
    let out = text(&test.stdout);
    assert!(test.status.success(), "{out}{}", text(&test.stderr));
    for phase in ["check", "create", "ssh", "delete"] {
        assert!(
            out.lines()
                .any(|line| line.starts_with(phase) && line.contains(" ok ")),
            "phase {phase} passed: {out}"
        );
    }
    assert!(out.contains("provider docker (docker) passed"), "{out}");
    // The check's container and network are gone.
    let cluster = out
        .split("made node ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|node| node.rsplit_once('-'))
        .map(|(cluster, _)| cluster.to_owned())
        .unwrap();
    for what in [&["ps", "-a"][..], &["network", "ls"][..]] {
        let listed = std::process::Command::new("docker")
            .args(what)
            .args(["-q", "--filter", &format!("label=corral.cluster={cluster}")])
            .output()
            .unwrap();
        assert!(listed.status.success());
        assert_eq!(text(&listed.stdout).trim(), "", "docker {what:?} left over");
    }

    let unknown = corral(config.path(), &["provider", "test", "nope"], "");
    assert!(!unknown.status.success());
    assert!(
        text(&unknown.stderr).contains("provider \"nope\" not found"),
        "{}",
        text(&unknown.stderr)
    );

    let export = corral(config.path(), &["catalog", "export"], "");
    assert!(export.status.success());
    assert!(!text(&export.stdout).contains(SECRET));
    let log = std::fs::read_to_string(data.path().join("server.log")).unwrap();
    assert!(log.contains("corral is serving"), "the log was captured");
    assert!(!log.contains(SECRET), "the credentials are in the log");
    for entry in std::fs::read_dir(data.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes
                    .windows(SECRET.len())
                    .any(|window| window == SECRET.as_bytes()),
                "{} holds the credentials in clear",
                path.display()
            );
        }
    }
}

/// `corral provider credentials ... --mine` reaches the caller's own credentials: the
/// demo's `docker` provider does not take users' own, so they are refused, saying which
/// setting its admins would set, while the tenant's (without `--mine`) are the admin's to
/// set.
#[test]
fn own_provider_credentials_from_the_cli() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = serve(data.path());
    login_as_admin(config.path(), &server);
    for args in [
        &[
            "provider",
            "credentials",
            "set",
            "docker",
            "--mine",
            "--stdin",
        ][..],
        &["provider", "credentials", "show", "docker", "--mine"][..],
        &["provider", "credentials", "delete", "docker", "--mine"][..],
    ] {
        let refused = corral(config.path(), args, r#"{"token": "mine"}"#);
        assert!(!refused.status.success(), "{args:?}");
        let said = text(&refused.stderr);
        assert!(
            said.contains("provider docker does not take users' own credentials")
                && said.contains("user_credentials"),
            "{args:?}: {said}"
        );
    }
    let tenants = corral(
        config.path(),
        &["provider", "credentials", "show", "docker"],
        "",
    );
    assert!(tenants.status.success(), "{}", text(&tenants.stderr));
}

/// `corral provider test aws1 --create` against moto (an EC2 emulator on 127.0.0.1):
/// credentials and endpoint checked, an instance made and deleted, SSH skipped because
/// the provider is set not to connect (moto's addresses are made up); the test runs on
/// the server's own (shared) workers. A dry run of a cluster on the provider says whose
/// credentials it would spend. With a wrong
/// secret the check exits non-zero saying the credentials were rejected, without
/// showing them.
#[test]
fn ec2_provider_test_against_moto() {
    use engine::testing::moto::{Moto, MOTO_AMI, MOTO_REGION};
    let moto = Moto::start(&[("INITIAL_NO_AUTH_ACTION_COUNT", "3")]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (key_id, secret) = runtime.block_on(moto.iam_user());
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    // The operator allows moto's endpoint: catalogs may not name any other.
    let server = test_server::serve(
        data.path(),
        1,
        &[
            ("RUST_LOG", "debug"),
            ("CORRAL_EC2_ENDPOINTS", &moto.endpoint),
        ],
    );
    login_as_admin(config.path(), &server);
    let bundle = serde_json::json!({
        "providers": [{"name": "aws1", "providertype": "ec2",
                       "provisioner": {"region": MOTO_REGION, "endpoint": moto.endpoint,
                                       "connect": "none"}}],
        "hardwaretypes": [{"name": "small", "providermap": {"aws1": {"flavor": "t3.micro"}}}],
        "imagetypes": [{"name": "debian", "providermap": {"aws1": {"image": MOTO_AMI,
                                                                    "sshuser": "admin"}}}],
        "services": [{"name": "base", "provisioner": {"actions": {}}}],
        "clustertemplates": [{"name": "bare",
                              "compatibility": {"services": ["base"],
                                                "hardwaretypes": ["small"],
                                                "imagetypes": ["debian"]},
                              "defaults": {"services": ["base"], "provider": "aws1",
                                           "hardwaretype": "small", "imagetype": "debian",
                                           "config": {}}}],
    });
    let bundle_file = config.path().join("aws.json");
    std::fs::write(&bundle_file, bundle.to_string()).unwrap();
    let import = corral(
        config.path(),
        &["catalog", "import", bundle_file.to_str().unwrap()],
        "",
    );
    assert!(import.status.success(), "{}", text(&import.stderr));

    let credentials =
        serde_json::json!({"access_key_id": key_id, "secret_access_key": secret}).to_string();
    let set = corral(
        config.path(),
        &["provider", "credentials", "set", "aws1", "--stdin"],
        &credentials,
    );
    assert!(set.status.success(), "{}", text(&set.stderr));
    let test = corral(config.path(), &["provider", "test", "aws1", "--create"], "");
    let out = text(&test.stdout);
    assert!(test.status.success(), "{out}{}", text(&test.stderr));
    for (phase, outcome) in [
        ("check", " ok "),
        ("create", " ok "),
        ("ssh", " skipped "),
        ("delete", " ok "),
    ] {
        assert!(
            out.lines()
                .any(|line| line.starts_with(phase) && line.contains(outcome)),
            "phase {phase}: {outcome}: {out}"
        );
    }
    assert!(out.contains("provider aws1 (ec2) passed"), "{out}");

    // A dry run says whose credentials its machines would be made with.
    let plan = corral(
        config.path(),
        &[
            "cluster",
            "create",
            "probe",
            "--template",
            "bare",
            "--size",
            "1",
            "--dry-run",
        ],
        "",
    );
    let out = text(&plan.stdout);
    assert!(plan.status.success(), "{out}{}", text(&plan.stderr));
    assert!(
        out.lines().next().is_some_and(|line| line
            == "credentials: new machines are made with the tenant's credentials for provider \
                aws1 (nobody else's own: a user's own pay only for what that user asks for)"),
        "{out}"
    );

    const WRONG: &str = "wrong-secret-5f4e3d2c1b0a";
    let wrong = serde_json::json!({"access_key_id": key_id, "secret_access_key": WRONG});
    let set = corral(
        config.path(),
        &["provider", "credentials", "set", "aws1", "--stdin"],
        &wrong.to_string(),
    );
    assert!(set.status.success(), "{}", text(&set.stderr));
    let rejected = corral(config.path(), &["provider", "test", "aws1", "--create"], "");
    let out = text(&rejected.stdout);
    assert!(!rejected.status.success(), "{out}");
    assert!(out.contains("rejected"), "{out}");
    assert!(out.contains("provider aws1 (ec2) FAILED"), "{out}");
    assert!(!out.contains(WRONG) && !out.contains(&secret), "{out}");
    let log = std::fs::read_to_string(data.path().join("server.log")).unwrap();
    assert!(
        !log.contains(WRONG) && !log.contains(&secret),
        "a secret is in the log"
    );
}
