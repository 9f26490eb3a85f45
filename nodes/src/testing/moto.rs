//! moto, the emulator of AWS's APIs the `ec2` provider is tested against (PyPI
//! `moto[server]`, installed by `scripts/bootstrap.sh --tests` into Corral's venv): one
//! server per test on a free port of 127.0.0.1, killed when dropped.
//!
//! The addresses moto gives instances are made up: tests set the provider's `connect`
//! to `none` and never connect to one.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::provider::{xml_first_text, Params, QueryClient, EC2_VERSION, IAM_VERSION};

/// The region the tests use.
pub const MOTO_REGION: &str = "us-east-1";
/// An image id moto knows.
pub const MOTO_AMI: &str = "ami-12c6146b";

/// A moto server of this test.
pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    /// Starts moto with the extra environment `env` and waits until it listens.
    /// `INITIAL_NO_AUTH_ACTION_COUNT=3` makes it check signatures after the three calls
    /// of [`Moto::iam_user`].
    pub fn start(env: &[(&str, &str)]) -> Self {
        let venv = std::env::var_os("CORRAL_VENV").map_or_else(
            || {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                    .join(".cache/corral/venv")
            },
            PathBuf::from,
        );
        let server = venv.join("bin/moto_server");
        assert!(
            server.exists(),
            "moto_server was not found at {}: run scripts/bootstrap.sh --tests (it installs \
             moto, the ec2 provider's test double)",
            server.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .unwrap_or_else(|error| panic!("no free port for moto: {error}"));
        let child = Command::new(&server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("moto_server did not start: {error}"));
        let moto = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "moto did not listen on port {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// A client of `service` (`ec2` or `iam`) signing with `key` and `secret`.
    pub fn client(&self, service: &'static str, key: &str, secret: &str) -> QueryClient {
        let version = if service == "iam" {
            IAM_VERSION
        } else {
            EC2_VERSION
        };
        QueryClient::new(
            reqwest::Client::new(),
            &self.endpoint,
            MOTO_REGION,
            service,
            version,
            key,
            secret,
            None,
        )
    }

    /// What tests inspect EC2 with (moto without authentication takes any key).
    pub fn ec2(&self) -> QueryClient {
        self.client("ec2", "AKIDTESTING", "testing")
    }

    /// Makes an IAM user allowed everything and returns its access key id and secret:
    /// three unauthenticated calls, after which a moto started with
    /// `INITIAL_NO_AUTH_ACTION_COUNT=3` checks every signature.
    pub async fn iam_user(&self) -> (String, String) {
        let iam = self.client("iam", "AKIDBOOTSTRAP", "bootstrap");
        let call = |action: &'static str, params: Params| {
            let iam = &iam;
            async move {
                iam.call(action, params.as_slice())
                    .await
                    .unwrap_or_else(|error| panic!("moto IAM {action}: {error}"))
            }
        };
        call("CreateUser", Params::new().set("UserName", "corral")).await;
        let policy = r#"{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}"#;
        call(
            "PutUserPolicy",
            Params::new()
                .set("UserName", "corral")
                .set("PolicyName", "all")
                .set("PolicyDocument", policy),
        )
        .await;
        let key = call("CreateAccessKey", Params::new().set("UserName", "corral")).await;
        let field = |name: &str| {
            xml_first_text(&key, name)
                .unwrap_or_else(|| panic!("moto's CreateAccessKey answer has no {name}: {key}"))
        };
        (field("AccessKeyId"), field("SecretAccessKey"))
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
