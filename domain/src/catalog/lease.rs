//! Lease durations: Coopr writes them as milliseconds or as strings such as `"7d"`.
//!
//! No clock is involved; a duration is just a number of milliseconds, and 0 means
//! "unlimited".

use std::fmt;

use serde::{Serialize, Serializer};

/// A span of time in milliseconds; 0 means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DurationMs(pub u64);

impl DurationMs {
    pub const UNLIMITED: Self = Self(0);

    pub fn is_unlimited(self) -> bool {
        self.0 == 0
    }

    pub fn millis(self) -> u64 {
        self.0
    }
}

impl fmt::Display for DurationMs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// A lease value as written. Kept unparsed so that an unparseable one survives
/// import and is reported by validation along with every other problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease {
    Millis(i64),
    Text(String),
}

/// Why a lease value is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error("lease {0} is negative")]
    Negative(i64),
    #[error("lease {0:?} is not milliseconds or <number><s|m|h|d>")]
    Unparseable(String),
    #[error("lease {0:?} is too long")]
    Overflow(String),
}

impl Lease {
    pub fn from_millis(ms: u64) -> Self {
        Self::Millis(i64::try_from(ms).unwrap_or(i64::MAX))
    }

    /// The duration: numbers and digit strings are milliseconds; `<n>s`, `<n>m`,
    /// `<n>h`, `<n>d` are seconds, minutes, hours, days.
    pub fn duration(&self) -> Result<DurationMs, LeaseError> {
        match self {
            Lease::Millis(ms) => u64::try_from(*ms)
                .map(DurationMs)
                .map_err(|_| LeaseError::Negative(*ms)),
            Lease::Text(text) => parse_lease_text(text),
        }
    }
}

fn parse_lease_text(text: &str) -> Result<DurationMs, LeaseError> {
    let unparseable = || LeaseError::Unparseable(text.to_owned());
    let (digits, unit_ms) = match text.char_indices().last() {
        Some((at, 's')) => (&text[..at], 1_000),
        Some((at, 'm')) => (&text[..at], 60_000),
        Some((at, 'h')) => (&text[..at], 3_600_000),
        Some((at, 'd')) => (&text[..at], 86_400_000),
        _ => (text, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unparseable());
    }
    let count: u64 = digits
        .parse()
        .map_err(|_| LeaseError::Overflow(text.to_owned()))?;
    count
        .checked_mul(unit_ms)
        .map(DurationMs)
        .ok_or_else(|| LeaseError::Overflow(text.to_owned()))
}

impl Serialize for Lease {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Lease::Millis(ms) => serializer.serialize_i64(*ms),
            Lease::Text(text) => serializer.serialize_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_written_form() {
        let cases = [
            (Lease::Millis(0), 0),
            (Lease::Millis(1500), 1500),
            (Lease::Text("2500".into()), 2500),
            (Lease::Text("30s".into()), 30_000),
            (Lease::Text("5m".into()), 300_000),
            (Lease::Text("2h".into()), 7_200_000),
            (Lease::Text("7d".into()), 604_800_000),
        ];
        for (lease, ms) in cases {
            assert_eq!(lease.duration(), Ok(DurationMs(ms)), "{lease:?}");
        }
    }

    #[test]
    fn rejects_junk_and_negatives() {
        for junk in ["", "d", "7x", "1.5h", " 7d", "-3", "7dd"] {
            assert!(
                matches!(
                    Lease::Text(junk.into()).duration(),
                    Err(LeaseError::Unparseable(_))
                ),
                "{junk:?}"
            );
        }
        assert_eq!(Lease::Millis(-1).duration(), Err(LeaseError::Negative(-1)));
        assert!(matches!(
            Lease::Text("99999999999999999999d".into()).duration(),
            Err(LeaseError::Overflow(_))
        ));
    }
}
