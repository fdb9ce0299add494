//! Process-wide cancellation of long computations.
//!
//! Generators, routing engines, channel-dependency checks, the bisection-bandwidth estimate
//! and the simulation engine poll [`is_requested`] in their long loops and stop with a
//! `Cancelled` error (never a panic) soon after [`request`] was called. The flag is one per
//! process, because the signal that sets it (Ctrl-C, SIGINT) is: a request cancels **every**
//! flitsim computation running in the process, on every thread. Whoever requested it calls
//! [`clear`] once the computations have returned, before starting new ones.
//!
//! The Python bindings set the flag when Ctrl-C arrives while they wait for a computation.
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// A computation stopped because [`request`] was called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub struct Cancelled;

/// Asks every running flitsim computation of the process to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Whether a cancellation was requested and not yet cleared.
#[inline]
pub fn is_requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Withdraws a request (after the cancelled computations returned).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// `Err(Cancelled)` when a cancellation was requested: `cancel::check()?` in a long loop.
#[inline]
pub fn check() -> Result<(), Cancelled> {
    if is_requested() {
        Err(Cancelled)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_check_clear() {
        // The flag is process-wide; this is the only test of this crate that sets it.
        assert_eq!(check(), Ok(()));
        request();
        assert!(is_requested());
        assert_eq!(check(), Err(Cancelled));
        clear();
        assert_eq!(check(), Ok(()));
    }
}
