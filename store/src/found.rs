//! "Not found", said one way across the store: a lookup that found no row, or a
//! write by key that touched none, is [`StoreError::NotFound`] naming what was
//! looked for (`cluster "web"`, `user "7f…"`), which callers map to a 404.
//!
//! Accessors end their query with [`OrNotFound::or_not_found`] instead of each
//! building the error; the message is only formatted when the row is missing.

use sqlx::any::AnyQueryResult;

use crate::StoreError;

/// What a query found, or [`StoreError::NotFound`] naming what it looked for.
pub(crate) trait OrNotFound {
    /// What the caller keeps once the row is known to be there.
    type Found;

    /// `Ok` when the query found (or touched) its row, else `NotFound(what())`;
    /// `what` is the subject of the message "{what} not found".
    fn or_not_found(self, what: impl FnOnce() -> String) -> Result<Self::Found, StoreError>;
}

/// A row read with `fetch_optional`.
impl<T> OrNotFound for Option<T> {
    type Found = T;

    fn or_not_found(self, what: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.ok_or_else(|| StoreError::NotFound(what()))
    }
}

/// An `UPDATE` or `DELETE` of one row by its key: touching no row means there is none.
impl OrNotFound for AnyQueryResult {
    type Found = ();

    fn or_not_found(self, what: impl FnOnce() -> String) -> Result<(), StoreError> {
        if self.rows_affected() == 0 {
            return Err(StoreError::NotFound(what()));
        }
        Ok(())
    }
}
