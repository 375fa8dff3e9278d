//! Runs one scenario against a backend: drives the steps over WebSocket and feeds every frame,
//! both directions, to the session [`Monitor`], which holds every always-on check and the
//! differential oracle. This module only does I/O and carries out steps.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::FrameValidator;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::attribution::step_requirements;
use crate::conn::WsConn;
use crate::monitor::Monitor;
use crate::pattern::{self, Bindings};
use crate::report::{scenario_verdict, CheckReport, CheckSet, Finding, ScenarioReport, Verdict};
use crate::scenario::{Level, Scenario, Step, DEFAULT_CONN};
use crate::snapshot::{Normalizer, SnapshotStore};
use crate::wirelog::{WireLog, WireRecord};

mod describe;
mod endpoint;
mod expect;
mod replicas;
mod resume;
mod sweep;
mod window;
mod wire;

pub use describe::describe;
use describe::{transcript_detail, unexpected};
pub use endpoint::Endpoint;
pub use replicas::needs_replicas;
pub use sweep::SweepBaseline;
use sweep::{SweepRole, SweepTrack};

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
    /// Versions offered in `session.hello` unless a step overrides them (`run --versions`).
    pub versions: Vec<String>,
    /// `session.hello.features` sent with `versions` (`run --features`); `None` sends no member,
    /// so every feature the server implements is in force. Only with versions all 1.1 or later
    /// (SESSION-014, checked where the option is read).
    pub features: Option<Vec<String>>,
    /// How snapshots are judged.
    pub snapshots: SnapshotMode,
    /// How long a (re)started backend may take to accept connections, before scaling.
    pub start_timeout: Duration,
    /// Write one JSON Lines wire log per scenario into this directory (`run --wire-log`).
    pub wire_log_dir: Option<std::path::PathBuf>,
    /// Every resume step that leaves its cursor to the runner (`Step::is_default_resume`) resumes
    /// as a reload does: holding no state, with `last_seq` 0, so a snapshot answers it
    /// (RESUME-018). The runner's `@reload` variants set it.
    pub reload_resumes: bool,
    /// In a sweep, keep a second tab attached through every cut (`run --sweep-watch`).
    pub sweep_watch: bool,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            timeout_scale: 1.0,
            step_timeout: Duration::from_secs(5),
            max_message_bytes: crate::conn::DEFAULT_MAX_MESSAGE_BYTES,
            versions: default_versions(),
            features: None,
            snapshots: SnapshotMode::Collect,
            start_timeout: Duration::from_secs(15),
            wire_log_dir: None,
            reload_resumes: false,
            sweep_watch: false,
        }
    }
}

/// The runner's default offer: every version `chatwire-schema` supports, newest first.
pub fn default_versions() -> Vec<String> {
    let mut versions = chatwire_schema::SUPPORTED_VERSIONS.to_vec();
    versions.sort_by(|a, b| b.cmp(a));
    versions.iter().map(ToString::to_string).collect()
}

impl DriverConfig {
    /// `ms` scaled by `timeout_scale`.
    pub fn scaled(&self, d: Duration) -> Duration {
        d.mul_f64(self.timeout_scale.max(0.01))
    }
}

/// Pause between connection attempts while a restarted backend comes up.
const RETRY_PAUSE: Duration = Duration::from_millis(100);
/// Most frames a scenario reads in all; a flooding server ends the scenario instead of the run.
const MAX_FRAMES_PER_SCENARIO: usize = 50_000;
/// Lines of wire log kept for the report.
const WIRE_LOG_LINES: usize = 40;

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
    pub(super) fn new(verdict: Verdict, message: impl Into<String>) -> Self {
        StepError { verdict, message: message.into(), frame: None, requirement: None, cut: false }
    }

    pub(super) fn cut() -> Self {
        StepError { cut: true, ..Self::new(Verdict::Pass, "the sweep cut the connection") }
    }

    pub(super) fn fail(message: impl Into<String>) -> Self {
        Self::new(Verdict::Fail, message)
    }

    pub(super) fn harness(message: impl Into<String>) -> Self {
        Self::new(Verdict::HarnessError, message)
    }

    pub(super) fn with_frame(mut self, frame: Option<String>) -> Self {
        self.frame = frame;
        self
    }

    pub(super) fn with_requirement(mut self, requirement: &str) -> Self {
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
    /// The step names its own versions (not the runner's offer): where they cannot put the
    /// scenario's features in force, another connection decides whether it applies.
    own_offer: bool,
    /// `session.hello.window` to send (`WINDOW-001`).
    window: Option<u32>,
}

struct Conn {
    ws: WsConn,
    /// The monitor's (and the wire log's) number for this connection; never reused in a scenario.
    id: u64,
    last_sent_id: Option<String>,
    /// Bytes of text frames read from it.
    bytes_in: u64,
    /// When a read of it last ended (the start of a pause in reading).
    last_read: Instant,
    /// The replica it is on (0 where the backend is one process).
    replica: usize,
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
    let wire = match &cfg.wire_log_dir {
        Some(dir) => {
            let name = match &sweep {
                Some(s) => match s.cut_after {
                    Some(k) => format!("{}@cut-{k}", scenario.id),
                    None => format!("{}@uncut", scenario.id),
                },
                // A reload variant's log beside its scenario's, named as its report is.
                None if cfg.reload_resumes => format!("{}{}", scenario.id, crate::report::RELOAD_SUFFIX),
                None => scenario.id.clone(),
            };
            Some(WireLog::create(&dir.join(format!("{name}.jsonl"))))
        }
        None => None,
    };
    let mut driver = Driver {
        scenario,
        cfg,
        monitor: replicas::monitor(validator.clone(), endpoint.replicas()),
        validator,
        endpoint,
        deadline,
        started,
        conns: BTreeMap::new(),
        last_ids: HashMap::new(),
        next_conn: 0,
        bindings: Bindings::default(),
        checks: CheckSet::default(),
        transcript: Vec::new(),
        wire_log: VecDeque::new(),
        wire,
        snap_normalizer: Normalizer::default(),
        counters: HashMap::new(),
        step: 0,
        step_requirements: Vec::new(),
        frames: 0,
        snapshots: BTreeMap::new(),
        capabilities_checked: false,
        restarted: false,
        sweep,
        sweep_baseline,
        caught_up: false,
        negotiated: None,
        in_force: BTreeMap::new(),
        step_conn: DEFAULT_CONN.to_owned(),
        history: resume::History::default(),
        placement: replicas::Placement::default(),
        step_replica: None,
        conn_replicas: HashMap::new(),
    };
    let applicable = driver.run_steps().await;
    let mut recorded = None;
    if applicable && driver.sweep.is_some() {
        driver.check_sweep_watch().await;
    }
    if applicable {
        match driver.sweep_baseline {
            Some(baseline) => driver.compare_with_baseline(baseline),
            None if driver.sweep.is_some() => recorded = driver.record_baseline(),
            None => {}
        }
    }
    driver.finish().await;
    if let Some(Err(e)) = driver.wire.take().map(WireLog::finish) {
        let f = driver.finding(format!("cannot write the wire log: {e}"), None, None);
        driver.checks.record("wire-log", &[], "the wire log is written", Verdict::HarnessError, Some(f));
    }
    let mut checks = std::mem::take(&mut driver.checks);
    if applicable {
        checks.add_always_on(&driver.monitor);
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
        requirements: scenario.requirements.iter().map(ToString::to_string).collect(),
        verdict,
        duration_ms: started.elapsed().as_millis() as u64,
        checks,
        wire_log,
        backend_stderr: None,
        snapshots,
        sweep: None,
        version: driver.negotiated.map(|v| v.to_string()),
        in_force: std::mem::take(&mut driver.in_force)
            .into_iter()
            .map(|(version, names)| (version, names.into_iter().collect()))
            .collect(),
    };
    (report, recorded)
}

struct Driver<'a> {
    scenario: &'a Scenario,
    cfg: &'a DriverConfig,
    validator: Arc<FrameValidator>,
    endpoint: &'a mut Endpoint,
    deadline: Instant,
    started: Instant,
    conns: BTreeMap<String, Conn>,
    /// The monitor's number of the latest connection of each name, closed ones included: a
    /// resume under the name starts from what that connection held.
    last_ids: HashMap<String, u64>,
    /// Every always-on check and the oracle, fed with every frame both ways.
    monitor: Monitor,
    next_conn: u64,
    bindings: Bindings,
    checks: CheckSet,
    transcript: Vec<String>,
    /// The last frames as `(prefix, raw text)`, redacted when the report is written.
    wire_log: VecDeque<(String, String)>,
    /// The whole traffic as a JSON Lines wire log (`run --wire-log`), for `check-log`.
    wire: Option<WireLog>,
    snap_normalizer: Normalizer,
    counters: HashMap<&'static str, usize>,
    step: usize,
    /// The requirements of the step being run, which its failure is charged to.
    step_requirements: Vec<String>,
    frames: usize,
    snapshots: BTreeMap<String, String>,
    capabilities_checked: bool,
    /// The backend was restarted and no connection has been opened to it since.
    restarted: bool,
    sweep: Option<SweepTrack>,
    sweep_baseline: Option<&'a SweepBaseline>,
    /// A resume of this run was answered with a catch-up patch.
    caught_up: bool,
    /// The version the first connection that got a welcome negotiated.
    negotiated: Option<chatwire_schema::ProtocolVersion>,
    /// Per version a welcome negotiated, what was in force on some connection of it: the
    /// features in force (`SESSION-012`) and the capabilities that are not features (`retry`,
    /// `cancel`) the welcome listed.
    in_force: BTreeMap<String, BTreeSet<String>>,
    /// The connection of the step being run.
    step_conn: String,
    /// Each session's frames, for the cursors that count events (`resume_retention`).
    history: resume::History,
    /// Which replica each connection went to.
    placement: replicas::Placement,
    /// The replica the step being run names for the connections it opens.
    step_replica: Option<usize>,
    /// The replica of each connection (by the monitor's number), for the wire log, where the
    /// backend has more than one.
    conn_replicas: HashMap<u64, usize>,
}

impl Driver<'_> {
    /// Runs the steps; false when the scenario turned out not applicable.
    pub(super) async fn run_steps(&mut self) -> bool {
        let requirements: Vec<String> = self.scenario.requirements.iter().map(ToString::to_string).collect();
        let needs = self.scenario.min_replicas();
        let not_applicable = if self.scenario.controls_processes() && !self.endpoint.controls_processes() {
            let what =
                if self.scenario.restarts() { "kills and restarts the backend" } else { "kills or pauses a replica" };
            Some((
                "restart",
                "the scenario restarts the backend",
                format!("the scenario {what}; use --exec or the bundled backend"),
            ))
        } else if needs > self.endpoint.replicas() {
            Some((
                "replicas",
                "the backend has as many replicas as the scenario needs",
                needs_replicas(needs, self.endpoint.replicas()),
            ))
        } else {
            None
        };
        if let Some((check, summary, message)) = not_applicable {
            let finding = Finding { message, step: None, requirement: None, frame: None, version: None };
            self.checks.record(check, &requirements, summary, Verdict::NotApplicable, Some(finding));
            return false;
        }
        let mut steps = self.scenario.steps.clone();
        let variant = self.sweep_baseline.is_some();
        if self.sweep.is_some() {
            // Both runs of a sweep end idle, so their final states are comparable.
            steps.push(Step::WaitIdle { conn: None, quiet_ms: None, timeout_ms: None, requirements: Vec::new() });
        }
        for (index, step) in steps.iter().enumerate() {
            self.step = index + 1;
            let id = if index < self.scenario.steps.len() {
                format!("step-{:02}-{}", index + 1, step.kind())
            } else {
                "sweep-final-idle".to_owned()
            };
            let summary = describe(step);
            let requirements = self.requirements_of(step);
            if variant && matches!(step, Step::Snapshot { .. }) {
                // A variant is compared with the uninterrupted run, not with the golden files.
                continue;
            }
            if Instant::now() >= self.deadline {
                let f = self.finding("the scenario deadline passed before this step".into(), None, None);
                self.checks.record(&id, &requirements, &summary, Verdict::Timeout, Some(f));
                return true;
            }
            step.conn().unwrap_or(DEFAULT_CONN).clone_into(&mut self.step_conn);
            let result = self.run_step(step).await;
            let cut = matches!(&result, Err(e) if e.cut) || self.take_cut();
            if cut {
                // The step was interrupted on purpose; what it would have checked may be lost.
                self.checks.touch(&id, &requirements, &summary);
                return self.recover(&steps[index + 1..], index + 1).await;
            }
            if let (Some(sweep), Step::Connect { .. }, Ok(())) = (self.sweep.as_mut(), step, &result) {
                sweep.counting = true;
                self.open_sweep_watch().await;
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

    /// The requirement ids `step` proves (see [`crate::attribution`]), also remembered as those a
    /// failure of the running step is charged to.
    pub(super) fn requirements_of(&mut self, step: &Step) -> Vec<String> {
        let ids: Vec<String> = step_requirements(self.scenario, step).0.iter().map(ToString::to_string).collect();
        self.step_requirements = ids.clone();
        ids
    }

    /// A SHOULD or MAY scenario reports its step failures as warnings.
    pub(super) fn level_verdict(&self, verdict: Verdict) -> Verdict {
        match (verdict, self.scenario.level) {
            (Verdict::Fail, Level::Should | Level::May) => Verdict::Warn,
            (v, _) => v,
        }
    }

    /// A finding of the running step, with the version its connection negotiated (else the
    /// scenario's first).
    pub(super) fn finding(&self, message: String, frame: Option<String>, requirement: Option<String>) -> Finding {
        let version = self.conns.get(&self.step_conn).and_then(|c| self.monitor.version(c.id)).or(self.negotiated);
        Finding {
            message,
            step: (self.step > 0).then_some(self.step),
            requirement,
            frame,
            version: version.map(|v| v.to_string()),
        }
    }

    pub(super) async fn finish(&mut self) {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            if self.on_stopped_replica(&name) {
                self.drop_conn(&name);
                continue;
            }
            let deadline = (Instant::now() + Duration::from_millis(500)).min(self.deadline.max(Instant::now()));
            self.close_conn(&name, deadline).await;
        }
    }

    /// Closes `conn` from the client side (1000), taking in the frames still in flight.
    pub(super) async fn close_conn(&mut self, conn: &str, deadline: Instant) {
        let Some(c) = self.conns.get_mut(conn) else { return };
        let id = c.id;
        let late = c.ws.close(deadline).await;
        for frame in late {
            self.observe(conn, frame);
        }
        self.wire_record(WireRecord::close(id, true, Some(1000)));
        self.monitor.client_close(id);
        self.record_findings();
        self.conns.remove(conn);
    }

    /// Drops `conn` without a closing handshake (a kill -9 restart, a sweep cut).
    pub(super) fn drop_conn(&mut self, conn: &str) {
        if let Some(mut c) = self.conns.remove(conn) {
            c.ws.abandon();
            self.wire_record(WireRecord::close(c.id, true, None));
            self.monitor.client_close(c.id);
            self.record_findings();
        }
    }

    /// The UiState the runner holds on `conn`: the last snapshot with every update and patch since.
    pub(super) fn conn_state(&self, conn: &str) -> Option<&chatwire_schema::UiState> {
        self.monitor.state(self.conns.get(conn)?.id)
    }

    pub(super) fn step_deadline(&self, timeout_ms: Option<u64>) -> Instant {
        let base = timeout_ms.map(Duration::from_millis).unwrap_or(self.cfg.step_timeout);
        (Instant::now() + self.cfg.scaled(base)).min(self.deadline)
    }

    pub(super) fn next_id(&mut self, prefix: &'static str) -> String {
        let n = self.counters.entry(prefix).or_insert(0);
        *n += 1;
        format!("{prefix}{n}")
    }

    // ---------------------------------------------------------------- steps

    pub(super) async fn run_step(&mut self, step: &Step) -> Result<(), StepError> {
        let conn = step.conn().unwrap_or(DEFAULT_CONN).to_owned();
        self.step_replica = step.opens_on().map(|k| k as usize);
        match step {
            Step::Connect { versions, features, with_script, hello, subprotocol, window, .. } => {
                // The runner's features go with the runner's offer; a step's own offer sends the
                // step's features only (SESSION-014).
                let features = match versions {
                    Some(_) => features.clone(),
                    None => features.clone().or_else(|| self.cfg.features.clone()),
                };
                let own_offer = versions.is_some();
                let versions = versions.clone().unwrap_or_else(|| self.cfg.versions.clone());
                let window = self.window_of(*window);
                let handshake = Handshake {
                    hello: *hello,
                    subprotocol: *subprotocol,
                    with_script: *with_script,
                    own_offer,
                    window,
                };
                self.connect(&conn, handshake, versions, features, None).await
            }
            Step::Resume { last_seq, cursor, answer, compare_with_snapshot, takeover, window, .. } => {
                // A reload holds no state: it names none, and gets the snapshot.
                let last_seq = if self.cfg.reload_resumes && step.is_default_resume() { Some(0) } else { *last_seq };
                let last_seq = &last_seq;
                let cursor = last_seq.map_or(*cursor, |_| None);
                let window = self.window_of(*window);
                self.resume(&conn, *last_seq, cursor, *answer, *takeover, window).await?;
                if *compare_with_snapshot {
                    self.compare_catch_up_with_snapshot(&conn).await?;
                }
                Ok(())
            }
            Step::PageThrough { limit, .. } => self.page_through(&conn, *limit).await,
            Step::PauseReading { ms, scaled, .. } => {
                self.conn_mut(&conn)?;
                let pause =
                    if *scaled { self.cfg.scaled(Duration::from_millis(*ms)) } else { Duration::from_millis(*ms) };
                self.transcript(format!("{conn} || pause reading"));
                self.log(format!("{conn} || not reading for {} ms", pause.as_millis()));
                tokio::time::sleep_until((Instant::now() + pause).min(self.deadline)).await;
                Ok(())
            }
            Step::ExpectState { state, items, .. } => self.expect_state(&conn, state, *items),
            Step::Disconnect { .. } => {
                let deadline = self.step_deadline(None);
                self.conn_mut(&conn)?;
                self.close_conn(&conn, deadline).await;
                self.transcript(format!("{conn} x disconnect"));
                self.log(format!("{conn} x disconnect"));
                Ok(())
            }
            Step::Restart { graceful: false, down_ms } => {
                let names: Vec<String> = self.conns.keys().cloned().collect();
                for name in names {
                    self.drop_conn(&name);
                }
                self.restarted = true;
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
            Step::KillReplica { .. }
            | Step::StartReplica { .. }
            | Step::PauseReplica { .. }
            | Step::ContinueReplica { .. } => self.replica_step(step).await,
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
            Step::Retry { id, after_item, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("y"),
                };
                let frame = json!({"type": "chat.retry", "id": id, "after_item_id": after_item});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Cancel { id, invocation, .. } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.next_id("x"),
                };
                let frame = json!({"type": "chat.cancel", "id": id, "invocation_id": invocation});
                let frame = self.substitute(&conn, &frame)?;
                self.send_value(&conn, frame, true).await
            }
            Step::Send { frame, may_fail, .. } => {
                let frame = self.substitute(&conn, frame)?;
                match self.send_value(&conn, frame, false).await {
                    Err(e) if *may_fail => {
                        self.log(format!("{conn}: the frame could not be sent, as allowed: {}", e.message));
                        Ok(())
                    }
                    sent => sent,
                }
            }
            Step::SendText { text, .. } => {
                // A text holding a JSON object is tracked like any sent frame (its id, a hello's
                // offer) but sent exactly as written, so spellings such as `1e3` reach the server.
                let object = serde_json::from_str::<Value>(text).ok().filter(Value::is_object);
                let deadline = self.step_deadline(None);
                let wire = object.as_ref().and_then(|v| v.get("type")).and_then(Value::as_str).unwrap_or("(no type)");
                self.transcript(match object {
                    Some(_) => format!("{conn} > {wire}"),
                    None => format!("{conn} > text"),
                });
                self.log(format!("{conn} > {}", pattern::truncate(text, 200)));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = object.as_ref().and_then(|v| v.get("id")).and_then(Value::as_str).map(str::to_owned);
                let id = c.id;
                let sent = c.ws.send_text(text.clone(), deadline).await;
                // The log keeps the text as written unless its JSON form is the same text.
                self.wire_record(match &object {
                    Some(v) if serde_json::to_string(v).is_ok_and(|json| json == *text) => {
                        WireRecord::frame(id, true, v)
                    }
                    _ => WireRecord::text(id, true, text),
                });
                self.monitor.client_text(id, text);
                sent.map_err(|e| self.cannot_send(&e))
            }
            Step::SendViolation { violation, .. } => {
                let deadline = self.step_deadline(None);
                self.transcript(format!("{conn} > violation"));
                self.log(format!("{conn} > frame breaking RFC 6455: {}", violation.describe()));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = None;
                let sent = c.ws.send_violation(*violation, deadline).await;
                sent.map_err(|e| self.cannot_send(&e))
            }
            Step::SendBinary { bytes, .. } => {
                let deadline = self.step_deadline(None);
                self.transcript(format!("{conn} > binary"));
                self.log(format!("{conn} > binary ({bytes} bytes)"));
                let c = self.conn_mut(&conn)?;
                c.last_sent_id = None;
                let id = c.id;
                let sent = c.ws.send_binary(vec![0; *bytes], deadline).await;
                self.wire_record(WireRecord::binary(id, true, *bytes));
                sent.map_err(|e| self.cannot_send(&e))
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
            Step::ExpectClose { code, timeout_ms, after_frames, max_bytes, drop_allowed_after_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                let allowance = expect::CloseAllowance {
                    after_frames: *after_frames,
                    max_bytes: *max_bytes,
                    drop_allowed_after: drop_allowed_after_ms.map(Duration::from_millis),
                };
                self.expect_close(&conn, *code, allowance, deadline).await
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
            Step::AttachToBound { prefix, .. } => self.attach_to_bound(prefix).await,
            Step::Drain { bytes, quiet_ms, timeout_ms, .. } => {
                let deadline = self.step_deadline(*timeout_ms);
                self.drain(&conn, *bytes, quiet_ms.map(Duration::from_millis), deadline).await
            }
            Step::Sleep { ms } => {
                tokio::time::sleep_until((Instant::now() + Duration::from_millis(*ms)).min(self.deadline)).await;
                Ok(())
            }
            Step::Snapshot { name, .. } => self.snapshot(&conn, name),
        }
    }
}
