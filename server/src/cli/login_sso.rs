//! `corral login --sso NAME`: sign the CLI in through the server's single sign-on
//! issuer, in a browser (RFC 8252's loopback redirect).
//!
//! The CLI listens on 127.0.0.1 on a port the system picks, and sends the browser to
//! the server's `/auth/sso/NAME/start` with that port, a random state and the
//! challenge of a PKCE verifier it keeps. After the issuer signed the user in, the
//! server sends the browser to `http://127.0.0.1:PORT/callback` with a one-time code;
//! the CLI checks the state, answers the browser, and trades the code with its
//! verifier for an API token at `/auth/sso/cli-token`. A process that sees the code
//! (the browser's history) cannot trade it without the verifier, which never leaves
//! this process.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use api_types::SsoCliTokenRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use engine::accounts::TokenSecret;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::login::{read_ca_cert, LoginArgs};
use super::remote::{Client, Credentials};

/// How long the CLI waits for the browser to come back.
const WAIT_FOR_BROWSER: Duration = Duration::from_secs(300);
/// The most of a request the listener reads (a request line with its code and state).
const MAX_REQUEST_BYTES: usize = 16 * 1024;

fn random() -> String {
    TokenSecret::generate()
        .expose()
        .trim_start_matches("corral_")
        .to_owned()
}

pub async fn login(args: &LoginArgs, issuer: &str) -> anyhow::Result<ExitCode> {
    let ca_cert = read_ca_cert(args)?;
    let client = Client::new(&args.server, None, ca_cert.as_deref())?;
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot listen on 127.0.0.1 for the browser to come back")?;
    let port = listener.local_addr()?.port();
    let state = random();
    let verifier = random();
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let server = args.server.trim_end_matches('/');
    let issuer_path: String = url::form_urlencoded::byte_serialize(issuer.as_bytes()).collect();
    let url = format!(
        "{server}/auth/sso/{issuer_path}/start?cli_port={port}&cli_state={state}&cli_challenge={challenge}"
    );
    println!("Open this address in your browser to sign in:\n  {url}");
    if !args.no_browser {
        // Best effort: without a desktop the printed address is the way.
        let _ = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    let code = tokio::time::timeout(WAIT_FOR_BROWSER, wait_for_code(&listener, &state))
        .await
        .context("no sign-in came back from the browser within 5 minutes")??;
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "cli".to_owned());
    let answer = client
        .sso_cli_token(&SsoCliTokenRequest {
            code,
            code_verifier: verifier,
            token_name: Some(format!("corral CLI on {host} (single sign-on)")),
        })
        .await?;
    let username = answer.username;
    let credentials = Credentials {
        server: server.to_owned(),
        username: username.clone(),
        token_id: answer.token_id,
        token: answer.token,
        ca_cert,
    };
    let path = credentials.save()?;
    println!(
        "Signed in to {} as {username} (token saved in {})",
        credentials.server,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Serves the loopback listener until a request carries our state and a code.
async fn wait_for_code(listener: &TcpListener, state: &str) -> anyhow::Result<String> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 2048];
        while !buffer.windows(4).any(|window| window == b"\r\n\r\n")
            && buffer.len() < MAX_REQUEST_BYTES
        {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(read) => buffer.extend_from_slice(&chunk[..read]),
            }
        }
        let head = String::from_utf8_lossy(&buffer);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default();
        let found = code_of(target, state);
        let (status, text) = match &found {
            Some(_) => (
                "200 OK",
                "Signed in: the corral command line has its token. You can close this tab.",
            ),
            None => (
                "400 Bad Request",
                "This is not the sign-in corral login --sso is waiting for.",
            ),
        };
        let body = format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>corral login</title></head>\
             <body><p id=\"cli-message\">{text}</p></body></html>"
        );
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
        if let Some(code) = found {
            return Ok(code);
        }
    }
}

/// The code of `/callback?code=...&state=...` when the state is ours.
fn code_of(target: &str, state: &str) -> Option<String> {
    let url = url::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != "/callback" {
        return None;
    }
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let value = |key: &str| {
        pairs
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.clone())
    };
    (value("state")? == state).then_some(())?;
    value("code").filter(|code| !code.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_state_gives_a_code() {
        assert_eq!(
            code_of("/callback?code=abc&state=s1", "s1").as_deref(),
            Some("abc")
        );
        assert_eq!(code_of("/callback?code=abc&state=s2", "s1"), None);
        assert_eq!(code_of("/other?code=abc&state=s1", "s1"), None);
        assert_eq!(code_of("/callback?state=s1", "s1"), None);
        assert_eq!(code_of("/favicon.ico", "s1"), None);
    }
}
