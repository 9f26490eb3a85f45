//! Locking shared by the in-process maps and slots of this crate and the ones above it.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex` even when a holder panicked. Only for data a panicking holder cannot
/// leave half-changed (whole entries replaced, slots taken and put back); each caller
/// says why its data is such.
pub fn lock_unpoisoned<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
