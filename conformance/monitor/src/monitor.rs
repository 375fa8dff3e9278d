//! The monitor: frames in, findings out. It reads each frame once (JSON, schema, the negotiated
//! version's schema, `ts`, the typed frame), hands a typed server frame to every check before and
//! after the model takes it, and turns what they found into findings, each with the frame it was
//! seen on, ids redacted.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use chatwire_schema::schema_gen::Direction;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ClientFrame, FrameValidator, ProtocolVersion, ReqId, ServerFrame, UiState};
use serde_json::Value;

use crate::check::{Check, ClientCx, CloseCx, Peers, ServerCx};
use crate::checks::attach::AttachWatch;
use crate::checks::cluster::ClusterWatch;
use crate::checks::registered;
use crate::finding::{CheckDef, Finding, Out};
use crate::model::{Model, Took};
use crate::normalize::Normalizer;
use crate::{diverge, frame, redact, version};

/// Longest frame excerpt in a finding.
pub const FRAME_EXCERPT: usize = 400;

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
    model: Model,
    checks: Vec<Box<dyn Check>>,
    versions: version::Versions,
    redactor: Normalizer,
    findings: Vec<Finding>,
    evaluated: BTreeMap<&'static str, BTreeSet<ReqId>>,
    /// What `evaluated` holds already, by the check's address: most frames evaluate what the
    /// frame before them did, and a hash probe costs less than the ordered insert.
    recorded: HashSet<(usize, ReqId), BuildHasherDefault<ProbeHasher>>,
}

/// The hasher of [`Monitor`]'s `recorded` probe, made a dozen times per frame. Its keys are a
/// check's address and an id its definition names, never anything a server sent, so SipHash's
/// resistance to chosen keys buys nothing there; a multiply-rotate over 8-byte words costs a
/// fraction of it (the profile of the runner bench put SipHash at ~3 % of the runner's CPU).
#[derive(Default)]
struct ProbeHasher(u64);

impl ProbeHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for ProbeHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

impl Monitor {
    /// A monitor with no connection yet; `validator` holds the current schemas
    /// (`FrameValidator::new`), against which every server frame is read first.
    pub fn new(validator: Arc<FrameValidator>) -> Self {
        Monitor {
            validator,
            model: Model::default(),
            checks: registered(),
            versions: version::Versions::default(),
            redactor: Normalizer::default(),
            findings: Vec::new(),
            evaluated: BTreeMap::new(),
            recorded: HashSet::default(),
        }
    }

    /// The registered check of type `T`.
    fn check<T: Check>(&self) -> Option<&T> {
        self.checks.iter().find_map(|c| c.as_ref().as_any().downcast_ref::<T>())
    }

    /// The traffic is that of a deployment of several instances (`run --replicas N`, N > 1): the
    /// cluster checks (`spec/cluster.md`) run.
    pub fn cluster(&mut self) {
        let watch = self.checks.iter_mut().find_map(|c| c.as_mut().as_any_mut().downcast_mut::<ClusterWatch>());
        if let Some(watch) = watch {
            watch.enable();
        }
    }

    /// A connection `conn` was opened.
    pub fn open(&mut self, conn: u64) {
        self.model.open(conn);
    }

    /// The client sent `text` on `conn` (any text, valid or not).
    pub fn client_text(&mut self, conn: u64, text: &str) {
        let Ok(frame) = serde_json::from_str::<Value>(text) else { return };
        self.client_frame(conn, &frame);
    }

    /// The client sent the JSON frame `frame` on `conn`.
    pub fn client_frame(&mut self, conn: u64, frame: &Value) {
        let typed = <ClientFrame as serde::Deserialize>::deserialize(frame).ok();
        // A server answers any JSON object with a readable `id` naming it (ERROR-004), valid
        // frame or not: the envelope's id, whatever its type.
        let id = frame.get("id").and_then(Value::as_str);
        let cx = ClientCx { conn, frame: typed.as_ref(), id, model: &self.model };
        for check in &mut self.checks {
            check.on_client(&cx);
        }
        if let Some(typed) = &typed {
            self.model.client(conn, typed);
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
        let typed = self.read(conn, &value, &mut out);
        if let Some(frame) = &typed {
            // One fault, one charge: what follows from an earlier divergence is not charged again.
            let diverged = self.model.conn(conn).and_then(|c| c.diverged);
            let first = out.raws.len();
            self.judge(conn, frame, &mut out);
            let still = diverge::after_frame(diverged, frame, &mut out, first);
            self.model.set_diverged(conn, still);
        }
        self.collect(conn, out, Some(&value), None);
        Received { value: Some(value), frame: typed }
    }

    /// The frame-level checks of a server frame (schema, version, `ts`); the typed frame when it
    /// is valid.
    fn read(&mut self, conn: u64, value: &Value, out: &mut Out) -> Option<ServerFrame> {
        let typed = match self.validator.check(Direction::ServerToClient, value) {
            Ok(_) => {
                // A frame valid against its closed schema is one object of a known type, with no
                // unknown member and well-formed ids.
                for r in frame::WIRE_SCHEMA_VALID.requirements {
                    out.eval(&frame::WIRE_SCHEMA_VALID, *r);
                }
                let negotiated = self.model.conn(conn).and_then(|c| c.version);
                if let Some(v) = version::version_of(value, negotiated) {
                    match self.versions.check(v, value) {
                        Ok(()) => out.eval(&version::NEGOTIATED_VERSION_ONLY, ReqId::new("COMPAT-005")),
                        Err(raw) => out.raws.push(raw),
                    }
                }
                // The schema accepts what the types refuse: a chatwire-schema bug, not the server's
                // (the schema crate's corpus tests keep the two in step).
                <ServerFrame as serde::Deserialize>::deserialize(value).ok()
            }
            Err(chatwire_schema::FrameError::Invalid(violations))
                if violations.iter().all(chatwire_schema::Violation::is_unsafe_number) =>
            {
                // Only numbers beyond ±(2^53 − 1) (INT-002): the frame is otherwise well formed, so
                // the oracle still folds it and nothing after it is charged for the number again.
                out.raws.extend(frame::schema_findings(value, chatwire_schema::FrameError::Invalid(violations)));
                <ServerFrame as serde::Deserialize>::deserialize(value).ok()
            }
            Err(e) => {
                out.raws.extend(frame::schema_findings(value, e));
                None
            }
        };
        let bad_ts = frame::timestamp_findings(value);
        if bad_ts.is_empty() && value.get("ts").is_some() {
            out.eval(&frame::TS_FORMAT, ReqId::new("FRAME-004"));
        }
        out.raws.extend(bad_ts);
        typed
    }

    /// A typed server frame: what its session's other connections tell of it, every check before
    /// the model takes it, the model, every check after.
    fn judge(&mut self, conn: u64, frame: &ServerFrame, out: &mut Out) {
        self.model.touch(conn);
        let attach = self.check::<AttachWatch>();
        let others = frame.seq().is_some_and(|seq| attach.is_some_and(|a| a.others_before(conn, seq)));
        let session = self.model.conn(conn).and_then(|c| c.session.as_deref());
        let collides =
            session.is_some_and(|s| self.check::<ClusterWatch>().is_some_and(|cluster| cluster.collides(s, frame)));
        self.model.prelude(conn, frame, collides, others);
        self.each(conn, frame, None, out);
        let keep_events = self.check::<AttachWatch>().is_some_and(|a| a.others_before(conn, u64::MAX));
        let took = self.model.take(conn, frame, keep_events, &mut self.redactor, out);
        self.each(conn, frame, Some(&took), out);
    }

    /// Every check on one frame: before the model took it (`took`: `None`), or after.
    fn each(&mut self, conn: u64, frame: &ServerFrame, took: Option<&Took>, out: &mut Out) {
        for index in 0..self.checks.len() {
            let (before, rest) = self.checks.split_at_mut(index);
            let Some((check, after)) = rest.split_first_mut() else { break };
            let mut cx = ServerCx {
                conn,
                frame,
                model: &self.model,
                took,
                peers: Peers::new(before, after),
                redactor: &mut self.redactor,
            };
            match took {
                None => check.on_server(&mut cx, out),
                Some(_) => check.after_server(&mut cx, out),
            }
        }
    }

    /// The server sent a binary frame of `bytes` bytes on `conn`.
    pub fn server_binary(&mut self, conn: u64, bytes: usize) {
        let out = Out { raws: vec![frame::binary(bytes)], ..Out::default() };
        self.collect(conn, out, None, None);
    }

    /// The server closed `conn` with `code` (`None`: no close frame, or the connection broke).
    pub fn server_close(&mut self, conn: u64, code: Option<u16>) {
        self.close(conn, Some(code));
    }

    /// The client closed `conn` or dropped it; a later close from the server is its answer.
    pub fn client_close(&mut self, conn: u64) {
        self.close(conn, None);
    }

    fn close(&mut self, conn: u64, server_code: Option<Option<u16>>) {
        if !self.model.end(conn) {
            return;
        }
        let mut out = Out::default();
        let cx = CloseCx { conn, server_code, model: &self.model };
        for check in &mut self.checks {
            check.on_close(&cx, &mut out);
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
        self.model.conn(conn).and_then(|c| c.state())
    }

    /// The requirement of the finding at which the state `conn` holds left the oracle's fold, while
    /// no state frame has given the server's state since (`diverge`): a comparison of that state
    /// with a golden one follows from that finding.
    pub fn divergence(&self, conn: u64) -> Option<ReqId> {
        self.model.conn(conn).and_then(|c| c.diverged)
    }

    /// The rule of the state frame `conn` still owes for its last event when nothing else keeps
    /// it busy (no run slice in progress, no event of another connection missing): its
    /// `ui_state_updated` (STATE-003), or its patch where `ui_state_patch` is in force
    /// (STATE-036), as the flow check charges it when another frame comes first.
    pub fn owed_state_frame(&self, conn: u64) -> Option<ReqId> {
        let c = self.model.conn(conn)?;
        let running = c.state().is_some_and(|s| s.run.status == chatwire_schema::RunStatus::Running);
        let behind = self.check::<AttachWatch>().is_some_and(|a| a.behind(conn));
        let rule = if c.has(&Capability::UiStatePatch) { "STATE-036" } else { "STATE-003" };
        (c.update_due && !running && !behind).then(|| ReqId::new(rule))
    }

    /// Whether `conn` is busy: a run slice in progress, the last event's update still due, or an
    /// event another connection of its session got not yet here.
    pub fn busy(&self, conn: u64) -> bool {
        self.model.conn(conn).is_some_and(|c| {
            c.update_due || c.state().is_some_and(|s| s.run.status == chatwire_schema::RunStatus::Running)
        }) || self.check::<AttachWatch>().is_some_and(|a| a.behind(conn))
    }

    /// The seq of the latest frame on `conn` that carried a state: the cursor of a catch-up resume.
    pub fn state_seq(&self, conn: u64) -> Option<u64> {
        self.model.conn(conn).and_then(|c| c.state_seq)
    }

    /// Whether `conn` waits for the state frame that follows a welcome (a snapshot, or after a
    /// resume a catch-up patch).
    pub fn awaiting_state(&self, conn: u64) -> bool {
        self.model.conn(conn).is_some_and(|c| c.awaiting_snapshot)
    }

    /// Where a resume of `session` can start from: the seq of the latest state frame a client of it
    /// received, and whether `resume_catch_up` was in force on that frame's connection.
    pub fn resume_base(&self, session: &str) -> (Option<u64>, bool) {
        self.model.session(session).map_or((None, false), |t| (t.state_seq, t.catch_up_base))
    }

    /// The bound on attached connections `conn`'s welcome announced (since 1.2, `ATTACH-003`).
    pub fn attach_limit(&self, conn: u64) -> Option<u32> {
        self.check::<AttachWatch>().and_then(|a| a.limit(conn))
    }

    /// The version `conn`'s welcome negotiated.
    pub fn version(&self, conn: u64) -> Option<ProtocolVersion> {
        self.model.conn(conn).and_then(|c| c.version)
    }

    /// The version the lowest-numbered connection that got a welcome negotiated.
    pub fn first_version(&self) -> Option<ProtocolVersion> {
        self.model.conns().find_map(|(_, c)| c.version)
    }

    /// Whether `conn` asked for a window where `state_window` is in force (`WINDOW-001`).
    pub fn windowed(&self, conn: u64) -> bool {
        self.model.conn(conn).is_some_and(|c| c.window.windowed())
    }

    /// The cursor of the view `conn` holds: `None` when it holds every item, or holds no window.
    pub fn window_cursor(&self, conn: u64) -> Option<String> {
        self.model.conn(conn).and_then(|c| c.window.cursor.as_ref()).map(ToString::to_string)
    }

    /// The features in force on `conn` by its welcome (SESSION-012), sorted; empty on 1.0.
    pub fn features(&self, conn: u64) -> &[Capability] {
        self.model.conn(conn).map_or(&[], |c| c.features.as_slice())
    }

    /// The seq of the latest frame of `session` that carried no state (an event, a welcome, an
    /// error) at or below `upto`: a resume naming it must get a snapshot (RESUME-018).
    pub fn latest_non_state_seq(&self, session: &str, upto: u64) -> Option<u64> {
        self.model.session(session).and_then(|t| t.kinds.latest_non_state(upto))
    }

    /// The highest seq `conn` received.
    pub fn last_seq(&self, conn: u64) -> Option<u64> {
        self.model.conn(conn).and_then(|c| c.last_seq)
    }

    /// The session of the latest welcome.
    pub fn current_session(&self) -> Option<&str> {
        self.model.current_session()
    }

    /// The highest seq seen on `session`.
    pub fn max_seq(&self, session: &str) -> Option<u64> {
        self.model.session(session).map(|t| t.max_seq)
    }

    /// The latest resume token of `session`.
    pub fn resume_token(&self, session: &str) -> Option<&str> {
        self.model.session(session).and_then(|t| t.resume_token.as_deref())
    }

    /// The placeholder naming of ids, shared with whoever renders frames beside the findings.
    pub fn redactor(&mut self) -> &mut Normalizer {
        &mut self.redactor
    }

    /// A redacted excerpt of a frame.
    pub fn excerpt(&mut self, value: &Value) -> String {
        crate::text::excerpt(&self.redactor.normalize(value), FRAME_EXCERPT)
    }

    /// `check` evaluated `requirement`.
    fn record(&mut self, check: &'static CheckDef, requirement: ReqId) {
        if self.recorded.insert((std::ptr::from_ref(check) as usize, requirement)) {
            self.evaluated.entry(check.id).or_default().insert(requirement);
        }
    }

    /// Turns raw findings into findings: excerpt of the frame, ids in messages redacted.
    fn collect(&mut self, conn: u64, out: Out, value: Option<&Value>, raw_excerpt: Option<String>) {
        for (check, req) in out.evaluated {
            self.record(check, req);
        }
        if out.raws.is_empty() {
            return;
        }
        let excerpt = match value {
            Some(v) => Some(self.excerpt(v)),
            None => raw_excerpt,
        };
        for raw in out.raws {
            self.record(raw.check, raw.requirement);
            let message = match value {
                Some(v) => redact::message(&mut self.redactor, &raw.message, &[v]),
                None => raw.message,
            };
            let check: &'static CheckDef = raw.check;
            self.findings.push(Finding { check, requirement: raw.requirement, message, frame: excerpt.clone(), conn });
        }
    }
}
