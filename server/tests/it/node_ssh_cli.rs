//! `corral cluster ssh` against a real `corral serve` and a real local cluster: a
//! command's output, errors and exit status come back through the server's node
//! tunnel, and OpenSSH's own `ssh` and `scp` reach the node with the config that
//! `corral cluster ssh --config` prints (its key file private, its host key pinned),
//! also with the user's own key from `corral user keys add` instead of a certificate.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::test_server::{self, corral, login_as_admin, ok, text};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/web-stack.yaml");

/// OpenSSH's `program` with `config`, run with the CLI's config dir (its ProxyCommand
/// is `corral cluster ssh --proxy`, which reads the saved token from there).
fn openssh(program: &str, corral_config: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .arg("-F")
        .arg(config)
        .args(["-o", "BatchMode=yes"])
        .args(args)
        .env("CORRAL_CONFIG_DIR", corral_config)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn cluster_ssh_runs_commands_and_openssh_uses_the_printed_config() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = test_server::serve(data.path(), 4, &[]);
    let cfg = config.path();
    login_as_admin(cfg, &server);
    ok(&corral(cfg, &["apply", EXAMPLE], "y\n"));

    // A local node is a sshd on this machine: its hostname is this machine's.
    let hostname = ok(&corral(
        cfg,
        &[
            "cluster",
            "ssh",
            "shop",
            "1000",
            "--",
            "cat",
            "/etc/hostname",
        ],
        "",
    ));
    assert_eq!(hostname, std::fs::read_to_string("/etc/hostname").unwrap());

    // Standard error and the exit status come through as the command left them.
    let failed = corral(
        cfg,
        &[
            "cluster",
            "ssh",
            "shop",
            "1000",
            "--",
            "echo oops >&2; exit 3",
        ],
        "",
    );
    assert_eq!(failed.status.code(), Some(3), "{}", text(&failed.stderr));
    assert_eq!(text(&failed.stderr), "oops\n");
    // Standard input goes to the command.
    let echoed = ok(&corral(
        cfg,
        &["cluster", "ssh", "shop", "1001", "--", "tr", "a-z", "A-Z"],
        "typed in\n",
    ));
    assert_eq!(echoed, "TYPED IN\n");

    let missing = corral(cfg, &["cluster", "ssh", "shop", "4242", "--", "true"], "");
    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("node 4242 of cluster \"shop\" not found"),
        "{}",
        text(&missing.stderr)
    );

    // OpenSSH with the printed config: ssh and scp through the same tunnel.
    let printed = ok(&corral(cfg, &["cluster", "ssh", "--config", "shop"], ""));
    for alias in ["Host shop-1000", "Host shop-1001", "Host shop-1002"] {
        assert!(printed.contains(alias), "{printed}");
    }
    let ssh_config = cfg.join("ssh_config");
    std::fs::write(&ssh_config, &printed).unwrap();
    let key = cfg.join("ssh/shop/id_ed25519");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the key file is private");

    let ran = openssh("ssh", cfg, &ssh_config, &["shop-1000", "true"]);
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let file = cfg.join("hello.txt");
    std::fs::write(&file, "copied through corral\n").unwrap();
    let copied = openssh(
        "scp",
        cfg,
        &ssh_config,
        &[file.to_str().unwrap(), "shop-1000:hello.txt"],
    );
    assert!(copied.status.success(), "{}", text(&copied.stderr));
    let read = ok(&corral(
        cfg,
        &["cluster", "ssh", "shop", "1000", "--", "cat ~/hello.txt"],
        "",
    ));
    assert_eq!(read, "copied through corral\n");

    // A host key other than the pinned one is refused by OpenSSH too.
    let known_hosts = cfg.join("ssh/shop/known_hosts");
    let pinned = std::fs::read_to_string(&known_hosts).unwrap();
    let other = engine::ssh::ClientKeyPair::generate("not the node").unwrap();
    let swapped: String = pinned
        .lines()
        .map(|line| {
            let alias = line.split_whitespace().next().unwrap();
            format!("{alias} {}\n", other.public_openssh)
        })
        .collect();
    std::fs::write(&known_hosts, swapped).unwrap();
    let refused = openssh("ssh", cfg, &ssh_config, &["shop-1000", "true"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("HOST IDENTIFICATION HAS CHANGED"),
        "{}",
        text(&refused.stderr)
    );
}

/// The printed `--config` with the user's own key in place of Corral's certificate.
fn own_key_config(printed: &str, key: &Path) -> String {
    printed
        .lines()
        .filter(|line| !line.trim_start().starts_with("CertificateFile"))
        .map(|line| {
            if line.trim_start().starts_with("IdentityFile") {
                format!("  IdentityFile \"{}\"\n", key.display())
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

#[test]
fn your_own_key_reaches_your_nodes_with_plain_openssh_until_removed() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = test_server::serve(data.path(), 4, &[]);
    let cfg = config.path();
    login_as_admin(cfg, &server);
    let key = cfg.join("me_ed25519");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "me@laptop", "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let public = format!("{}.pub", key.display());

    // Kept before the cluster exists; its build puts the key on every node.
    let added = ok(&corral(cfg, &["user", "keys", "add", &public], ""));
    assert!(added.starts_with("added SHA256:"), "{added}");
    let fingerprint = added.split_whitespace().nth(1).unwrap().to_owned();
    let listed = ok(&corral(cfg, &["user", "keys", "list"], ""));
    assert!(
        listed.contains(&fingerprint) && listed.contains("me@laptop"),
        "{listed}"
    );
    let again = corral(cfg, &["user", "keys", "add", &public], "");
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("already exists"),
        "{}",
        text(&again.stderr)
    );
    ok(&corral(cfg, &["apply", EXAMPLE], "y\n"));

    let printed = ok(&corral(cfg, &["cluster", "ssh", "--config", "shop"], ""));
    let ssh_config = cfg.join("own_ssh_config");
    std::fs::write(&ssh_config, own_key_config(&printed, &key)).unwrap();
    let ran = openssh("ssh", cfg, &ssh_config, &["shop-1001", "id -un"]);
    assert!(ran.status.success(), "{}", text(&ran.stderr));

    // The preview of a sync names the key; removing it syncs the cluster, and then the
    // node refuses it.
    let plan = ok(&corral(cfg, &["cluster", "plan", "shop", "sync-keys"], ""));
    assert!(plan.contains("keys the nodes will have (1)"), "{plan}");
    assert!(plan.contains(&fingerprint), "{plan}");
    let removed = ok(&corral(cfg, &["user", "keys", "remove", &fingerprint], ""));
    let job = removed
        .lines()
        .find_map(|line| line.split("sync-keys job ").nth(1))
        .unwrap_or_else(|| panic!("no sync-keys job: {removed}"))
        .trim()
        .to_owned();
    ok(&corral(cfg, &["job", "watch", &job], ""));
    let refused = openssh("ssh", cfg, &ssh_config, &["shop-1001", "true"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("Permission denied"),
        "{}",
        text(&refused.stderr)
    );
    assert!(ok(&corral(cfg, &["user", "keys", "list"], "")).starts_with("no keys"));
}
