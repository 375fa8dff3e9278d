//! The timer seam: whether tool-call deadlines are acted on, and when after a restart.

use super::list::{Fault, NoFault};

/// Faults of the deadlines; the defaults are the correct server.
pub(crate) trait TimerFaults: Send + Sync + std::fmt::Debug {
    /// Whether tool-call deadlines are acted on.
    fn arms_deadlines(&self) -> bool {
        true
    }

    /// The deadline (ms since the epoch) re-armed at load for a call whose stored one is
    /// `stored`; `expire_after_ms` is the call's own duration, when known.
    fn reloaded_deadline(&self, stored: i64, _expire_after_ms: Option<u64>) -> i64 {
        stored
    }
}

impl TimerFaults for NoFault {}

impl TimerFaults for Fault {
    fn arms_deadlines(&self) -> bool {
        *self != Fault::ExpiryIgnored
    }

    fn reloaded_deadline(&self, stored: i64, expire_after_ms: Option<u64>) -> i64 {
        match expire_after_ms {
            Some(ms) if *self == Fault::ExpiryResetOnRestart => {
                crate::util::now_ms().saturating_add(i64::try_from(ms).unwrap_or(i64::MAX))
            }
            _ => stored,
        }
    }
}
