//! Column types the derived row decoders (`#[derive(sqlx::FromRow)]`) read through
//! where the portable schema and the Rust type differ.
//!
//! Flags are integers (0 or 1) in both schemas: SQLite has no boolean type, and sqlx's
//! `Any` driver reads SQLite integers as integers, never as booleans. A field reads
//! one as `#[sqlx(try_from = "IntFlag")] field: bool`, and a port (`BIGINT`) as
//! `#[sqlx(try_from = "PortNumber")] port: u16`. States need nothing: they decode as
//! their enums.
//!
//! A value that does not fit fails in `decode`, where its error keeps its message (sqlx
//! reports a failed `try_from` conversion without it), and the store turns it into
//! [`super::StoreError::CorruptColumn`].

use sqlx::any::{AnyTypeInfo, AnyValueRef};
use sqlx::decode::Decode;
use sqlx::error::BoxDynError;
use sqlx::{Any, Type};

/// An integer column holding a flag: 0 is false, anything else true.
#[derive(Debug, Clone, Copy)]
pub struct IntFlag(i64);

impl From<IntFlag> for bool {
    fn from(flag: IntFlag) -> bool {
        flag.0 != 0
    }
}

impl Type<Any> for IntFlag {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        <i64 as Type<Any>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for IntFlag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        <i64 as Decode<'r, Any>>::decode(value).map(IntFlag)
    }
}

/// A port column: a `BIGINT` that must fit a TCP port.
#[derive(Debug, Clone, Copy)]
pub struct PortNumber(u16);

impl From<PortNumber> for u16 {
    fn from(port: PortNumber) -> u16 {
        port.0
    }
}

impl Type<Any> for PortNumber {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        <i64 as Type<Any>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for PortNumber {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        let number = <i64 as Decode<'r, Any>>::decode(value)?;
        let port = u16::try_from(number).map_err(|_| format!("port {number} is out of range"))?;
        Ok(PortNumber(port))
    }
}

/// `value`, a conversion of column `column`'s stored value, as a derived decoder reports
/// a failed one: the store turns it into [`super::StoreError::CorruptColumn`].
pub fn column_value<T, E>(column: &str, value: Result<T, E>) -> Result<T, sqlx::Error>
where
    E: std::error::Error + Send + Sync + 'static,
{
    value.map_err(|error| sqlx::Error::ColumnDecode {
        index: column.to_owned(),
        source: Box::new(error),
    })
}
