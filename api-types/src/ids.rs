//! Ids of the queue's rows as their own types: a [`JobId`] names a `jobs` row and a
//! [`TaskRecordId`] a `tasks` row, so neither is passed where the other, a cluster id
//! or any other string is meant. Both are the UUIDs the queue gives its rows, as text.
//!
//! A [`TaskRecordId`] is not the planner's task number (`domain::plan::TaskId`, a job's
//! tasks counted from 0): that one says where a task sits in its plan, this one which
//! row holds it.
//!
//! On the wire each is the plain string it wraps (`#[serde(transparent)]`), so the JSON
//! is what it was when they were `String`s. With the `sqlx` feature each binds and reads
//! as a text column; with `openapi`, its schema is a string.

use std::borrow::Borrow;
use std::fmt;

/// A string newtype naming one kind of row: conversions from and to text, comparisons
/// with text (what tests and request paths hold), and the serde, sqlx and utoipa
/// implementations of the string it wraps.
macro_rules! row_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        // The quoted text, as the `String` it was: messages and logs that show an id
        // with `{:?}` read the same.
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl $name {
            /// The id as text: what is stored, shown and sent.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's text, without copying it.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                Self(text)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self(text.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        // Maps keyed by ids are looked up by text too. Sound because `Eq`, `Ord` and
        // `Hash` are the wrapped string's own.
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        // A text column reads as the id, and the id binds as text. Binding `as_str()`
        // instead lends the text to the query where binding the id by reference would
        // copy it (as binding a `&String` does).
        #[cfg(feature = "sqlx")]
        impl sqlx::Type<sqlx::Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <String as sqlx::Type<sqlx::Any>>::type_info()
            }

            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'q> sqlx::Encode<'q, sqlx::Any> for $name {
            fn encode(
                self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <String as sqlx::Encode<'q, sqlx::Any>>::encode(self.0, buf)
            }

            fn encode_by_ref(
                &self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <String as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&self.0, buf)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'r> sqlx::Decode<'r, sqlx::Any> for $name {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(Self(<String as sqlx::Decode<'r, sqlx::Any>>::decode(value)?))
            }
        }

        // A string, as the id is on the wire. A struct field of this type would be
        // documented as a reference to a component of this name: wire structs that keep
        // their document unchanged mark such a field `#[schema(value_type = String)]`.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                <String as utoipa::PartialSchema>::schema()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}
    };
}

row_id!(
    /// The id of a job: its `jobs` row, and the `job_id` of its tasks and events.
    JobId
);

row_id!(
    /// The id of one task row of a job (`tasks.id`, and the `task_id` of its attempts
    /// and events); not its number in the plan.
    TaskRecordId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_the_same_json_as_its_text() {
        let text = "0f8c2b1e-5d7a-4c3e-9b6f-2a1d0e9c8b7a";
        let as_string = serde_json::to_string(text).expect("a string serialises");
        let job = JobId::from(text);
        let task = TaskRecordId::from(text.to_owned());
        assert_eq!(
            serde_json::to_string(&job).expect("an id serialises"),
            as_string
        );
        assert_eq!(
            serde_json::to_string(&task).expect("an id serialises"),
            as_string
        );
        // Inside a struct, in an Option, and read back.
        let body = format!(r#"{{"job_id":{as_string},"task_id":{as_string},"none":null}}"#);
        #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Body {
            job_id: JobId,
            task_id: Option<TaskRecordId>,
            none: Option<TaskRecordId>,
        }
        let read: Body = serde_json::from_str(&body).expect("the body reads");
        assert_eq!(
            read,
            Body {
                job_id: job.clone(),
                task_id: Some(task.clone()),
                none: None,
            }
        );
        assert_eq!(
            serde_json::to_string(&read).expect("the body serialises"),
            body
        );
        // Anything else than a string is no id.
        assert!(serde_json::from_str::<JobId>("42").is_err());
    }

    #[test]
    fn an_id_shows_and_compares_as_its_text() {
        let job = JobId::from("j-1");
        assert_eq!(job.to_string(), "j-1");
        assert_eq!(format!("{job:?}"), format!("{:?}", "j-1"));
        assert_eq!(job.as_str(), "j-1");
        assert_eq!(AsRef::<str>::as_ref(&job), "j-1");
        let text = String::from("j-1");
        assert!(job == "j-1");
        assert!("j-1" == job);
        assert!(job == *"j-1");
        assert!(job == text);
        assert!(text == job);
        assert!(job != "j-2");
        assert_eq!(String::from(job.clone()), "j-1");
        assert_eq!(job.clone().into_string(), "j-1");
        // Looked up by text in a map keyed by ids.
        let states: std::collections::BTreeMap<JobId, u8> = [(job, 7)].into();
        assert_eq!(states.get("j-1"), Some(&7));
        assert_eq!(states.get("j-2"), None);
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn an_id_is_documented_as_a_string() {
        use utoipa::PartialSchema;
        let string = serde_json::to_value(String::schema()).expect("a schema serialises");
        assert_eq!(string, serde_json::json!({ "type": "string" }));
        assert_eq!(
            serde_json::to_value(JobId::schema()).expect("a schema serialises"),
            string
        );
        assert_eq!(
            serde_json::to_value(TaskRecordId::schema()).expect("a schema serialises"),
            string
        );
    }
}
