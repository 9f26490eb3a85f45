//! What a remote command produces: output chunks as they arrive, and how it ended.

/// Which remote stream a chunk came from.
pub use api_types::OutputStream;

/// Bytes exactly as the node sent them; a chunk boundary means nothing (lines may be split).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    pub stream: OutputStream,
    pub bytes: Vec<u8>,
}

/// How a remote command ended: the exit code its shell reported. As in any shell, a
/// command killed by a signal ends with 128 plus the signal's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitStatus(pub u32);

impl ExitStatus {
    pub fn success(self) -> bool {
        self.0 == 0
    }

    pub fn code(self) -> u32 {
        self.0
    }

    /// The signal an exit code above 128 stands for, when it is one whose number is the
    /// same on every Linux architecture this runs on. A script may also `exit 137` itself,
    /// so this is what the code usually means, not proof.
    pub fn signal_name(self) -> Option<&'static str> {
        let name = match self.0.checked_sub(128)? {
            1 => "HUP",
            2 => "INT",
            3 => "QUIT",
            4 => "ILL",
            6 => "ABRT",
            8 => "FPE",
            9 => "KILL",
            11 => "SEGV",
            13 => "PIPE",
            14 => "ALRM",
            15 => "TERM",
            _ => return None,
        };
        Some(name)
    }
}

/// The result of one command that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    pub exit: ExitStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_above_128_name_the_signal_they_usually_mean() {
        assert_eq!(ExitStatus(137).signal_name(), Some("KILL"));
        assert_eq!(ExitStatus(143).signal_name(), Some("TERM"));
        assert_eq!(ExitStatus(141).signal_name(), Some("PIPE"));
        // Numbers that differ between architectures (10 is SIGUSR1 on x86, SIGBUS on
        // MIPS) and plain failures name none.
        assert_eq!(ExitStatus(138).signal_name(), None);
        assert_eq!(ExitStatus(1).signal_name(), None);
        assert_eq!(ExitStatus(128).signal_name(), None);
        assert!(ExitStatus(0).success() && !ExitStatus(137).success());
    }
}
