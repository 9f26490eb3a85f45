//! Every state and role as an enum. Each (de)serialises to the word the database stores
//! and the API has always shown (`"tenant-admin"`, `"succeeded"`), so the words live
//! here once and nothing else compares strings.

use std::fmt;

/// A word that names no value of the enum it was read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?}")]
pub struct UnknownValue {
    /// What was being read, e.g. `job state`.
    pub what: &'static str,
    pub value: String,
}

/// A state or kind whose values are words, for code generic over them (a badge that
/// shows any state).
pub trait Word: Copy + fmt::Display {
    fn word(self) -> &'static str;
}

/// `ALL`, `as_str` and `FromStr` of the enum `$name` whose values are named by the
/// `$text`s (an unknown name is an [`UnknownValue`] of `$what`): what `word_enum` and
/// the audit actions share, so a name is parsed back exactly as it is written.
macro_rules! named_values {
    ($name:ident, $what:literal { $($variant:ident => $text:literal),* }) => {
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The name the value is written as: stored, shown, and (de)serialised.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),* }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::states::UnknownValue;

            fn from_str(raw: &str) -> Result<Self, $crate::states::UnknownValue> {
                match raw {
                    $($text => Ok($name::$variant),)*
                    other => Err($crate::states::UnknownValue {
                        what: $what,
                        value: other.to_owned(),
                    }),
                }
            }
        }
    };
}
// For `word_enum` and the audit actions.
pub(crate) use named_values;

/// An enum whose values are words: `as_str`, `FromStr`, `Display`, serde (the same
/// words) and, with the `openapi` feature, a schema listing them.
macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        // Every word is its variant's name in kebab-case (a test checks that `as_str`
        // agrees); a per-variant `rename = $text` would be lost on the OpenAPI schema,
        // whose derive cannot read literals passed through this macro.
        #[serde(rename_all = "kebab-case")]
        pub enum $name { $($(#[$vmeta])* $variant),* }

        $crate::states::named_values!($name, $what { $($variant => $text),* });

        // A state column reads as its enum (the store's rows derive `sqlx::FromRow`); a
        // word no value names is a decode error of that column.
        #[cfg(feature = "sqlx")]
        impl sqlx::Type<sqlx::Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <&str as sqlx::Type<sqlx::Any>>::type_info()
            }

            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <&str as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'r> sqlx::Decode<'r, sqlx::Any> for $name {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(<&str as sqlx::Decode<'r, sqlx::Any>>::decode(value)?.parse()?)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Word for $name {
            fn word(self) -> &'static str {
                self.as_str()
            }
        }
    };
}
// Also for the other modules' word enums (hooks).
pub(crate) use word_enum;

word_enum!(
    /// What a user may do. Superadmins span tenants; the others act inside their own.
    Role, "role" {
        Superadmin => "superadmin",
        TenantAdmin => "tenant-admin",
        User => "user",
    }
);

impl Role {
    /// Tenant admins and superadmins: they edit the catalog and manage users.
    pub fn is_admin(self) -> bool {
        matches!(self, Role::Superadmin | Role::TenantAdmin)
    }
}

word_enum!(
    /// What an API token may do.
    #[derive(Default)]
    TokenScope, "token scope" {
        /// Everything its user may do.
        #[default]
        Full => "full",
        /// Reads only: any request that would change something is refused.
        ReadOnly => "read-only",
    }
);

word_enum!(
    /// Where a cluster is in its life (in the order the overview lists them).
    ClusterState, "cluster state" {
        Active => "active",
        /// A create or grow waits for an approval (nothing is made meanwhile).
        AwaitingApproval => "awaiting-approval",
        Creating => "creating",
        Updating => "updating",
        Deleting => "deleting",
        Failed => "failed",
        Deleted => "deleted",
    }
);

impl ClusterState {
    /// A job is changing the cluster.
    pub fn is_busy(self) -> bool {
        matches!(
            self,
            ClusterState::Creating | ClusterState::Updating | ClusterState::Deleting
        )
    }

    /// Not yet deleted: the cluster counts toward quotas and holds its name.
    pub fn is_live(self) -> bool {
        self != ClusterState::Deleted
    }
}

word_enum!(
    /// The warnings of a cluster's coming lease end sent so far (`lease.expiring`
    /// events): a day before, then an hour before. Cleared when the lease is extended.
    LeaseWarning, "lease warning" {
        Day => "day",
        Hour => "hour",
    }
);

word_enum!(
    /// What a service's last health check found (Coopr's "monitor").
    #[derive(Default)]
    ServiceHealth, "service health" {
        /// The check passed.
        Up => "up",
        /// The check failed, or the node could not be reached.
        Down => "down",
        /// Not checked yet, no check declared, or the cluster is changing.
        #[default]
        Unknown => "unknown",
    }
);

word_enum!(
    /// Where a node is: made by its provider, confirmed reachable, bootstrapped; or its
    /// machine stopped (kept) because the cluster's lease ended, until the lease is
    /// extended (started again) or its grace is over (deleted).
    NodeState, "node state" {
        Created => "created",
        Confirmed => "confirmed",
        Ready => "ready",
        Stopped => "stopped",
    }
);

word_enum!(
    /// What a node's provider says of its machine (`corral cluster show`'s "machine").
    NodePresence, "node presence" {
        /// The machine is there and running.
        Present => "present",
        /// The machine is gone or stopped for good (container removed or exited,
        /// instance terminated, the node's sshd dead).
        Gone => "gone",
        /// The provider cannot tell (it failed to answer, or cannot ask).
        Unknown => "unknown",
    }
);

word_enum!(
    /// Where a job is in its life.
    JobState, "job state" {
        Queued => "queued",
        Running => "running",
        Failed => "failed",
        Succeeded => "succeeded",
        Cancelling => "cancelling",
        Cancelled => "cancelled",
    }
);

word_enum!(
    /// Where a rollout of a template's new catalog revision is.
    RolloutState, "rollout state" {
        /// Upgrading its clusters, at most `max_parallel` at a time.
        Running => "running",
        /// A cluster failed: no other starts; the upgrades already running finish.
        Stopping => "stopping",
        /// Every cluster not pinned is upgraded.
        Succeeded => "succeeded",
        /// A cluster's upgrade failed or its health checks turned red; the clusters
        /// after it were left untouched.
        Stopped => "stopped",
    }
);

impl RolloutState {
    /// Whether the rollout still has work to do.
    pub fn is_active(self) -> bool {
        matches!(self, RolloutState::Running | RolloutState::Stopping)
    }
}

word_enum!(
    /// Where one cluster of a rollout is.
    RolloutClusterState, "rollout cluster state" {
        /// Waits for its turn.
        Pending => "pending",
        /// Pinned by its owner: listed and passed over.
        SkippedPinned => "skipped-pinned",
        /// Its upgrade job runs, or its health checks are awaited after it.
        Running => "running",
        /// Upgraded, and its health checks are not red.
        Succeeded => "succeeded",
        /// Its upgrade job failed, or its health checks turned red after it.
        Failed => "failed",
        /// The rollout stopped before this cluster's turn: nothing was done to it.
        Untouched => "untouched",
    }
);

impl JobState {
    /// Whether the job's tasks may still be claimed.
    pub fn is_active(self) -> bool {
        matches!(self, JobState::Queued | JobState::Running)
    }

    /// The job will not change any more (unless retried).
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled
        )
    }
}

word_enum!(
    /// Where a task is in its life. `pending` waits on prerequisites (or on a stopped
    /// job); `ready` may be claimed.
    TaskState, "task state" {
        Pending => "pending",
        Ready => "ready",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Cancelled => "cancelled",
        Skipped => "skipped",
    }
);

impl TaskState {
    /// The task ran to an end (or will never run).
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            TaskState::Succeeded | TaskState::Failed | TaskState::Cancelled | TaskState::Skipped
        )
    }
}

word_enum!(
    /// Whether an `ssh-pool` host is lent to a node.
    PoolHostState, "pool host state" {
        Free => "free",
        CheckedOut => "checked-out",
    }
);

word_enum!(
    /// What a job event records.
    EventKind, "event kind" {
        /// A chunk of a step's output.
        Output => "output",
        /// A task changed state (see [`crate::jobs::TaskStateChange`]).
        State => "state",
    }
);

word_enum!(
    /// Which of a step's outputs a chunk came from.
    OutputStream, "output stream" {
        Stdout => "stdout",
        Stderr => "stderr",
        /// A line of Corral's own about the step, not the node's: what it waits for
        /// (an image being built) or did differently (a node adopted). Clients that
        /// show only progress still show these.
        Notice => "notice",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_text_and_json() {
        for state in JobState::ALL {
            assert_eq!(state.as_str().parse::<JobState>(), Ok(*state));
            let json = serde_json::to_string(state).expect("serialises");
            assert_eq!(json, format!("\"{state}\""));
            assert_eq!(serde_json::from_str::<JobState>(&json).ok(), Some(*state));
        }
        assert_eq!(
            serde_json::to_string(&Role::TenantAdmin).expect("serialises"),
            "\"tenant-admin\""
        );
        assert_eq!(
            serde_json::to_string(&TokenScope::ReadOnly).expect("serialises"),
            "\"read-only\""
        );
    }

    /// serde's words (kebab-case names) are `as_str`'s, for every value of every enum.
    #[test]
    fn serde_and_as_str_agree_everywhere() {
        fn check<T: serde::Serialize + Copy + std::fmt::Display>(values: &[T]) {
            for value in values {
                let json = serde_json::to_value(value).expect("serialises");
                assert_eq!(json, serde_json::Value::from(value.to_string()));
            }
        }
        check(Role::ALL);
        check(TokenScope::ALL);
        check(ClusterState::ALL);
        check(LeaseWarning::ALL);
        check(NodeState::ALL);
        check(NodePresence::ALL);
        check(JobState::ALL);
        check(RolloutState::ALL);
        check(RolloutClusterState::ALL);
        check(TaskState::ALL);
        check(PoolHostState::ALL);
        check(EventKind::ALL);
        check(OutputStream::ALL);
    }

    #[test]
    fn an_unknown_word_names_what_was_read() {
        let error = "sleeping".parse::<ClusterState>().expect_err("not a state");
        assert_eq!(error.to_string(), "unknown cluster state \"sleeping\"");
        assert!(serde_json::from_str::<TaskState>("\"done\"").is_err());
    }

    #[test]
    fn finished_states() {
        assert!(JobState::Cancelled.is_finished());
        assert!(!JobState::Cancelling.is_finished());
        assert!(TaskState::Skipped.is_finished());
        assert!(!TaskState::Ready.is_finished());
        assert!(ClusterState::Deleting.is_busy());
        assert!(!ClusterState::Deleted.is_live());
    }
}
