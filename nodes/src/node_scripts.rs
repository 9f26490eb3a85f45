//! What Corral puts on a node: the layout of its folder under the node's home, and the
//! shell scripts that run there. Every path on the node is spelled here once, and every
//! script is a `.sh` file under `node_scripts/` (shellchecked by `scripts/test.sh`)
//! pulled in whole with `include_str!`. Values reach a script as its positional
//! arguments, each quoted by [`NodeScript::with_args`], never spliced into its text.
//!
//! Paths are relative to the node's home, where every step starts (the step driver
//! changes there first); [`in_home`] makes one a shell word that works from anywhere.

use domain::macros::shell_quote;

/// One folder per service of the node, where that service's steps run.
pub const SERVICES: &str = "corral/services";
/// The tenant's plugin resources, one folder per kind (`scripts`, `archives`, `files`).
pub const RESOURCES: &str = "corral/resources";
/// One file per copied resource (`<kind>__<name>`) holding its SHA-256, so that a
/// re-bootstrap copies only what changed.
pub const RESOURCE_SHAS: &str = "corral/resources/.sha";
/// The node's facts (cluster, node number, host, services) as JSON.
pub const NODE_FACTS: &str = "corral/node.json";
/// The node user's `authorized_keys`, where bootstrap keeps the users' keys (between
/// marker lines of its own). A `local` node's sshd reads it besides its root-owned one.
pub const AUTHORIZED_KEYS: &str = ".ssh/authorized_keys";

/// A script run on the node: its file under `node_scripts/` and its text.
#[derive(Debug)]
pub struct NodeScript {
    /// Only tests look the file up again.
    #[cfg(test)]
    pub file: &'static str,
    pub text: &'static str,
}

macro_rules! node_script {
    ($file:literal) => {
        NodeScript {
            #[cfg(test)]
            file: $file,
            text: include_str!(concat!("node_scripts/", $file)),
        }
    };
}

/// The bash loop that runs each step of an SSH session (see [`crate::ssh`]'s
/// `step_shell`). It takes no arguments: the session's login shell runs its text.
pub const STEP_DRIVER: NodeScript = node_script!("step_driver.sh");
/// Bootstrap's first step. Arguments: the message for a missing puppet (empty when no
/// service needs it), the facts' JSON, [`NODE_FACTS`], [`RESOURCE_SHAS`],
/// [`AUTHORIZED_KEYS`] (empty to leave keys alone), the users' key lines, then the
/// folders to make.
pub const BOOTSTRAP_PREPARE: NodeScript = node_script!("bootstrap_prepare.sh");
/// Installs one uploaded resource. Arguments: how (`plain`, `executable`, `unpack`), the
/// uploaded base64 file, the resource's file, its SHA-256 and its checksum file.
pub const INSTALL_RESOURCE: NodeScript = node_script!("install_resource.sh");
/// The `http` health check probe. Arguments: the URL and the timeout in seconds.
pub const HTTP_PROBE: NodeScript = node_script!("http_probe.sh");

/// Every script under `node_scripts/`.
#[cfg(test)]
pub const ALL: [&NodeScript; 4] = [
    &STEP_DRIVER,
    &BOOTSTRAP_PREPARE,
    &INSTALL_RESOURCE,
    &HTTP_PROBE,
];

impl NodeScript {
    /// The step text that runs the script with these arguments: a `set --` line, each
    /// argument quoted, then the script's text.
    pub fn with_args(&self, args: &[&str]) -> String {
        let mut text = String::from("set --");
        for arg in args {
            text.push(' ');
            text.push_str(&shell_quote(arg));
        }
        text.push('\n');
        text.push_str(self.text);
        text
    }
}

/// A service's folder, relative to the home.
pub fn service_dir(service: &str) -> String {
    format!("{SERVICES}/{service}")
}

/// A resource kind's folder, relative to the home.
pub fn resource_dir(kind: &str) -> String {
    format!("{RESOURCES}/{kind}")
}

/// Where a resource is on the node, relative to the home (archives are also unpacked
/// beside it, into `<name>.d`).
pub fn resource_file(kind: &str, name: &str) -> String {
    format!("{RESOURCES}/{kind}/{name}")
}

/// A path relative to the home as one shell word that names it from any folder.
pub fn in_home(relative: &str) -> String {
    format!("\"$HOME\"/{}", shell_quote(relative))
}

/// Compares a rendered step's text with its snapshot,
/// `node_scripts/snapshots/<name>.txt`: the exact text a node receives, reviewed in the
/// diff whenever a script or its arguments change. `CORRAL_UPDATE_SNAPSHOTS=1` writes the
/// snapshot instead. For the tests of this crate and of the engine, whose scripts'
/// snapshots live here too (every script a node receives is reviewed in one folder).
#[cfg(any(test, feature = "test-support"))]
pub fn assert_snapshot(name: &str, rendered: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/node_scripts/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("CORRAL_UPDATE_SNAPSHOTS").is_some_and(|value| value == "1") {
        let folder = path.parent().expect("a snapshot has a folder");
        std::fs::create_dir_all(folder).expect("the snapshots' folder can be made");
        std::fs::write(&path, rendered).expect("the snapshot can be written");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert_eq!(
        rendered,
        expected,
        "{} (CORRAL_UPDATE_SNAPSHOTS=1 rewrites it)",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// The `.sh` files under `dir`, relative to the crate, recursively.
    fn shell_files(crate_dir: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                shell_files(crate_dir, &path, found);
            } else if path.extension().is_some_and(|ext| ext == "sh") {
                found.push(path.strip_prefix(crate_dir).unwrap().to_owned());
            }
        }
    }

    #[test]
    fn every_shell_file_of_the_crate_is_an_included_node_script() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        shell_files(crate_dir, crate_dir, &mut found);
        found.sort();
        let mut included: Vec<PathBuf> = ALL
            .iter()
            .map(|script| Path::new("src/node_scripts").join(script.file))
            .collect();
        included.sort();
        assert_eq!(found, included, "a .sh file that no NodeScript includes");
        for script in ALL {
            let on_disk =
                std::fs::read_to_string(crate_dir.join("src/node_scripts").join(script.file))
                    .unwrap();
            assert_eq!(on_disk, script.text, "{}", script.file);
        }
    }

    #[test]
    fn arguments_are_quoted_words_before_the_text() {
        let rendered = HTTP_PROBE.with_args(&["http://x/?a=1&b='2'", "", "$HOME"]);
        let (line, text) = rendered.split_once('\n').unwrap();
        assert_eq!(line, r#"set -- 'http://x/?a=1&b='\''2'\''' '' '$HOME'"#);
        assert_eq!(text, HTTP_PROBE.text);
    }

    #[test]
    fn paths_are_spelled_under_the_home() {
        assert_eq!(service_dir("web"), "corral/services/web");
        assert_eq!(resource_dir("files"), "corral/resources/files");
        assert_eq!(
            resource_file("scripts", "a b"),
            "corral/resources/scripts/a b"
        );
        assert_eq!(
            in_home(&service_dir("it's")),
            r#""$HOME"/'corral/services/it'\''s'"#
        );
    }
}
