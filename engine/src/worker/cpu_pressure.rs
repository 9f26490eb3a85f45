//! Whether this machine's CPU is what the steps wait for, read from the kernel's
//! pressure stall information (`/proc/pressure/cpu`, Linux 4.20 and later): its `some
//! total` counts the microseconds in which some runnable task waited for a CPU. Over the
//! last [`WINDOW`], a share above [`CONTENDED_PCT`] makes the pool claim with
//! [`Sharing::EqualSteps`], so a small job's steps are not slowed in proportion to a big
//! job's step count (see the queue's `fair.rs`); below it, and where the kernel gives no
//! such file, slots are shared as usual, so jobs whose steps wait on remote machines keep
//! every slot busy.
//!
//! The file's own `avg10` is a ten-second average: a big job that just started would fill
//! the machine for seconds before it rose, which is the whole life of a small create.
//!
//! The parsing and the decision are pure and tested by tables; the read is one small file
//! per claim.

use std::time::{Duration, Instant};

use crate::queue::Sharing;

/// Where the kernel reports CPU pressure.
const PRESSURE_FILE: &str = "/proc/pressure/cpu";

/// The share of wall time with some task waiting for a CPU from which the CPU counts as
/// contended. A 2-core machine running a 1,000-node create of short local steps reads
/// 80–95 %; idle, or running steps on remote machines, a few percent.
const CONTENDED_PCT: f64 = 50.0;

/// How far back the share is measured: short enough to follow a job that just started,
/// long enough not to flip with every step.
const WINDOW: Duration = Duration::from_millis(500);

/// The pool's reading of the CPU's pressure, kept between claims.
#[derive(Debug, Default)]
pub struct CpuPressure {
    reading: Reading,
}

#[derive(Debug, Default)]
struct Reading {
    /// The stall counter and when it was read, at the start of the current window.
    since: Option<(Instant, u64)>,
    /// The share of the last whole window, in percent.
    last_pct: Option<f64>,
}

impl CpuPressure {
    /// How the pool's next claim shares the slots: `floor` (the pool's settings) unless
    /// the CPU is contended now.
    pub fn sharing_now(&mut self, floor: Sharing) -> Sharing {
        let total = std::fs::read_to_string(PRESSURE_FILE)
            .ok()
            .as_deref()
            .and_then(some_total_us);
        let pct = self.reading.update(Instant::now(), total);
        sharing_for(floor, pct)
    }
}

impl Reading {
    /// Takes the counter read at `now`; returns the share of the last whole window.
    fn update(&mut self, now: Instant, total_us: Option<u64>) -> Option<f64> {
        let Some(total_us) = total_us else {
            *self = Self::default();
            return None;
        };
        match self.since {
            Some((at, before)) if now.duration_since(at) >= WINDOW => {
                let wall_us = now.duration_since(at).as_micros() as f64;
                let stalled_us = total_us.saturating_sub(before) as f64;
                self.last_pct = Some((100.0 * stalled_us / wall_us).min(100.0));
                self.since = Some((now, total_us));
            }
            Some(_) => {}
            None => self.since = Some((now, total_us)),
        }
        self.last_pct
    }
}

fn sharing_for(floor: Sharing, pct: Option<f64>) -> Sharing {
    match pct {
        Some(pct) if pct >= CONTENDED_PCT => Sharing::EqualSteps,
        _ => floor,
    }
}

/// `total` of the `some` line: `some avg10=29.93 avg60=63.12 avg300=67.81 total=1091091675`.
fn some_total_us(pressure: &str) -> Option<u64> {
    pressure
        .lines()
        .find_map(|line| line.strip_prefix("some "))?
        .split_whitespace()
        .find_map(|field| field.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stall_counter_is_read_from_the_some_line() {
        for (pressure, expected) in [
            (
                "some avg10=91.20 avg60=63.12 avg300=67.81 total=1091091675\n\
                 full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                Some(1_091_091_675),
            ),
            ("full avg10=99.00 avg60=0 avg300=0 total=5", None),
            ("some avg10=1 avg60=0 avg300=0 total=lots", None),
            ("some avg10=1 avg60=0 avg300=0", None),
            ("", None),
        ] {
            assert_eq!(some_total_us(pressure), expected, "{pressure:?}");
        }
    }

    #[test]
    fn contention_is_the_stalled_share_of_the_last_whole_window() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut reading = Reading::default();
        // (when, stall counter, share expected)
        for (ms, total_us, expected) in [
            (0, Some(1_000_000), None),
            (200, Some(1_150_000), None),
            // 400 ms stalled in 500 ms.
            (500, Some(1_400_000), Some(80.0)),
            // Within the next window: the last whole one still holds.
            (700, Some(1_400_000), Some(80.0)),
            // 50 ms in 600 ms.
            (1_100, Some(1_450_000), Some(50.0 / 6.0)),
            // Two CPUs can stall more than the wall clock: capped.
            (1_600, Some(2_950_000), Some(100.0)),
            // No file: nothing known, and the window starts again.
            (2_000, None, None),
            (2_100, Some(5_000_000), None),
        ] {
            let pct = reading.update(at(ms), total_us);
            match (pct, expected) {
                (Some(pct), Some(expected)) => {
                    assert!(
                        (pct - expected).abs() < 0.01,
                        "at {ms} ms: {pct} != {expected}"
                    )
                }
                (pct, expected) => assert_eq!(pct, expected, "at {ms} ms"),
            }
        }
    }

    #[test]
    fn contended_cpu_means_equal_steps() {
        for (floor, pct, expected) in [
            (Sharing::Slots, Some(91.0), Sharing::EqualSteps),
            (Sharing::Slots, Some(50.0), Sharing::EqualSteps),
            (Sharing::Slots, Some(49.9), Sharing::Slots),
            (Sharing::Slots, None, Sharing::Slots),
            (Sharing::EqualSteps, Some(2.0), Sharing::EqualSteps),
            (Sharing::EqualSteps, None, Sharing::EqualSteps),
        ] {
            assert_eq!(sharing_for(floor, pct), expected, "{floor:?} {pct:?}");
        }
    }
}
