//! `corral cluster ssh` against a real `corral serve` and a real local cluster: a
//! command's output, errors and exit status come back through the server's node
//! tunnel, and OpenSSH's own `ssh` and `scp` reach the node with the config that
//! `corral cluster ssh --config` prints (its key file private, its host key pinned).

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

#[path = "support/served.rs"]
#[allow(dead_code)] // Shared with the other CLI tests, which use more of it.
mod served;

use served::{corral, login_as_admin, text};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/web-stack.yaml");

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "stdout: {}\nstderr: {}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

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
    let server = served::serve(data.path(), 4, &[]);
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
