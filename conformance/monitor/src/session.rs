//! The checks that follow a connection and its session frame by frame: `seq` (SEQ-001, SEQ-002),
//! the handshake (a welcome answers the hello, a snapshot follows: SESSION-003, SESSION-006,
//! STATE-002, STATE-005, TRANSPORT-005), one update per event or batch (STATE-003, STATE-007,
//! MULTI-002), batch order (MULTI-001), consistent ids (ID-002, ERROR-004, TOOL-004) and settled
//! calls staying settled (TOOL-010). The oracle and error checks are called from here in frame order.

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::transport::MIN_MAX_FRAME_BYTES;
use chatwire_schema::{ErrorCode, ReqId, ServerFrame, UiState};

use super::check::CheckDef;
use super::features::{self, InForce};
use super::holding::{fold_foreign, model_state, took_state, view_of};
use super::oracle::{self, StateOracle, EVENTS_ACCEPTED};
use super::patch::{
    self, CatchUpWindow, Held, HeldStates, SeqKinds, SinceState, PATCH_IN_PLACE_OF_UPDATE, STATE_036, STREAM_002,
};
use super::retry::{self, RetryTrack};
use super::shared::SharedState;
use super::window::{self, WindowTrack};
use super::{errors, owed, stream, Monitor, Out, SessionScript};
use chatwire_schema::requirements::Level;

mod flow;

use flow::{check_batch, check_seq, check_stream, check_update_flow, introduced_ids, referenced_call, settled_call};

const SEQ_001: ReqId = ReqId::new("SEQ-001");
const SEQ_002: ReqId = ReqId::new("SEQ-002");
const SESSION_003: ReqId = ReqId::new("SESSION-003");
const SESSION_006: ReqId = ReqId::new("SESSION-006");
const STATE_002: ReqId = ReqId::new("STATE-002");
const STATE_003: ReqId = ReqId::new("STATE-003");
const STATE_005: ReqId = ReqId::new("STATE-005");
const STATE_007: ReqId = ReqId::new("STATE-007");
const TRANSPORT_005: ReqId = ReqId::new("TRANSPORT-005");
const MULTI_001: ReqId = ReqId::new("MULTI-001");
const MULTI_002: ReqId = ReqId::new("MULTI-002");
const ID_002: ReqId = ReqId::new("ID-002");
const ID_003: ReqId = ReqId::new("ID-003");
const ERROR_004: ReqId = ReqId::new("ERROR-004");
const TOOL_004: ReqId = ReqId::new("TOOL-004");
const TOOL_010: ReqId = ReqId::new("TOOL-010");

/// `seq` grows strictly per session, across reconnects and restarts.
pub static SEQ_INCREASING: CheckDef = CheckDef {
    id: "seq-increasing",
    requirements: &[SEQ_001, SEQ_002],
    summary: "seq is present on every session frame and grows strictly per session, across reconnects",
    level: Level::Must,
};

/// The welcome answers the hello with a version the client offered; a snapshot follows.
pub static WELCOME_THEN_SNAPSHOT: CheckDef = CheckDef {
    id: "welcome-then-snapshot",
    requirements: &[SESSION_003, SESSION_006, STATE_002, STATE_005, TRANSPORT_005],
    summary: "a welcome answers the hello with an offered version and is followed by ui_state_snapshot (empty for a new session)",
    level: Level::Must,
};

/// Every event is followed by its `ui_state_updated` (one per batch), and no update comes without one.
pub static UPDATE_AFTER_EVENT: CheckDef = CheckDef {
    id: "update-after-every-event",
    requirements: &[STATE_003, STATE_007, MULTI_002],
    summary: "the next frame after every event (or batch of tool calls) is its ui_state_updated, and no update comes without an event",
    level: Level::Must,
};

/// Ids are never reused, replies name frames the client sent, `corr` equals `tool_call_id`.
pub static IDS_CONSISTENT: CheckDef = CheckDef {
    id: "ids-consistent",
    requirements: &[ID_002, ID_003, ERROR_004, TOOL_004],
    summary: "no tool_call_id, invocation_id or item id is reused in a session; a tool_call_id leaves room for its output item's id; in_reply_to names a frame the client sent; corr equals tool_call_id",
    level: Level::Must,
};

/// The calls of a batch are sent consecutively with `call_index` 0..n-1.
pub static BATCH_ORDER: CheckDef = CheckDef {
    id: "batch-call-order",
    requirements: &[MULTI_001],
    summary: "tool calls of a batch are sent consecutively in call order with call_index 0..n-1",
    level: Level::Must,
};

/// Nothing is reported about a call once it settled.
pub static SETTLED_STAYS_SETTLED: CheckDef = CheckDef {
    id: "settled-calls-stay-settled",
    requirements: &[TOOL_010],
    summary: "no progress, output, completion or dismissal is sent for a tool call that has settled",
    level: Level::Must,
};

/// What a hello the client sent asks of the welcome that answers it.
#[derive(Clone, Debug)]
pub(super) struct PendingHello {
    pub id: String,
    pub versions: Vec<String>,
    /// For a resume: the highest seq seen on the session before it; the welcome must be above it.
    pub resume_floor: Option<u64>,
    /// For a resume: the `last_seq` it sent.
    pub resume_last_seq: Option<u64>,
    /// The features the hello asked for (`None`: no `features` member).
    pub features: Option<Vec<Capability>>,
    /// The script it carried, as the monitor reads it.
    pub script: Option<std::sync::Arc<SessionScript>>,
    /// The window it asked for (`WINDOW-001`).
    pub window: Option<u32>,
    /// For a resume: the cursor of the view it holds (`WINDOW-012`).
    pub before: Option<String>,
}

/// What the monitor knows about one connection.
#[derive(Debug, Default)]
pub(super) struct ConnState {
    /// A stream that ended early, judged at the next event (`stream::EarlyEnd`).
    pub early_end: stream::EarlyEnd,
    pub session: Option<String>,
    pub last_seq: Option<u64>,
    pub oracle: StateOracle,
    pub awaiting_snapshot: bool,
    pub hello: Option<PendingHello>,
    /// The last event was a tool call of this invocation with this call_index (a batch in progress).
    pub batch: Option<(String, u32)>,
    /// The fatal error code received, after which nothing but a close may come.
    pub fatal: Option<ErrorCode>,
    /// The last non-fatal error received (ERROR-003: the connection must stay open).
    pub nonfatal: Option<ErrorCode>,
    /// An event arrived whose ui_state_updated has not come yet (STATE-003).
    pub update_due: bool,
    /// A ui_state_updated already followed the current batch of tool calls (MULTI-002).
    pub batch_updated: bool,
    /// The welcome just received opened a new session, so the snapshot must be empty (STATE-005).
    pub new_session: bool,
    /// The connection has ended (either side); later frames on it are not expected.
    pub ended: bool,
    /// The version its welcome negotiated (COMPAT-005).
    pub version: Option<chatwire_schema::ProtocolVersion>,
    /// The features in force by the latest welcome (SESSION-012).
    pub in_force: InForce,
    /// The seq of the latest frame that carried a state (STATE-037).
    pub state_seq: Option<u64>,
    /// The events since that frame (STATE-039/040), kept where a feature is in force.
    pub since_state: SinceState,
    /// After a resume welcome, until the frame that follows it: what a catch-up is checked against.
    pub catch_up: Option<CatchUpWindow>,
    /// A state frame followed the latest welcome (a catch-up whose result is unknown included).
    pub state_seen: bool,
    /// The last frame was a delta (STREAM-002: no state frame may follow it).
    pub after_delta: bool,
    /// The connection resumed (or took over) and no delta has come since (STREAM-003).
    pub resumed_stream: bool,
    /// The welcome lists the `retry` capability.
    pub offers_retry: bool,
    /// A retry was accepted: the run_started of this turn is the next event due (RETRY-001).
    pub run_after_retry: Option<String>,
    /// The state the connection holds (the base of its next patch), in its view.
    pub held: Option<Held>,
    /// Frames went to other connections since its latest state frame that no connection here
    /// received (answers, `ATTACH-005`): its next state frame is taken as given (`ATTACH-004`).
    pub foreign_unknown: bool,
    /// Its window, where it asked for one (`spec/window.md`).
    pub window: WindowTrack,
    /// For a resume welcome: the cursor of the view the resume said it holds (`WINDOW-012`).
    pub resume_before: Option<chatwire_schema::Id>,
    /// After an update that was not the fold of the events sent (STATE-004): that fold, with
    /// every event since. The client's state is apart until an update equals it (`diverge`).
    pub shadow: Option<UiState>,
    /// After a resumed welcome, until the state frame that follows it: the welcome's seq.
    pub resume_welcome_seq: Option<u64>,
    /// The state it holds left the oracle's fold at a finding under this requirement, and no
    /// state frame gave the server's state since (`super::diverge`).
    pub diverged: Option<ReqId>,
}

/// Where an id of a session was seen first (ID-002): several attached connections see the same
/// frame, and a state may show an id before the frame that introduced it is read elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IdSeen {
    /// Introduced by the event of this seq.
    Introduced(u64),
    /// Shown by the state frame of this seq.
    Shown(u64),
}

/// The latest state any connection of the session held, in `view` where one held it so.
fn latest_state(track: &SessionTrack, view: (chatwire_schema::ProtocolVersion, bool)) -> Option<UiState> {
    track.state_seq.and_then(|seq| track.held.at(seq, view)).map(|held| held.state.to_state())
}

/// Events kept per session for attached connections.
const EVENTS_KEPT: usize = 1024;

/// What the monitor knows about one session, across its connections.
#[derive(Debug, Default)]
pub(super) struct SessionTrack {
    pub max_seq: u64,
    /// Every tool_call_id, invocation_id and item id seen in the session, and where (ID-002).
    pub ids: std::collections::HashMap<String, IdSeen>,
    /// The session's events by seq, as any connection received them: a connection attached beside
    /// others folds in those its seqs skip (answers to another, `ATTACH-005`; an event that did not
    /// reach it is `ATTACH-004`'s to report, once, not every later state's).
    pub events: std::collections::BTreeMap<u64, ServerFrame>,
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
    pub script: Option<std::sync::Arc<SessionScript>>,
    /// What the session's retries kept and removed.
    pub retry: RetryTrack,
    /// The items opened by a delta whose end no connection has seen yet.
    pub open_streams: std::collections::HashSet<String>,
    /// A stream's early end a connection left undecided when it ended: the next resume judges it.
    pub early_end: stream::EarlyEnd,
    /// Two frames of the session were sent under one seq by different instances (`CLUSTER-002`):
    /// the session's frames by seq no longer tell what a connection's seq gap held, so a gap's
    /// frames are taken as unknown rather than folded in (what they did to a connection's state is
    /// the divergence already charged, not new findings on every later state frame).
    pub seqs_void: bool,
}

impl Monitor {
    /// The checks on one typed server frame of connection `conn`.
    pub(super) fn typed(&mut self, conn: u64, frame: &ServerFrame, out: &mut Out) {
        self.advisor.observe(conn, frame, out);
        let others_open = frame.seq().is_some_and(|seq| self.attach.others_before(conn, seq));
        // A catch-up's base as the connection that held it last holds it, where the session's
        // recent states no longer have it (attached tabs read later push older seqs out).
        let held_elsewhere = match frame {
            ServerFrame::UiStatePatch(_) => {
                let last = self.conns.get(&conn).and_then(|c| c.catch_up.as_ref()).map(|w| w.last_seq);
                last.and_then(|seq| self.conns.values().filter_map(|o| o.held.clone()).find(|h| h.seq == seq))
            }
            _ => None,
        };
        let session = self.conns.get(&conn).and_then(|c| c.session.as_deref());
        if let Some(session) = session.filter(|s| self.cluster.collides(s, frame)) {
            if let Some(track) = self.sessions.get_mut(session) {
                track.seqs_void = true;
            }
        }
        let c = self.conns.entry(conn).or_default();
        if let Some(fatal) = c.fatal {
            errors::frame_after_fatal(fatal, out);
        }
        if others_open && !matches!(frame, ServerFrame::Welcome(_)) {
            if let (Some(seq), Some(last), Some(track)) =
                (frame.seq(), c.last_seq, c.session.as_ref().and_then(|s| self.sessions.get(s)))
            {
                fold_foreign(c, track, last + 1..seq);
            }
        }
        check_seq(c, frame, out);
        check_update_flow(c, frame, out);
        if let Some(track) = c.session.as_ref().and_then(|s| self.sessions.get_mut(s)) {
            let script = track.script.as_deref().map(|s| &s.retries);
            retry::server_frame(
                frame,
                c.oracle.expected(),
                c.version.is_some_and(|v| v.major > 1 || v.minor >= 1),
                c.offers_retry,
                &mut self.asks,
                &mut track.retry,
                &mut c.run_after_retry,
                script,
                out,
            );
        }
        self.cancels.server(conn, frame, c.oracle.expected(), out);
        let mut in_reply_to: Option<&chatwire_schema::Id> = None;
        match frame {
            ServerFrame::Welcome(w) => {
                in_reply_to = Some(&w.in_reply_to);
                c.version = Some(w.version);
                c.offers_retry = w.capabilities.contains(&Capability::Retry);
                c.resumed_stream = w.resumed;
                c.run_after_retry = None;
                let hello = c.hello.take();
                c.in_force = features::welcome(w, hello.as_ref().and_then(|h| h.features.as_deref()), out);
                c.window = WindowTrack::default();
                c.resume_before = None;
                if c.in_force.has(&Capability::StateWindow) {
                    let holds = hello.as_ref().and_then(|h| h.before.clone());
                    let asked = hello.as_ref().and_then(|h| h.window);
                    // WINDOW-012: a resume that holds a window but names no size keeps the largest.
                    c.window.size = asked.or(holds.as_ref().map(|_| chatwire_schema::window::MAX_WINDOW_ITEMS));
                    c.resume_before = holds.and_then(|b| chatwire_schema::Id::try_from(b).ok());
                }
                c.resume_welcome_seq = w.resumed.then_some(w.seq);
                c.catch_up = hello.as_ref().and_then(|h| h.resume_last_seq).filter(|_| w.resumed).map(|last_seq| {
                    CatchUpWindow {
                        last_seq,
                        in_force: c.in_force.has(&Capability::ResumeCatchUp),
                        retention: w.resume_retention,
                        welcome_seq: w.seq,
                    }
                });
                match &hello {
                    Some(h) => {
                        if w.in_reply_to.as_str() == h.id {
                            out.eval(&WELCOME_THEN_SNAPSHOT, SESSION_006);
                        } else {
                            out.fail(
                                &WELCOME_THEN_SNAPSHOT,
                                SESSION_006,
                                format!("welcome in_reply_to {} is not the hello id {}", w.in_reply_to, h.id),
                            );
                        }
                        if h.versions.contains(&w.version.to_string()) {
                            out.eval(&WELCOME_THEN_SNAPSHOT, SESSION_003);
                        } else {
                            out.fail(
                                &WELCOME_THEN_SNAPSHOT,
                                SESSION_003,
                                format!("welcome version {} was not offered ({})", w.version, h.versions.join(", ")),
                            );
                        }
                        if let Some(floor) = h.resume_floor {
                            let seq = w.seq;
                            if seq <= floor {
                                out.fail(
                                    &SEQ_INCREASING,
                                    SEQ_001,
                                    format!("the resumed session's welcome has seq {seq}, not above {floor} seen before reconnecting"),
                                );
                            } else {
                                out.eval(&SEQ_INCREASING, SEQ_001);
                            }
                        }
                    }
                    None => out.fail(&WELCOME_THEN_SNAPSHOT, SESSION_006, "a welcome that answers no hello"),
                }
                if w.limits.max_frame_bytes < MIN_MAX_FRAME_BYTES {
                    out.fail(
                        &WELCOME_THEN_SNAPSHOT,
                        TRANSPORT_005,
                        format!("limits.max_frame_bytes {} is below {MIN_MAX_FRAME_BYTES}", w.limits.max_frame_bytes),
                    );
                } else {
                    out.eval(&WELCOME_THEN_SNAPSHOT, TRANSPORT_005);
                }
                let session = w.session_id.to_string();
                if !w.resumed {
                    let script = hello.as_ref().and_then(|h| h.script.clone());
                    self.sessions.entry(session.clone()).or_default().script = script;
                }
                if w.resumed {
                    let parked = std::mem::take(&mut self.sessions.entry(session.clone()).or_default().early_end);
                    c.early_end = stream::EarlyEnd::resume(parked);
                }
                c.session = Some(session.clone());
                c.awaiting_snapshot = true;
                c.new_session = !w.resumed;
                c.oracle.clear();
                c.shadow = None;
                c.batch = None;
                c.state_seq = None;
                c.state_seen = false;
                c.since_state.clear();
                self.sessions.entry(session.clone()).or_default().resume_token = Some(w.resume_token.to_string());
                c.held = None;
                c.foreign_unknown = false;
                self.attach.welcome(conn, &session, w, out);
                self.current_session = Some(session);
            }
            ServerFrame::UiStateSnapshot(s) => {
                if c.awaiting_snapshot && c.new_session {
                    if s.state == UiState::default() {
                        out.eval(&WELCOME_THEN_SNAPSHOT, STATE_005);
                    } else {
                        out.fail(
                            &WELCOME_THEN_SNAPSHOT,
                            STATE_005,
                            "the snapshot after the welcome of a new session is not empty and idle",
                        );
                    }
                }
                if c.awaiting_snapshot {
                    out.eval(&WELCOME_THEN_SNAPSHOT, STATE_002);
                }
                // A windowed resume may get a snapshot in place of a catch-up (WINDOW-012).
                if let (true, false, Some(window), Some(track)) = (
                    c.awaiting_snapshot,
                    c.window.windowed(),
                    c.catch_up.as_ref(),
                    c.session.as_ref().and_then(|s| self.sessions.get(s)),
                ) {
                    let script = track.script.as_ref().map(|s| s.says.streams());
                    owed::snapshot_answered(window, &track.kinds, &track.held, view_of(c).1, script, out);
                }
                // A snapshot after the first is a windowed connection's fresh window (WINDOW-006).
                let fresh = !c.awaiting_snapshot;
                c.shadow = None;
                let new_session = c.new_session;
                c.new_session = false;
                c.awaiting_snapshot = false;
                c.catch_up = None;
                c.batch = None;
                let view = view_of(c);
                // A resume's snapshot that is not the session's state the monitor knows (`diverge`).
                let mut apart_from = None;
                if let (Some(welcome_seq), false, Some(track)) = (
                    c.resume_welcome_seq.take(),
                    fresh || c.window.windowed(),
                    c.session.as_ref().and_then(|s| self.sessions.get(s)),
                ) {
                    let known = patch::known_at_welcome(&track.held, &track.kinds, welcome_seq, view);
                    out.apart = known.and_then(|k| super::diverge::resumed_snapshot(&k.state.to_state(), &s.state));
                    apart_from = known.filter(|_| out.apart.is_some()).map(|k| k.state.clone());
                }
                let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                if !c.window.windowed() {
                    window::snapshot(&mut c.window, None, s, fresh, out);
                    c.oracle.snapshot(&s.state);
                    let mut track = track;
                    let held =
                        took_state(c, track.as_deref_mut(), s.seq, Some(SharedState::from_state(&s.state)), true);
                    if let (Some(state), Some(track)) = (apart_from, track) {
                        track.held.correct(Held { seq: s.seq, state, view });
                    }
                    self.attach_state(conn, s.seq, held, out);
                    return self.after_typed(conn, frame, None, out);
                }
                // The whole state it is a window of: after a cut the fold's; after a welcome the
                // session's latest as any connection here held it, brought up to date by the view.
                let before = s.window.as_ref().and_then(|w| w.before.as_ref());
                let full = match (fresh, new_session) {
                    (true, _) => c.oracle.expected().cloned(),
                    (false, true) => Some(UiState::default()),
                    (false, false) => match track.as_deref().and_then(|t| latest_state(t, view)) {
                        Some(latest) => window::splice(&latest, before, &s.state),
                        None => window::splice(&UiState::default(), before, &s.state),
                    },
                };
                window::snapshot(&mut c.window, full.as_ref(), s, fresh, out);
                match &full {
                    Some(full) => c.oracle.snapshot(full),
                    None => c.oracle.clear(),
                }
                let held = took_state(c, track, s.seq, full.as_ref().map(SharedState::from_state), true);
                self.attach_state(conn, s.seq, held, out);
            }
            ServerFrame::UiStatePatch(p) if c.awaiting_snapshot => {
                let Some(window) = c.catch_up.take() else {
                    // After the welcome of a new session (or one answering no resume) only a snapshot.
                    out.fail(&WELCOME_THEN_SNAPSHOT, STATE_002, "ui_state_patch in place of the ui_state_snapshot");
                    c.awaiting_snapshot = false;
                    c.state_seen = true;
                    c.state_seq = Some(p.seq);
                    return;
                };
                out.eval(&WELCOME_THEN_SNAPSHOT, STATE_002);
                c.new_session = false;
                c.awaiting_snapshot = false;
                c.batch = None;
                let mut track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                let view = view_of(c);
                if c.window.windowed() {
                    let base =
                        track.as_deref().and_then(|t| t.held.at(window.last_seq, view)).or(held_elsewhere.as_ref());
                    let base = base.map(|h| h.state.to_state());
                    // The whole state now, where a connection here saw it after the base.
                    let latest = match track.as_deref() {
                        Some(t) if t.state_seq.is_some_and(|seq| seq > window.last_seq) => latest_state(t, view),
                        _ => None,
                    };
                    let before = c.resume_before.clone();
                    window::catch_up(&mut c.window, base.as_ref(), before.as_ref(), latest.as_ref(), &p.patch, out);
                    // Unseen changes: the base brought up to date by the view the catch-up gave.
                    let full = latest.or_else(|| {
                        let view = c.window.view.as_ref()?;
                        window::splice(base.as_ref()?, c.window.cursor.as_ref(), view)
                    });
                    match &full {
                        Some(full) => c.oracle.snapshot(full),
                        None => c.oracle.clear(),
                    }
                    let held = took_state(c, track.take(), p.seq, full.as_ref().map(SharedState::from_state), true);
                    self.attach_state(conn, p.seq, held, out);
                    return self.after_typed(conn, frame, None, out);
                }
                let (held, known, kinds) = match track.as_deref() {
                    Some(t) => (
                        t.held.at(window.last_seq, view).or(held_elsewhere.as_ref()),
                        patch::known_at_welcome(&t.held, &t.kinds, window.welcome_seq, view),
                        Some(&t.kinds),
                    ),
                    None => (None, None, None),
                };
                let empty = SeqKinds::default();
                let state = patch::catch_up(p, &window, held, known, kinds.unwrap_or(&empty), &mut self.redactor, out);
                if let Some(state) = &state {
                    c.oracle.snapshot(&state.to_state());
                }
                let held = took_state(c, track.take(), p.seq, state, true);
                self.attach_state(conn, p.seq, held, out);
            }
            ServerFrame::UiStatePatch(p) => {
                // On a 1.0 connection the frame itself is undefined: COMPAT-005 reports it, once.
                if c.version.is_some_and(|v| v.minor >= 1 || v.major > 1) {
                    c.in_force.require(Capability::UiStatePatch, "ui_state_patch", out);
                }
                let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                if c.window.windowed() {
                    c.foreign_unknown = false;
                    let full = c.oracle.expected().cloned();
                    window::patch(&mut c.window, full.as_ref(), &p.patch, out);
                    let held = took_state(c, track, p.seq, full.as_ref().map(SharedState::from_state), false);
                    self.attach_state(conn, p.seq, held, out);
                    return self.after_typed(conn, frame, None, out);
                }
                let adopt = std::mem::take(&mut c.foreign_unknown);
                let held = c.held.as_ref().filter(|h| Some(h.seq) == c.state_seq);
                // `None`: changed by frames no connection here received, taken as given.
                let since = (!adopt).then_some(&c.since_state);
                let state = patch::after_event(p, c.state_seq, held, since, &mut c.oracle, &mut self.redactor, out);
                let held = took_state(c, track, p.seq, state, false);
                self.attach_state(conn, p.seq, held, out);
            }
            ServerFrame::UiStateUpdated(u) => {
                if c.awaiting_snapshot {
                    out.fail(&WELCOME_THEN_SNAPSHOT, STATE_002, "ui_state_updated before the ui_state_snapshot");
                }
                if c.in_force.has(&Capability::UiStatePatch) {
                    out.fail(
                        &PATCH_IN_PLACE_OF_UPDATE,
                        STATE_036,
                        "ui_state_updated on a connection where ui_state_patch is in force",
                    );
                }
                if c.window.windowed() {
                    c.foreign_unknown = false;
                    let full = c.oracle.expected().cloned();
                    window::updated(&mut c.window, full.as_ref(), &u.state, out);
                    let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                    let held = took_state(c, track, u.seq, full.as_ref().map(SharedState::from_state), false);
                    self.attach_state(conn, u.seq, held, out);
                    return self.after_typed(conn, frame, None, out);
                }
                if std::mem::take(&mut c.foreign_unknown) {
                    // Changed by answers sent to another connection (ATTACH-004): taken as given;
                    // the attached views' agreement judges it (ATTACH-007).
                    c.oracle.snapshot(&u.state);
                } else {
                    match c.oracle.received(&u.state, &mut self.redactor) {
                        Some(raw) => {
                            out.raws.push(raw);
                            if c.shadow.is_none() {
                                c.shadow = c.oracle.take_replaced();
                            }
                        }
                        None if c.oracle.expected().is_some() => {
                            out.eval(&oracle::STATE_MATCHES_REDUCER, raw_state_004())
                        }
                        None => {}
                    }
                    // Apart until an update gives the fold the events sent lead to (`diverge`).
                    if c.shadow.as_ref().is_some_and(|shadow| shadow == &u.state) {
                        c.shadow = None;
                    }
                    out.apart = c.shadow.as_ref().map(|_| raw_state_004());
                }
                let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                let held = took_state(c, track, u.seq, Some(SharedState::from_state(&u.state)), false);
                self.attach_state(conn, u.seq, held, out);
            }
            ServerFrame::Error(e) => {
                in_reply_to = e.in_reply_to.as_ref();
                errors::error_frame(e.code, e.fatal, out);
                window::error(&mut c.window, e.in_reply_to.as_ref(), e.code, out);
                if e.fatal {
                    c.fatal = Some(e.code);
                } else {
                    c.nonfatal = Some(e.code);
                }
            }
            other => {
                if c.awaiting_snapshot || (c.oracle.expected().is_none() && !c.state_seen) {
                    out.fail(
                        &WELCOME_THEN_SNAPSHOT,
                        STATE_002,
                        format!("{} before the ui_state_snapshot", other.type_name()),
                    );
                }
                if let ServerFrame::HistoryPage(page) = other {
                    let full = c.oracle.expected().cloned();
                    if let Some(whole) = window::page(&mut c.window, full.as_ref(), page, out) {
                        // Paged to the first item: the whole state is known again.
                        c.oracle.snapshot(&whole);
                    }
                }
                check_batch(c, other, out);
                let script = c.session.as_ref().and_then(|s| self.sessions.get(s)).and_then(|t| t.script.clone());
                let cancelled = matches!(other, ServerFrame::AssistantMessage(m) if self.cancels.ended_by_cancel(conn, &m.item_id, &m.invocation_id));
                check_stream(c, script.as_deref(), other, cancelled, out);
                if let ServerFrame::ToolCall(tc) = other {
                    // The output item's id is the call id with a suffix; the schema crate says
                    // whether that still is an id.
                    match chatwire_schema::reducer::output_item_id(&tc.tool_call_id) {
                        Ok(_) => out.eval(&IDS_CONSISTENT, ID_003),
                        Err(_) => out.fail(
                            &IDS_CONSISTENT,
                            ID_003,
                            format!(
                                "chat.tool_call's tool_call_id is {} characters long: its output item's id would be too long",
                                tc.tool_call_id.as_str().len()
                            ),
                        ),
                    }
                    match tc.corr.as_ref() {
                        Some(corr) if corr != &tc.tool_call_id => out.fail(
                            &IDS_CONSISTENT,
                            TOOL_004,
                            format!(
                                "chat.tool_call carries corr {corr}, which differs from its tool_call_id {}",
                                tc.tool_call_id
                            ),
                        ),
                        Some(_) => out.eval(&IDS_CONSISTENT, TOOL_004),
                        None => {}
                    }
                }
                if let Some(track) = c.session.as_ref().and_then(|s| self.sessions.get_mut(s)) {
                    // A stream's end reaches a connection without assistant_stream as a whole
                    // message (STREAM-005): its item was introduced by the stream's first delta.
                    let ended_stream = match other {
                        ServerFrame::AssistantMessage(m) => track.open_streams.remove(m.item_id.as_str()),
                        _ => false,
                    };
                    let seq = other.seq().unwrap_or(0);
                    for new_id in introduced_ids(other, c.oracle.expected()) {
                        if matches!(other, ServerFrame::AssistantMessageDelta(_)) && track.open_streams.len() < 64 {
                            track.open_streams.insert(new_id.clone());
                        }
                        if ended_stream {
                            continue;
                        }
                        // The same frame seen on another attached connection, or a state shown
                        // there after it, is no second use.
                        let fresh = match track.ids.get(&new_id) {
                            None => true,
                            Some(IdSeen::Introduced(at)) => *at == seq,
                            Some(IdSeen::Shown(at)) => *at > seq,
                        };
                        if fresh {
                            track.ids.entry(new_id).or_insert(IdSeen::Introduced(seq));
                            out.eval(&IDS_CONSISTENT, ID_002);
                        } else {
                            out.fail(
                                &IDS_CONSISTENT,
                                ID_002,
                                format!("id {new_id} is used a second time in the session"),
                            );
                        }
                    }
                }
                in_reply_to = other.in_reply_to();
                super::reopen::settlement(other, c.oracle.expected(), out);
                let settled_before = settled_call(c.oracle.expected(), other);
                if let Some(call) = referenced_call(other) {
                    match &settled_before {
                        Some(status) => out.fail(
                            &SETTLED_STAYS_SETTLED,
                            TOOL_010,
                            format!(
                                "{} for tool call {call}, which had already settled as {status}",
                                other.type_name()
                            ),
                        ),
                        None if c.oracle.expected().is_some() => out.eval(&SETTLED_STAYS_SETTLED, TOOL_010),
                        None => {}
                    }
                }
                if other.ui_event().is_some() && c.in_force.any() {
                    c.since_state.push(other);
                }
                if let Some(event) = other.ui_event() {
                    let rule = event.rule();
                    let kept = event.refusal_rules();
                    if let Some(shadow) = c.shadow.as_mut() {
                        // Refusals are the oracle's to report; the shadow only follows.
                        let _ = shadow.apply(event);
                    }
                    match c.oracle.apply(event) {
                        Ok(()) => {
                            out.eval(&EVENTS_ACCEPTED, ReqId::new("STATE-006"));
                            for r in kept {
                                out.eval(&EVENTS_ACCEPTED, *r);
                            }
                        }
                        // Charged once, to the requirement the server broke (TOOL-004, TOOL-010).
                        // The call itself is folded in as announced, so the oracle keeps following
                        // the session instead of charging every later state to STATE-004.
                        Err(chatwire_schema::ReduceError::CorrMismatch { .. }) => {
                            if let ServerFrame::ToolCall(tc) = other {
                                let corrected = ServerFrame::ToolCall(chatwire_schema::chat::tool_call::ToolCall {
                                    corr: None,
                                    ..tc.clone()
                                });
                                if let Some(event) = corrected.ui_event() {
                                    let _ = c.oracle.apply(event);
                                }
                            }
                        }
                        Err(chatwire_schema::ReduceError::AlreadySettled { .. }) if settled_before.is_some() => {}
                        Err(e) => out.fail(
                            &EVENTS_ACCEPTED,
                            oracle::rule_of_refusal(&e),
                            format!("{} (an event under {rule}): the reducer refuses it: {e}", other.type_name()),
                        ),
                    }
                }
                if let ServerFrame::AssistantMessageDelta(d) = other {
                    // A delta is its own state change (STREAM-002): the state it gives is the base
                    // of the next patch and a catch-up's possible cursor.
                    let state = model_state(c);
                    if c.window.windowed() {
                        // The delta grows the open stream, the last item, which every view holds.
                        window::delta(&mut c.window, c.oracle.expected());
                    }
                    let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                    let held = took_state(c, track, d.seq, state, false);
                    self.attach_state(conn, d.seq, held, out);
                }
            }
        }
        self.after_typed(conn, frame, in_reply_to.cloned(), out);
    }

    /// What every typed frame ends with: the reply's id, the session's seq record, the attach watch.
    fn after_typed(&mut self, conn: u64, frame: &ServerFrame, in_reply_to: Option<chatwire_schema::Id>, out: &mut Out) {
        if let Some(reply) = &in_reply_to {
            if self.sent_ids.contains(reply.as_str()) {
                out.eval(&IDS_CONSISTENT, ERROR_004);
            } else {
                out.fail(&IDS_CONSISTENT, ERROR_004, format!("in_reply_to {reply} names no frame the client sent"));
            }
        }
        let session = self.conns.get(&conn).and_then(|c| c.session.clone());
        if let Some(session) = &session {
            self.cluster.frame(session, frame, out);
        }
        if let (Some(seq), Some(session)) = (frame.seq(), session) {
            let track = self.sessions.entry(session).or_default();
            track.max_seq = track.max_seq.max(seq);
            track.kinds.note(seq, frame);
            if frame.ui_event().is_some() && self.attach.others_before(conn, u64::MAX) {
                track.events.insert(seq, frame.clone());
                if track.events.len() > EVENTS_KEPT {
                    track.events.pop_first();
                }
            }
        }
        self.attach.frame(conn, frame, out);
    }

    /// Hands the state `conn` holds after its state frame of seq `seq` to the attach watch.
    fn attach_state(&mut self, conn: u64, seq: u64, held: Option<SharedState>, out: &mut Out) {
        if let Some(state) = held {
            self.attach.state(conn, seq, &state, &mut self.redactor, out);
        }
    }
}

fn raw_state_004() -> ReqId {
    ReqId::new("STATE-004")
}
