//! Waiting for a new node to accept SSH, shared by providers.

use std::time::Duration;

use super::ProviderError;
use crate::ssh::{RunOptions, SessionPool, SshTarget};

/// Runs `true` on the node through `pool` until it succeeds, retrying only failures that
/// can heal (connection refused while the server starts). A changed host key or a refused
/// client key fails at once. On success the session stays open in the pool.
pub async fn wait_for_ssh(
    target: &SshTarget,
    pool: &SessionPool,
    timeout: Duration,
) -> Result<(), ProviderError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(10);
    loop {
        let options = RunOptions::with_timeout(timeout);
        let last_error = match pool.run(target, "true", options).await {
            Ok(outcome) if outcome.exit.success() => return Ok(()),
            Ok(outcome) => format!("`true` exited with code {}", outcome.exit.code()),
            Err(error) if error.is_transient() => error.to_string(),
            Err(source) => {
                return Err(ProviderError::Confirm {
                    node: target.node.clone(),
                    source: Box::new(source),
                })
            }
        };
        if tokio::time::Instant::now() + pause > deadline {
            return Err(ProviderError::ConfirmTimeout {
                node: target.node.clone(),
                seconds: timeout.as_secs(),
                last_error,
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}
