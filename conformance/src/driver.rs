//! Runs one scenario against a backend: drives the steps over WebSocket and applies the always-on
//! checks to every frame received (schema, seq, ids, batch order, and the differential oracle: the
//! runner's own UiState, folded with `chatwire_schema::reducer`, against every state the server sends).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::schema_gen::Direction;
use chatwire_schema::{DisplayItem, ErrorCode, FrameValidator, Id, ServerFrame, UiState};
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::backend::{ServerProcess, StartError};
use crate::checks::{self, CheckDef};
use crate::conn::{ConnectError, Incoming, WsConn};
use crate::pattern::{self, match_value, substitute, Bindings};
use crate::report::{scenario_verdict, CheckReport, CheckSet, Finding, ScenarioReport, Verdict};
use crate::scenario::{Level, Scenario, Step, DEFAULT_CONN};
use crate::snapshot::{self, Normalizer, SnapshotStore};

/// How snapshot steps are judged.
#[derive(Clone, Debug)]
pub enum SnapshotMode {
    /// Compare with the golden files; a missing file is a harness error.
    Compare(SnapshotStore),
    /// Only record the projections in the report (the insta tests assert them).
    Collect,
}

/// Settings shared by every scenario of a run.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// Multiplies every deadline (slow machines, debug builds).
    pub timeout_scale: f64,
    /// Default step deadline before scaling.
    pub step_timeout: Duration,
    /// Largest message accepted from the server.
    pub max_message_bytes: usize,
    /// Versions offered in `session.hello` unless a step overrides them.
    pub versions: Vec<String>,
    /// How snapshots are judged.
    pub snapshots: SnapshotMode,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            timeout_scale: 1.0,
            step_timeout: Duration::from_secs(5),
            max_message_bytes: crate::conn::DEFAULT_MAX_MESSAGE_BYTES,
            versions: vec![chatwire_schema::PROTOCOL_VERSION.to_string()],
            snapshots: SnapshotMode::Collect,
        }
    }
}

impl DriverConfig {
    /// `ms` scaled by `timeout_scale`.
    pub fn scaled(&self, d: Duration) -> Duration {
        d.mul_f64(self.timeout_scale.max(0.01))
    }
}

/// Where the backend is, for one scenario.
#[derive(Debug)]
pub enum Endpoint {
    /// A backend the runner cannot restart (a URL, or the shared spawned instance).
    Url(String),
    /// A backend the runner started for this scenario alone; `restart` works.
    Process(Box<ServerProcess>),
}

impl Endpoint {
    fn url(&self) -> String {
        match self {
            Endpoint::Url(u) => u.clone(),
            Endpoint::Process(p) => p.url().to_owned(),
        }
    }

    /// Asks the backend to shut down in an orderly way (SIGTERM).
    fn request_shutdown(&mut self) -> Result<(), StepError> {
        match self {
            Endpoint::Url(_) => Err(StepError::new(
                Verdict::NotApplicable,
                "an orderly restart needs a backend the runner starts (--exec or the bundled one), not --url",
            )),
            Endpoint::Process(p) => {
                p.request_shutdown();
                Ok(())
            }
        }
    }

    /// After [`Endpoint::request_shutdown`]: waits up to `grace` for the exit (killing the backend
    /// otherwise) and starts it again. True when it exited by itself.
    async fn restart_after_shutdown(&mut self, grace: Duration) -> Result<bool, StepError> {
        match self {
            Endpoint::Url(_) => Err(StepError::new(Verdict::NotApplicable, "no backend process to restart")),
            Endpoint::Process(p) => p.restart_after_shutdown(grace).await.map_err(|e: StartError| {
                StepError::new(Verdict::Fail, format!("the backend did not come back after its orderly shutdown: {e}"))
            }),
        }
    }

    /// Kills the backend, keeps it down for `down`, and starts it again.
    async fn restart(&mut self, down: Duration) -> Result<(), StepError> {
        match self {
            Endpoint::Url(_) => Err(StepError::new(
                Verdict::NotApplicable,
                "restart needs a backend the runner starts (--exec or the bundled one), not --url",
            )),
            Endpoint::Process(p) => p.restart(down).await.map_err(|e: StartError| {
                StepError::new(Verdict::Fail, format!("the backend did not come back after kill -9: {e}"))
            }),
        }
    }
}

/// Most frames a scenario reads in all; a flooding server ends the scenario instead of the run.
const MAX_FRAMES_PER_SCENARIO: usize = 50_000;
/// Lines of wire log kept for the report.
const WIRE_LOG_LINES: usize = 40;
/// Longest frame excerpt in a finding.
const FRAME_EXCERPT: usize = 400;

/// Why a step did not complete.
#[derive(Clone, Debug)]
struct StepError {
    verdict: Verdict,
    message: String,
    frame: Option<String>,
    requirement: Option<String>,
    /// The sweep cut the connection here on purpose: not a finding, the variant's recovery follows.
    cut: bool,
}

impl StepError {
    fn new(verdict: Verdict, message: impl Into<String>) -> Self {
        StepError { verdict, message: message.into(), frame: None, requirement: None, cut: false }
    }

    fn cut() -> Self {
        StepError { cut: true, ..Self::new(Verdict::Pass, "the sweep cut the connection") }
    }

    fn fail(message: impl Into<String>) -> Self {
        Self::new(Verdict::Fail, message)
    }

    fn harness(message: impl Into<String>) -> Self {
        Self::new(Verdict::HarnessError, message)
    }

    fn with_frame(mut self, frame: Option<String>) -> Self {
        self.frame = frame;
        self
    }

    fn with_requirement(mut self, requirement: &str) -> Self {
        self.requirement = Some(requirement.to_owned());
        self
    }
}

/// What reading from a connection produced, after the always-on checks saw it.
enum Next {
    /// A text frame that is JSON (its raw text went to the wire log, not copied).
    Frame(Value),
    /// A text frame that is not JSON, as received.
    NotJson(String),
    Binary(usize),
    Closed(Option<u16>, String),
    Broken(String),
    /// A pong's payload; only returned to the ping step, other steps read past pongs.
    Pong(Vec<u8>),
    Deadline,
}

/// How `connect` opens a connection.
#[derive(Clone, Copy, Debug)]
struct Handshake {
    /// Send `session.hello` and expect welcome and snapshot.
    hello: bool,
    /// Offer the `chatwire.v1` subprotocol.
    subprotocol: bool,
    /// Put the scenario's script in the hello.
    with_script: bool,
}

struct PendingHello {
    id: String,
    versions: Vec<String>,
    /// For a resume: the highest seq seen on the session before it; the welcome must be above it.
    resume_floor: Option<u64>,
}

struct Conn {
    ws: WsConn,
    session: Option<String>,
    last_seq: Option<u64>,
    oracle: Option<UiState>,
    awaiting_snapshot: bool,
    hello: Option<PendingHello>,
    last_sent_id: Option<String>,
    /// The last event was a tool call of this invocation with this call_index (a batch in progress).
    batch: Option<(String, u32)>,
    /// The fatal error code received, after which nothing but a close may come.
    fatal: Option<ErrorCode>,
    /// An event arrived whose ui_state_updated has not come yet (STATE-003).
    update_due: bool,
    /// A ui_state_updated already followed the current batch of tool calls (MULTI-002).
    batch_updated: bool,
    /// The welcome just received opened a new session, so the snapshot must be empty (STATE-005).
    new_session: bool,
}

#[derive(Default)]
struct SessionTrack {
    max_seq: u64,
    /// Every tool_call_id, invocation_id and item id seen in the session (ID-002).
    ids: HashSet<String>,
    resume_token: Option<String>,
}

/// Runs `scenario` and reports every check. Never panics on anything the server sends; every wait
/// ends at the step deadline or at `deadline` (the scenario's, already capped by the run's).
pub async fn run_scenario(
    scenario: &Scenario,
    endpoint: &mut Endpoint,
    cfg: &DriverConfig,
    validator: Arc<FrameValidator>,
    deadline: Instant,
) -> ScenarioReport {
    run_with(scenario, endpoint, cfg, validator, deadline, None).await.0
}

/// The uninterrupted run of a sweep: the scenario's own report (every step and snapshot checked as
/// usual, plus a final wait for idle), and what its cut variants are compared with. `None` when the
/// run did not end with a session state to compare.
pub async fn run_sweep_baseline(
    scenario: &Scenario,
    endpoint: &mut Endpoint,
    cfg: &DriverConfig,
    validator: Arc<FrameValidator>,
    deadline: Instant,
) -> (ScenarioReport, Option<SweepBaseline>) {
    run_with(scenario, endpoint, cfg, validator, deadline, Some(SweepRole::Baseline)).await
}

/// One cut variant of a sweep: runs `scenario`, cuts the main connection right after its
/// `cut_after`-th frame (counted after the first welcome and snapshot), resumes, replays the client
/// actions not yet sent, and compares the final state and the settlements with `baseline`.
pub async fn run_sweep_variant(
    scenario: &Scenario,
    endpoint: &mut Endpoint,
    cfg: &DriverConfig,
    validator: Arc<FrameValidator>,
    deadline: Instant,
    baseline: &SweepBaseline,
    cut_after: usize,
) -> ScenarioReport {
    let role = SweepRole::Cut { cut_after, baseline };
    run_with(scenario, endpoint, cfg, validator, deadline, Some(role)).await.0
}

async fn run_with(
    scenario: &Scenario,
    endpoint: &mut Endpoint,
    cfg: &DriverConfig,
    validator: Arc<FrameValidator>,
    deadline: Instant,
    role: Option<SweepRole<'_>>,
) -> (ScenarioReport, Option<SweepBaseline>) {
    let started = Instant::now();
    let (sweep, sweep_baseline) = match role {
        None => (None, None),
        Some(SweepRole::Baseline) => (Some(SweepTrack::new(None)), None),
        Some(SweepRole::Cut { cut_after, baseline }) => (Some(SweepTrack::new(Some(cut_after))), Some(baseline)),
    };
    let mut driver = Driver {
        scenario,
        cfg,
        validator,
        endpoint,
        deadline,
        conns: BTreeMap::new(),
        sessions: HashMap::new(),
        current_session: None,
        bindings: Bindings::default(),
        checks: CheckSet::default(),
        transcript: Vec::new(),
        wire_log: VecDeque::new(),
        redactor: Normalizer::default(),
        snap_normalizer: Normalizer::default(),
        counters: HashMap::new(),
        sent_ids: HashSet::new(),
        step: 0,
        frames: 0,
        snapshots: BTreeMap::new(),
        capabilities_checked: false,
        advisor: checks::Advisor::default(),
        sweep,
        sweep_baseline,
    };
    let applicable = driver.run_steps().await;
    let mut recorded = None;
    if applicable {
        match driver.sweep_baseline {
            Some(baseline) => driver.compare_with_baseline(baseline),
            None if driver.sweep.is_some() => recorded = driver.record_baseline(),
            None => {}
        }
    }
    driver.finish().await;
    let mut checks = std::mem::take(&mut driver.checks);
    if applicable {
        for def in checks::ALWAYS_ON {
            checks.touch(def.id, &def.requirement_list(), def.summary);
        }
    } else {
        checks.mark_untouched_not_applicable();
    }
    let checks: Vec<CheckReport> = checks.into_checks();
    let verdict = scenario_verdict(&checks);
    // The wire log is evidence for a failure; redacting it costs time a passing scenario need not spend.
    let wire_log = if verdict == Verdict::Pass { Vec::new() } else { driver.render_wire_log() };
    let snapshots = std::mem::take(&mut driver.snapshots);
    let report = ScenarioReport {
        id: scenario.id.clone(),
        title: scenario.title.clone(),
        level: scenario.level,
        requirements: scenario.requirements.iter().map(|r| r.0.clone()).collect(),
        verdict,
        duration_ms: started.elapsed().as_millis() as u64,
        checks,
        wire_log,
        backend_stderr: None,
        snapshots,
        sweep: None,
    };
    (report, recorded)
}

/// The part a run of a scenario plays in a sweep.
enum SweepRole<'b> {
    /// The uninterrupted run: records what the variants are compared with.
    Baseline,
    /// Cut the main connection after its `cut_after`-th frame, resume, finish, compare.
    Cut { cut_after: usize, baseline: &'b SweepBaseline },
}

/// What the uninterrupted run of a sweepable scenario leaves for its cut variants.
#[derive(Clone, Debug)]
pub struct SweepBaseline {
    /// Frames received on the main connection after its first welcome and snapshot: the cut points.
    pub frames: usize,
    /// The final UiState, normalized like snapshots (ids numbered, timestamps redacted), pretty JSON.
    pub final_state: String,
    /// Placeholders bound to ids the session introduced: name -> (kind, ordinal of introduction).
    /// A variant's session has other ids; the scripted agent makes the n-th of a kind correspond.
    id_bindings: HashMap<String, (IdKind, usize)>,
}

/// Kinds of ids whose order of introduction a sweep tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum IdKind {
    Invocation = 0,
    ToolCall = 1,
    Item = 2,
}

/// Ids in the order the session introduced them, per kind, learnt from event frames and, for those a
/// cut lost, from the resume snapshot (display order, which is call and turn order).
#[derive(Default)]
struct IdOrder {
    lists: [Vec<String>; 3],
    known: HashMap<String, (IdKind, usize)>,
}

impl IdOrder {
    fn note(&mut self, kind: IdKind, id: &str) {
        if !self.known.contains_key(id) {
            let list = &mut self.lists[kind as usize];
            self.known.insert(id.to_owned(), (kind, list.len()));
            list.push(id.to_owned());
        }
    }

    fn get(&self, kind: IdKind, ordinal: usize) -> Option<&str> {
        self.lists[kind as usize].get(ordinal).map(String::as_str)
    }
}

/// Sweep bookkeeping of one run (absent outside sweeps, so ordinary runs pay nothing for it).
struct SweepTrack {
    /// Cut after this many main-connection frames; `None` in the uninterrupted run.
    cut_after: Option<usize>,
    /// Counting starts once the first connect (welcome + snapshot) completed.
    counting: bool,
    main_frames: usize,
    cut_due: bool,
    cut_done: bool,
    order: IdOrder,
    /// Settlement frames (`tool_call_complete`, `tool_call_dismiss`) per call, on every connection.
    settlements: BTreeMap<String, usize>,
}

impl SweepTrack {
    fn new(cut_after: Option<usize>) -> Self {
        SweepTrack {
            cut_after,
            counting: false,
            main_frames: 0,
            cut_due: false,
            cut_done: false,
            order: IdOrder::default(),
            settlements: BTreeMap::new(),
        }
    }

    fn note_frame(&mut self, frame: &ServerFrame) {
        match frame {
            ServerFrame::UserMessageAccepted(f) => {
                self.order.note(IdKind::Invocation, f.invocation_id.as_str());
                self.order.note(IdKind::Item, f.item_id.as_str());
            }
            ServerFrame::AssistantMessage(f) => self.order.note(IdKind::Item, f.item_id.as_str()),
            ServerFrame::ToolCall(f) => self.order.note(IdKind::ToolCall, f.tool_call_id.as_str()),
            ServerFrame::ToolCallComplete(f) => *self.settlements.entry(f.tool_call_id.to_string()).or_insert(0) += 1,
            ServerFrame::ToolCallDismiss(f) => *self.settlements.entry(f.tool_call_id.to_string()).or_insert(0) += 1,
            ServerFrame::UiStateSnapshot(s) => {
                for item in &s.state.items {
                    self.order.note(IdKind::Invocation, item.invocation_id().as_str());
                    match item {
                        DisplayItem::ToolCall(c) => self.order.note(IdKind::ToolCall, c.id.as_str()),
                        DisplayItem::ToolOutput(_) => {}
                        other => self.order.note(IdKind::Item, other.id().as_str()),
                    }
                }
            }
            _ => {}
        }
    }
}

struct Driver<'a> {
    scenario: &'a Scenario,
    cfg: &'a DriverConfig,
    validator: Arc<FrameValidator>,
    endpoint: &'a mut Endpoint,
    deadline: Instant,
    conns: BTreeMap<String, Conn>,
    sessions: HashMap<String, SessionTrack>,
    current_session: Option<String>,
    bindings: Bindings,
    checks: CheckSet,
    transcript: Vec<String>,
    /// The last frames as `(prefix, raw text)`, redacted when the report is written.
    wire_log: VecDeque<(String, String)>,
    redactor: Normalizer,
    snap_normalizer: Normalizer,
    counters: HashMap<&'static str, usize>,
    sent_ids: HashSet<String>,
    step: usize,
    frames: usize,
    snapshots: BTreeMap<String, String>,
    capabilities_checked: bool,
    /// The should-level checks that follow a tool call across frames.
    advisor: checks::Advisor,
    sweep: Option<SweepTrack>,
    sweep_baseline: Option<&'a SweepBaseline>,
}

impl Driver<'_> {
    /// Runs the steps; false when the scenario turned out not applicable.
    async fn run_steps(&mut self) -> bool {
        let requirements: Vec<String> = self.scenario.requirements.iter().map(|r| r.0.clone()).collect();
        if self.scenario.restarts() && matches!(self.endpoint, Endpoint::Url(_)) {
            self.checks.record(
                "restart",
                &requirements,
                "the scenario restarts the backend",
                Verdict::NotApplicable,
                Some(Finding {
                    message: "the scenario kills and restarts the backend; use --exec or the bundled backend".into(),
                    step: None,
                    requirement: None,
                    frame: None,
                }),
            );
            return false;
        }
        let mut steps = self.scenario.steps.clone();
        let variant = self.sweep_baseline.is_some();
        if self.sweep.is_some() {
            // Both runs of a sweep end idle, so their final states are comparable.
            steps.push(Step::WaitIdle { conn: None, quiet_ms: None, timeout_ms: None });
        }
        for (index, step) in steps.iter().enumerate() {
            self.step = index + 1;
            let id = if index < self.scenario.steps.len() {
                format!("step-{:02}-{}", index + 1, step.kind())
            } else {
                "sweep-final-idle".to_owned()
            };
            let summary = describe(step);
            if variant && matches!(step, Step::Snapshot { .. }) {
                // A variant is compared with the uninterrupted run, not with the golden files.
                continue;
            }
            if Instant::now() >= self.deadline {
                let f = self.finding("the scenario deadline passed before this step".into(), None, None);
                self.checks.record(&id, &requirements, &summary, Verdict::Timeout, Some(f));
                return true;
            }
            let result = self.run_step(step).await;
            let cut = matches!(&result, Err(e) if e.cut) || self.take_cut();
            if cut {
                // The step was interrupted on purpose; what it would have checked may be lost.
                self.checks.touch(&id, &requirements, &summary);
                return self.recover(&steps[index + 1..], index + 1, &requirements).await;
            }
            if let (Some(sweep), Step::Connect { .. }, Ok(())) = (self.sweep.as_mut(), step, &result) {
                sweep.counting = true;
            }
            match result {
                Ok(()) => self.checks.touch(&id, &requirements, &summary),
                Err(e) if e.verdict == Verdict::NotApplicable => {
                    let f = self.finding(e.message, None, e.requirement);
                    self.checks.record(&id, &requirements, &summary, Verdict::NotApplicable, Some(f));
                    self.checks.mark_untouched_not_applicable();
                    return false;
                }
                Err(e) => {
                    let verdict = self.level_verdict(e.verdict);
                    let f = self.finding(e.message, e.frame, e.requirement);
                    self.checks.record(&id, &requirements, &summary, verdict, Some(f));
                    return true;
                }
            }
        }
        true
    }

    /// Cuts the main connection (no closing handshake) if the sweep's cut point was reached.
    fn take_cut(&mut self) -> bool {
        let Some(sweep) = self.sweep.as_mut() else { return false };
        if !sweep.cut_due || sweep.cut_done {
            return false;
        }
        sweep.cut_due = false;
        sweep.cut_done = true;
        let k = sweep.main_frames;
        if let Some(mut c) = self.conns.remove(DEFAULT_CONN) {
            c.ws.abandon();
        }
        self.transcript(format!("-- sweep: cut after frame {k} --"));
        self.log(format!("-- sweep: connection cut after frame {k} --"));
        true
    }

    /// After a sweep cut: resume at once, replay the client actions not yet sent (each once the run
    /// is idle; a response to a call the resumed state shows settled is skipped), and end idle. The
    /// scenario's expectations are not replayed: frames sent while the connection was down are lost
    /// by design (no replay in v1) and the snapshot stands for them.
    async fn recover(&mut self, remaining: &[Step], first_index: usize, requirements: &[String]) -> bool {
        let resume = Step::Resume { conn: None, last_seq: None };
        let summary = "after the cut: resume at once (welcome resumed=true, ui_state_snapshot)";
        if !self.recovery_step("sweep-resume", summary, &resume, requirements).await {
            return true;
        }
        for (offset, step) in remaining.iter().enumerate() {
            self.step = first_index + offset + 1;
            if self.step > self.scenario.steps.len() {
                break;
            }
            let id = format!("sweep-step-{:02}-{}", self.step, step.kind());
            let replayed = match step {
                Step::UserMessage { .. } | Step::Respond { .. } | Step::Rewind { .. } => {
                    let idle = Step::WaitIdle { conn: None, quiet_ms: None, timeout_ms: None };
                    let summary = "before a replayed action: wait until the run is idle";
                    if !self
                        .recovery_step(&format!("sweep-idle-before-{:02}", self.step), summary, &idle, requirements)
                        .await
                    {
                        return true;
                    }
                    match self.resolve_for_variant(step) {
                        Some(resolved) => resolved,
                        None => {
                            let summary =
                                format!("{} (skipped: the resumed state shows the call settled)", describe(step));
                            self.checks.touch(&id, requirements, &summary);
                            continue;
                        }
                    }
                }
                Step::Disconnect { .. } | Step::Resume { .. } | Step::Sleep { .. } => step.clone(),
                // Expectations and snapshots: the frames they name may have been lost in the cut.
                _ => continue,
            };
            let summary = format!("replayed: {}", describe(step));
            if !self.recovery_step(&id, &summary, &replayed, requirements).await {
                return true;
            }
        }
        self.step = self.scenario.steps.len() + 1;
        let idle = Step::WaitIdle { conn: None, quiet_ms: None, timeout_ms: None };
        self.recovery_step("sweep-final-idle", "the variant ends with the run idle", &idle, requirements).await;
        true
    }

    /// Runs one step of a sweep recovery as a check; false when it did not complete.
    async fn recovery_step(&mut self, id: &str, summary: &str, step: &Step, requirements: &[String]) -> bool {
        match self.run_step(step).await {
            Ok(()) => {
                self.checks.touch(id, requirements, summary);
                true
            }
            Err(e) => {
                let verdict =
                    self.level_verdict(if e.verdict == Verdict::NotApplicable { Verdict::Fail } else { e.verdict });
                let f = self.finding(e.message, e.frame, e.requirement);
                self.checks.record(id, requirements, summary, verdict, Some(f));
                false
            }
        }
    }

    /// A replayed action with its placeholders mapped to this variant's ids: the id the uninterrupted
    /// run bound to a name is the n-th of its kind there, so it is the n-th here. `None` when the
    /// action is a response to a call the current state shows settled (sending it would only get
    /// `tool_call_settled`).
    fn resolve_for_variant(&self, step: &Step) -> Option<Step> {
        let map = |template: &str| -> String {
            let mapped = pattern::placeholder(template)
                .and_then(|name| self.sweep_baseline?.id_bindings.get(name))
                .and_then(|(kind, ordinal)| self.sweep.as_ref()?.order.get(*kind, *ordinal));
            mapped.map_or_else(|| template.to_owned(), str::to_owned)
        };
        match step {
            Step::Respond { conn, id, tool_call, outcome } => {
                let target = map(tool_call);
                let settled = self.conns.get(DEFAULT_CONN).and_then(|c| c.oracle.as_ref()).is_some_and(|state| {
                    Id::parse(target.as_str())
                        .ok()
                        .and_then(|id| state.tool_call(&id))
                        .is_some_and(|c| c.status.is_terminal())
                });
                (!settled).then(|| Step::Respond {
                    conn: conn.clone(),
                    id: id.clone(),
                    tool_call: target,
                    outcome: outcome.clone(),
                })
            }
            Step::Rewind { conn, id, before } => {
                Some(Step::Rewind { conn: conn.clone(), id: id.clone(), before: map(before) })
            }
            other => Some(other.clone()),
        }
    }

    /// The main connection's final state, normalized like snapshots.
    fn normalized_final_state(&self) -> Option<String> {
        let state = self.conns.get(DEFAULT_CONN)?.oracle.as_ref()?;
        let value = serde_json::to_value(state).ok()?;
        serde_json::to_string_pretty(&Normalizer::default().normalize(&value)).ok()
    }

    /// What the variants of this (uninterrupted) run are compared with.
    fn record_baseline(&mut self) -> Option<SweepBaseline> {
        let final_state = self.normalized_final_state()?;
        let sweep = self.sweep.as_ref()?;
        let id_bindings = self
            .bindings
            .iter()
            .filter_map(|(name, value)| Some((name.to_owned(), *sweep.order.known.get(value.as_str()?)?)))
            .collect();
        Some(SweepBaseline { frames: sweep.main_frames, final_state, id_bindings })
    }

    /// The sweep assertions of a variant: same final state as the uninterrupted run, no call settled twice.
    fn compare_with_baseline(&mut self, baseline: &SweepBaseline) {
        let reqs = |ids: &[&str]| ids.iter().map(|r| (*r).to_owned()).collect::<Vec<String>>();
        let state_reqs = reqs(&["RESUME-002", "RESUME-009"]);
        let summary = "the final normalized UiState equals the uninterrupted run's";
        match self.normalized_final_state() {
            None => {
                let f = self.finding("the variant ended without a session state".into(), None, None);
                self.checks.record(
                    "sweep-final-state",
                    &state_reqs,
                    summary,
                    self.level_verdict(Verdict::Fail),
                    Some(f),
                );
            }
            Some(state) => {
                let diff = snapshot::line_diff(&baseline.final_state, &state, 60);
                if diff.is_empty() {
                    self.checks.touch("sweep-final-state", &state_reqs, summary);
                } else {
                    let message = format!(
                        "the final state differs from the uninterrupted run's (- uninterrupted, + cut and resumed):\n{}",
                        diff.join("\n")
                    );
                    let f = self.finding(message, None, Some("RESUME-002".into()));
                    self.checks.record(
                        "sweep-final-state",
                        &state_reqs,
                        summary,
                        self.level_verdict(Verdict::Fail),
                        Some(f),
                    );
                }
            }
        }
        let once_reqs = reqs(&["TOOL-010", "TOOL-012"]);
        let summary = "no tool call settles twice across the variant's connections";
        self.checks.touch("sweep-settled-once", &once_reqs, summary);
        let twice: Vec<(String, usize)> = self
            .sweep
            .as_ref()
            .map(|s| s.settlements.iter().filter(|(_, n)| **n > 1).map(|(id, n)| (id.clone(), *n)).collect())
            .unwrap_or_default();
        for (call, n) in twice {
            let name = self.redactor.id("tool_call", &call);
            let message = format!("tool call {name} settled {n} times (settlement frames across the connections)");
            let f = self.finding(message, None, Some("TOOL-010".into()));
            self.checks.record("sweep-settled-once", &once_reqs, summary, self.level_verdict(Verdict::Fail), Some(f));
        }
    }

    /// A SHOULD or MAY scenario reports its step failures as warnings.
    fn level_verdict(&self, verdict: Verdict) -> Verdict {
        match (verdict, self.scenario.level) {
            (Verdict::Fail, Level::Should | Level::May) => Verdict::Warn,
            (v, _) => v,
        }
    }

    fn finding(&self, message: String, frame: Option<String>, requirement: Option<String>) -> Finding {
        Finding { message, step: (self.step > 0).then_some(self.step), requirement, frame }
    }

    async fn finish(&mut self) {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let deadline = (Instant::now() + Duration::from_millis(500)).min(self.deadline.max(Instant::now()));
            let late = match self.conns.get_mut(&name) {
                Some(c) => c.ws.close(deadline).await,
                None => continue,
            };
            for frame in late {
                self.observe(&name, frame);
            }
            self.conns.remove(&name);
        }
    }

    fn step_deadline(&self, timeout_ms: Option<u64>) -> Instant {
        let base = timeout_ms.map(Duration::from_millis).unwrap_or(self.cfg.step_timeout);
        (Instant::now() + self.cfg.scaled(base)).min(self.deadline)
    }

    fn next_id(&mut self, prefix: &'static str) -> String {
        let n = self.counters.entry(prefix).or_insert(0);
        *n += 1;
        format!("{prefix}{n}")
    }

    fn log(&mut self, line: String) {
        self.log_raw(line, String::new());
    }

    fn log_raw(&mut self, prefix: String, raw: String) {
        if self.wire_log.len() == WIRE_LOG_LINES {
            self.wire_log.pop_front();
        }
        self.wire_log.push_back((prefix, raw));
    }

    /// The wire log as report lines, ids replaced by placeholders.
    fn render_wire_log(&mut self) -> Vec<String> {
        let entries: Vec<(String, String)> = self.wire_log.drain(..).collect();
        entries
            .into_iter()
            .map(|(prefix, raw)| {
                if raw.is_empty() {
                    pattern::truncate(&prefix, 300)
                } else {
                    format!("{prefix}{}", self.redact_text(&raw))
                }
            })
            .collect()
    }

    /// A redacted, truncated excerpt of a raw frame (the text itself when it is not JSON).
    fn redact_text(&mut self, raw: &str) -> String {
        match serde_json::from_str::<Value>(raw) {
            Ok(v) => self.redact(&v),
            Err(_) => pattern::truncate(raw, FRAME_EXCERPT),
        }
    }

    fn transcript(&mut self, line: String) {
        // Bounded: a flood must not grow memory without limit.
        if self.transcript.len() < 5_000 {
            self.transcript.push(line);
        }
    }

    fn redact(&mut self, value: &Value) -> String {
        pattern::excerpt(&self.redactor.normalize(value), FRAME_EXCERPT)
    }

    fn fail_check(&mut self, def: &CheckDef, message: String, frame: Option<String>, requirement: Option<&str>) {
        let f = self.finding(message, frame, requirement.map(str::to_owned));
        let verdict = if def.level == Level::Must { Verdict::Fail } else { Verdict::Warn };
        self.checks.record(def.id, &def.requirement_list(), def.summary, verdict, Some(f));
    }

    // ---------------------------------------------------------------- steps

    async fn run_step(&mut self, step: &Step) -> Result<(), StepError> {
        let conn = step.conn().unwrap_or(DEFAULT_CONN).to_owned();
        match step {
            Step::Connect { versions, with_script, hello, subprotocol, .. } => {
                let versions = versions.clone().unwrap_or_else(|| self.cfg.versions.clone());
                let handshake = Handshake { hello: *hello, subprotocol: *subprotocol, with_script: *with_script };
                self.connect(&conn, handshake, versions, None).await
            }
            Step::Resume { last_seq, .. } => {
                let session = self
                    .current_session
                    .clone()
                    .ok_or_else(|| StepError::harness("resume before any session was opened"))?;
                let track = self.sessions.get(&session);
                let token = track.and_then(|t| t.resume_token.clone()).unwrap_or_default();
                let seen = track.map_or(0, |t| t.max_seq);
                let deadline = self.step_deadline(None);
                if let Some(old) = self.conns.get_mut(&conn) {
                    let late = old.ws.close(deadline).await;
                    for frame in late {
                        self.observe(&conn, frame);
                    }
                    self.conns.remove(&conn);
                }
                let resume =
                    json!({"session_id": session, "resume_token": token, "last_seq": last_seq.unwrap_or(seen)});
                let handshake = Handshake { hello: true, subprotocol: true, with_script: false };
                self.connect(&conn, handshake, self.cfg.versions.clone(), Some(resume)).await
            }
            Step::Disconnect { .. } => {
                let deadline = self.step_deadline(None);
                let late = self.conn_mut(&conn)?.ws.close(deadline).await;
                for frame in late {
                    self.observe(&conn, frame);
                }
                self.conns.remove(&conn);
                self.transcript(format!("{conn} x disconnect"));
                self.log(format!("{conn} x disconnect"));
                Ok(())
            }
            Step::Restart { graceful: false, down_ms } => {
                for (_, mut c) in std::mem::take(&mut self.conns) {
                    c.ws.abandon();
                }
                let down = Duration::from_millis(down_ms.unwrap_or(0));
                let line = match down_ms {
                    Some(ms) => format!("-- restart (kill -9, down {ms} ms) --"),
                    None => "-- restart (kill -9) --".to_owned(),
                };
                self.transcript(line.clone());
                self.log(line);
                self.endpoint.restart(down).await
            }
            Step::Restart { graceful: true, .. } => self.graceful_restart().await,
            Step::UserMessage { id, text, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("u"),
                };
                self.send_value(&conn, json!({"type": "chat.user_message", "id": id, "text": text}), true).await
            }
            Step::Respond { id, tool_call, outcome, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("r"),
                };
                let frame =
                    json!({"type": "chat.tool_call_response", "id": id, "tool_call_id": tool_call, "outcome": outcome});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Rewind { id, before, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("w"),
                };
                let frame = json!({"type": "chat.rewind", "id": id, "before_invocation_id": before});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Send { frame, .. } => {
                let frame = self.substitute(&conn, frame)?;
                self.send_value(&conn, frame, false).await
            }
            Step::SendText { text, .. } => {
                // A text holding a JSON object is tracked like any sent frame (its id, a hello's
                // offer) but sent exactly as written, so spellings such as `1e3` reach the server.
                if let Ok(frame @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
                    return self.send_tracked(&conn, &frame, text.clone()).await;
                }
                let deadline = self.step_deadline(None);
                self.transcript(format!("{conn} > text"));
                self.log(format!("{conn} > {}", pattern::truncate(text, 200)));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = None;
                c.ws.send_text(text.clone(), deadline).await.map_err(|e| StepError::fail(format!("cannot send: {e}")))
            }
            Step::SendBinary { bytes, .. } => {
                let deadline = self.step_deadline(None);
                self.transcript(format!("{conn} > binary"));
                self.log(format!("{conn} > binary ({bytes} bytes)"));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = None;
                c.ws.send_binary(vec![0; *bytes], deadline)
                    .await
                    .map_err(|e| StepError::fail(format!("cannot send: {e}")))
            }
            Step::Ping { payload, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.ping(&conn, payload, deadline).await
            }
            Step::Expect { frame, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.expect_one(&conn, frame, deadline, true).await
            }
            Step::ExpectUnordered { frames, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.expect_unordered(&conn, frames, deadline).await
            }
            Step::ExpectError { code, in_reply_to, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                let reply = match in_reply_to {
                    Some(p) => Value::String(p.clone()),
                    None => match self.conn_mut(&conn)?.last_sent_id.clone() {
                        Some(id) => Value::String(id),
                        None => Value::String(format!("{{{{{}}}}}", pattern::ABSENT)),
                    },
                };
                let pattern =
                    json!({"type": "error", "code": code.as_str(), "fatal": code.is_fatal(), "in_reply_to": reply});
                self.expect_one(&conn, &pattern, deadline, true).await
            }
            Step::ExpectClose { code, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.expect_close(&conn, *code, deadline).await
            }
            Step::ExpectSilence { ms, .. } => {
                let deadline = (Instant::now() + Duration::from_millis(*ms)).min(self.deadline);
                match self.next(&conn, deadline).await? {
                    Next::Deadline => Ok(()),
                    Next::Frame(v) => {
                        let excerpt = self.redact(&v);
                        Err(StepError::fail(format!("expected no frame for {ms} ms")).with_frame(Some(excerpt)))
                    }
                    Next::NotJson(raw) => {
                        let excerpt = self.redact_text(&raw);
                        Err(StepError::fail(format!("expected no frame for {ms} ms")).with_frame(Some(excerpt)))
                    }
                    other => Err(unexpected(other, "silence")),
                }
            }
            Step::WaitIdle { quiet_ms, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.wait_idle(&conn, Duration::from_millis(quiet_ms.unwrap_or(200)), deadline).await
            }
            Step::Sleep { ms } => {
                tokio::time::sleep_until((Instant::now() + Duration::from_millis(*ms)).min(self.deadline)).await;
                Ok(())
            }
            Step::Snapshot { name, .. } => self.snapshot(&conn, name),
        }
    }

    fn conn_mut(&mut self, name: &str) -> Result<&mut Conn, StepError> {
        self.conns.get_mut(name).ok_or_else(|| StepError::fail(format!("connection {name} is no longer open")))
    }

    fn substitute(&self, conn: &str, template: &Value) -> Result<Value, StepError> {
        let track = self.current_session.as_ref().and_then(|s| self.sessions.get(s));
        let mut builtins: HashMap<&str, Value> = HashMap::new();
        if let Some(s) = &self.current_session {
            builtins.insert("session_id", Value::String(s.clone()));
        }
        if let Some(t) = track {
            builtins.insert("last_seq", json!(t.max_seq));
            if let Some(token) = &t.resume_token {
                builtins.insert("resume_token", Value::String(token.clone()));
            }
        }
        if let Some(id) = self.conns.get(conn).and_then(|c| c.last_sent_id.clone()) {
            builtins.insert("last_sent_id", Value::String(id));
        }
        let lookup = |name: &str| builtins.get(name).cloned();
        substitute(template, &self.bindings, &lookup).map_err(|e| StepError::harness(format!("scenario bug: {e}")))
    }

    async fn send_value(&mut self, conn: &str, frame: Value, typed: bool) -> Result<(), StepError> {
        if typed {
            if let Err(e) = self.validator.check(Direction::ClientToServer, &frame) {
                return Err(StepError::harness(format!("scenario bug: the frame to send is invalid: {e}")));
            }
        }
        let text = frame.to_string();
        self.send_tracked(conn, &frame, text).await
    }

    /// Sends `text`, the wire form of `frame`, remembering what the answers to it are checked against.
    async fn send_tracked(&mut self, conn: &str, frame: &Value, text: String) -> Result<(), StepError> {
        let wire = frame.get("type").and_then(Value::as_str).unwrap_or("(no type)").to_owned();
        let id = frame.get("id").and_then(Value::as_str).map(str::to_owned);
        if let Some(id) = &id {
            self.sent_ids.insert(id.clone());
        }
        if wire == "session.hello" {
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
            if let (Some(id), Some(c)) = (&id, self.conns.get_mut(conn)) {
                c.hello = Some(PendingHello { id: id.clone(), versions, resume_floor });
            }
        }
        self.transcript(format!("{conn} > {wire}"));
        self.log(format!("{conn} > {}", pattern::truncate(&text, 200)));
        let deadline = self.step_deadline(None);
        let c = self.conn_mut(conn)?;
        c.last_sent_id = id;
        c.ws.send_text(text, deadline).await.map_err(|e| StepError::fail(format!("cannot send {wire}: {e}")))
    }

    async fn connect(
        &mut self,
        conn: &str,
        handshake: Handshake,
        versions: Vec<String>,
        resume: Option<Value>,
    ) -> Result<(), StepError> {
        let Handshake { hello, subprotocol, with_script } = handshake;
        let deadline = self.step_deadline(None);
        let url = self.endpoint.url();
        // A handshake the server gets wrong breaks the rule for what was offered.
        let requirement = if subprotocol { "TRANSPORT-003" } else { "TRANSPORT-004" };
        let ws =
            WsConn::open_with(&url, self.cfg.max_message_bytes, deadline, subprotocol).await.map_err(|e| match e {
                ConnectError::Timeout { .. } => StepError::new(Verdict::Timeout, e.to_string()),
                ConnectError::Subprotocol { .. } | ConnectError::Refused { .. } => {
                    StepError::fail(e.to_string()).with_requirement(requirement)
                }
                other => StepError::fail(other.to_string()),
            })?;
        let opened = if subprotocol { "open" } else { "open (no subprotocol offered)" };
        self.transcript(format!("{conn} {opened}"));
        self.log(format!("{conn} {opened} {url}"));
        self.conns.insert(
            conn.to_owned(),
            Conn {
                ws,
                session: None,
                last_seq: None,
                oracle: None,
                awaiting_snapshot: false,
                hello: None,
                last_sent_id: None,
                batch: None,
                fatal: None,
                update_due: false,
                batch_updated: false,
                new_session: false,
            },
        );
        if !hello {
            return Ok(());
        }
        let hello_id = self.next_id("h");
        let mut frame = json!({
            "type": "session.hello",
            "id": hello_id,
            "versions": versions,
            "client": concat!("chatwire-conformance/", env!("CARGO_PKG_VERSION")),
        });
        if with_script {
            if let Some(script) = &self.scenario.script {
                frame["script"] = serde_json::to_value(script).unwrap_or(Value::Null);
            }
        }
        let resumed = resume.is_some();
        if let Some(resume) = resume {
            frame["resume"] = resume;
        }
        self.send_value(conn, frame, true).await?;
        let mut welcome = json!({"type": "session.welcome", "in_reply_to": hello_id, "resumed": resumed});
        if resumed {
            welcome["session_id"] = Value::String(self.current_session.clone().unwrap_or_default());
        }
        self.expect_one(conn, &welcome, deadline, false).await?;
        self.expect_one(conn, &json!({"type": "ui_state_snapshot"}), deadline, false).await?;
        if !self.capabilities_checked {
            self.capabilities_checked = true;
            let offered: Vec<String> = self
                .bindings
                .get("capabilities")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect());
            let missing: Vec<String> =
                self.scenario.needed_capabilities().into_iter().filter(|c| !offered.contains(c)).collect();
            if !missing.is_empty() {
                return Err(StepError::new(
                    Verdict::NotApplicable,
                    format!("the server does not offer {} (welcome lists: {})", missing.join(", "), offered.join(", ")),
                ));
            }
        }
        Ok(())
    }

    async fn expect_one(
        &mut self,
        conn: &str,
        pattern: &Value,
        deadline: Instant,
        skip_updates: bool,
    ) -> Result<(), StepError> {
        let wanted = pattern.get("type").and_then(Value::as_str).unwrap_or("a frame").to_owned();
        let skip = skip_updates && wanted != "ui_state_updated";
        loop {
            match self.next(conn, deadline).await? {
                Next::Frame(v) => {
                    if skip && v.get("type").and_then(Value::as_str) == Some("ui_state_updated") {
                        continue;
                    }
                    return match match_value(pattern, &v, &mut self.bindings) {
                        Ok(()) => Ok(()),
                        Err(m) => {
                            let excerpt = self.redact(&v);
                            Err(StepError::fail(format!("expected {wanted}: {m}")).with_frame(Some(excerpt)))
                        }
                    };
                }
                Next::NotJson(raw) => {
                    let excerpt = self.redact_text(&raw);
                    return Err(StepError::fail(format!("expected {wanted}, got a frame that is not JSON"))
                        .with_frame(Some(excerpt)));
                }
                Next::Deadline => {
                    let why = if Instant::now() >= self.deadline { " (scenario deadline)" } else { "" };
                    return Err(StepError::new(
                        Verdict::Timeout,
                        format!(
                            "no {wanted} arrived before the deadline{why}; waiting for {}",
                            pattern::excerpt(pattern, 200)
                        ),
                    ));
                }
                other => return Err(unexpected(other, &wanted)),
            }
        }
    }

    async fn expect_unordered(&mut self, conn: &str, patterns: &[Value], deadline: Instant) -> Result<(), StepError> {
        let mut open: Vec<&Value> = patterns.iter().collect();
        while !open.is_empty() {
            match self.next(conn, deadline).await? {
                Next::Frame(v) => {
                    let wants_updates =
                        open.iter().any(|p| p.get("type").and_then(Value::as_str) == Some("ui_state_updated"));
                    if !wants_updates && v.get("type").and_then(Value::as_str) == Some("ui_state_updated") {
                        continue;
                    }
                    let Some(i) = open.iter().position(|p| match_value(p, &v, &mut self.bindings.clone()).is_ok())
                    else {
                        let left: Vec<String> = open.iter().map(|p| pattern::excerpt(p, 120)).collect();
                        let excerpt = self.redact(&v);
                        return Err(StepError::fail(format!(
                            "the frame matches none of the expected: {}",
                            left.join(" | ")
                        ))
                        .with_frame(Some(excerpt)));
                    };
                    // Bind for real with the pattern that matched.
                    let _ = match_value(open[i], &v, &mut self.bindings);
                    open.remove(i);
                }
                Next::NotJson(raw) => {
                    let excerpt = self.redact_text(&raw);
                    return Err(StepError::fail("got a frame that is not JSON").with_frame(Some(excerpt)));
                }
                Next::Deadline => {
                    return Err(StepError::new(
                        Verdict::Timeout,
                        format!("{} expected frame(s) did not arrive before the deadline", open.len()),
                    ))
                }
                other => return Err(unexpected(other, "the expected frames")),
            }
        }
        Ok(())
    }

    async fn expect_close(&mut self, conn: &str, code: Option<u16>, deadline: Instant) -> Result<(), StepError> {
        loop {
            match self.next(conn, deadline).await? {
                Next::Closed(got, reason) => {
                    self.conns.remove(conn);
                    return match (code, got) {
                        (None, _) => Ok(()),
                        (Some(want), Some(got)) if want == got => Ok(()),
                        (Some(want), got) => Err(StepError::fail(format!(
                            "expected close code {want}, got {} ({reason})",
                            got.map_or("none".into(), |c| c.to_string())
                        ))
                        .with_requirement("TRANSPORT-008")),
                    };
                }
                Next::Frame(v) if v.get("type").and_then(Value::as_str) == Some("ui_state_updated") => {}
                Next::Frame(v) => {
                    let excerpt = self.redact(&v);
                    return Err(StepError::fail("expected the server to close, got a frame").with_frame(Some(excerpt)));
                }
                Next::NotJson(raw) => {
                    let excerpt = self.redact_text(&raw);
                    return Err(StepError::fail("expected the server to close, got a frame").with_frame(Some(excerpt)));
                }
                Next::Deadline => {
                    return Err(StepError::new(Verdict::Timeout, "the server did not close the connection in time"))
                }
                other => return Err(unexpected(other, "a close")),
            }
        }
    }

    /// SIGTERM, every open connection closed by the server with 1001 (TRANSPORT-009), then the
    /// backend started again on the same storage. Frames still in flight before the close are
    /// taken in (and checked) like any other.
    async fn graceful_restart(&mut self) -> Result<(), StepError> {
        self.transcript("-- orderly shutdown (SIGTERM) --".into());
        self.log("-- orderly shutdown (SIGTERM) --".into());
        self.endpoint.request_shutdown()?;
        let deadline = self.step_deadline(None);
        let mut problems = Vec::new();
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let outcome = loop {
                match self.next(&name, deadline).await {
                    Err(e) => break Some(e.message),
                    Ok(Next::Closed(Some(1001), _)) => break None,
                    Ok(Next::Closed(code, reason)) => {
                        let code = code.map_or("no close code".to_owned(), |c| format!("close code {c}"));
                        break Some(format!("closed with {code} ({reason})"));
                    }
                    Ok(Next::Broken(message)) => break Some(format!("dropped without a close frame: {message}")),
                    Ok(Next::Deadline) => break Some("still open at the step deadline".to_owned()),
                    Ok(_) => {}
                }
            };
            if let Some(mut c) = self.conns.remove(&name) {
                c.ws.abandon();
            }
            if let Some(problem) = outcome {
                problems.push(format!("{name}: {problem}"));
            }
        }
        self.transcript("-- started again --".into());
        let grace = self.cfg.scaled(Duration::from_secs(10));
        let exited = self.endpoint.restart_after_shutdown(grace).await?;
        if !exited {
            self.log(format!("the backend was still running {} s after SIGTERM and was killed", grace.as_secs()));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(StepError::fail(format!(
                "on an orderly shutdown every connection must be closed with 1001: {}",
                problems.join("; ")
            ))
            .with_requirement("TRANSPORT-009"))
        }
    }

    async fn wait_idle(&mut self, conn: &str, quiet: Duration, deadline: Instant) -> Result<(), StepError> {
        loop {
            let quiet_until = (Instant::now() + quiet).min(deadline);
            match self.next(conn, quiet_until).await? {
                Next::Frame(_) | Next::NotJson(_) => {}
                Next::Deadline => {
                    // Idle: no run slice in progress and the last event's update has arrived, so
                    // what follows does not depend on how fast the server is.
                    let busy = self.conns.get(conn).is_some_and(|c| {
                        c.update_due
                            || c.oracle.as_ref().is_some_and(|s| s.run.status == chatwire_schema::RunStatus::Running)
                    });
                    if !busy {
                        return Ok(());
                    }
                    if Instant::now() >= deadline {
                        return Err(StepError::new(
                            Verdict::Timeout,
                            "the run is still running (or its last ui_state_updated is missing) at the deadline",
                        ));
                    }
                }
                other => return Err(unexpected(other, "the run to become idle")),
            }
        }
    }

    fn snapshot(&mut self, conn: &str, name: &str) -> Result<(), StepError> {
        let state = self
            .conns
            .get(conn)
            .and_then(|c| c.oracle.clone())
            .ok_or_else(|| StepError::fail("no UiState to snapshot: no ui_state_snapshot was received"))?;
        let state = serde_json::to_value(&state).unwrap_or(Value::Null);
        let text = snapshot::projection(&mut self.snap_normalizer, &state, &self.transcript);
        self.snapshots.insert(name.to_owned(), text.clone());
        let id = format!("snapshot-{name}");
        let requirements: Vec<String> = self.scenario.requirements.iter().map(|r| r.0.clone()).collect();
        let summary = format!(
            "final UiState and transcript equal the golden snapshot {}",
            snapshot::file_name(&self.scenario.id, name)
        );
        let (verdict, message) = match &self.cfg.snapshots {
            SnapshotMode::Collect => (Verdict::Pass, None),
            SnapshotMode::Compare(store) => match store.golden(&self.scenario.id, name) {
                None => (
                    Verdict::HarnessError,
                    Some(format!(
                        "no golden snapshot {} (record it with `cargo insta test -p chatwire-conformance` against the reference)",
                        snapshot::file_name(&self.scenario.id, name)
                    )),
                ),
                Some(Err(e)) => (Verdict::HarnessError, Some(e)),
                Some(Ok(golden)) => {
                    let diff = snapshot::line_diff(&golden, &text, 60);
                    if diff.is_empty() {
                        (Verdict::Pass, None)
                    } else {
                        (
                            self.level_verdict(Verdict::Fail),
                            Some(format!("differs from the golden snapshot (- golden, + this backend):\n{}", diff.join("\n"))),
                        )
                    }
                }
            },
        };
        let finding = message.map(|m| self.finding(m, None, None));
        self.checks.record(&id, &requirements, &summary, verdict, finding);
        Ok(())
    }

    // ---------------------------------------------------------------- reading and always-on checks

    /// The next frame on `conn`; pongs are logged and read past (a server may send unsolicited ones).
    async fn next(&mut self, conn: &str, deadline: Instant) -> Result<Next, StepError> {
        loop {
            match self.next_or_pong(conn, deadline).await? {
                Next::Pong(_) => continue,
                other => return Ok(other),
            }
        }
    }

    /// The next frame or pong on `conn`. Every read counts against the scenario's frame cap, so a
    /// flood of pongs ends the scenario too.
    async fn next_or_pong(&mut self, conn: &str, deadline: Instant) -> Result<Next, StepError> {
        if self.frames >= MAX_FRAMES_PER_SCENARIO {
            return Err(StepError::fail(format!(
                "the server sent more than {MAX_FRAMES_PER_SCENARIO} frames in one scenario (flood)"
            )));
        }
        let c = self.conn_mut(conn)?;
        let Some(incoming) = c.ws.recv(deadline).await else {
            return Ok(Next::Deadline);
        };
        let next = self.observe(conn, incoming);
        if self.take_cut() {
            return Err(StepError::cut());
        }
        Ok(next)
    }

    /// Sends a ping and waits for the pong with the same payload (TRANSPORT-010). Pongs with another
    /// payload may be unsolicited heartbeats, so they are noted and the wait goes on; if the right
    /// one never comes, they are the evidence.
    async fn ping(&mut self, conn: &str, payload: &str, deadline: Instant) -> Result<(), StepError> {
        self.transcript(format!("{conn} > ping"));
        self.log(format!("{conn} > ping {payload:?}"));
        self.conn_mut(conn)?
            .ws
            .send_ping(payload.as_bytes().to_vec(), deadline)
            .await
            .map_err(|e| StepError::fail(format!("cannot send a ping: {e}")))?;
        let mut other_pongs: Vec<String> = Vec::new();
        loop {
            match self.next_or_pong(conn, deadline).await? {
                Next::Pong(got) if got == payload.as_bytes() => {
                    self.transcript(format!("{conn} < pong"));
                    return Ok(());
                }
                Next::Pong(got) => {
                    if other_pongs.len() < 5 {
                        other_pongs.push(format!("{:?}", String::from_utf8_lossy(&got)));
                    }
                }
                Next::Frame(v) if v.get("type").and_then(Value::as_str) == Some("ui_state_updated") => {}
                Next::Deadline => {
                    let (verdict, message) = if other_pongs.is_empty() {
                        (Verdict::Timeout, format!("no pong answered the ping {payload:?} before the deadline"))
                    } else {
                        (
                            Verdict::Fail,
                            format!(
                                "the ping carried {payload:?} but the pongs that came back carried {}",
                                other_pongs.join(", ")
                            ),
                        )
                    };
                    return Err(StepError::new(verdict, message).with_requirement("TRANSPORT-010"));
                }
                other => return Err(unexpected(other, &format!("the pong answering the ping {payload:?}"))),
            }
        }
    }

    fn observe(&mut self, conn: &str, incoming: Incoming) -> Next {
        self.frames += 1;
        match incoming {
            Incoming::Text(text) => {
                if let Some(sweep) = self.sweep.as_mut().filter(|s| s.counting && conn == DEFAULT_CONN) {
                    sweep.main_frames += 1;
                    sweep.cut_due |= sweep.cut_after == Some(sweep.main_frames) && !sweep.cut_done;
                }
                self.observe_text(conn, text)
            }
            Incoming::Binary(n) => {
                self.transcript(format!("{conn} < binary"));
                self.log(format!("{conn} < binary ({n} bytes)"));
                self.fail_check(
                    &checks::TEXT_FRAMES_ONLY,
                    format!("the server sent a binary frame of {n} bytes"),
                    None,
                    None,
                );
                Next::Binary(n)
            }
            Incoming::Closed { code, reason } => {
                let shown = code.map_or("no code".to_owned(), |c| c.to_string());
                self.transcript(format!("{conn} < close {shown}"));
                self.log(format!("{conn} < close {shown} {reason}"));
                let fatal = self.conns.get(conn).and_then(|c| c.fatal);
                if let Some(fatal) = fatal {
                    let want = fatal_close_code(fatal);
                    if code != Some(want) {
                        self.fail_check(
                            &checks::ERRORS_WELL_FORMED,
                            format!("after fatal {fatal} the server closed with {shown}, not {want}"),
                            None,
                            Some("TRANSPORT-008"),
                        );
                    }
                }
                Next::Closed(code, reason)
            }
            Incoming::Pong(payload) => {
                self.log(format!("{conn} < pong {:?}", pattern::truncate(&String::from_utf8_lossy(&payload), 60)));
                Next::Pong(payload)
            }
            Incoming::Broken(message) => {
                self.transcript(format!("{conn} < broken"));
                self.log(format!("{conn} < broken: {message}"));
                Next::Broken(message)
            }
        }
    }

    fn observe_text(&mut self, conn: &str, text: String) -> Next {
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                let excerpt = pattern::truncate(&text, FRAME_EXCERPT);
                self.transcript(format!("{conn} < (not json)"));
                self.log_raw(format!("{conn} < "), text.clone());
                self.fail_check(&checks::WIRE_SCHEMA_VALID, format!("not JSON: {e}"), Some(excerpt), Some("FRAME-001"));
                return Next::NotJson(text);
            }
        };
        let wire = value.get("type").and_then(Value::as_str).unwrap_or("(no type)").to_owned();
        self.transcript(format!("{conn} < {wire}{}", transcript_detail(&value)));
        self.log_raw(format!("{conn} < "), text);
        let typed = match self.validator.check(Direction::ServerToClient, &value) {
            Ok(_) => match <ServerFrame as serde::Deserialize>::deserialize(&value) {
                Ok(frame) => Some(frame),
                Err(e) => {
                    let excerpt = self.redact(&value);
                    let message =
                        format!("{wire}: the schema accepts it but the types do not (chatwire-schema bug): {e}");
                    let f = self.finding(message, Some(excerpt), None);
                    self.checks.record("harness", &[], "the runner's own consistency", Verdict::HarnessError, Some(f));
                    None
                }
            },
            Err(e) => {
                let excerpt = self.redact(&value);
                self.fail_check(&checks::WIRE_SCHEMA_VALID, format!("{wire}: {e}"), Some(excerpt), Some("FRAME-002"));
                None
            }
        };
        self.check_timestamps(&value);
        if let Some(frame) = typed {
            self.apply(conn, &frame, &value);
        }
        Next::Frame(value)
    }

    fn check_timestamps(&mut self, value: &Value) {
        let mut bad = Vec::new();
        collect_bad_ts(value, &mut bad);
        for ts in bad {
            let excerpt = self.redact(value);
            self.fail_check(&checks::TS_FORMAT, format!("{ts:?} is not RFC 3339 with an offset"), Some(excerpt), None);
        }
    }

    /// The always-on checks that need the typed frame, and the oracle.
    fn apply(&mut self, conn: &str, frame: &ServerFrame, value: &Value) {
        let mut failures: Vec<(CheckDef, String, Option<&'static str>)> = self
            .advisor
            .observe(frame)
            .into_iter()
            .map(|(def, message, requirement)| (def, message, Some(requirement)))
            .collect();
        if let Some(sweep) = self.sweep.as_mut() {
            sweep.note_frame(frame);
        }
        let Some(c) = self.conns.get_mut(conn) else { return };
        if let Some(fatal) = c.fatal {
            failures.push((
                checks::ERRORS_WELL_FORMED,
                format!("a frame followed the fatal error {fatal}"),
                Some("TRANSPORT-008"),
            ));
        }
        // seq (SEQ-001 / SEQ-002)
        match frame.seq() {
            Some(seq) => {
                if let Some(prev) = c.last_seq {
                    if seq <= prev {
                        failures.push((
                            checks::SEQ_INCREASING,
                            format!("seq {seq} after seq {prev} on this connection"),
                            Some("SEQ-001"),
                        ));
                    }
                }
                if let (ServerFrame::Welcome(_), Some(floor)) = (frame, c.hello.as_ref().and_then(|h| h.resume_floor)) {
                    if seq <= floor {
                        failures.push((
                            checks::SEQ_INCREASING,
                            format!("the resumed session's welcome has seq {seq}, not above {floor} seen before reconnecting"),
                            Some("SEQ-001"),
                        ));
                    }
                }
                c.last_seq = Some(seq);
            }
            None if c.session.is_some() => failures.push((
                checks::SEQ_INCREASING,
                "an error on a connection bound to a session has no seq".into(),
                Some("SEQ-002"),
            )),
            None => {}
        }
        // STATE-003 / STATE-007 / MULTI-002: the frame after an event is its update.
        let continues_batch = match (frame, &c.batch) {
            (ServerFrame::ToolCall(tc), Some((inv, idx))) => {
                inv == tc.invocation_id.as_str() && tc.call_index == idx + 1
            }
            _ => false,
        };
        match frame {
            ServerFrame::UiStateUpdated(_) => {
                if !c.update_due {
                    failures.push((
                        checks::UPDATE_AFTER_EVENT,
                        "ui_state_updated without an event since the last state".into(),
                        Some("STATE-007"),
                    ));
                }
                c.update_due = false;
                if c.batch.is_some() {
                    c.batch_updated = true;
                }
            }
            _ if continues_batch && c.batch_updated => {
                failures.push((
                    checks::UPDATE_AFTER_EVENT,
                    "a ui_state_updated came between the tool calls of one batch".into(),
                    Some("MULTI-002"),
                ));
            }
            _ if c.update_due && !continues_batch => {
                failures.push((
                    checks::UPDATE_AFTER_EVENT,
                    format!("{} arrived before the ui_state_updated of the previous event", frame.type_name()),
                    Some("STATE-003"),
                ));
            }
            _ => {}
        }
        if frame.ui_event().is_some() {
            c.update_due = true;
            if !continues_batch {
                c.batch_updated = false;
            }
        } else if matches!(frame, ServerFrame::UiStateSnapshot(_) | ServerFrame::Welcome(_)) {
            c.update_due = false;
        }
        let mut in_reply_to: Option<&chatwire_schema::Id> = None;
        match frame {
            ServerFrame::Welcome(w) => {
                in_reply_to = Some(&w.in_reply_to);
                match c.hello.take() {
                    Some(h) => {
                        if w.in_reply_to.as_str() != h.id {
                            failures.push((
                                checks::WELCOME_THEN_SNAPSHOT,
                                format!("welcome in_reply_to {} is not the hello id {}", w.in_reply_to, h.id),
                                Some("SESSION-006"),
                            ));
                        }
                        if !h.versions.contains(&w.version.to_string()) {
                            failures.push((
                                checks::WELCOME_THEN_SNAPSHOT,
                                format!("welcome version {} was not offered ({})", w.version, h.versions.join(", ")),
                                Some("SESSION-003"),
                            ));
                        }
                    }
                    None => failures.push((
                        checks::WELCOME_THEN_SNAPSHOT,
                        "a welcome that answers no hello".into(),
                        Some("SESSION-006"),
                    )),
                }
                if w.limits.max_frame_bytes < 65_536 {
                    failures.push((
                        checks::WELCOME_THEN_SNAPSHOT,
                        format!("limits.max_frame_bytes {} is below 65536", w.limits.max_frame_bytes),
                        Some("TRANSPORT-005"),
                    ));
                }
                let session = w.session_id.to_string();
                c.session = Some(session.clone());
                c.awaiting_snapshot = true;
                c.new_session = !w.resumed;
                c.oracle = None;
                c.batch = None;
                let track = self.sessions.entry(session.clone()).or_default();
                track.resume_token = Some(w.resume_token.to_string());
                self.current_session = Some(session.clone());
                self.bindings.set("session_id", Value::String(session));
                self.bindings.set("resume_token", Value::String(w.resume_token.to_string()));
                let caps: Vec<Value> = w.capabilities.iter().map(|c| Value::String(c.as_str().to_owned())).collect();
                self.bindings.set("capabilities", Value::Array(caps));
            }
            ServerFrame::UiStateSnapshot(s) => {
                if c.awaiting_snapshot && c.new_session && s.state != UiState::default() {
                    failures.push((
                        checks::WELCOME_THEN_SNAPSHOT,
                        "the snapshot after the welcome of a new session is not empty and idle".into(),
                        Some("STATE-005"),
                    ));
                }
                c.new_session = false;
                c.awaiting_snapshot = false;
                c.oracle = Some(s.state.clone());
                c.batch = None;
                if let Some(track) = c.session.as_ref().and_then(|s| self.sessions.get_mut(s)) {
                    for item in &s.state.items {
                        track.ids.insert(item.id().to_string());
                        track.ids.insert(item.invocation_id().to_string());
                    }
                }
            }
            ServerFrame::UiStateUpdated(u) => {
                if c.awaiting_snapshot {
                    failures.push((
                        checks::WELCOME_THEN_SNAPSHOT,
                        "ui_state_updated before the ui_state_snapshot".into(),
                        Some("STATE-002"),
                    ));
                }
                // One deep comparison per update; the state is copied only when it differs.
                if c.oracle.as_ref() != Some(&u.state) {
                    if let Some(expected) = &c.oracle {
                        let want = serde_json::to_value(expected).unwrap_or(Value::Null);
                        let got = serde_json::to_value(&u.state).unwrap_or(Value::Null);
                        let diff = snapshot::json_diff(&want, &got, 12);
                        let mut redactor = self.redactor.clone();
                        let lines: Vec<String> =
                            diff.iter().map(|l| redact_ids_in_line(&mut redactor, l, &want, &got)).collect();
                        self.redactor = redactor;
                        failures.push((
                            checks::STATE_MATCHES_REDUCER,
                            format!(
                                "ui_state_updated differs from the reducer's fold of the events received (expected = reducer):\n{}",
                                lines.join("\n")
                            ),
                            Some("STATE-004"),
                        ));
                    }
                    // Resynchronise so one divergence is reported once, not on every later frame.
                    c.oracle = Some(u.state.clone());
                }
            }
            ServerFrame::Error(e) => {
                in_reply_to = e.in_reply_to.as_ref();
                if e.fatal != e.code.is_fatal() {
                    failures.push((
                        checks::ERRORS_WELL_FORMED,
                        format!("error {} has fatal={}, the spec says {}", e.code, e.fatal, e.code.is_fatal()),
                        Some("ERROR-002"),
                    ));
                }
                if e.fatal {
                    c.fatal = Some(e.code);
                }
            }
            other => {
                if c.awaiting_snapshot || c.oracle.is_none() {
                    failures.push((
                        checks::WELCOME_THEN_SNAPSHOT,
                        format!("{} before the ui_state_snapshot", other.type_name()),
                        Some("STATE-002"),
                    ));
                }
                // MULTI-001: consecutive calls of one invocation carry call_index 0, 1, 2…
                if let ServerFrame::ToolCall(tc) = other {
                    let expected = match &c.batch {
                        Some((inv, idx)) if inv == tc.invocation_id.as_str() => idx + 1,
                        _ => 0,
                    };
                    if tc.call_index != expected {
                        failures.push((
                            checks::BATCH_ORDER,
                            format!("tool call with call_index {} where {expected} was due", tc.call_index),
                            Some("MULTI-001"),
                        ));
                    }
                    c.batch = Some((tc.invocation_id.to_string(), tc.call_index));
                } else {
                    c.batch = None;
                }
                let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
                if let Some(track) = track {
                    for new_id in introduced_ids(other) {
                        if !track.ids.insert(new_id.clone()) {
                            failures.push((
                                checks::IDS_CONSISTENT,
                                format!("id {new_id} is used a second time in the session"),
                                Some("ID-002"),
                            ));
                        }
                    }
                    if let Some(call) = referenced_call(other) {
                        if !track.ids.contains(call) {
                            failures.push((
                                checks::IDS_CONSISTENT,
                                format!(
                                    "{} names tool call {call}, which the session never announced",
                                    other.type_name()
                                ),
                                Some("STATE-025"),
                            ));
                        }
                    }
                }
                in_reply_to = match other {
                    ServerFrame::UserMessageAccepted(f) => Some(&f.in_reply_to),
                    ServerFrame::ToolCallComplete(f) => f.in_reply_to.as_ref(),
                    ServerFrame::ToolCallDismiss(f) => f.in_reply_to.as_ref(),
                    ServerFrame::RewindComplete(f) => Some(&f.in_reply_to),
                    _ => None,
                };
                if let (Some(state), Some(event)) = (c.oracle.as_mut(), other.ui_event()) {
                    if let Err(e) = state.apply(event) {
                        let rule = checks::rule_of_refusal(&e);
                        failures.push((
                            checks::EVENTS_ACCEPTED,
                            format!(
                                "{} ({}): the reducer refuses it: {e} [{rule}]",
                                other.type_name(),
                                checks::rule_of_event(&event)
                            ),
                            Some(rule),
                        ));
                    }
                }
            }
        }
        if let Some(reply) = in_reply_to {
            if !self.sent_ids.contains(reply.as_str()) {
                failures.push((
                    checks::IDS_CONSISTENT,
                    format!("in_reply_to {reply} names no frame the client sent"),
                    Some("ERROR-004"),
                ));
            }
        }
        if let (Some(seq), Some(session)) = (frame.seq(), self.conns.get(conn).and_then(|c| c.session.clone())) {
            let track = self.sessions.entry(session).or_default();
            track.max_seq = track.max_seq.max(seq);
        }
        if !failures.is_empty() {
            let excerpt = self.redact(value);
            for (def, message, requirement) in failures {
                self.fail_check(&def, message, Some(excerpt.clone()), requirement);
            }
        }
    }
}

/// The close code the spec gives for a fatal error (spec/transport.md close codes).
fn fatal_close_code(code: ErrorCode) -> u16 {
    match code {
        ErrorCode::SessionTakenOver => 4001,
        _ => 4002,
    }
}

/// Ids a frame introduces into the session (each must be new: ID-002).
fn introduced_ids(frame: &ServerFrame) -> Vec<String> {
    match frame {
        ServerFrame::UserMessageAccepted(f) => vec![f.invocation_id.to_string(), f.item_id.to_string()],
        ServerFrame::AssistantMessage(f) => vec![f.item_id.to_string()],
        ServerFrame::ToolCall(f) => vec![f.tool_call_id.to_string()],
        _ => Vec::new(),
    }
}

/// The tool call a frame acts on, which must have been announced.
fn referenced_call(frame: &ServerFrame) -> Option<&str> {
    match frame {
        ServerFrame::ToolProgress(f) => Some(f.tool_call_id.as_str()),
        ServerFrame::ToolOutput(f) => Some(f.tool_call_id.as_str()),
        ServerFrame::ToolCallComplete(f) => Some(f.tool_call_id.as_str()),
        ServerFrame::ToolCallDismiss(f) => Some(f.tool_call_id.as_str()),
        _ => None,
    }
}

/// Replaces raw ids appearing in a diff line with the redactor's placeholders.
fn redact_ids_in_line(redactor: &mut Normalizer, line: &str, want: &Value, got: &Value) -> String {
    // Normalizing both states registers their ids, in a stable order.
    let _ = redactor.normalize(want);
    let _ = redactor.normalize(got);
    let mut out = line.to_owned();
    let mut ids = Vec::new();
    collect_ids(want, &mut ids);
    collect_ids(got, &mut ids);
    ids.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for id in ids {
        let name = redactor.id("item", &id);
        out = out.replace(&format!("\"{id}\""), &format!("\"{name}\""));
    }
    out
}

fn collect_ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                if matches!(k.as_str(), "id" | "invocation_id" | "tool_call_id") {
                    if let Some(s) = val.as_str() {
                        out.push(s.to_owned());
                    }
                }
                collect_ids(val, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_ids(i, out)),
        _ => {}
    }
}

fn collect_bad_ts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                match (k.as_str(), val) {
                    ("ts" | "settled_ts", Value::String(s)) if !checks::is_rfc3339(s) => out.push(s.clone()),
                    _ => collect_bad_ts(val, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_bad_ts(i, out)),
        _ => {}
    }
}

/// Short detail appended to a transcript line, where it is deterministic and telling.
fn transcript_detail(v: &Value) -> String {
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let detail = match v.get("type").and_then(Value::as_str) {
        Some("error") => field("code"),
        Some("chat.run_complete" | "chat.tool_call_complete") => field("status"),
        Some("chat.tool_call_dismiss") => field("initiated_by"),
        Some("session.welcome") => {
            v.get("resumed").and_then(Value::as_bool).map(|r| if r { "resumed" } else { "new" }.into())
        }
        Some("chat.tool_call") => v.get("tool_name").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    detail.map_or_else(String::new, |d| format!(" {d}"))
}

fn unexpected(next: Next, wanted: &str) -> StepError {
    match next {
        Next::Closed(code, reason) => StepError::fail(format!(
            "the server closed the connection (code {}{}) while the runner waited for {wanted}",
            code.map_or("none".into(), |c| c.to_string()),
            if reason.is_empty() { String::new() } else { format!(", {reason}") }
        )),
        Next::Broken(message) => {
            StepError::fail(format!("the connection broke while the runner waited for {wanted}: {message}"))
        }
        Next::Binary(n) => {
            StepError::fail(format!("a binary frame ({n} bytes) arrived while the runner waited for {wanted}"))
                .with_requirement("TRANSPORT-001")
        }
        Next::NotJson(_) => StepError::fail(format!("a frame that is not JSON arrived while waiting for {wanted}")),
        Next::Frame(value) => {
            let wire = value.get("type").and_then(Value::as_str).unwrap_or("unreadable").to_owned();
            StepError::fail(format!("unexpected {wire} frame while waiting for {wanted}"))
        }
        Next::Pong(_) => StepError::fail(format!("a pong arrived while the runner waited for {wanted}")),
        Next::Deadline => {
            StepError::new(Verdict::Timeout, format!("nothing arrived before the deadline; waited for {wanted}"))
        }
    }
}

/// One line describing a step, for reports.
pub fn describe(step: &Step) -> String {
    let conn = step.conn().filter(|c| *c != DEFAULT_CONN).map(|c| format!(" [{c}]")).unwrap_or_default();
    let what = match step {
        Step::Connect { hello: false, subprotocol: false, .. } => {
            "open a connection offering no subprotocol, without hello".to_owned()
        }
        Step::Connect { hello: false, .. } => "open a connection without hello".to_owned(),
        Step::Connect { subprotocol: false, .. } => {
            "connect offering no subprotocol: hello, welcome, snapshot".to_owned()
        }
        Step::Connect { .. } => "connect: hello, welcome, snapshot".to_owned(),
        Step::Resume { .. } => "resume the session on a new connection".to_owned(),
        Step::Disconnect { .. } => "close the connection".to_owned(),
        Step::Restart { graceful: false, down_ms: None } => "kill -9 the backend and start it again".to_owned(),
        Step::Restart { graceful: false, down_ms: Some(ms) } => {
            format!("kill -9 the backend, keep it down {ms} ms, start it again")
        }
        Step::Restart { graceful: true, .. } => {
            "stop the backend with SIGTERM (connections closed with 1001), start it again".to_owned()
        }
        Step::UserMessage { text, .. } => {
            format!("send chat.user_message {}", pattern::truncate(&format!("{text:?}"), 40))
        }
        Step::Respond { outcome, .. } => format!("send chat.tool_call_response {}", pattern::excerpt(outcome, 60)),
        Step::Rewind { before, .. } => format!("send chat.rewind before {before}"),
        Step::Send { frame, .. } => format!("send {}", pattern::excerpt(frame, 80)),
        Step::SendText { text, .. } => format!("send text {}", pattern::truncate(&format!("{text:?}"), 60)),
        Step::SendBinary { bytes, .. } => format!("send a binary frame of {bytes} bytes"),
        Step::Ping { payload, .. } => format!("ping {payload:?}, expect the pong carrying it"),
        Step::Expect { frame, .. } => format!("expect {}", pattern::excerpt(frame, 100)),
        Step::ExpectUnordered { frames, .. } => format!("expect {} frames in any order", frames.len()),
        Step::ExpectError { code, .. } => format!("expect error {code}"),
        Step::ExpectClose { code, .. } => {
            format!("expect the server to close{}", code.map(|c| format!(" with {c}")).unwrap_or_default())
        }
        Step::ExpectSilence { ms, .. } => format!("expect no frame for {ms} ms"),
        Step::WaitIdle { .. } => "wait until the run is idle".to_owned(),
        Step::Sleep { ms } => format!("sleep {ms} ms"),
        Step::Snapshot { name, .. } => format!("snapshot {name}"),
    };
    format!("{what}{conn}")
}
