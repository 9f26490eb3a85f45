//! What a node may use: the limits every command on a node runs under, and the cgroup
//! limits every docker node gets, so one node cannot take its host down.
//!
//! A hardware type's `memory_mb` and `cpus` are what a node asks for; the operator sets
//! what a node gets when it asks for nothing (or 0, which Coopr's catalogs write for
//! "unset"), the most any hardware type may ask, and a PIDs limit for every node (a
//! fork bomb in one node must not exhaust the host's process table). A hardware type
//! asking more than the most is refused when a cluster is previewed, before anything is
//! made, and again by the provider should a worker be configured lower.
//!
//! Pure decisions only: the engine's docker provider applies [`DockerLimits::applied`],
//! the previews call [`DockerLimits::check`].

use serde::{Deserialize, Serialize};

/// Resource limits for every command run on a node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLimits {
    /// `ulimit -v`, in KiB.
    #[serde(default)]
    pub max_virtual_memory_kib: Option<u64>,
    /// `nice -n`: 0 (normal) to 19 (lowest priority).
    #[serde(default)]
    pub nice: Option<u8>,
    /// The hardware type's memory (`memory_mb`): a cgroup limit where the provider can
    /// set one (`docker`).
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// The hardware type's CPUs (`cpus`, may be fractional) in thousandths: a CPU quota
    /// where the provider can set one (`docker`).
    #[serde(default)]
    pub cpu_millis: Option<u64>,
}

/// The operator's limits for docker nodes (`corral serve --docker-*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DockerLimits {
    /// Memory of a node whose hardware type names none, in MiB.
    pub default_memory_mb: u64,
    /// CPUs of a node whose hardware type names none, in thousandths.
    pub default_cpu_millis: u64,
    /// Processes (and threads) one node may have at once.
    pub pids: u64,
    /// The most memory a hardware type may ask for, in MiB.
    pub max_memory_mb: u64,
    /// The most CPUs a hardware type may ask for, in thousandths.
    pub max_cpu_millis: u64,
}

impl Default for DockerLimits {
    /// 1 GiB and one CPU by default, at most 8 GiB and 4 CPUs (the demo catalog's
    /// largest docker hardware type asks 4 GiB and 4 CPUs), 1,024 processes.
    fn default() -> Self {
        Self {
            default_memory_mb: 1024,
            default_cpu_millis: 1000,
            pids: 1024,
            max_memory_mb: 8192,
            max_cpu_millis: 4000,
        }
    }
}

/// What a container is created with (Docker's units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppliedLimits {
    pub memory_bytes: i64,
    pub nano_cpus: i64,
    pub pids: i64,
}

/// Docker refuses less memory than this (6 MiB); below it no node starts anyway.
const SMALLEST_MEMORY_MB: u64 = 6;
/// Docker's smallest CPU quota, 0.01 CPU.
const SMALLEST_CPU_MILLIS: u64 = 10;
/// A node needs its sshd, a shell and a command at least.
const SMALLEST_PIDS: u64 = 16;

impl DockerLimits {
    /// The operator's settings, checked: each at least what a node can run with, and
    /// the defaults within the maxima.
    pub fn new(
        default_memory_mb: u64,
        default_cpu_millis: u64,
        pids: u64,
        max_memory_mb: u64,
        max_cpu_millis: u64,
    ) -> Result<Self, String> {
        if default_memory_mb < SMALLEST_MEMORY_MB || max_memory_mb < SMALLEST_MEMORY_MB {
            return Err(format!(
                "docker node memory must be at least {SMALLEST_MEMORY_MB} MiB"
            ));
        }
        if default_cpu_millis < SMALLEST_CPU_MILLIS || max_cpu_millis < SMALLEST_CPU_MILLIS {
            return Err("docker node CPUs must be at least 0.01".to_owned());
        }
        if pids < SMALLEST_PIDS {
            return Err(format!(
                "the docker PIDs limit must be at least {SMALLEST_PIDS}"
            ));
        }
        if default_memory_mb > max_memory_mb {
            return Err(format!(
                "the default docker node memory ({default_memory_mb} MiB) is above the most \
                 a hardware type may ask ({max_memory_mb} MiB)"
            ));
        }
        if default_cpu_millis > max_cpu_millis {
            return Err(format!(
                "the default docker node CPUs ({}) are above the most a hardware type may \
                 ask ({})",
                cpus(default_cpu_millis),
                cpus(max_cpu_millis)
            ));
        }
        Ok(Self {
            default_memory_mb,
            default_cpu_millis,
            pids,
            max_memory_mb,
            max_cpu_millis,
        })
    }

    /// Refuses what `hardware` (a hardware type's name, for the message) asks above the
    /// maxima.
    pub fn check(&self, hardware: &str, asked: &ResourceLimits) -> Result<(), String> {
        let mut over = Vec::new();
        if let Some(memory) = asked.memory_mb.filter(|mb| *mb > self.max_memory_mb) {
            over.push(format!(
                "memory_mb {memory} (at most {})",
                self.max_memory_mb
            ));
        }
        if let Some(millis) = asked
            .cpu_millis
            .filter(|millis| *millis > self.max_cpu_millis)
        {
            over.push(format!(
                "cpus {} (at most {})",
                cpus(millis),
                cpus(self.max_cpu_millis)
            ));
        }
        if over.is_empty() {
            return Ok(());
        }
        Err(format!(
            "hardware type {hardware} asks for more than a docker node may have on this \
             server: {}; lower it in the hardware type's docker entry, or ask the operator \
             to raise the maximum (--docker-max-memory-mb, --docker-max-cpus)",
            over.join(", ")
        ))
    }

    /// What a node asking `asked` is created with: what it asks (within the maxima,
    /// see [`Self::check`]), the defaults for what it leaves unset or 0, and the PIDs
    /// limit always.
    pub fn applied(&self, asked: &ResourceLimits) -> AppliedLimits {
        let memory_mb = asked
            .memory_mb
            .filter(|mb| *mb > 0)
            .unwrap_or(self.default_memory_mb)
            .max(SMALLEST_MEMORY_MB);
        let cpu_millis = asked
            .cpu_millis
            .filter(|millis| *millis > 0)
            .unwrap_or(self.default_cpu_millis)
            .max(SMALLEST_CPU_MILLIS);
        let to_i64 = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        AppliedLimits {
            memory_bytes: to_i64(memory_mb.saturating_mul(1024 * 1024)),
            nano_cpus: to_i64(cpu_millis.saturating_mul(1_000_000)),
            pids: to_i64(self.pids),
        }
    }
}

/// Thousandths of a CPU as the catalog writes CPUs (`0.5`, `2`).
fn cpus(millis: u64) -> String {
    let text = format!("{:.3}", millis as f64 / 1000.0);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn asked(memory_mb: Option<u64>, cpu_millis: Option<u64>) -> ResourceLimits {
        ResourceLimits {
            memory_mb,
            cpu_millis,
            ..ResourceLimits::default()
        }
    }

    #[test]
    fn unset_or_zero_gets_the_default_and_pids_are_always_limited() {
        let limits = DockerLimits::default();
        const MIB: i64 = 1024 * 1024;
        for (memory, cpu, expected_memory, expected_nanos) in [
            (None, None, 1024 * MIB, 1_000_000_000),
            (Some(0), Some(0), 1024 * MIB, 1_000_000_000),
            (Some(256), Some(500), 256 * MIB, 500_000_000),
            (Some(1), Some(1), 6 * MIB, 10_000_000),
            (Some(8192), Some(4000), 8192 * MIB, 4_000_000_000),
        ] {
            let applied = limits.applied(&asked(memory, cpu));
            assert_eq!(
                applied,
                AppliedLimits {
                    memory_bytes: expected_memory,
                    nano_cpus: expected_nanos,
                    pids: 1024,
                },
                "{memory:?} {cpu:?}"
            );
        }
    }

    #[test]
    fn asking_above_the_maximum_is_refused_saying_what_and_the_most() {
        let limits = DockerLimits::default();
        for (memory, cpu, refused) in [
            (None, None, None),
            (Some(0), Some(0), None),
            (Some(8192), Some(4000), None),
            (Some(8193), None, Some("memory_mb 8193 (at most 8192)")),
            (None, Some(4500), Some("cpus 4.5 (at most 4)")),
            (
                Some(100_000),
                Some(64_000),
                Some("memory_mb 100000 (at most 8192), cpus 64 (at most 4)"),
            ),
        ] {
            let checked = limits.check("huge", &asked(memory, cpu));
            match refused {
                None => assert!(checked.is_ok(), "{checked:?}"),
                Some(what) => {
                    let message = checked.unwrap_err();
                    assert!(
                        message.contains("hardware type huge") && message.contains(what),
                        "{message}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_operators_settings_are_checked() {
        assert_eq!(
            DockerLimits::new(1024, 1000, 1024, 8192, 4000).unwrap(),
            DockerLimits::default()
        );
        for (settings, problem) in [
            ((0, 1000, 1024, 8192, 4000), "at least 6 MiB"),
            ((1024, 0, 1024, 8192, 4000), "at least 0.01"),
            (
                (1024, 1000, 0, 8192, 4000),
                "PIDs limit must be at least 16",
            ),
            ((9000, 1000, 1024, 8192, 4000), "above the most"),
            (
                (1024, 5000, 1024, 8192, 4000),
                "CPUs (5) are above the most",
            ),
        ] {
            let (memory, cpu, pids, max_memory, max_cpu) = settings;
            let error = DockerLimits::new(memory, cpu, pids, max_memory, max_cpu).unwrap_err();
            assert!(error.contains(problem), "{settings:?}: {error}");
        }
    }
}
