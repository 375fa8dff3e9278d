//! Sessions: the effective state, the durable emission pipeline, the run driver, recovery.
//!
//! The one way state changes is [`emit`]: it stamps seqs, applies every event through
//! `UiState::apply` (the schema crate's reducer) on a copy, writes the log in one transaction,
//! and only then adopts the copy and hands the frames (each followed by `ui_state_updated`) to
//! the attached connection. So the state a client sees is the fold of the events it was sent,
//! and nothing it sees can be lost by a crash.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::rewind::Rewind;
use chatwire_schema::chat::rewind_complete::RewindComplete;
use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
use chatwire_schema::chat::run_started::RunStarted;
use chatwire_schema::chat::tool_call::ToolCall;
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::chat::tool_call_response::{ResponseOutcome, ToolCallResponse};
use chatwire_schema::chat::tool_output::ToolOutput;
use chatwire_schema::chat::tool_progress::ToolProgress;
use chatwire_schema::chat::user_message::UserMessage;
use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
use chatwire_schema::script::{settle_sequence, ScriptEnd, ScriptOutcome, ScriptStep, ScriptToolCall, ScriptTurn};
use chatwire_schema::session::welcome::{Capability, Limits, SessionWelcome};
use chatwire_schema::{
    ClientFrame, DisplayItem, ErrorCode, ErrorFrame, Id, ProtocolVersion, ReduceError, RunStatus, ServerFrame,
    ToolCallStatus, UiState, UiStateVersion,
};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, Mutex, Notify};
use tokio::task::AbortHandle;

use crate::agent::{AgentSpec, BatchCursor, Cursor};
use crate::fault::{Fault, Faults};
use crate::store::{Commit, LogKind, LogRow, NewSession, Store, StoreError};
use crate::util::{constant_time_eq, hash_token, now_ms, random_id, rfc3339_now};
use crate::CrashPoint;

/// What the connection's writer task sends.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A text frame.
    Text(String),
    /// A close frame with this code (and its reason phrase); the writer stops after it.
    Close(chatwire_schema::CloseCode),
    /// A ping (idle check).
    Ping,
    /// Flush, then acknowledge.
    Flush(oneshot::Sender<()>),
}

/// A connection as the session sees it: where to send, and how to end it.
#[derive(Clone, Debug)]
pub(crate) struct ConnHandle {
    pub id: u64,
    pub out: mpsc::Sender<Outgoing>,
    pub kill: Arc<Notify>,
}

impl ConnHandle {
    /// Queues a frame; a connection too slow to drain its queue is ended.
    pub fn send(&self, item: Outgoing) -> bool {
        if self.out.try_send(item).is_err() {
            self.kill.notify_one();
            return false;
        }
        true
    }
}

/// A request the server refuses: the error code and its one-sentence message.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub code: ErrorCode,
    pub message: String,
}

impl Refusal {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Refusal { code, message: message.into() }
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
}

impl From<EmitError> for Refusal {
    fn from(e: EmitError) -> Self {
        eprintln!("chatwire-reference: internal error: {e}");
        Refusal::new(ErrorCode::InternalError, "the server failed and the session is unchanged")
    }
}

/// Server-wide state shared by connections and sessions.
pub(crate) struct Shared {
    pub store: Store,
    pub faults: Faults,
    pub conformance: bool,
    pub durable: bool,
    pub max_frame_bytes: u64,
    pub crash_at: Option<CrashPoint>,
    pub validator: chatwire_schema::FrameValidator,
    sessions: Mutex<HashMap<Id, Arc<Session>>>,
}

/// One session, loaded in memory.
pub(crate) struct Session {
    pub id: Id,
    pub shared: Arc<Shared>,
    pub inner: Mutex<Inner>,
}

/// A session's mutable part; every field is guarded by the session mutex.
pub(crate) struct Inner {
    pub state: UiState,
    next_seq: u64,
    token_hash: String,
    agent: AgentSpec,
    cursor: Cursor,
    plan: Option<ScriptTurn>,
    accepted_messages: HashSet<Id>,
    attached: Option<ConnHandle>,
    driver_active: bool,
    timers: HashMap<Id, AbortHandle>,
    evicted: bool,
}

/// One step of emission: an event (followed by one `ui_state_updated`), or a batch of tool calls
/// (one `ui_state_updated` after the whole batch).
#[allow(clippy::large_enum_variant)] // short-lived: built and consumed within one emit
pub(crate) enum Unit {
    Event(ServerFrame),
    Batch(Vec<ServerFrame>),
    /// Fault injection only: the server applies one frame and announces another.
    Misannounced {
        applied: Box<ServerFrame>,
        announced: Box<ServerFrame>,
    },
}

/// Everything one state change does, committed atomically by [`emit`].
#[derive(Default)]
pub(crate) struct Change {
    units: Vec<Unit>,
    requests: Vec<ClientFrame>,
    cursor: Option<Cursor>,
    plan: Option<Option<ScriptTurn>>,
    add_timers: Vec<(Id, i64)>,
    remove_timers: Vec<Id>,
    add_pending: Vec<(Id, String)>,
    remove_pending: Vec<Id>,
}

/// `ui_state_updated` / `ui_state_snapshot` serialized from a borrowed state (no copy of a large
/// state); a unit test checks it matches `ServerFrame` serialization exactly.
#[derive(Serialize)]
struct StateFrame<'a> {
    #[serde(rename = "type")]
    frame_type: &'static str,
    seq: u64,
    v: UiStateVersion,
    state: &'a UiState,
}

fn state_frame(frame_type: &'static str, seq: u64, state: &UiState) -> Result<String, serde_json::Error> {
    serde_json::to_string(&StateFrame { frame_type, seq, v: UiStateVersion::V1, state })
}

fn set_seq(frame: &mut ServerFrame, seq: u64) {
    match frame {
        ServerFrame::Welcome(f) => f.seq = seq,
        ServerFrame::UiStateSnapshot(f) => f.seq = seq,
        ServerFrame::UiStateUpdated(f) => f.seq = seq,
        ServerFrame::UserMessageAccepted(f) => f.seq = seq,
        ServerFrame::RunStarted(f) => f.seq = seq,
        ServerFrame::AssistantMessage(f) => f.seq = seq,
        ServerFrame::ToolCall(f) => f.seq = seq,
        ServerFrame::ToolProgress(f) => f.seq = seq,
        ServerFrame::ToolOutput(f) => f.seq = seq,
        ServerFrame::ToolCallComplete(f) => f.seq = seq,
        ServerFrame::ToolCallDismiss(f) => f.seq = seq,
        ServerFrame::RunComplete(f) => f.seq = seq,
        ServerFrame::RewindComplete(f) => f.seq = seq,
        ServerFrame::Error(f) => f.seq = Some(seq),
        _ => {}
    }
}

fn crash_if(shared: &Shared, point: CrashPoint) {
    if shared.crash_at == Some(point) {
        eprintln!("chatwire-reference: crash point {point:?} reached, aborting");
        std::process::abort();
    }
}

/// Commits `change` and sends what it announces. On error nothing is committed or sent.
pub(crate) fn emit(session: &Arc<Session>, g: &mut Inner, change: Change) -> Result<(), EmitError> {
    let sh = &session.shared;
    let mut trial = g.state.clone();
    let mut seq = g.next_seq;
    let mut log = Vec::new();
    for request in &change.requests {
        log.push(LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: request.type_name().to_owned(),
            frame: serde_json::to_string(request)?,
        });
    }
    let mut wire = Vec::new();
    let mut announces_completion = false;
    for unit in change.units {
        let (mut applied, mut announced) = match unit {
            Unit::Event(f) => (vec![f], None),
            Unit::Batch(v) => (v, None),
            Unit::Misannounced { applied, announced } => (vec![*applied], Some(vec![*announced])),
        };
        for (i, frame) in applied.iter_mut().enumerate() {
            set_seq(frame, seq);
            if let Some(f) = announced.as_mut().and_then(|a| a.get_mut(i)) {
                set_seq(f, seq);
            }
            let event = frame.ui_event().ok_or(EmitError::NotAnEvent(frame.type_name()))?;
            trial.apply(event)?;
            if sh.faults.persists(frame) {
                log.push(LogRow {
                    seq: Some(seq),
                    kind: LogKind::Event,
                    frame_type: frame.type_name().to_owned(),
                    frame: serde_json::to_string(frame)?,
                });
            }
            seq += 1;
        }
        for frame in announced.unwrap_or(applied) {
            announces_completion |= matches!(frame, ServerFrame::ToolCallComplete(_));
            wire.push(serde_json::to_string(&sh.faults.announce(frame))?);
        }
        wire.push(state_frame("ui_state_updated", seq, &sh.faults.present(&trial, false))?);
        seq += 1;
    }
    if announces_completion && sh.faults.is(Fault::AnnounceBeforeCommit) {
        announce_then_die(g, wire);
    }
    let commit = Commit {
        next_seq: seq,
        log,
        cursor: change.cursor.as_ref().map(serde_json::to_string).transpose()?,
        turn_plan: change.plan.as_ref().map(serde_json::to_string).transpose()?,
        run_active: Some(trial.run.status == RunStatus::Running),
        add_timers: change.add_timers.iter().map(|(id, d)| (id.to_string(), *d)).collect(),
        remove_timers: change.remove_timers.iter().map(ToString::to_string).collect(),
        clear_timers: false,
        add_pending: change.add_pending.iter().map(|(id, f)| (id.to_string(), f.clone())).collect(),
        remove_pending: change.remove_pending.iter().map(ToString::to_string).collect(),
    };
    sh.store.commit(session.id.as_str(), &commit)?;
    g.state = trial;
    g.next_seq = seq;
    if let Some(cursor) = change.cursor {
        g.cursor = cursor;
    }
    if let Some(plan) = change.plan {
        g.plan = plan;
    }
    for text in wire {
        g.send(Outgoing::Text(text));
    }
    for id in change.remove_timers {
        if let Some(handle) = g.timers.remove(&id) {
            handle.abort();
        }
    }
    for (id, deadline) in change.add_timers {
        schedule_expiry(session, g, id, deadline);
    }
    Ok(())
}

/// Fault `announce-before-commit`: the frames go out, the commit never happens.
fn announce_then_die(g: &mut Inner, wire: Vec<String>) -> ! {
    for text in wire {
        g.send(Outgoing::Text(text));
    }
    let handle = tokio::runtime::Handle::current();
    if let (Some(conn), tokio::runtime::RuntimeFlavor::MultiThread) = (&g.attached, handle.runtime_flavor()) {
        let (ack, done) = oneshot::channel();
        if conn.send(Outgoing::Flush(ack)) {
            // Give this worker's queue (the writer task may sit in it) to another thread while we
            // wait, bounded, for the writer to flush what was announced.
            tokio::task::block_in_place(|| {
                let _ = handle.block_on(tokio::time::timeout(Duration::from_secs(2), done));
            });
        }
    }
    eprintln!("chatwire-reference: fault announce-before-commit: dying before the commit");
    std::process::abort();
}

impl Inner {
    /// Queues a frame for the attached connection, if any.
    fn send(&mut self, item: Outgoing) {
        if let Some(conn) = &self.attached {
            if !conn.send(item) {
                eprintln!("chatwire-reference: connection {} too slow, dropped", conn.id);
                self.attached = None;
            }
        }
    }

    /// Whether `conn` is the connection this session talks to.
    pub fn is_attached(&self, conn: &ConnHandle) -> bool {
        self.attached.as_ref().is_some_and(|a| a.id == conn.id)
    }

    /// The highest seq this session has used.
    pub fn last_seq(&self) -> u64 {
        self.next_seq.saturating_sub(1)
    }

    /// Sends a typed error to `conn`, consuming a seq of the session.
    pub fn send_error(&mut self, session: &Session, conn: &ConnHandle, refusal: Refusal, in_reply_to: Option<Id>) {
        let seq = self.next_seq;
        let persisted = session
            .shared
            .store
            .commit(session.id.as_str(), &Commit { next_seq: seq + 1, ..Commit::default() })
            .map_err(|e| eprintln!("chatwire-reference: cannot persist seq for an error: {e}"))
            .is_ok();
        let fatal = refusal.code.is_fatal();
        let frame = ErrorFrame {
            seq: persisted.then_some(seq),
            code: refusal.code,
            message: refusal.message,
            in_reply_to,
            fatal,
            supported_versions: None,
        };
        if persisted {
            self.next_seq = seq + 1;
        }
        if let Ok(text) = serde_json::to_string(&ServerFrame::Error(frame)) {
            conn.send(Outgoing::Text(text));
        }
    }

    /// The current plan's scripted call at `index` of the current batch, if any.
    fn batch_call(&self, tool_call_id: &Id) -> Option<&ScriptToolCall> {
        let batch = self.cursor.batch.as_ref()?;
        let index = batch.call_ids.iter().position(|c| c == tool_call_id)?;
        match self.plan.as_ref()?.steps.get(self.cursor.step)? {
            ScriptStep::ToolCalls { calls, .. } => calls.get(index),
            _ => None,
        }
    }
}

impl Shared {
    pub fn new(
        store: Store,
        faults: Faults,
        conformance: bool,
        durable: bool,
        max_frame_bytes: u64,
        crash_at: Option<CrashPoint>,
    ) -> Self {
        Shared {
            store,
            faults,
            conformance,
            durable,
            max_frame_bytes,
            crash_at,
            validator: chatwire_schema::FrameValidator::new(),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// What this server offers in its welcome.
    fn capabilities(&self) -> Vec<Capability> {
        let mut caps = vec![Capability::Rewind, Capability::ToolOutput, Capability::ToolExpiry];
        let listed = if self.conformance {
            !self.faults.is(Fault::ScriptCapabilityMissing)
        } else {
            self.faults.is(Fault::ScriptCapabilityUnconditional)
        };
        if listed {
            caps.push(Capability::ConformanceScript);
        }
        if self.durable {
            caps.push(Capability::RestartDurability);
        }
        caps
    }

    /// The session, from memory or rebuilt from the database; `None` if it does not exist.
    pub async fn get_or_load(self: &Arc<Self>, id: &Id) -> Result<Option<Arc<Session>>, StoreError> {
        self.load(id, false).await
    }

    /// Loads a session; with `recovering` (server start only) it also finishes interrupted work.
    /// A session evicted while quiescent has none, so a later load needs no recovery.
    async fn load(self: &Arc<Self>, id: &Id, recovering: bool) -> Result<Option<Arc<Session>>, StoreError> {
        let mut sessions = self.sessions.lock().await;
        if let Some(s) = sessions.get(id) {
            return Ok(Some(s.clone()));
        }
        let Some(stored) = self.store.load_session(id.as_str())? else { return Ok(None) };
        let mut state = UiState::default();
        let mut accepted_messages = HashSet::new();
        for (index, text) in stored.events.iter().enumerate() {
            let applied = serde_json::from_str::<ServerFrame>(text).map_err(|e| e.to_string()).and_then(|frame| {
                if let ServerFrame::UserMessageAccepted(f) = &frame {
                    accepted_messages.insert(f.in_reply_to.clone());
                }
                match frame.ui_event() {
                    Some(event) => state.apply(event).map_err(|e| e.to_string()),
                    None => Err(format!("{} is not a state event", frame.type_name())),
                }
            });
            if let Err(e) = applied {
                // Only a faulty build (or a hand-edited database) gets here.
                eprintln!("chatwire-reference: session {id}: log entry {index} skipped: {e}");
            }
        }
        let parse_failed = |what: &str, e: serde_json::Error| {
            eprintln!("chatwire-reference: session {id}: stored {what} unreadable ({e}), using default");
        };
        let agent = serde_json::from_str(&stored.agent).unwrap_or_else(|e| {
            parse_failed("agent", e);
            AgentSpec::Echo
        });
        let cursor = serde_json::from_str(&stored.cursor).unwrap_or_else(|e| {
            parse_failed("cursor", e);
            Cursor::default()
        });
        let plan = match stored.turn_plan.as_deref() {
            Some(text) => serde_json::from_str::<Option<ScriptTurn>>(text).unwrap_or_else(|e| {
                parse_failed("turn plan", e);
                None
            }),
            None => None,
        };
        let next_seq = if self.faults.is(Fault::SeqRestartsAfterRestart) { 1 } else { stored.next_seq };
        let session = Arc::new(Session {
            id: id.clone(),
            shared: self.clone(),
            inner: Mutex::new(Inner {
                state,
                next_seq,
                token_hash: stored.token_hash,
                agent,
                cursor,
                plan,
                accepted_messages,
                attached: None,
                driver_active: false,
                timers: HashMap::new(),
                evicted: false,
            }),
        });
        sessions.insert(id.clone(), session.clone());
        drop(sessions);
        if recovering {
            recover(&session, stored.pending_responses, stored.timers).await;
        }
        Ok(Some(session))
    }

    /// Drops a session from memory when nothing refers to it: no connection, no run, no timer.
    pub async fn evict_if_quiescent(&self, session: &Arc<Session>) {
        let mut sessions = self.sessions.lock().await;
        let mut g = session.inner.lock().await;
        if g.attached.is_none() && !g.driver_active && g.timers.is_empty() && !g.evicted {
            g.evicted = true;
            sessions.remove(&session.id);
        }
    }

    /// Forgets every loaded session (server shutdown), ending their timers.
    pub async fn clear(&self) {
        let sessions: Vec<_> = self.sessions.lock().await.drain().map(|(_, s)| s).collect();
        for s in sessions {
            let mut g = s.inner.lock().await;
            for (_, t) in g.timers.drain() {
                t.abort();
            }
            g.evicted = true;
        }
    }

    /// Loads every session with unfinished work so its turn, responses and deadlines proceed.
    pub async fn recover_all(self: &Arc<Self>) -> Result<usize, StoreError> {
        let ids = self.store.sessions_needing_recovery()?;
        let mut n = 0;
        for id in ids {
            match Id::parse(id.clone()) {
                Ok(id) => {
                    if self.load(&id, true).await?.is_some() {
                        n += 1;
                    }
                }
                Err(e) => eprintln!("chatwire-reference: stored session id {id:?} is invalid: {e}"),
            }
        }
        Ok(n)
    }
}

/// Finishes what a crash interrupted: executes committed responses exactly once, settles
/// interrupted tools, resumes a turn between steps, re-arms deadlines.
async fn recover(session: &Arc<Session>, pending: Vec<(String, String)>, timers: Vec<(String, i64)>) {
    let mut g = session.inner.lock().await;
    for (tool_call_id, text) in pending {
        match serde_json::from_str::<ToolCallResponse>(&text) {
            Ok(response) => {
                if let Err(e) = execute_response(session, &mut g, &response) {
                    eprintln!(
                        "chatwire-reference: session {}: committed response {}: {}",
                        session.id, response.id, e.message
                    );
                }
            }
            Err(e) => {
                eprintln!("chatwire-reference: session {}: response for {tool_call_id} unreadable: {e}", session.id)
            }
        }
    }
    if g.state.run.status == RunStatus::Running && !g.driver_active {
        let invocation = g.state.run.invocation_id.clone();
        let interrupted: Vec<Id> = g
            .state
            .open_tool_calls(invocation.as_ref())
            .filter(|c| c.status == ToolCallStatus::Running)
            .map(|c| c.id.clone())
            .collect();
        if interrupted.is_empty() && g.cursor.invocation_id == invocation {
            start_driver(session, &mut g);
        } else if let Some(invocation) = invocation {
            if let Err(e) = end_run_failed(session, &mut g, invocation, "interrupted", "interrupted") {
                eprintln!("chatwire-reference: session {}: cannot settle interrupted run: {e}", session.id);
            }
        }
    }
    for (id, deadline) in timers {
        match Id::parse(id) {
            Ok(id) => schedule_expiry(session, &mut g, id, deadline),
            Err(e) => eprintln!("chatwire-reference: session {}: stored timer id invalid: {e}", session.id),
        }
    }
}

/// Ends a run that cannot go on (a crash while a tool ran, or an agent step the protocol refuses):
/// running calls fail with `error`, pending ones are dismissed by the server, the run fails.
fn end_run_failed(
    session: &Arc<Session>,
    g: &mut Inner,
    invocation: Id,
    reason: &str,
    error: &str,
) -> Result<(), EmitError> {
    let ts = rfc3339_now();
    let mut change = Change::default();
    for call in g.state.open_tool_calls(Some(&invocation)) {
        let frame = if call.status == ToolCallStatus::Running {
            ServerFrame::ToolCallComplete(ToolCallComplete {
                seq: 0,
                tool_call_id: call.id.clone(),
                status: CompletionStatus::Failed,
                result: None,
                error: Some(error.to_owned()),
                summary: None,
                in_reply_to: None,
                ts: ts.clone(),
            })
        } else {
            change.remove_timers.push(call.id.clone());
            ServerFrame::ToolCallDismiss(ToolCallDismiss {
                seq: 0,
                tool_call_id: call.id.clone(),
                initiated_by: Initiator::Server,
                reason: Some(reason.to_owned()),
                in_reply_to: None,
                ts: ts.clone(),
            })
        };
        change.units.push(Unit::Event(frame));
    }
    change.units.push(Unit::Event(run_complete(&invocation, RunCompleteStatus::Failed, reason, Some(error))));
    change.cursor = Some(Cursor { invocation_id: None, step: 0, batch: None, ..g.cursor.clone() });
    emit(session, g, change)
}

fn run_complete(invocation: &Id, status: RunCompleteStatus, reason: &str, error: Option<&str>) -> ServerFrame {
    ServerFrame::RunComplete(RunComplete {
        seq: 0,
        invocation_id: invocation.clone(),
        status,
        reason: Some(reason.to_owned()),
        error: error.map(str::to_owned),
        ts: rfc3339_now(),
    })
}

fn run_started(invocation: &Id) -> ServerFrame {
    ServerFrame::RunStarted(RunStarted { seq: 0, invocation_id: invocation.clone(), ts: rfc3339_now() })
}

/// Opens a new session for a `session.hello` without `resume`.
pub(crate) async fn open_session(
    shared: &Arc<Shared>,
    conn: &ConnHandle,
    hello_id: Id,
    version: ProtocolVersion,
    agent: AgentSpec,
) -> Result<Arc<Session>, Refusal> {
    let id = random_id("s", 16);
    let token = random_id("rt", 32);
    let token_hash = hash_token(token.as_str());
    let cursor = Cursor::default();
    let agent_json = serde_json::to_string(&agent).map_err(EmitError::from)?;
    let cursor_json = serde_json::to_string(&cursor).map_err(EmitError::from)?;
    // welcome = 1, snapshot = 2: the seqs are reserved in the same insert.
    shared
        .store
        .create_session(&NewSession {
            id: id.as_str(),
            token_hash: &token_hash,
            agent: &agent_json,
            cursor: &cursor_json,
            next_seq: 3,
        })
        .map_err(EmitError::from)?;
    let session = Arc::new(Session {
        id: id.clone(),
        shared: shared.clone(),
        inner: Mutex::new(Inner {
            state: UiState::default(),
            next_seq: 3,
            token_hash,
            agent,
            cursor,
            plan: None,
            accepted_messages: HashSet::new(),
            attached: Some(conn.clone()),
            driver_active: false,
            timers: HashMap::new(),
            evicted: false,
        }),
    });
    shared.sessions.lock().await.insert(id, session.clone());
    let mut g = session.inner.lock().await;
    greet(&session, &mut g, conn, hello_id, version, token, false, 1)?;
    drop(g);
    Ok(session)
}

/// Sends `session.welcome` then `ui_state_snapshot` with seqs `first` and `first + 1`.
#[allow(clippy::too_many_arguments)] // one call per hello kind; a struct would only rename them
fn greet(
    session: &Session,
    g: &mut Inner,
    conn: &ConnHandle,
    hello_id: Id,
    version: ProtocolVersion,
    token: Id,
    resumed: bool,
    first: u64,
) -> Result<(), Refusal> {
    let sh = &session.shared;
    let welcome = ServerFrame::Welcome(SessionWelcome {
        seq: first,
        in_reply_to: hello_id,
        version,
        session_id: session.id.clone(),
        resume_token: token,
        resumed,
        capabilities: sh.capabilities(),
        limits: Limits { max_frame_bytes: sh.max_frame_bytes },
        server: Some(concat!("chatwire-reference/", env!("CARGO_PKG_VERSION")).to_owned()),
    });
    conn.send(Outgoing::Text(serde_json::to_string(&welcome).map_err(EmitError::from)?));
    let skip_snapshot = resumed && sh.faults.is(Fault::SnapshotMissingOnResume);
    if !skip_snapshot {
        let presented = sh.faults.present(&g.state, true);
        let text = if resumed && sh.faults.is(Fault::PendingLostOnResume) {
            let mut s = presented.into_owned();
            s.items.retain(|i| !matches!(i, DisplayItem::ToolCall(c) if c.status == ToolCallStatus::Pending));
            state_frame("ui_state_snapshot", first + 1, &s)
        } else {
            state_frame("ui_state_snapshot", first + 1, &presented)
        };
        conn.send(Outgoing::Text(text.map_err(EmitError::from)?));
    }
    Ok(())
}

/// Resumes a session for a `session.hello` with `resume`; an older connection is taken over.
pub(crate) async fn resume_session(
    shared: &Arc<Shared>,
    conn: &ConnHandle,
    hello_id: Id,
    version: ProtocolVersion,
    resume: &chatwire_schema::session::hello::Resume,
) -> Result<Arc<Session>, Refusal> {
    let rejected = || Refusal::new(ErrorCode::ResumeRejected, "resume refused: unknown session or wrong resume token");
    // A retry loop only for the race where the session is evicted between lookup and lock.
    for _ in 0..3 {
        let session = shared.get_or_load(&resume.session_id).await.map_err(EmitError::from)?.ok_or_else(rejected)?;
        let mut g = session.inner.lock().await;
        if g.evicted {
            continue;
        }
        let token_ok = constant_time_eq(hash_token(resume.resume_token.as_str()).as_bytes(), g.token_hash.as_bytes());
        if !token_ok && !shared.faults.is(Fault::ResumeSkipsTokenCheck) {
            return Err(rejected());
        }
        if resume.last_seq > g.last_seq() {
            return Err(Refusal::new(
                ErrorCode::ResumeCursorAhead,
                format!("last_seq {} is ahead of the last seq sent on this session", resume.last_seq),
            ));
        }
        if let Some(old) = g.attached.take() {
            let code = ErrorCode::SessionTakenOver;
            g.send_error(&session, &old, Refusal::new(code, "another connection resumed this session"), None);
            if let Some(close) = code.close_code() {
                old.send(Outgoing::Close(close));
            }
        }
        let first = g.next_seq;
        shared
            .store
            .commit(session.id.as_str(), &Commit { next_seq: first + 2, ..Commit::default() })
            .map_err(EmitError::from)?;
        g.next_seq = first + 2;
        g.attached = Some(conn.clone());
        greet(&session, &mut g, conn, hello_id, version, resume.resume_token.clone(), true, first)?;
        drop(g);
        return Ok(session);
    }
    Err(Refusal::new(ErrorCode::InternalError, "the session could not be loaded, try again"))
}

/// Detaches `conn` from the session (connection closed).
pub(crate) async fn detach(session: &Arc<Session>, conn: &ConnHandle) {
    {
        let mut g = session.inner.lock().await;
        if g.is_attached(conn) {
            g.attached = None;
        }
    }
    session.shared.evict_if_quiescent(session).await;
}

/// `chat.user_message`: opens a turn (dismissing calls it supersedes) and starts the agent.
pub(crate) fn user_message(session: &Arc<Session>, g: &mut Inner, msg: UserMessage) -> Result<(), Refusal> {
    if g.state.run.status.is_active() {
        return Err(Refusal::new(ErrorCode::RunInProgress, "a run is in progress; wait for run_complete"));
    }
    if g.accepted_messages.contains(&msg.id) {
        return Err(Refusal::new(ErrorCode::DuplicateMessage, format!("message {} was already accepted", msg.id)));
    }
    let ts = rfc3339_now();
    let mut change = Change::default();
    for call in g.state.open_tool_calls(None) {
        change.remove_timers.push(call.id.clone());
        change.units.push(Unit::Event(ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: call.id.clone(),
            initiated_by: Initiator::Server,
            reason: Some("superseded".into()),
            in_reply_to: None,
            ts: ts.clone(),
        })));
    }
    let invocation = random_id("inv", 8);
    change.units.push(Unit::Event(ServerFrame::UserMessageAccepted(UserMessageAccepted {
        seq: 0,
        in_reply_to: msg.id.clone(),
        invocation_id: invocation.clone(),
        item_id: random_id("um", 8),
        text: msg.text.clone(),
        ts,
    })));
    change.units.push(Unit::Event(run_started(&invocation)));
    let plan = g.agent.plan_turn(g.cursor.turns_accepted, &msg.text);
    change.cursor = Some(Cursor {
        turns_accepted: g.cursor.turns_accepted + 1,
        invocation_id: Some(invocation),
        step: 0,
        batch: None,
    });
    change.plan = Some(plan);
    let id = msg.id.clone();
    change.requests.push(ClientFrame::UserMessage(msg));
    emit(session, g, change)?;
    g.accepted_messages.insert(id);
    start_driver(session, g);
    Ok(())
}

/// `chat.tool_call_response`: validated, committed, then executed.
pub(crate) fn tool_call_response(
    session: &Arc<Session>,
    g: &mut Inner,
    conn: &ConnHandle,
    response: ToolCallResponse,
) -> Result<(), Refusal> {
    let Some(call) = g.state.tool_call(&response.tool_call_id) else {
        return Err(Refusal::new(
            ErrorCode::UnknownToolCall,
            format!("no tool call {} in this session", response.tool_call_id),
        ));
    };
    if call.status.is_terminal() {
        if session.shared.faults.is(Fault::DuplicateResponseExecuted) {
            return execute_again(session, g, conn, &response);
        }
        return Err(Refusal::new(
            ErrorCode::ToolCallSettled,
            format!("tool call {} already settled as {:?}", call.id, call.status).to_lowercase(),
        ));
    }
    if call.status != ToolCallStatus::Pending || !call.awaiting_response {
        return Err(Refusal::new(
            ErrorCode::ToolCallNotAwaiting,
            format!("tool call {} does not await a response", call.id),
        ));
    }
    crash_if(&session.shared, CrashPoint::ResponseReceived);
    let frame = serde_json::to_string(&response).map_err(EmitError::from)?;
    let commit = Commit {
        next_seq: g.next_seq,
        log: vec![LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: "chat.tool_call_response".into(),
            frame: serde_json::to_string(&ClientFrame::ToolCallResponse(response.clone())).map_err(EmitError::from)?,
        }],
        add_pending: vec![(response.tool_call_id.to_string(), frame)],
        ..Commit::default()
    };
    session.shared.store.commit(session.id.as_str(), &commit).map_err(EmitError::from)?;
    crash_if(&session.shared, CrashPoint::ResponseCommitted);
    execute_response(session, g, &response)
}

/// Fault `duplicate-response-executed`: the settled call is "completed" once more on the wire.
fn execute_again(
    session: &Arc<Session>,
    g: &mut Inner,
    conn: &ConnHandle,
    response: &ToolCallResponse,
) -> Result<(), Refusal> {
    let seq = g.next_seq;
    session
        .shared
        .store
        .commit(session.id.as_str(), &Commit { next_seq: seq + 1, ..Commit::default() })
        .map_err(EmitError::from)?;
    g.next_seq = seq + 1;
    let result = match &response.outcome {
        ResponseOutcome::Submit { value } => Some(value.clone()),
        ResponseOutcome::Dismiss { .. } => None,
    };
    let frame = ServerFrame::ToolCallComplete(ToolCallComplete {
        seq,
        tool_call_id: response.tool_call_id.clone(),
        status: CompletionStatus::Completed,
        result,
        error: None,
        summary: None,
        in_reply_to: Some(response.id.clone()),
        ts: rfc3339_now(),
    });
    conn.send(Outgoing::Text(serde_json::to_string(&frame).map_err(EmitError::from)?));
    Ok(())
}

/// Executes a committed response: settles the call (opening a run slice if the turn waited) and
/// lets the driver continue the turn.
fn execute_response(session: &Arc<Session>, g: &mut Inner, response: &ToolCallResponse) -> Result<(), Refusal> {
    let mut change = Change { remove_pending: vec![response.tool_call_id.clone()], ..Change::default() };
    let Some(call) = g.state.tool_call(&response.tool_call_id).filter(|c| c.status == ToolCallStatus::Pending) else {
        // Settled meanwhile (e.g. expired before the crash): the response has nothing left to do.
        emit(session, g, change)?;
        return Ok(());
    };
    let invocation = call.invocation_id.clone();
    let ts = rfc3339_now();
    let opens_slice = !g.state.run.status.is_active();
    if opens_slice {
        change.units.push(Unit::Event(run_started(&invocation)));
    }
    let summary = match g.batch_call(&response.tool_call_id).map(|c| &c.outcome) {
        Some(ScriptOutcome::AwaitResponse { summary, .. }) => summary.clone(),
        _ => None,
    };
    let settlement = match &response.outcome {
        ResponseOutcome::Submit { value } => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: response.tool_call_id.clone(),
            status: CompletionStatus::Completed,
            result: Some(value.clone()),
            error: None,
            summary,
            in_reply_to: Some(response.id.clone()),
            ts,
        }),
        ResponseOutcome::Dismiss { reason } => ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: response.tool_call_id.clone(),
            initiated_by: Initiator::Client,
            reason: reason.clone(),
            in_reply_to: Some(response.id.clone()),
            ts,
        }),
    };
    change.units.push(Unit::Event(settlement));
    change.remove_timers.push(response.tool_call_id.clone());
    emit(session, g, change)?;
    if opens_slice {
        start_driver(session, g);
    }
    Ok(())
}

/// `chat.rewind`: cuts the effective state before an invocation, durably.
pub(crate) fn rewind(session: &Arc<Session>, g: &mut Inner, rewind: Rewind) -> Result<(), Refusal> {
    if g.state.run.status.is_active() {
        return Err(Refusal::new(ErrorCode::RunInProgress, "a run is in progress; wait for run_complete"));
    }
    let invocations = g.state.invocations();
    let Some(cut) = invocations.iter().position(|i| *i == &rewind.before_invocation_id) else {
        return Err(Refusal::new(
            ErrorCode::UnknownInvocation,
            format!("no invocation {} in the effective state", rewind.before_invocation_id),
        ));
    };
    let complete = |cut: usize| {
        ServerFrame::RewindComplete(RewindComplete {
            seq: 0,
            in_reply_to: rewind.id.clone(),
            before_invocation_id: invocations[cut].clone(),
            removed_invocation_ids: invocations[cut..].iter().map(|i| (*i).clone()).collect(),
            ts: rfc3339_now(),
        })
    };
    let unit = if session.shared.faults.is(Fault::RewindWrongCut) && invocations.len() > 1 {
        let wrong = if cut + 1 < invocations.len() { cut + 1 } else { cut - 1 };
        Unit::Misannounced { applied: Box::new(complete(wrong)), announced: Box::new(complete(cut)) }
    } else {
        Unit::Event(complete(cut))
    };
    let removed: HashSet<&Id> = invocations[cut..].iter().copied().collect();
    let mut change = Change {
        remove_timers: g
            .state
            .open_tool_calls(None)
            .filter(|c| removed.contains(&c.invocation_id))
            .map(|c| c.id.clone())
            .collect(),
        ..Change::default()
    };
    change.units.push(unit);
    // Script turns are not rewound: the next message runs the next turn.
    change.cursor = Some(Cursor { invocation_id: None, step: 0, batch: None, ..g.cursor.clone() });
    change.requests.push(ClientFrame::Rewind(rewind));
    emit(session, g, change)?;
    Ok(())
}

fn schedule_expiry(session: &Arc<Session>, g: &mut Inner, tool_call_id: Id, deadline_ms: i64) {
    if session.shared.faults.is(Fault::ExpiryIgnored) {
        return;
    }
    let s = session.clone();
    let id = tool_call_id.clone();
    let task = tokio::spawn(async move {
        let wait = u64::try_from(deadline_ms - now_ms()).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let mut g = s.inner.lock().await;
        g.timers.remove(&id);
        if let Err(e) = expire(&s, &mut g, &id) {
            eprintln!("chatwire-reference: session {}: expiring {id}: {e}", s.id);
        }
        drop(g);
        s.shared.evict_if_quiescent(&s).await;
    });
    if let Some(old) = g.timers.insert(tool_call_id, task.abort_handle()) {
        old.abort();
    }
}

/// A pending call's deadline passed: it expires, and a waiting turn goes on.
fn expire(session: &Arc<Session>, g: &mut Inner, tool_call_id: &Id) -> Result<(), EmitError> {
    let mut change = Change { remove_timers: vec![tool_call_id.clone()], ..Change::default() };
    let Some(call) = g.state.tool_call(tool_call_id).filter(|c| c.status == ToolCallStatus::Pending) else {
        return emit(session, g, change);
    };
    let invocation = call.invocation_id.clone();
    let opens_slice = !g.state.run.status.is_active();
    if opens_slice {
        change.units.push(Unit::Event(run_started(&invocation)));
    }
    change.units.push(Unit::Event(ServerFrame::ToolCallComplete(ToolCallComplete {
        seq: 0,
        tool_call_id: tool_call_id.clone(),
        status: CompletionStatus::Expired,
        result: None,
        error: Some("expired".into()),
        summary: None,
        in_reply_to: None,
        ts: rfc3339_now(),
    })));
    emit(session, g, change)?;
    if opens_slice {
        start_driver(session, g);
    }
    Ok(())
}

/// Starts the run driver of the session unless it is already running.
pub(crate) fn start_driver(session: &Arc<Session>, g: &mut Inner) {
    if g.driver_active {
        return;
    }
    g.driver_active = true;
    let s = session.clone();
    tokio::spawn(async move {
        drive(&s).await;
        s.shared.evict_if_quiescent(&s).await;
    });
}

/// What the driver does next.
enum Next {
    /// Look again right away.
    Continue,
    /// Sleep, then look again.
    Sleep(u64),
    /// Run a self-settling tool: wait `run_ms`, then report and settle it.
    RunTool { call: Box<ScriptToolCall>, id: Id },
    /// The slice is over (or something went wrong).
    Stop,
}

/// The run driver: executes the current turn's plan step by step, each step committed with the
/// cursor that says it is done.
async fn drive(session: &Arc<Session>) {
    // Bounded: every iteration commits progress or sleeps; a plan has finitely many steps.
    loop {
        let next = {
            let mut g = session.inner.lock().await;
            let next = next_step(session, &mut g).unwrap_or_else(|e| {
                abandon_turn(session, &mut g, &e);
                Next::Stop
            });
            if matches!(next, Next::Stop) {
                g.driver_active = false;
            }
            next
        };
        match next {
            Next::Continue => {}
            Next::Stop => return,
            Next::Sleep(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            Next::RunTool { call, id } => {
                if call.run_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(call.run_ms)).await;
                }
                let mut g = session.inner.lock().await;
                if let Err(e) = settle_tool(session, &mut g, &call, &id) {
                    abandon_turn(session, &mut g, &e);
                    g.driver_active = false;
                    return;
                }
            }
        }
    }
}

/// A step failed (e.g. the agent planned a frame the reducer refuses): the run ends `failed`,
/// reason `agent_error`, rather than staying `running` forever.
fn abandon_turn(session: &Arc<Session>, g: &mut Inner, cause: &EmitError) {
    eprintln!("chatwire-reference: session {}: turn abandoned: {cause}", session.id);
    let Some(invocation) = g.state.run.invocation_id.clone().filter(|_| g.state.run.status == RunStatus::Running)
    else {
        return;
    };
    let error = format!("the agent step could not be carried out: {cause}");
    if let Err(e) = end_run_failed(session, g, invocation, "agent_error", &error) {
        eprintln!("chatwire-reference: session {}: cannot end the abandoned run: {e}", session.id);
    }
}

fn next_step(session: &Arc<Session>, g: &mut Inner) -> Result<Next, EmitError> {
    let invocation = match (&g.state.run.invocation_id, &g.cursor.invocation_id) {
        (Some(run), Some(cur)) if run == cur && g.state.run.status == RunStatus::Running => run.clone(),
        _ => return Ok(Next::Stop),
    };
    let step = g.plan.as_ref().and_then(|p| p.steps.get(g.cursor.step)).cloned();
    let ended = Cursor { invocation_id: None, step: 0, batch: None, ..g.cursor.clone() };
    if let Some(batch) = &g.cursor.batch {
        let Some(ScriptStep::ToolCalls { calls, settle_order }) = &step else {
            return Err(EmitError::NotAnEvent("cursor points into a batch but the step is not tool_calls"));
        };
        let order = settle_sequence(calls, settle_order.as_deref());
        if let Some(&index) = order.get(batch.settled) {
            let index = index as usize;
            return Ok(Next::RunTool { call: Box::new(calls[index].clone()), id: batch.call_ids[index].clone() });
        }
        if g.state.open_tool_calls(Some(&invocation)).next().is_some() {
            let frame = run_complete(&invocation, RunCompleteStatus::AwaitingInput, "awaiting_user_input", None);
            emit(session, g, Change { units: vec![Unit::Event(frame)], ..Change::default() })?;
            return Ok(Next::Stop);
        }
        g.cursor.batch = None;
        g.cursor.step += 1;
        return Ok(Next::Continue);
    }
    let ts = rfc3339_now();
    let (units, cursor, add_timers) = match step {
        None if g.plan.is_none() => {
            let frame = run_complete(
                &invocation,
                RunCompleteStatus::Failed,
                "script_exhausted",
                Some("the script has no turn for this message"),
            );
            (vec![Unit::Event(frame)], ended, Vec::new())
        }
        None => (
            vec![Unit::Event(run_complete(&invocation, RunCompleteStatus::Completed, "completed", None))],
            ended,
            Vec::new(),
        ),
        Some(ScriptStep::Say { markdown }) => {
            let frame = ServerFrame::AssistantMessage(AssistantMessage {
                seq: 0,
                invocation_id: invocation.clone(),
                item_id: random_id("am", 8),
                markdown,
                ts,
            });
            (vec![Unit::Event(frame)], Cursor { step: g.cursor.step + 1, ..g.cursor.clone() }, Vec::new())
        }
        Some(ScriptStep::Wait { ms }) => {
            // Not committed on its own: after a crash during the wait, the wait is redone.
            g.cursor.step += 1;
            return Ok(Next::Sleep(ms));
        }
        Some(ScriptStep::End { status, error }) => {
            let (status, reason) = match status {
                ScriptEnd::Completed => (RunCompleteStatus::Completed, "completed"),
                ScriptEnd::Failed => (RunCompleteStatus::Failed, "failed"),
                ScriptEnd::Cancelled => (RunCompleteStatus::Cancelled, "cancelled"),
            };
            (vec![Unit::Event(run_complete(&invocation, status, reason, error.as_deref()))], ended, Vec::new())
        }
        Some(ScriptStep::ToolCalls { calls, .. }) => {
            let ids: Vec<Id> = calls.iter().map(|_| random_id("tc", 8)).collect();
            let batch = calls
                .iter()
                .zip(&ids)
                .enumerate()
                .map(|(index, (c, id))| {
                    ServerFrame::ToolCall(ToolCall {
                        seq: 0,
                        invocation_id: invocation.clone(),
                        tool_call_id: id.clone(),
                        corr: None,
                        tool_name: c.tool_name.clone(),
                        component_type: c.component_type.clone(),
                        workflow_name: c.workflow_name.clone(),
                        interaction_type: c.interaction_type,
                        awaiting_response: c.outcome.awaits_response(),
                        display: c.display,
                        payload: c.payload.clone(),
                        call_index: index as u32,
                        ts: ts.clone(),
                    })
                })
                .collect();
            let mut units = vec![Unit::Batch(batch)];
            let mut timers = Vec::new();
            for (c, id) in calls.iter().zip(&ids) {
                if let ScriptOutcome::AwaitResponse { expire_after_ms, .. } = &c.outcome {
                    units.extend(output_units(c, id, &ts));
                    if let Some(ms) = expire_after_ms {
                        timers.push((id.clone(), now_ms().saturating_add(i64::try_from(*ms).unwrap_or(i64::MAX))));
                    }
                }
            }
            let cursor = Cursor { batch: Some(BatchCursor { call_ids: ids, settled: 0 }), ..g.cursor.clone() };
            (units, cursor, timers)
        }
    };
    emit(session, g, Change { units, cursor: Some(cursor), add_timers, ..Change::default() })?;
    Ok(Next::Continue)
}

/// The `chat.tool_output` frames of a scripted call: one per approval, then one with the rest.
fn output_units(call: &ScriptToolCall, id: &Id, ts: &str) -> Vec<Unit> {
    let Some(out) = &call.output else { return Vec::new() };
    let blank = ToolOutput {
        seq: 0,
        tool_call_id: id.clone(),
        command: None,
        approval: None,
        stdout: None,
        stderr: None,
        exit_code: None,
        ts: ts.to_owned(),
    };
    // SCRIPT-011: one frame per present part, in the order command, approvals, stdout, stderr, exit_code.
    let part = |edit: &dyn Fn(&mut ToolOutput)| {
        let mut frame = blank.clone();
        edit(&mut frame);
        Unit::Event(ServerFrame::ToolOutput(frame))
    };
    let mut units = Vec::new();
    if let Some(command) = &out.command {
        units.push(part(&|f| f.command = Some(command.clone())));
    }
    for approval in &out.approvals {
        units.push(part(&|f| f.approval = Some(*approval)));
    }
    if let Some(stdout) = &out.stdout {
        units.push(part(&|f| f.stdout = Some(stdout.clone())));
    }
    if let Some(stderr) = &out.stderr {
        units.push(part(&|f| f.stderr = Some(stderr.clone())));
    }
    if let Some(code) = out.exit_code {
        units.push(part(&|f| f.exit_code = Some(code)));
    }
    units
}

/// Reports a self-settling tool's progress and output, then settles it per its outcome.
fn settle_tool(session: &Arc<Session>, g: &mut Inner, call: &ScriptToolCall, id: &Id) -> Result<(), EmitError> {
    let Some(batch) = g.cursor.batch.clone() else { return Ok(()) };
    let ts = rfc3339_now();
    let mut units: Vec<Unit> = call
        .progress
        .iter()
        .map(|p| {
            Unit::Event(ServerFrame::ToolProgress(ToolProgress {
                seq: 0,
                tool_call_id: id.clone(),
                message: p.message.clone(),
                fraction: p.fraction,
                ts: ts.clone(),
            }))
        })
        .collect();
    units.extend(output_units(call, id, &ts));
    let settlement = match &call.outcome {
        ScriptOutcome::Result { value, summary } => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: id.clone(),
            status: CompletionStatus::Completed,
            result: Some(value.clone()),
            error: None,
            summary: summary.clone(),
            in_reply_to: None,
            ts,
        }),
        ScriptOutcome::Error { message } => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: id.clone(),
            status: CompletionStatus::Failed,
            result: None,
            error: Some(message.clone()),
            summary: None,
            in_reply_to: None,
            ts,
        }),
        ScriptOutcome::Dismiss { reason } => ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: id.clone(),
            initiated_by: Initiator::Server,
            reason: reason.clone(),
            in_reply_to: None,
            ts,
        }),
        ScriptOutcome::AwaitResponse { .. } => return Err(EmitError::NotAnEvent("an awaited call cannot self-settle")),
    };
    units.push(Unit::Event(settlement));
    let cursor = Cursor { batch: Some(BatchCursor { settled: batch.settled + 1, ..batch }), ..g.cursor.clone() };
    emit(session, g, Change { units, cursor: Some(cursor), ..Change::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_state_frame_serializes_like_the_schema_type() {
        let state = UiState::default();
        let typed = ServerFrame::UiStateUpdated(chatwire_schema::ui_state_updated::UiStateUpdated {
            seq: 7,
            v: UiStateVersion::V1,
            state: state.clone(),
        });
        assert_eq!(state_frame("ui_state_updated", 7, &state).unwrap(), serde_json::to_string(&typed).unwrap());
        let typed = ServerFrame::UiStateSnapshot(chatwire_schema::ui_state_snapshot::UiStateSnapshot {
            seq: 2,
            v: UiStateVersion::V1,
            state: state.clone(),
        });
        assert_eq!(state_frame("ui_state_snapshot", 2, &state).unwrap(), serde_json::to_string(&typed).unwrap());
    }
}
