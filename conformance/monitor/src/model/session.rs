//! What the monitor knows about one session, across its connections: its seqs, the states its
//! clients held, its events (for a connection attached beside others), its script.

use std::collections::BTreeMap;
use std::sync::Arc;

use chatwire_schema::ServerFrame;

use super::held::{HeldStates, SeqKinds};
use crate::script::SessionScript;

/// Events kept per session for attached connections.
pub(crate) const EVENTS_KEPT: usize = 1024;

/// What the monitor knows about one session, across its connections.
#[derive(Debug, Default)]
pub(crate) struct SessionModel {
    pub max_seq: u64,
    /// The session's events by seq, as any connection received them: a connection attached beside
    /// others folds in those its seqs skip (answers to another, `ATTACH-005`; an event that did not
    /// reach it is `ATTACH-004`'s to report, once, not every later state's).
    pub events: BTreeMap<u64, ServerFrame>,
    pub resume_token: Option<String>,
    /// The latest states clients of the session received: the base of the next patch, and of a
    /// catch-up after a reconnect.
    pub held: HeldStates,
    /// The kinds of the session's recent frames by seq (RESUME-018).
    pub kinds: SeqKinds,
    /// The seq of the latest state frame a client of the session received.
    pub state_seq: Option<u64>,
    /// Whether `resume_catch_up` was in force on the connection that received it.
    pub catch_up_base: bool,
    /// The script the session was opened with, when the client sent one.
    pub script: Option<Arc<SessionScript>>,
    /// Two frames of the session were sent under one seq by different instances (`CLUSTER-002`):
    /// the session's frames by seq no longer tell what a connection's seq gap held, so a gap's
    /// frames are taken as unknown rather than folded in (what they did to a connection's state is
    /// the divergence already charged, not new findings on every later state frame).
    pub seqs_void: bool,
}
