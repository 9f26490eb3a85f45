//! How many job event streams each user has open. A stream holds a connection, a task
//! and a feed for as long as its job runs, so one user (or one leaked token) may hold
//! only so many: past the limit a new stream is refused with 429, and the streams
//! already open go on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Streams one user may have open when the operator sets nothing: a person watching
/// a few jobs in a few tabs stays well under it.
pub const DEFAULT_STREAMS_PER_USER: usize = 16;

/// The open streams by user id, and the most one user may have.
#[derive(Clone)]
pub struct StreamLimit {
    max: usize,
    open: Arc<Mutex<HashMap<String, usize>>>,
}

impl Default for StreamLimit {
    fn default() -> Self {
        Self::new(DEFAULT_STREAMS_PER_USER)
    }
}

impl StreamLimit {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            open: Arc::default(),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        // A poisoned map still holds counts that are right: each change is one step.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more stream of `user_id`, held until the stream ends; none
    /// when the user has the most already.
    pub fn open(&self, user_id: &str) -> Option<OpenStream> {
        let mut counts = self.counts();
        let count = counts.entry(user_id.to_owned()).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(OpenStream {
            limit: self.clone(),
            user_id: user_id.to_owned(),
        })
    }
}

/// One open stream's place; given back when dropped (the stream ended, or its client
/// went away and the server dropped the response).
pub struct OpenStream {
    limit: StreamLimit,
    user_id: String,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        let mut counts = self.limit.counts();
        if let Some(count) = counts.get_mut(&self.user_id) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&self.user_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_gets_the_limit_and_a_place_comes_back_when_a_stream_ends() {
        let limit = StreamLimit::new(2);
        let first = limit.open("ann").unwrap();
        let _second = limit.open("ann").unwrap();
        assert!(limit.open("ann").is_none(), "a third stream of ann");
        let _bob = limit.open("bob").expect("bob has his own places");
        drop(first);
        let _again = limit.open("ann").expect("a place came back");
        assert!(limit.open("ann").is_none());
    }
}
