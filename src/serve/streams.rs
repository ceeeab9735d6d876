//! The caps on open event streams: one for the whole service and one per token, so that
//! neither a crowd nor one runaway client can hold every connection and its memory.
//!
//! A stream takes a [`StreamPermit`] before it starts and gives it back when it ends, by
//! drop, whichever way it ends (the client left, shutdown, an error). A caller over a cap
//! gets 429 with `Retry-After`; anonymous readers share the global cap only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::error::ApiError;

/// How long a refused caller is told to wait, in seconds: streams end when clients leave,
/// so room comes back as fast as clients churn.
pub const RETRY_AFTER_SECONDS: u64 = 5;

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_token: HashMap<String, usize>,
}

/// The caps and what is open now.
#[derive(Debug)]
pub struct StreamLimits {
    max_total: usize,
    max_per_token: usize,
    open: Mutex<Open>,
}

impl StreamLimits {
    pub fn new(max_total: usize, max_per_token: usize) -> Arc<Self> {
        Arc::new(Self {
            max_total,
            max_per_token,
            open: Mutex::new(Open::default()),
        })
    }

    // Counters only: a poisoned lock still holds consistent numbers.
    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A permit for one more stream of `token` (its name; None when anonymous).
    pub fn try_open(self: &Arc<Self>, token: Option<&str>) -> Result<StreamPermit, ApiError> {
        let mut open = self.lock();
        if open.total >= self.max_total {
            return Err(ApiError::TooManyStreams {
                limit: self.max_total,
                scope: "the service",
            });
        }
        if let Some(name) = token {
            let mine = open.by_token.entry(name.to_owned()).or_default();
            if *mine >= self.max_per_token {
                return Err(ApiError::TooManyStreams {
                    limit: self.max_per_token,
                    scope: "this token",
                });
            }
            *mine += 1;
        }
        open.total += 1;
        Ok(StreamPermit {
            limits: self.clone(),
            token: token.map(str::to_owned),
        })
    }

    /// Streams open now.
    pub fn open(&self) -> usize {
        self.lock().total
    }
}

/// One open stream; dropping it makes room for the next.
#[derive(Debug)]
pub struct StreamPermit {
    limits: Arc<StreamLimits>,
    token: Option<String>,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut open = self.limits.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(name) = &self.token
            && let Some(n) = open.by_token.get_mut(name)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.by_token.remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_hold_and_permits_give_room_back() {
        let limits = StreamLimits::new(3, 2);
        let a1 = limits.try_open(Some("a")).unwrap();
        let _a2 = limits.try_open(Some("a")).unwrap();
        assert!(matches!(
            limits.try_open(Some("a")),
            Err(ApiError::TooManyStreams { limit: 2, .. })
        ));
        let _anon = limits.try_open(None).unwrap();
        assert!(matches!(
            limits.try_open(Some("b")),
            Err(ApiError::TooManyStreams { limit: 3, .. })
        ));
        drop(a1);
        assert_eq!(limits.open(), 2);
        let _b = limits.try_open(Some("b")).unwrap();
        assert!(limits.try_open(None).is_err());
    }
}
