//! Runs one scenario against a backend: drives the steps over WebSocket and feeds every frame,
//! both directions, to the session [`Monitor`], which holds every always-on check and the
//! differential oracle. This module only does I/O and carries out steps.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::FrameValidator;
use tokio::time::Instant;

use crate::attribution::step_requirements;
use crate::conn::WsConn;
use crate::consequence::RootCauses;
use crate::monitor::Monitor;
use crate::pattern::Bindings;
use crate::report::{scenario_verdict, CheckReport, CheckSet, Finding, ScenarioReport, Verdict};
use crate::scenario::{Level, Scenario, Step, DEFAULT_CONN};
use crate::snapshot::{Normalizer, SnapshotStore};
use crate::wirelog::{WireLog, WireRecord};

// The driver's state (`Driver`, here) is carried out by the files that `impl Driver`: `steps`
// dispatches a step, `wire` connects, sends and reads, `expect`, `resume`, `window`, `replicas`
// and `sweep` carry out their steps, `log` keeps the report's view of the traffic. What they decide
// without I/O sits in leaves below all of them (`outcome`, `describe`, `placement`, `history`,
// `sweep_track`, `endpoint`), which never name the driver: nothing here names a step file.
mod describe;
mod endpoint;
mod expect;
mod history;
mod log;
mod outcome;
mod placement;
mod replicas;
mod resume;
mod steps;
mod sweep;
mod sweep_track;
mod window;
mod wire;

pub use describe::describe;
pub use endpoint::Endpoint;
pub use placement::needs_replicas;
pub use sweep_track::SweepBaseline;
use sweep_track::{SweepRole, SweepTrack};

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
        monitor: placement::monitor(validator.clone(), endpoint.replicas()),
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
        history: history::History::default(),
        placement: placement::Placement::default(),
        step_replica: None,
        conn_replicas: HashMap::new(),
        roots: RootCauses::default(),
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
    driver.roots.charge(&mut driver.checks);
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
    history: history::History,
    /// Which replica each connection went to.
    placement: placement::Placement,
    /// The replica the step being run names for the connections it opens.
    step_replica: Option<usize>,
    /// The replica of each connection (by the monitor's number), for the wire log, where the
    /// backend has more than one.
    conn_replicas: HashMap<u64, usize>,
    /// Each connection's failures, so a later comparison that follows from the first is charged
    /// to it (`crate::consequence`).
    roots: RootCauses,
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
                    self.note_comparison(&id);
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

    /// Notes that the check `id` of the running step failed on the step's connection.
    pub(super) fn note_comparison(&mut self, id: &str) {
        let conn =
            self.conns.get(&self.step_conn).map(|c| c.id).or_else(|| self.last_ids.get(&self.step_conn).copied());
        if let Some(conn) = conn {
            self.roots.comparison(conn, self.step, id);
        }
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
}
