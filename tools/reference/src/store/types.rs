//! What the store reads and writes: the rows of a session, one change to commit, and what a
//! shared store adds for a cluster (leases, changes, notices).

use std::time::Duration;

/// The events a session commits between two checkpoints, at most: a load folds no more than
/// these (plus those committed by a change in flight), and the state is written once per this
/// many events, so the checkpoint's cost per event is its size over this.
pub const CHECKPOINT_EVERY: u64 = 500;

/// Items a window checkpoint keeps beyond the largest window, so that a windowed open still
/// finds a full window after the events since the checkpoint cut a few items.
pub const WINDOW_SLACK: u64 = 64;

/// The newest items a window checkpoint keeps: the largest window and [`WINDOW_SLACK`].
pub const WINDOW_TAIL: u64 = chatwire_schema::window::MAX_WINDOW_ITEMS as u64 + WINDOW_SLACK;

/// How long a run lease lives without being renewed. The holder renews it (every commit that
/// holds it, and the session layer's heartbeat); once it has expired any replica may claim it
/// ([`Store::claim_expired_leases`](super::Store::claim_expired_leases)). Expiry is judged by the
/// database's clock, so the replicas' clocks do not matter.
pub const LEASE_TTL: Duration = Duration::from_secs(5);

/// How hard a commit tries to survive a crash (`PRAGMA synchronous` in WAL mode; on PostgreSQL
/// `synchronous_commit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// `FULL`: the WAL is synced on every commit, so a commit survives a power loss or an OS
    /// crash (RESUME-011 "commit durably"). The default; group commit shares each sync among the
    /// commits queued together.
    #[default]
    Full,
    /// `NORMAL`: a commit survives the process being killed, but the last commits may be lost
    /// with a power loss or OS crash. Only for tests and benchmarks that say so.
    Normal,
}

impl Durability {
    /// Parses `full` or `normal` (the `--durability` flag).
    pub fn parse(s: &str) -> Option<Durability> {
        match s {
            "full" => Some(Durability::Full),
            "normal" => Some(Durability::Normal),
            _ => None,
        }
    }
}

/// A new session's row.
#[derive(Debug, Clone)]
pub struct NewSessionRow {
    /// Session id.
    pub id: String,
    /// SHA-256 of the resume token.
    pub token_hash: String,
    /// The agent spec, JSON.
    pub agent: String,
    /// The agent cursor, JSON.
    pub cursor: String,
    /// The first seq not yet used (after the welcome and snapshot).
    pub next_seq: u64,
    /// The seq of the first snapshot (a frame that carries a state).
    pub snapshot_seq: u64,
}

/// One row of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRow {
    /// The frame's seq (server events only).
    pub seq: Option<u64>,
    /// `event` (a server frame the state was folded from) or `request` (a client frame).
    pub kind: LogKind,
    /// The frame's wire type.
    pub frame_type: String,
    /// The frame, JSON.
    pub frame: String,
}

/// What a log row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// A server event the effective state is folded from.
    Event,
    /// A client request that was accepted.
    Request,
}

impl LogKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LogKind::Event => "event",
            LogKind::Request => "request",
        }
    }
}

/// A session's agent and the plan of its current turn: the largest part of a scripted session's
/// row (the whole script), read only by a load that needs it ([`LoadFrom`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAgent {
    /// The agent spec, JSON.
    pub agent: String,
    /// The plan of the current turn, JSON.
    pub turn_plan: Option<String>,
}

/// A stored session with everything needed to rebuild it.
#[derive(Debug, PartialEq, Eq)]
pub struct StoredSession {
    /// SHA-256 of the resume token.
    pub token_hash: String,
    /// The agent and the turn's plan; `None` where the load left them out ([`LoadFrom::Window`]).
    pub agent: Option<StoredAgent>,
    /// The first seq not yet used: above every seq a client may have been sent, reserved ones
    /// included ([`Store::reserve_seqs`](super::Store::reserve_seqs)).
    pub next_seq: u64,
    /// The agent cursor, JSON.
    pub cursor: String,
    /// The latest checkpoint, where the load read one: `events` start after it.
    pub checkpoint: Option<Checkpoint>,
    /// Where a windowed load ([`LoadFrom::Window`]) read one: `events` start after it.
    pub window: Option<StoredWindow>,
    /// Server events in log order (frames, JSON): every one, or those after `checkpoint` (or
    /// `window`).
    pub events: Vec<String>,
    /// Responses committed but not yet executed: (tool call id, frame JSON), in commit order.
    pub pending_responses: Vec<(String, String)>,
    /// Expiry deadlines: (tool call id, deadline in ms since the epoch).
    pub timers: Vec<(String, i64)>,
}

/// Everything one state change writes, applied in one transaction: at most one statement per
/// table it touches.
#[derive(Debug)]
pub struct Commit {
    /// The session's first unused seq after this change.
    pub next_seq: u64,
    /// Rows to append to the log.
    pub log: Vec<LogRow>,
    /// The new agent cursor, JSON.
    pub cursor: Option<String>,
    /// The new plan of the current turn.
    pub turn_plan: Option<String>,
    /// Whether a run slice is in progress after this change.
    pub run_active: Option<bool>,
    /// Expiry deadlines to add.
    pub add_timers: Vec<(String, i64)>,
    /// Expiry deadlines to remove.
    pub remove_timers: Vec<String>,
    /// Remove every expiry deadline of the session.
    pub clear_timers: bool,
    /// Responses committed for later execution.
    pub add_pending: Vec<(String, String)>,
    /// Responses that have now been executed.
    pub remove_pending: Vec<String>,
    /// Seqs of frames this change sends that carry a state (snapshot, update or patch).
    pub state_seqs: Vec<u64>,
    /// Those of `state_seqs` that went only to connections that see streams (STREAM-006).
    pub streamed_state_seqs: Vec<u64>,
    /// The session's `next_seq` this change was staged from; a shared store refuses the commit
    /// with [`StoreError::Conflict`](super::StoreError::Conflict) when the stored `next_seq`
    /// differs. `None`: no check (planted fault). Ignored by SQLite.
    pub base_seq: Option<u64>,
    /// What the change does to the session's run lease. Ignored by SQLite.
    pub lease: LeaseOp,
    /// The change's units as JSON, replayed by other replicas (shared store only; opaque to the
    /// store). Ignored by SQLite.
    pub units: Option<String>,
    /// Whether other replicas are told (`pg_notify`). True by default; false only for a planted
    /// fault. Ignored by SQLite.
    pub notify: bool,
}

impl Default for Commit {
    /// An empty change (`next_seq` 0) that notifies other replicas.
    fn default() -> Self {
        Commit {
            next_seq: 0,
            log: Vec::new(),
            cursor: None,
            turn_plan: None,
            run_active: None,
            add_timers: Vec::new(),
            remove_timers: Vec::new(),
            clear_timers: false,
            add_pending: Vec::new(),
            remove_pending: Vec::new(),
            state_seqs: Vec::new(),
            streamed_state_seqs: Vec::new(),
            base_seq: None,
            lease: LeaseOp::Keep,
            units: None,
            notify: true,
        }
    }
}

/// What the log holds for a catch-up resume from `last_seq` ([`Store::catch_up_log`](super::Store::catch_up_log)).
#[derive(Debug, PartialEq, Eq)]
pub enum CatchUpLog {
    /// `last_seq` is not the seq of a frame that carried a state: a snapshot it is (RESUME-018).
    NotAState,
    /// More events than the retention were committed after `last_seq` (RESUME-018).
    BeyondRetention,
    /// The events, JSON, in log order: those the state of `last_seq` folds, and those after it.
    Events {
        /// Committed up to `last_seq` (a delta's own seq included).
        before: Vec<String>,
        /// Committed after `last_seq`, at most the retention.
        after: Vec<String>,
        /// Whether every connection the frame of `last_seq` went to saw streams (STREAM-006).
        streamed: bool,
    },
}

/// A session's state as it stood before `seq`: the fold of every event of a lower seq (issue
/// #22). A cache of the log's fold and nothing else: the log stays the truth, a checkpoint that
/// cannot be read is ignored, and a newer one replaces an older one only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Every event below this seq is folded in, none from it on.
    pub seq: u64,
    /// The `UiState`, JSON.
    pub state: String,
    /// What the folded events say about the session's turns, JSON (opaque to the store).
    pub history: String,
    /// The same state as a windowed open reads it, by item position.
    pub window: Option<WindowCheckpoint>,
}

/// A checkpoint's state as rows by position (issue #22): the newest [`WINDOW_TAIL`] items and the
/// older items every window holds (`WINDOW-003`), so a windowed open reads the window it sends
/// and not the thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowCheckpoint {
    /// How many items the state holds.
    pub total: u64,
    /// The position of the oldest item of the tail: every item from here on has a row, and
    /// below it only those every window holds.
    pub tail_from: u64,
    /// The state's `run`, JSON.
    pub run: String,
    /// (position, whether every window holds it, item JSON), ascending.
    pub items: Vec<(u64, bool, String)>,
}

/// What a windowed load read of a [`WindowCheckpoint`]: every item from `start` on and the older
/// ones every window holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredWindow {
    /// Every event below this seq is folded in, none from it on.
    pub seq: u64,
    /// How many items the state holds.
    pub total: u64,
    /// The position from which every item was read.
    pub start: u64,
    /// The state's `run`, JSON.
    pub run: String,
    /// (position, item JSON), ascending.
    pub items: Vec<(u64, String)>,
}

/// Where a load starts, and what it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadFrom {
    /// Every event of the log, no checkpoint.
    Start,
    /// The latest checkpoint and the events after it.
    Checkpoint,
    /// The latest window checkpoint's rows for the newest `newest` items (and those every
    /// window holds) and the events after it; no whole state, and neither the agent nor the
    /// turn's plan ([`StoredSession::agent`] is `None`): a windowed open sends a window and
    /// plays nothing.
    Window {
        /// How many of the newest items to read.
        newest: u64,
    },
}

/// What a commit does to the session's run lease (the `leases` row of a shared store).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LeaseOp {
    /// No lease check; the lease is left as it is.
    #[default]
    Keep,
    /// Takes the lease if there is none or it has expired: owner = this replica, token = the
    /// previous token + 1 (1 for the first). A live lease of another replica refuses the commit
    /// with [`StoreError::LeaseHeld`](super::StoreError::LeaseHeld); a live lease of this replica
    /// is taken over the same way (a new token). The commit returns the new token.
    Acquire,
    /// The lease must exist, belong to this replica and carry this token, else the commit is
    /// refused with [`StoreError::Fenced`](super::StoreError::Fenced). Renews its expiry.
    Hold(u64),
    /// Deletes the lease. With `Some(token)` it must first be this replica's with that token
    /// (else [`StoreError::Fenced`](super::StoreError::Fenced)); with `None` it is deleted
    /// whoever holds it (or none).
    Release(Option<u64>),
}

/// One committed change as another replica replays it
/// ([`Store::changes_since`](super::Store::changes_since)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredChange {
    /// The session's `next_seq` the change was staged from (its first seq, if it used any).
    pub first_seq: u64,
    /// The session's `next_seq` after the change.
    pub next_seq: u64,
    /// The change's units, JSON, as the committing replica gave them (`None`: the commit only
    /// consumed seqs, e.g. an error frame or a resume's reservation).
    pub units: Option<String>,
    /// The agent cursor after the change, JSON, when the change set it.
    pub cursor: Option<String>,
    /// The turn's plan after the change, JSON, when the change set it.
    pub turn_plan: Option<String>,
}

/// What the shared store tells every replica ([`Store::notices`](super::Store::notices)).
///
/// Delivered through a bounded `tokio::sync::broadcast` channel: a receiver that falls behind gets
/// `RecvError::Lagged` and must treat it exactly like [`Notice::Lost`] (notices were dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A commit of `session_id` left its `next_seq` at this value.
    Committed {
        /// The session.
        session_id: String,
        /// Its `next_seq` after the commit.
        next_seq: u64,
    },
    /// The notification connection was lost (and is being re-established): notices may have
    /// been missed, so every session held in memory must be synced from the store.
    Lost,
}

/// A place where a test build makes the process abort, to prove crash durability
/// deterministically. Never set in normal operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoint {
    /// A valid `chat.tool_call_response` arrived and is not yet committed.
    ResponseReceived,
    /// The response is committed; its execution (the settlement) has not happened.
    ResponseCommitted,
}

impl CrashPoint {
    /// Parses the value of `CHATWIRE_REFERENCE_CRASH_AT`.
    pub fn parse(s: &str) -> Option<CrashPoint> {
        match s {
            "response-received" => Some(CrashPoint::ResponseReceived),
            "response-committed" => Some(CrashPoint::ResponseCommitted),
            _ => None,
        }
    }
}
