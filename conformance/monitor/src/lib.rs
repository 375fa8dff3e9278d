//! The session monitor: a pure, I/O-free observer of Chatwire traffic. Frames go in per connection
//! and in both directions (with closes and cuts); typed [`Finding`]s come out, each naming exactly
//! the requirement it breaks. It holds every always-on check and the differential oracle, and is
//! driven alike by the live runner (`driver`) and offline by `check-log` over a recorded wire log.
//!
//! Where each check lives (its definition beside its logic):
//! - [`frame`]: one JSON object per text frame, schema, unknown members, ids, `ts`, text only;
//! - [`session`]: `seq`, handshake, one update per event, batch order, ids, settled calls;
//! - [`features`]: the features in force (since 1.1) and nothing of a feature where it is not;
//! - [`oracle`]: the differential oracle and the reducer's refusals;
//! - [`patch`]: the patch oracle (since 1.1): base_seq, shape, application, catch-up;
//! - `owed`: a snapshot where a catch-up is owed (since 1.1, RESUME-017);
//! - [`stream`]: streamed text against the script (since 1.1): chunks, the end, resumes;
//! - [`retry`]: answers to `chat.retry` and the retried run (since 1.1);
//! - [`reopen`]: a settlement that reopens a turn comes after its `run_started` (RUN-007);
//! - [`errors`]: `fatal` flags, closes after errors;
//! - [`attach`]: several connections on one session (since 1.2): every event reaches every tab
//!   under one seq, answers only the requester, the tabs' views agree;
//! - [`cluster`]: several instances of one deployment (`--replicas`): one seq one frame, one driver;
//! - [`advice`]: the should-level checks;
//! - `diverge`: after a divergence from the oracle's fold, later findings that follow from it are
//!   not charged again, until a state frame gives the server's state.

#![warn(missing_docs)]

pub mod advice;
pub mod attach;
pub mod cancel;
pub mod check;
pub mod cluster;
mod diverge;
pub mod errors;
pub mod features;
pub mod frame;
mod holding;
pub mod normalize;
pub mod oracle;
mod owed;
pub mod patch;
mod redact;
pub mod reopen;
pub mod retry;
pub mod session;
mod shared;
pub mod stream;
pub mod text;
pub mod version;
pub mod window;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use chatwire_schema::schema_gen::Direction;
use chatwire_schema::{FrameValidator, ReqId, ServerFrame, UiState};
use serde_json::Value;

pub use check::{CheckDef, Finding};

use check::Raw;
use session::{ConnState, PendingHello, SessionTrack};

use normalize::Normalizer;

/// Every always-on check, in report order.
pub static ALWAYS_ON: &[&CheckDef] = &[
    &frame::WIRE_SCHEMA_VALID,
    &frame::TEXT_FRAMES_ONLY,
    &frame::TS_FORMAT,
    &version::NEGOTIATED_VERSION_ONLY,
    &features::FEATURES_AS_NEGOTIATED,
    &features::FEATURE_FRAMES_IN_FORCE_ONLY,
    &session::SEQ_INCREASING,
    &session::WELCOME_THEN_SNAPSHOT,
    &session::UPDATE_AFTER_EVENT,
    &patch::PATCH_IN_PLACE_OF_UPDATE,
    &oracle::STATE_MATCHES_REDUCER,
    &patch::PATCH_MATCHES_REDUCER,
    &patch::CATCH_UP_RESUME,
    &stream::SAY_CHUNKS_AS_SCRIPTED,
    &stream::STREAM_CONTINUES_AFTER_RESUME,
    &retry::RETRY_ANSWERED,
    &retry::RETRY_KEEPS_CALLS,
    &retry::RETRY_REMOVED_CALL_UNKNOWN,
    &retry::RETRY_PLAYS_RETRY_STEPS,
    &cancel::CANCEL_ANSWERED,
    &cancel::CANCEL_CLOSES_RUN,
    &cancel::CANCELLED_RUN_STAYS_CLOSED,
    &cancel::RESPONSE_SCHEMA_ENFORCED,
    &attach::EVENTS_REACH_EVERY_TAB,
    &attach::ANSWERS_TO_REQUESTER,
    &attach::ATTACHED_VIEWS_AGREE,
    &attach::ATTACH_LIMIT_ANNOUNCED,
    &cluster::ONE_SEQ_ONE_FRAME,
    &cluster::RUN_DRIVEN_ONCE,
    &window::WINDOW_SNAPSHOT,
    &window::WINDOW_VIEW,
    &window::HISTORY_PAGES,
    &oracle::EVENTS_ACCEPTED,
    &session::IDS_CONSISTENT,
    &session::BATCH_ORDER,
    &session::SETTLED_STAYS_SETTLED,
    &reopen::RUN_STARTED_BEFORE_SETTLEMENT,
    &errors::ERRORS_WELL_FORMED,
    &errors::NONFATAL_KEEPS_OPEN,
    &advice::FRAME_LIMIT_DEFAULT,
    &advice::RUN_COMPLETE_EXPLAINED,
    &advice::ERROR_MESSAGE_STYLE,
    &advice::TOOL_REPORTS_COHERENT,
];

/// The always-on checks that only connections which negotiated 1.1 or later exercise in full
/// (features, patches, catch-up): against a server that speaks only 1.0 they evaluate little or
/// nothing, which coverage accounting has to know.
pub static SINCE_1_1: &[&CheckDef] = &[
    &features::FEATURES_AS_NEGOTIATED,
    &features::FEATURE_FRAMES_IN_FORCE_ONLY,
    &patch::PATCH_IN_PLACE_OF_UPDATE,
    &patch::PATCH_MATCHES_REDUCER,
    &patch::CATCH_UP_RESUME,
    &stream::SAY_CHUNKS_AS_SCRIPTED,
    &stream::STREAM_CONTINUES_AFTER_RESUME,
    &retry::RETRY_ANSWERED,
    &retry::RETRY_KEEPS_CALLS,
    &retry::RETRY_REMOVED_CALL_UNKNOWN,
    &retry::RETRY_PLAYS_RETRY_STEPS,
];

/// What the monitor reads from the script a session was opened with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionScript {
    /// Its `say` steps (SCRIPT-019, STREAM-003).
    pub says: stream::ScriptSays,
    /// What its retries play (SCRIPT-020).
    pub retries: retry::RetrySteps,
}

impl SessionScript {
    /// Reads `session.hello.script`.
    pub fn from_script(script: &Value) -> Self {
        SessionScript { says: stream::ScriptSays::from_script(script), retries: retry::RetrySteps::from_script(script) }
    }
}

/// Longest frame excerpt in a finding.
pub const FRAME_EXCERPT: usize = 400;

/// The findings and evaluations of one observed frame, before the monitor adds frame and connection.
#[derive(Default)]
pub(crate) struct Out {
    pub raws: Vec<Raw>,
    pub evaluated: Vec<(&'static CheckDef, ReqId)>,
    /// The frame gives the client a state the monitor knows is not the session's, under this
    /// requirement, without a finding of its own (`diverge`): a scenario's check of that state
    /// proves it, and what follows from it is not charged again.
    pub apart: Option<ReqId>,
}

impl Out {
    /// A check ran and found `requirement` kept.
    pub fn eval(&mut self, check: &'static CheckDef, requirement: ReqId) {
        self.evaluated.push((check, requirement));
    }

    /// A check ran and found `requirement` broken.
    pub fn fail(&mut self, check: &'static CheckDef, requirement: ReqId, message: impl Into<String>) {
        self.raws.push(Raw::new(check, requirement, message));
    }
}

/// What a server text frame turned out to be.
#[derive(Debug)]
pub struct Received {
    /// The frame as JSON, when it is JSON.
    pub value: Option<Value>,
    /// The frame as a typed server frame, when it is valid.
    pub frame: Option<ServerFrame>,
}

/// Observes the traffic of one run (a scenario, or a recorded log): any number of connections, each
/// named by a number the caller chooses and never reuses.
#[derive(Debug)]
pub struct Monitor {
    validator: Arc<FrameValidator>,
    conns: BTreeMap<u64, ConnState>,
    sessions: HashMap<String, SessionTrack>,
    /// The session of the latest welcome.
    current_session: Option<String>,
    /// The ids of every frame the client sent (ERROR-004: in_reply_to names one of them).
    sent_ids: HashSet<String>,
    /// The client's retries and responses to removed calls, until their answer.
    asks: retry::Asks,
    /// The cancel and response-schema checks' own state.
    cancels: cancel::CancelWatch,
    /// The checks of several connections on one session (since 1.2).
    attach: attach::AttachWatch,
    /// The checks of several instances of one deployment.
    cluster: cluster::ClusterWatch,
    advisor: advice::Advisor,
    versions: version::Versions,
    redactor: Normalizer,
    findings: Vec<Finding>,
    evaluated: BTreeMap<&'static str, BTreeSet<ReqId>>,
}

impl Monitor {
    /// A monitor with no connection yet.
    pub fn new(validator: Arc<FrameValidator>) -> Self {
        Monitor {
            validator,
            conns: BTreeMap::new(),
            sessions: HashMap::new(),
            current_session: None,
            sent_ids: HashSet::new(),
            asks: retry::Asks::default(),
            cancels: cancel::CancelWatch::default(),
            attach: attach::AttachWatch::default(),
            cluster: cluster::ClusterWatch::default(),
            advisor: advice::Advisor::default(),
            versions: version::Versions::default(),
            redactor: Normalizer::default(),
            findings: Vec::new(),
            evaluated: BTreeMap::new(),
        }
    }

    /// The traffic is that of a deployment of several instances (`run --replicas N`, N > 1): the
    /// cluster checks (`spec/cluster.md`) run.
    pub fn cluster(&mut self) {
        self.cluster.enable();
    }

    /// A connection `conn` was opened.
    pub fn open(&mut self, conn: u64) {
        self.conns.insert(conn, ConnState::default());
    }

    /// The client sent `text` on `conn` (any text, valid or not).
    pub fn client_text(&mut self, conn: u64, text: &str) {
        let Ok(frame) = serde_json::from_str::<Value>(text) else { return };
        self.client_frame(conn, &frame);
    }

    /// The client sent the JSON frame `frame` on `conn`.
    pub fn client_frame(&mut self, conn: u64, frame: &Value) {
        let id = frame.get("id").and_then(Value::as_str).map(str::to_owned);
        if let Some(id) = &id {
            self.sent_ids.insert(id.clone());
            self.attach.client_id(conn, id);
        }
        let session = self.conns.get(&conn).and_then(|c| c.session.as_ref()).and_then(|s| self.sessions.get(s));
        self.asks.client(frame, session.map(|t| &t.retry));
        self.cancels.client(conn, frame);
        if frame.get("type").and_then(Value::as_str) == Some("chat.history_request") {
            let before = frame.get("before").and_then(Value::as_str);
            let limit = frame.get("limit").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
            if let (Some(id), Some(before), Some(limit)) = (&id, before, limit) {
                self.conns.entry(conn).or_default().window.asked(id.clone(), before.to_owned(), limit);
            }
        }
        if frame.get("type").and_then(Value::as_str) != Some("session.hello") {
            return;
        }
        // Remember what the hello offered, to check the welcome that answers it.
        let versions: Vec<String> = frame
            .get("versions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let resume_floor = frame
            .pointer("/resume/session_id")
            .and_then(Value::as_str)
            .and_then(|s| self.sessions.get(s))
            .map(|t| t.max_seq);
        let resume_last_seq = frame.pointer("/resume/last_seq").and_then(Value::as_u64);
        let features = frame.get("features").and_then(Value::as_array).map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(chatwire_schema::session::welcome::Capability::from_wire)
                .collect()
        });
        let script = frame.get("script").map(|s| Arc::new(SessionScript::from_script(s)));
        if let Some(id) = id {
            let window = frame.get("window").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
            let before = frame.pointer("/resume/before").and_then(Value::as_str).map(str::to_owned);
            let hello = PendingHello { id, versions, resume_floor, resume_last_seq, features, script, window, before };
            self.conns.entry(conn).or_default().hello = Some(hello);
        }
    }

    /// The server sent the text frame `text` on `conn`.
    pub fn server_text(&mut self, conn: u64, text: &str) -> Received {
        let mut out = Out::default();
        out.eval(&frame::TEXT_FRAMES_ONLY, ReqId::new("TRANSPORT-001"));
        let value = match frame::parse(text) {
            Ok(v) => v,
            Err(raw) => {
                out.raws.push(raw);
                let excerpt = crate::text::truncate(text, FRAME_EXCERPT);
                self.collect(conn, out, None, Some(excerpt));
                return Received { value: None, frame: None };
            }
        };
        let typed = match self.validator.check(Direction::ServerToClient, &value) {
            Ok(_) => {
                // A frame valid against its closed schema is one object of a known type, with no
                // unknown member and well-formed ids.
                for r in frame::WIRE_SCHEMA_VALID.requirements {
                    out.eval(&frame::WIRE_SCHEMA_VALID, *r);
                }
                let negotiated = self.conns.get(&conn).and_then(|c| c.version);
                if let Some(v) = version::version_of(&value, negotiated) {
                    match self.versions.check(v, &value) {
                        Ok(()) => out.eval(&version::NEGOTIATED_VERSION_ONLY, ReqId::new("COMPAT-005")),
                        Err(raw) => out.raws.push(raw),
                    }
                }
                // The schema accepts what the types refuse: a chatwire-schema bug, not the server's
                // (the schema crate's corpus tests keep the two in step).
                <ServerFrame as serde::Deserialize>::deserialize(&value).ok()
            }
            Err(chatwire_schema::FrameError::Invalid(violations))
                if violations.iter().all(chatwire_schema::Violation::is_unsafe_number) =>
            {
                // Only numbers beyond ±(2^53 − 1) (INT-002): the frame is otherwise well formed, so
                // the oracle still folds it and nothing after it is charged for the number again.
                out.raws.extend(frame::schema_findings(&value, chatwire_schema::FrameError::Invalid(violations)));
                <ServerFrame as serde::Deserialize>::deserialize(&value).ok()
            }
            Err(e) => {
                out.raws.extend(frame::schema_findings(&value, e));
                None
            }
        };
        let bad_ts = frame::timestamp_findings(&value);
        if bad_ts.is_empty() && value.get("ts").is_some() {
            out.eval(&frame::TS_FORMAT, ReqId::new("FRAME-004"));
        }
        out.raws.extend(bad_ts);
        if let Some(frame) = &typed {
            // One fault, one charge: what follows from an earlier divergence is not charged again.
            let diverged = self.conns.get(&conn).and_then(|c| c.diverged);
            let first = out.raws.len();
            self.typed(conn, frame, &mut out);
            if matches!(
                frame,
                ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStatePatch(_) | ServerFrame::UiStateUpdated(_)
            ) {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.early_end.resumed_state(c.oracle.expected(), &mut out);
                }
            }
            let still = diverge::after_frame(diverged, frame, &mut out, first);
            if let Some(c) = self.conns.get_mut(&conn) {
                c.diverged = still;
            }
        }
        self.collect(conn, out, Some(&value), None);
        Received { value: Some(value), frame: typed }
    }

    /// The server sent a binary frame of `bytes` bytes on `conn`.
    pub fn server_binary(&mut self, conn: u64, bytes: usize) {
        let out = Out { raws: vec![frame::binary(bytes)], ..Out::default() };
        self.collect(conn, out, None, None);
    }

    /// The server closed `conn` with `code` (`None`: no close frame, or the connection broke).
    pub fn server_close(&mut self, conn: u64, code: Option<u16>) {
        let c = self.conns.entry(conn).or_default();
        if c.ended {
            return;
        }
        c.ended = true;
        self.attach.ended(conn);
        let mut out = Out::default();
        park_early_end(c, &mut self.sessions);
        errors::server_close(code, c.fatal, c.nonfatal, &mut out);
        self.collect(conn, out, None, None);
    }

    /// The client closed `conn` or dropped it; a later close from the server is its answer.
    pub fn client_close(&mut self, conn: u64) {
        let c = self.conns.entry(conn).or_default();
        if c.ended {
            return;
        }
        c.ended = true;
        self.attach.ended(conn);
        let mut out = Out::default();
        park_early_end(c, &mut self.sessions);
        if c.nonfatal.is_some() && c.fatal.is_none() {
            errors::kept_open(&mut out);
        }
        self.collect(conn, out, None, None);
    }

    /// Takes the findings so far, in the order they were seen.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.findings)
    }

    /// The requirements each check evaluated so far (found kept or broken), by check id.
    pub fn evaluated(&self) -> &BTreeMap<&'static str, BTreeSet<ReqId>> {
        &self.evaluated
    }

    /// The runner's model of `conn`'s UiState: the last snapshot folded with the events since.
    pub fn state(&self, conn: u64) -> Option<&UiState> {
        self.conns.get(&conn).and_then(|c| c.oracle.expected())
    }

    /// The requirement of the finding at which the state `conn` holds left the oracle's fold, while
    /// no state frame has given the server's state since (`diverge`): a comparison of that state
    /// with a golden one follows from that finding.
    pub fn divergence(&self, conn: u64) -> Option<ReqId> {
        self.conns.get(&conn).and_then(|c| c.diverged)
    }

    /// Whether `conn` is busy: a run slice in progress, the last event's update still due, or an
    /// event another connection of its session got not yet here.
    pub fn busy(&self, conn: u64) -> bool {
        self.conns.get(&conn).is_some_and(|c| {
            c.update_due || c.oracle.expected().is_some_and(|s| s.run.status == chatwire_schema::RunStatus::Running)
        }) || self.attach.behind(conn)
    }

    /// The seq of the latest frame on `conn` that carried a state: the cursor of a catch-up resume.
    pub fn state_seq(&self, conn: u64) -> Option<u64> {
        self.conns.get(&conn).and_then(|c| c.state_seq)
    }

    /// Whether `conn` waits for the state frame that follows a welcome (a snapshot, or after a
    /// resume a catch-up patch).
    pub fn awaiting_state(&self, conn: u64) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.awaiting_snapshot)
    }

    /// Where a resume of `session` can start from: the seq of the latest state frame a client of it
    /// received, and whether `resume_catch_up` was in force on that frame's connection.
    pub fn resume_base(&self, session: &str) -> (Option<u64>, bool) {
        self.sessions.get(session).map_or((None, false), |t| (t.state_seq, t.catch_up_base))
    }

    /// The bound on attached connections `conn`'s welcome announced (since 1.2, `ATTACH-003`).
    pub fn attach_limit(&self, conn: u64) -> Option<u32> {
        self.attach.limit(conn)
    }

    /// The version `conn`'s welcome negotiated.
    pub fn version(&self, conn: u64) -> Option<chatwire_schema::ProtocolVersion> {
        self.conns.get(&conn).and_then(|c| c.version)
    }

    /// The version the lowest-numbered connection that got a welcome negotiated.
    pub fn first_version(&self) -> Option<chatwire_schema::ProtocolVersion> {
        self.conns.values().find_map(|c| c.version)
    }

    /// Whether `conn` asked for a window where `state_window` is in force (`WINDOW-001`).
    pub fn windowed(&self, conn: u64) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.window.windowed())
    }

    /// The cursor of the view `conn` holds: `None` when it holds every item, or holds no window.
    pub fn window_cursor(&self, conn: u64) -> Option<String> {
        self.conns.get(&conn).and_then(|c| c.window.cursor.as_ref()).map(ToString::to_string)
    }

    /// The features in force on `conn` by its welcome (SESSION-012), sorted; empty on 1.0.
    pub fn features(&self, conn: u64) -> &[chatwire_schema::session::welcome::Capability] {
        self.conns.get(&conn).map_or(&[], |c| c.in_force.list())
    }

    /// The seq of the latest frame of `session` that carried no state (an event, a welcome, an
    /// error) at or below `upto`: a resume naming it must get a snapshot (RESUME-018).
    pub fn latest_non_state_seq(&self, session: &str, upto: u64) -> Option<u64> {
        self.sessions.get(session).and_then(|t| t.kinds.latest_non_state(upto))
    }

    /// The highest seq `conn` received.
    pub fn last_seq(&self, conn: u64) -> Option<u64> {
        self.conns.get(&conn).and_then(|c| c.last_seq)
    }

    /// The session of the latest welcome.
    pub fn current_session(&self) -> Option<&str> {
        self.current_session.as_deref()
    }

    /// The highest seq seen on `session`.
    pub fn max_seq(&self, session: &str) -> Option<u64> {
        self.sessions.get(session).map(|t| t.max_seq)
    }

    /// The latest resume token of `session`.
    pub fn resume_token(&self, session: &str) -> Option<&str> {
        self.sessions.get(session).and_then(|t| t.resume_token.as_deref())
    }

    /// The placeholder naming of ids, shared with whoever renders frames beside the findings.
    pub fn redactor(&mut self) -> &mut Normalizer {
        &mut self.redactor
    }

    /// A redacted excerpt of a frame.
    pub fn excerpt(&mut self, value: &Value) -> String {
        crate::text::excerpt(&self.redactor.normalize(value), FRAME_EXCERPT)
    }

    /// Turns raw findings into findings: excerpt of the frame, ids in messages redacted.
    fn collect(&mut self, conn: u64, out: Out, value: Option<&Value>, raw_excerpt: Option<String>) {
        for (check, req) in out.evaluated {
            self.evaluated.entry(check.id).or_default().insert(req);
        }
        if out.raws.is_empty() {
            return;
        }
        let excerpt = match value {
            Some(v) => Some(self.excerpt(v)),
            None => raw_excerpt,
        };
        for raw in out.raws {
            self.evaluated.entry(raw.check.id).or_default().insert(raw.requirement);
            let message = match value {
                Some(v) => redact::message(&mut self.redactor, &raw.message, &[v]),
                None => raw.message,
            };
            self.findings.push(Finding {
                check: raw.check,
                requirement: raw.requirement,
                message,
                frame: excerpt.clone(),
                conn,
            });
        }
    }
}

/// A connection ended with a stream's early end undecided (`stream::EarlyEnd`): the frame that
/// would decide it went to no connection here, so it waits for the session's next resume.
fn park_early_end(c: &mut ConnState, sessions: &mut HashMap<String, SessionTrack>) {
    let parked = c.early_end.cut();
    if let (true, Some(session)) = (parked.is_pending(), c.session.as_ref()) {
        sessions.entry(session.clone()).or_default().early_end = parked;
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod patch_tests;

#[cfg(test)]
mod v11_tests;

#[cfg(test)]
mod attach_tests;
