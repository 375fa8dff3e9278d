//! Sessions: the effective state, the durable emission pipeline, the run driver, recovery.
//!
//! The one way state changes is [`emit::emit`]: it stamps seqs, applies every event through
//! `UiState::apply` (the schema crate's reducer) on a copy, writes the log in one transaction,
//! and only then adopts the copy and hands the frames (each followed by `ui_state_updated`) to
//! the attached connection. So the state a client sees is the fold of the events it was sent,
//! and nothing it sees can be lost by a crash.
//!
//! | module | seam |
//! | --- | --- |
//! | [`registry`] | the sessions in memory: load (fold of the log), evict, recover at start |
//! | [`checkpoint`] | a load from the latest state checkpoint, and when to store one |
//! | [`partial`] | a windowed open from the window checkpoint, and the whole state on demand |
//! | [`emit`] | the one commit-then-send path, and errors that consume a seq |
//! | [`fanout`] | the attached connections, grouped by view, and where each frame goes |
//! | [`handshake`] | `session.hello`: open, resume (takeover), welcome and snapshot |
//! | [`catch_up`] | the catch-up patch of a resume, from the log |
//! | [`requests`] | `chat.user_message`, `chat.tool_call_response`, `chat.rewind` |
//! | [`retry`] | `chat.retry`: the cut after an item, and the retry's run |
//! | [`cancel`] | `chat.cancel`: the one commit that closes a run, and stopping its driver |
//! | [`driver`] | the run driver: plays the agent's plan step by step |
//! | [`expiry`] | tool-call deadlines |
//! | [`recovery`] | what a crash left: committed responses, interrupted runs, deadlines |

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chatwire_schema::script::ScriptTurn;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::IndexedUiState;
use chatwire_schema::{ErrorCode, Id, ProtocolVersion, ReduceError};
use tokio::sync::Mutex;
use tokio::task::AbortHandle;

use crate::agent::{Agent, Cursor};
use crate::store::StoreError;

mod cancel;
mod catch_up;
mod checkpoint;
mod driver;
mod emit;
mod expiry;
mod fanout;
mod handshake;
mod history;
mod partial;
mod recent;
mod recovery;
mod registry;
mod replica;
mod requests;
mod retry;

pub(crate) use cancel::cancel;
pub(crate) use handshake::{detach, open_session, resume_session};
pub(crate) use history::history;
pub(crate) use partial::ensure_full;

/// See [`crate::partial_opens`].
pub(crate) fn partial_opens() -> u64 {
    partial::PARTIAL_OPENS.load(std::sync::atomic::Ordering::Relaxed)
}
pub(crate) use registry::Shared;
pub(crate) use replica::{follow, hold_leases, reap, sync, take_over, CONFLICT_RETRIES};
pub(crate) use requests::{rewind, tool_call_response, user_message};
pub(crate) use retry::retry;

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

impl From<EmitError> for Refusal {
    fn from(e: EmitError) -> Self {
        let contention = replica::is_contention(&e);
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

/// One session, loaded in memory.
pub(crate) struct Session {
    pub id: Id,
    pub shared: Arc<Shared>,
    pub inner: Mutex<Inner>,
}

/// A session's mutable part; every field is guarded by the session mutex.
pub(crate) struct Inner {
    /// Indexed, so that an event costs the same at 100 items and at 10,000 (`IndexedUiState`).
    pub state: IndexedUiState,
    next_seq: u64,
    /// The stored hash of the resume token (only the legacy lookup-first resume check reads it).
    token_hash: String,
    agent: Arc<dyn Agent>,
    cursor: Cursor,
    plan: Option<ScriptTurn>,
    /// What the log says about the session's turns, kept up to date with each commit.
    history: History,
    /// The text of the latest delta committed in this process (a planted fault repeats it).
    last_delta: Option<String>,
    /// The connections attached to the session, earliest first (`spec/attach.md`).
    attached: Vec<fanout::Attachment>,
    /// The connection whose request is being carried out: its answers go to it alone
    /// (`ATTACH-005`). Set by the connection around each request, under the session lock.
    pub requester: Option<u64>,
    driver_active: bool,
    /// Bumped when a cancel stops the run: a driver started before it stops at its next look,
    /// without playing or settling anything (`CANCEL-005`).
    driver_epoch: u64,
    /// Where a run driver started now goes.
    driver_launch: DriverLaunch,
    timers: HashMap<Id, AbortHandle>,
    evicted: bool,
    /// The events committed in this process, as patches: what a catch-up puts together.
    recent: recent::Recent,
    /// The token of the session's run lease where this replica holds it: it drives the run and
    /// arms the deadlines (`CLUSTER-003`). Unused on an embedded store.
    lease: Option<u64>,
    /// The first seq of commits not yet replayed here (`replica.rs`): `next_seq`, except under
    /// the planted fault `seq-per-replica`.
    replayed_to: u64,
    /// Every seq below this is durable for a frame that changes no state: reserved in the
    /// embedded store ([`Inner::take_reserved_seq`]). Unused on a shared store.
    seq_reserved: u64,
    /// Events committed since the session's latest checkpoint (`checkpoint.rs`).
    since_checkpoint: u64,
    /// Where a windowed open loaded only the window (`partial.rs`): `state` holds the items it
    /// read, and nothing may change it before `ensure_full`.
    partial: Option<partial::Partial>,
}

/// What a session's log says about its turns, folded at load and kept up to date after: the
/// accepted user messages (`TURN-006`), the script turn that answered each invocation, and how many
/// retries of each invocation were accepted (`SCRIPT-020`: `k` counts across restarts).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct History {
    pub accepted_messages: HashSet<Id>,
    /// Invocation → the index of the turn that answers it (its user message's place among all
    /// the session's accepted messages, rewound ones included).
    pub turns: HashMap<Id, u64>,
    /// Invocation → accepted retries.
    pub retries: HashMap<Id, u64>,
}

impl History {
    /// Notes what a committed event says about the session's turns.
    pub fn note(&mut self, frame: &chatwire_schema::ServerFrame) {
        use chatwire_schema::ServerFrame;
        match frame {
            ServerFrame::UserMessageAccepted(f) => {
                let turn = self.turns.len() as u64;
                self.accepted_messages.insert(f.in_reply_to.clone());
                self.turns.insert(f.invocation_id.clone(), turn);
            }
            ServerFrame::RetryAccepted(f) => *self.retries.entry(f.invocation_id.clone()).or_default() += 1,
            _ => {}
        }
    }
}

/// Where [`driver::start_driver`] puts a run driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DriverLaunch {
    /// On a task of its own (normal operation).
    Spawn,
    /// Nowhere yet: recovery holds the session and, once done, plays the steps that are due
    /// itself (`requested`: a driver was started meanwhile), so the first resume after a restart
    /// sees all of them (RESUME-014).
    HeldByRecovery { requested: bool },
}
