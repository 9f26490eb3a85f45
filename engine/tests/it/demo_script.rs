//! The demo services' script (`demo/scripts/corral-demo.sh`) on its own: a service that
//! exited but is not reaped yet (a zombie, until whatever adopted it reaps it) counts as
//! stopped. Waiting on zombies made every demo stop take one to two seconds here, where
//! PID 1 reaps adopted children only now and then, so a paas delete took 25 s.

use std::path::Path;
use std::process::{Command, Stdio};

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../demo/scripts");

/// A process that stays a zombie as long as the test holds its parent: the parent
/// (python) waits for it to have exited without reaping it (`WNOWAIT`). Returns the parent (to kill at the end) and the pid.
fn zombie(dir: &Path) -> (std::process::Child, i32) {
    let mut parent = Command::new("python3")
        .arg("-c")
        .arg(
            "import os, signal, subprocess, sys, time\n\
             child = subprocess.Popen(['sleep', '100'], start_new_session=True)\n\
             os.kill(child.pid, signal.SIGKILL)\n\
             os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)\n\
             print(child.pid, flush=True)\n\
             time.sleep(60)\n",
        )
        .current_dir(dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(parent.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let pid: i32 = line.trim().parse().unwrap();
    // It is dead, but not gone: `kill -0` still finds it.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    assert!(stat.contains(") Z"), "{stat}");
    (parent, pid)
}

fn demo(home: &Path, service_dir: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new("sh")
        .arg(Path::new(SCRIPTS).join("corral-demo.sh"))
        .args(args)
        .current_dir(service_dir)
        .env("HOME", home)
        .env("CORRAL_HOST", "127.0.0.1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[test]
fn a_zombie_service_counts_as_stopped() {
    let home = tempfile::tempdir().unwrap();
    let scripts = home.path().join("corral/resources/scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::copy(
        Path::new(SCRIPTS).join("corral-demo.py"),
        scripts.join("corral-demo.py"),
    )
    .unwrap();
    let service = home.path().join("kv");
    std::fs::create_dir_all(&service).unwrap();
    let (mut parent, pid) = zombie(&service);
    std::fs::write(service.join("pid"), pid.to_string()).unwrap();

    // Start sees no running service behind the pid file, and starts one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let (started, output) = demo(home.path(), &service, &["start", "kv", "--port", &port]);
    assert!(started && output.contains("kv answering"), "{output}");
    assert!(!output.contains("already running"), "{output}");

    // And stop ends it (the new service, reaped by nobody here either).
    let (stopped, output) = demo(home.path(), &service, &["stop", "kv"]);
    assert!(stopped && output.contains("kv stopped"), "{output}");
    assert!(!service.join("pid").exists());
    parent.kill().unwrap();
    parent.wait().unwrap();
}
