//! What a session is in memory, and what the server shares among sessions: the data the
//! session core decides on. Nothing here does I/O.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::script::{ScriptStep, ScriptToolCall};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{DisplayItem, FrameValidator, Id, IndexedUiState, ProtocolVersion, ServerFrame};
use tokio::sync::Mutex;
use tokio::task::AbortHandle;

use super::attachment::{Attachment, Group};
use super::recent::{Recent, RecentEvent};
use crate::agent::{Agent, Cursor};
use crate::fault::Faults;
use crate::outbox::ConnHandle;
use crate::plan::TurnPlan;
use crate::store::{LogRow, Store};

/// A task the server runs for a session, started by the session core without it knowing the
/// code the task runs (which itself commits through the core): the wiring above the core
/// ([`Tasks`]) names it.
pub(crate) type SessionTask = fn(Arc<Session>, u64) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// A deadline's task: the session and the tool call whose deadline passed.
pub(crate) type DeadlineTask = fn(Arc<Session>, Id) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// Brings a session up to what other replicas committed (`replica.rs`).
pub(crate) type SyncTask = for<'a> fn(&'a Arc<Session>, &'a mut Inner) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// The tasks the core starts without knowing their code: what a passed deadline does
/// (`expiry.rs`), the run driver (`driver.rs`, started with the session's driver epoch), and the
/// cluster's sync (`replica.rs`) that a seq taken on a shared store needs when another replica
/// committed first.
#[derive(Clone, Copy)]
pub(crate) struct Tasks {
    pub deadline: DeadlineTask,
    pub drive: SessionTask,
    pub sync: SyncTask,
}

/// Server-wide state shared by connections and sessions.
pub(crate) struct Shared {
    pub store: Store,
    /// The faults planted at each seam (the identity for a correct server).
    pub faults: Faults,
    /// The agent of sessions opened without a script.
    pub agent: Arc<dyn Agent>,
    pub conformance: bool,
    pub durable: bool,
    pub max_frame_bytes: u64,
    /// The versions this server speaks, newest first, each with its schemas.
    pub(super) validators: Vec<(ProtocolVersion, FrameValidator)>,
    /// The hash an unknown session's resume is compared against: of a random token never issued.
    pub unmatchable_token_hash: String,
    /// Test-only: resume with the old lookup-first check (see [`crate::ServeConfig`]).
    pub legacy_resume_lookup: bool,
    /// Test-only: how late every deadline's task runs (see [`crate::ServeConfig`]).
    pub deadline_lag: Duration,
    /// The bound on each connection's unsent bytes (`TRANSPORT-016`).
    pub send_queue_bytes: u64,
    /// Capabilities this server does not offer although it implements them (`serve --without`).
    pub withheld: Vec<Capability>,
    /// The most connections one session keeps attached (`ATTACH-003`).
    pub max_attached: u32,
    /// The tasks the core starts.
    pub tasks: Tasks,
    pub(super) sessions: Mutex<HashMap<Id, Arc<Session>>>,
}

/// One session, loaded in memory.
pub(crate) struct Session {
    pub id: Id,
    pub shared: Arc<Shared>,
    pub inner: Mutex<Inner>,
}

/// A pending call's armed deadline: when it passes, and the task that expires it then.
pub(crate) struct Armed {
    /// The deadline, in ms since the epoch.
    pub(super) deadline_ms: i64,
    /// The task sleeping until then.
    pub(super) task: AbortHandle,
}

/// A session's mutable part; every field is guarded by the session mutex.
pub(crate) struct Inner {
    /// Indexed, so that an event costs the same at 100 items and at 10,000 (`IndexedUiState`).
    pub state: IndexedUiState,
    pub(super) next_seq: u64,
    /// The stored hash of the resume token (only the legacy lookup-first resume check reads it).
    pub(super) token_hash: String,
    pub(super) agent: Arc<dyn Agent>,
    pub(super) cursor: Cursor,
    /// The current turn's plan, shared with the agent where it keeps it.
    pub(super) plan: Option<Arc<TurnPlan>>,
    /// What the log says about the session's turns, kept up to date with each commit.
    pub(super) history: History,
    /// The text of the latest delta committed in this process (a planted fault repeats it).
    pub(super) last_delta: Option<String>,
    /// The connections attached to the session, earliest first (`spec/attach.md`).
    pub(super) attached: Vec<Attachment>,
    /// The connection whose request is being carried out: its answers go to it alone
    /// (`ATTACH-005`). Set by the connection around each request, under the session lock.
    pub requester: Option<u64>,
    pub(super) driver_active: bool,
    /// Bumped when a cancel stops the run: a driver started before it stops at its next look,
    /// without playing or settling anything (`CANCEL-005`).
    pub(super) driver_epoch: u64,
    /// Where a run driver started now goes.
    pub(super) driver_launch: DriverLaunch,
    /// The armed deadlines (`launch.rs`).
    pub(super) timers: HashMap<Id, Armed>,
    pub(super) evicted: bool,
    /// The events committed in this process, as patches: what a catch-up puts together.
    pub(super) recent: Recent,
    /// The token of the session's run lease where this replica holds it: it drives the run and
    /// arms the deadlines (`CLUSTER-003`). Unused on an embedded store.
    pub(super) lease: Option<u64>,
    /// The first seq of commits not yet replayed here (`replica.rs`): `next_seq`, except under
    /// the planted fault `seq-per-replica`.
    pub(super) replayed_to: u64,
    /// Every seq below this is durable for a frame that changes no state: reserved in the
    /// embedded store (`outside.rs`). Unused on a shared store.
    pub(super) seq_reserved: u64,
    /// Events committed since the session's latest checkpoint (`pipeline/checkpoint.rs`).
    pub(super) since_checkpoint: u64,
    /// Where a windowed open loaded only the window (`partial.rs`): `state` holds the items it
    /// read, and nothing may change it before `ensure_full`.
    pub(super) partial: Option<Partial>,
    /// While the run driver plays the steps that are due (`driver.rs`): the changes staged and
    /// not yet committed (`pipeline/batch.rs`).
    pub(super) batch: Option<Batch>,
}

/// Consecutive changes of the run driver staged in memory and committed together: one commit
/// (one fsync) for all of them, their frames sent once it is durable (`pipeline/batch.rs`).
#[derive(Default)]
pub(crate) struct Batch {
    /// The frames for each group of attached connections so far, in order.
    pub groups: Option<Vec<Group>>,
    pub log: Vec<LogRow>,
    pub state_seqs: Vec<u64>,
    pub streamed_state_seqs: Vec<u64>,
    /// The staged events as patches, kept once committed (`recent.rs`).
    pub recent: Vec<RecentEvent>,
    /// How many events and changes are staged.
    pub events: u64,
    pub changes: usize,
    /// The cursor of the latest staged change that moved it.
    pub cursor: Option<Cursor>,
    /// Whether a run slice is in progress after the latest staged change.
    pub run_active: bool,
    /// Where the session stood before the first staged change (`next_seq`, cursor): what it goes
    /// back to if the commit fails. `None` while nothing is staged.
    pub before: Option<(u64, Cursor)>,
}

/// What a partial state leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Partial {
    /// How many items of the whole state it does not hold (all older than its window).
    pub omitted: usize,
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
    pub fn note(&mut self, frame: &ServerFrame) {
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

/// Where a run driver started now goes (`launch.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DriverLaunch {
    /// On a task of its own (normal operation).
    Spawn,
    /// Nowhere yet: recovery holds the session and, once done, plays the steps that are due
    /// itself (`requested`: a driver was started meanwhile), so the first resume after a restart
    /// sees all of them (RESUME-014).
    HeldByRecovery { requested: bool },
}

impl Inner {
    /// A session's memory as its store row and its fold say: nothing attached, no driver, no
    /// deadline armed.
    pub(super) fn new(fold: Fold, agent: Arc<dyn Agent>, cursor: Cursor, plan: Option<Arc<TurnPlan>>) -> Inner {
        let Fold { state, history, next_seq, token_hash, since_checkpoint, partial } = fold;
        let mut recent = Recent::new(next_seq.saturating_sub(1), state.has_open_stream_anywhere());
        recent.subagents_seen = state.holds_subagents();
        // A transcript may hold reasoning too: the log's way for a connection without it.
        recent.reasoning_seen =
            recent.subagents_seen || state.items.iter().any(|i| matches!(i, DisplayItem::Reasoning(_)));
        Inner {
            state,
            next_seq,
            token_hash,
            agent,
            cursor,
            plan,
            history,
            last_delta: None,
            attached: Vec::new(),
            requester: None,
            driver_active: false,
            driver_epoch: 0,
            driver_launch: DriverLaunch::Spawn,
            timers: HashMap::new(),
            evicted: false,
            recent,
            lease: None,
            replayed_to: next_seq,
            seq_reserved: next_seq,
            since_checkpoint,
            partial,
            batch: None,
        }
    }

    /// Whether `conn` is attached to this session.
    pub fn is_attached(&self, conn: &ConnHandle) -> bool {
        self.attached.iter().any(|a| a.conn.id == conn.id)
    }

    /// The highest seq this session has used.
    pub fn last_seq(&self) -> u64 {
        self.next_seq.saturating_sub(1)
    }

    /// Stops the session's run driver after a cancel: a driver waiting now finds a newer epoch when
    /// it wakes and ends without acting, and the next run starts a driver of its own at once.
    pub(super) fn stop_driver(&mut self) {
        self.driver_epoch += 1;
        self.driver_active = false;
    }

    /// The current plan's scripted call at `index` of the current batch, if any.
    pub(super) fn batch_call(&self, tool_call_id: &Id) -> Option<&ScriptToolCall> {
        let batch = self.cursor.batch.as_ref()?;
        let index = batch.call_ids.iter().position(|c| c == tool_call_id)?;
        match self.plan.as_ref()?.step(self.cursor.step)?.op {
            ScriptStep::ToolCalls { calls, .. } => calls.get(index),
            _ => None,
        }
    }
}

/// What a load or an open gives a session's memory.
pub(crate) struct Fold {
    pub state: IndexedUiState,
    pub history: History,
    pub next_seq: u64,
    pub token_hash: String,
    pub since_checkpoint: u64,
    pub partial: Option<Partial>,
}
