//! What the connection, the session core and the outbox say to each other, below all of them: a
//! refused request ([`Refusal`]), what a connection negotiated ([`Negotiated`]), and why a commit
//! failed ([`EmitError`]).

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ErrorCode, ProtocolVersion, ReduceError};

use crate::store::StoreError;

/// Times a request is carried out again after another replica committed first.
pub(crate) const CONFLICT_RETRIES: usize = 8;

/// The pause before the `attempt`th retry (from 1) of a request another replica's commit beat: at
/// most 4 ms, doubling to at most 128 ms, with jitter so that two replicas retrying one session do
/// not meet again. A turn streaming on another replica commits every few milliseconds; without
/// the pause a starved CPU can lose every retry to it (under 0.6 s over `CONFLICT_RETRIES`).
pub(crate) async fn contention_pause(attempt: usize) {
    let ceiling = 2u64 << attempt.clamp(1, 6);
    let ms = rand::random_range(ceiling / 2..=ceiling);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

/// A request the server refuses: the error code and its one-sentence message.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub code: ErrorCode,
    pub message: String,
    /// Another replica committed first (or holds the run): nothing changed, and the request is
    /// carried out again on the newer state rather than refused (`replica.rs`).
    pub contention: bool,
}

impl Refusal {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Refusal { code, message: message.into(), contention: false }
    }
}

/// Why an emission failed; the state and the log are unchanged.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EmitError {
    #[error("the reducer refused an event: {0}")]
    Refused(#[from] ReduceError),
    #[error("{0} is not a state event")]
    NotAnEvent(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot serialize a frame: {0}")]
    Json(#[from] serde_json::Error),
    #[error("a change on a session that holds only a window")]
    Partial,
}

impl EmitError {
    /// Whether another replica committed first or holds the session's lease: the request is
    /// carried out again on the newer state.
    pub fn is_contention(&self) -> bool {
        matches!(self, EmitError::Store(StoreError::Conflict { .. } | StoreError::Fenced | StoreError::LeaseHeld))
    }
}

impl From<EmitError> for Refusal {
    fn from(e: EmitError) -> Self {
        let contention = e.is_contention();
        if !contention {
            eprintln!("chatwire-reference: internal error: {e}");
        }
        let mut refusal = Refusal::new(ErrorCode::InternalError, "the server failed and the session is unchanged");
        refusal.contention = contention;
        refusal
    }
}

/// What a connection negotiated in its `session.hello`: the version, and the features in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Negotiated {
    pub version: ProtocolVersion,
    /// The welcome's `features`: `None` on a 1.0 connection (`SESSION-013`), else those in force.
    pub features: Option<Vec<Capability>>,
    /// Whether state changes go out as `ui_state_patch` (`STATE-036`): `ui_state_patch` in force.
    pub patches: bool,
    /// The window the hello asked for where `state_window` is in force (`WINDOW-001`): the size
    /// of every snapshot's window on this connection; `None` holds the whole state.
    pub window: Option<u32>,
}

impl Negotiated {
    /// A connection that negotiated nothing yet: 1.0 behaviour.
    pub fn none() -> Self {
        Negotiated { version: ProtocolVersion { major: 1, minor: 0 }, features: None, patches: false, window: None }
    }

    /// Whether `feature` is in force on the connection.
    pub fn has(&self, feature: &Capability) -> bool {
        self.features.as_ref().is_some_and(|f| f.contains(feature))
    }
}
