//! Sessions kept open per node and shared by all of its tasks, with global and per-host caps.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tracing::Instrument;

use super::{CommandOutcome, RunOptions, SshError, SshSession, SshTarget};
use crate::sync::lock_unpoisoned;

/// Limits for a [`SessionPool`].
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Handshakes in flight at once across all nodes; each costs both sides CPU, so a burst
    /// of hundreds of new nodes is admitted a slice at a time.
    pub max_concurrent_handshakes: usize,
    /// Channels (commands) open at once to one host address.
    pub max_channels_per_host: usize,
    /// Time allowed for TCP connect, key exchange and authentication together.
    pub handshake_timeout: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_concurrent_handshakes: 64,
            max_channels_per_host: 8,
            handshake_timeout: Duration::from_secs(20),
        }
    }
}

/// One node's slot: its live session, if any, and how many handshakes it has cost.
#[derive(Default)]
struct NodeSlot {
    session: tokio::sync::Mutex<Option<Arc<SshSession>>>,
    handshakes: AtomicU64,
}

/// Authenticated sessions keyed by node id, opened on first use and reused afterwards.
pub struct SessionPool {
    config: PoolConfig,
    handshake_permits: Semaphore,
    // The maps hold no invariants a panicking holder could break.
    nodes: Mutex<HashMap<String, Arc<NodeSlot>>>,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
    handshakes: AtomicU64,
}

impl std::fmt::Debug for SessionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionPool")
            .field("config", &self.config)
            .field("handshakes", &self.handshakes())
            .finish()
    }
}

impl SessionPool {
    pub fn new(config: PoolConfig) -> Self {
        Self {
            handshake_permits: Semaphore::new(config.max_concurrent_handshakes.max(1)),
            config,
            nodes: Mutex::new(HashMap::new()),
            hosts: Mutex::new(HashMap::new()),
            handshakes: AtomicU64::new(0),
        }
    }

    /// Handshakes performed by this pool since it was made, over all nodes.
    pub fn handshakes(&self) -> u64 {
        self.handshakes.load(Ordering::Relaxed)
    }

    /// Handshakes performed for one node; stays at 1 while its session is reused.
    pub fn handshakes_for(&self, node: &str) -> u64 {
        lock_unpoisoned(&self.nodes)
            .get(node)
            .map_or(0, |slot| slot.handshakes.load(Ordering::Relaxed))
    }

    /// Runs `command` on the node's session, connecting first if there is none or the
    /// previous one has closed. At most `max_channels_per_host` commands run at once per host.
    /// A session that turns out dead before the command started (the node's sshd restarted)
    /// is replaced once; a command that did start is never re-run.
    ///
    /// A session on which the node did not answer at all ([`SshError::Unresponsive`]) is
    /// forgotten, so the next command connects afresh; a node that stopped answering
    /// then fails that handshake, which gets no more than the command's timeout, rather
    /// than hanging on the old connection. (A command that merely timed out keeps the
    /// session: the node answered the timeout's kill.)
    pub async fn run(
        &self,
        target: &SshTarget,
        command: &str,
        options: RunOptions,
    ) -> Result<CommandOutcome, SshError> {
        let host = self.host_permits(&target.address());
        let _channel = host.acquire().await.map_err(|_| SshError::NoExitStatus {
            node: target.node.clone(),
        })?;
        let handshake = self.config.handshake_timeout.min(options.timeout);
        let mut session = self.session_within(target, handshake).await?;
        let mut outcome = session.run(command, options.clone()).await;
        if matches!(outcome, Err(SshError::ChannelOpen { .. })) {
            self.discard(&target.node, &session).await;
            session = self.session_within(target, handshake).await?;
            outcome = session.run(command, options).await;
        }
        if matches!(outcome, Err(SshError::Unresponsive { .. })) {
            self.discard(&target.node, &session).await;
        }
        outcome
    }

    /// The node's open session, connecting if needed; concurrent callers share one handshake.
    pub async fn session(&self, target: &SshTarget) -> Result<Arc<SshSession>, SshError> {
        self.session_within(target, self.config.handshake_timeout)
            .await
    }

    /// [`Self::session`], a new connection's handshake limited to `handshake_timeout`.
    async fn session_within(
        &self,
        target: &SshTarget,
        handshake_timeout: Duration,
    ) -> Result<Arc<SshSession>, SshError> {
        let slot = lock_unpoisoned(&self.nodes)
            .entry(target.node.clone())
            .or_default()
            .clone();
        let mut current = slot.session.lock().await;
        if let Some(session) = current.as_ref() {
            let same_target = session.target().host_key == target.host_key
                && session.target().address() == target.address();
            if !session.is_closed() && same_target {
                return Ok(session.clone());
            }
        }
        *current = None;
        let _permit =
            self.handshake_permits
                .acquire()
                .await
                .map_err(|_| SshError::NoExitStatus {
                    node: target.node.clone(),
                })?;
        slot.handshakes.fetch_add(1, Ordering::Relaxed);
        self.handshakes.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(node = %target.node, address = %target.address(), "ssh handshake");
        let started = std::time::Instant::now();
        // A span of its own, so a trace shows a task's time spent on the handshake.
        let span = tracing::info_span!(
            "ssh connect",
            otel.kind = "client",
            node = %target.node,
            server.address = %target.host,
            server.port = i64::from(target.port),
        );
        let connecting = SshSession::connect(target, handshake_timeout);
        let connected = connecting.instrument(span).await;
        super::record_handshake(connected.as_ref().ok().map(|_| started.elapsed()));
        let session = Arc::new(connected.inspect_err(|error| {
            tracing::warn!(node = %target.node, %error, "ssh connection failed");
        })?);
        *current = Some(session.clone());
        Ok(session)
    }

    /// Forgets `stale` as the node's session, unless another caller already replaced it.
    async fn discard(&self, node: &str, stale: &Arc<SshSession>) {
        let slot = lock_unpoisoned(&self.nodes).get(node).cloned();
        if let Some(slot) = slot {
            let mut current = slot.session.lock().await;
            if current
                .as_ref()
                .is_some_and(|session| Arc::ptr_eq(session, stale))
            {
                *current = None;
            }
        }
    }

    /// Closes and forgets the node's session (after the node is deleted), and the
    /// channel caps of hosts nothing uses any more, so a long-running server does not
    /// keep one for every address it ever reached.
    pub async fn close(&self, node: &str) {
        let slot = lock_unpoisoned(&self.nodes).remove(node);
        if let Some(slot) = slot {
            if let Some(session) = slot.session.lock().await.take() {
                session.disconnect().await;
            }
        }
        // A cap no command holds has all its permits: dropping it changes nothing, and
        // the next command to that host makes a new one. Clones are made under this
        // lock (host_permits), so none appears between the count and the removal.
        lock_unpoisoned(&self.hosts).retain(|_, permits| Arc::strong_count(permits) > 1);
    }

    /// Hosts whose channel cap the pool keeps (those commands ran on since their nodes
    /// were last closed).
    pub fn tracked_hosts(&self) -> usize {
        lock_unpoisoned(&self.hosts).len()
    }

    fn host_permits(&self, address: &str) -> Arc<Semaphore> {
        lock_unpoisoned(&self.hosts)
            .entry(address.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(self.config.max_channels_per_host.max(1))))
            .clone()
    }
}
