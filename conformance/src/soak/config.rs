//! What every soak session is given and what it finds: a leaf below both the soak run
//! (`soak/mod.rs`) and its sessions (`soak/session`), which name it and not each other.

use std::time::Duration;

use crate::scenario::Level;

/// Settings of every session.
#[derive(Clone, Debug)]
pub struct SoakConfig {
    /// The versions each hello offers.
    pub versions: Vec<String>,
    /// Largest frame accepted from the server.
    pub max_message_bytes: usize,
    /// Multiplies every deadline.
    pub timeout_scale: f64,
    /// How long a backend may take to start.
    pub start_timeout: Duration,
    /// The most one session may take, before `timeout_scale`.
    pub session_limit: Duration,
}

impl Default for SoakConfig {
    fn default() -> Self {
        SoakConfig {
            versions: crate::driver::default_versions(),
            max_message_bytes: crate::conn::DEFAULT_MAX_MESSAGE_BYTES,
            timeout_scale: 1.0,
            start_timeout: Duration::from_secs(15),
            session_limit: Duration::from_secs(90),
        }
    }
}

impl SoakConfig {
    pub(super) fn scaled(&self, d: Duration) -> Duration {
        d.mul_f64(self.timeout_scale.clamp(0.01, 1000.0))
    }
}

/// One finding of a soak session.
#[derive(Clone, Debug, PartialEq)]
pub struct SoakFinding {
    /// The check: an always-on check of the monitor, or `soak-…` for the soak's own (a stall, an
    /// error or close the client's state did not call for).
    pub check: String,
    /// The requirement broken, when the check names one.
    pub requirement: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The offending frame, redacted and cut short.
    pub frame: Option<String>,
    /// The connection, as numbered in the wire log.
    pub conn: u64,
    /// `must`: fails the soak; `should`: a warning.
    pub level: Level,
}
