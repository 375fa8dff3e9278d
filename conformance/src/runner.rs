//! Runs a set of scenarios against a target: starts (or probes) the backend, runs scenarios with
//! bounded parallelism under per-scenario and per-run deadlines, and collects the report.

use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::FrameValidator;
use tokio::time::Instant;

use crate::backend::{Cluster, ClusterSpec, StartError, StoreServer, Target};
use crate::conn::{ConnectError, WsConn};
use crate::driver::{needs_replicas, run_scenario, run_sweep_baseline, run_sweep_variant, DriverConfig, Endpoint};
use crate::report::{
    BackendLog, CheckReport, RunReport, ScenarioReport, Summary, SweepSummary, SweepVariant, Verdict,
    SWEEP_APPLICABLE_CHECK,
};
use crate::scenario::Scenario;
use crate::stall::{StallWatch, HARNESS_STALL};
use crate::sweep::{not_sweepable_reason, variant_id};

/// Everything a run needs besides the scenarios.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// What to test.
    pub target: Target,
    /// Scenarios run at once (at least 1).
    pub jobs: usize,
    /// Per-frame and per-step settings.
    pub driver: DriverConfig,
    /// Deadline of one scenario, before scaling.
    pub scenario_timeout: Duration,
    /// Deadline of the whole run, before scaling.
    pub run_timeout: Duration,
    /// How long a spawned backend may take to become ready, before scaling.
    pub start_timeout: Duration,
    /// The reconnect sweep (`run --sweep`, see [`crate::sweep`]): at most this many cut variants per
    /// sweepable scenario, each reported after the scenario as `<scenario>@cut-<k>`. `None`: an
    /// ordinary run.
    pub sweep: Option<usize>,
    /// The implementation outside conformance mode (`--plain-url`, `--plain-exec`), for scenarios
    /// with `conformance_mode: false`; `None` derives it from `target` where possible
    /// ([`Target::outside_conformance`]), else those scenarios are not applicable.
    pub plain_target: Option<Target>,
    /// Run each scenario that resumes with the runner's default cursor a second time as
    /// `<scenario>@reload`, every such resume a reload (`DriverConfig::reload_resumes`), where the
    /// offer can put `resume_catch_up` in force: the first run proves the catch-up path, the
    /// variant the snapshot path. Not with `sweep`.
    pub reload_variants: bool,
    /// How a spawned backend is laid out (`run --replicas N --store URL`): every backend the runner
    /// starts (the shared one, and each scenario's own) is a cluster of that many replicas on a
    /// fresh database of the store server. Default: one process on its own SQLite file.
    pub cluster: ClusterSpec,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            target: Target::Bundled { fault: None },
            jobs: 1,
            driver: DriverConfig::default(),
            scenario_timeout: Duration::from_secs(60),
            run_timeout: Duration::from_secs(900),
            start_timeout: Duration::from_secs(15),
            sweep: None,
            plain_target: None,
            reload_variants: true,
            cluster: ClusterSpec::default(),
        }
    }
}

/// Why a run could not happen at all (exit code 3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The spawned backend did not start.
    #[error("the backend could not be started: {0}")]
    Start(#[from] StartError),
    /// The URL could not be reached.
    #[error("the backend could not be reached: {0}")]
    Unreachable(String),
    /// The options do not go together (more replicas than a URL has, or no shared store).
    #[error("{0}")]
    Options(String),
}

/// Opens one connection offering `chatwire.v1` and closes it. A backend with no WebSocket there
/// (refused handshake, broken TCP, no handshake before `deadline`) cannot run any scenario: it is
/// unreachable. A completed handshake with a wrong subprotocol answer is reachable: the scenarios
/// report it against TRANSPORT-003.
async fn probe(url: &str, max_message_bytes: usize, deadline: Instant) -> Result<(), RunError> {
    match WsConn::open(url, max_message_bytes, deadline).await {
        Ok(mut conn) => {
            let _ = conn.close(Instant::now() + Duration::from_millis(500)).await;
            Ok(())
        }
        Err(ConnectError::Subprotocol { .. }) => Ok(()),
        Err(e @ ConnectError::BadUrl { .. }) => Err(RunError::Unreachable(e.to_string())),
        Err(e) => Err(RunError::Unreachable(format!("{e}; is a Chatwire WebSocket server listening at that path?"))),
    }
}

/// Progress notifications, for live terminal output.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A scenario started.
    Started(&'a str),
    /// A sweep variant finished.
    Variant(&'a ScenarioReport),
    /// A scenario finished; `done` of `total` are finished.
    Finished {
        /// Its report.
        report: &'a ScenarioReport,
        /// How many are finished.
        done: usize,
        /// How many in all.
        total: usize,
    },
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(Progress<'_>) + Send + Sync>;

/// Scenarios run at once unless told, against the bundled reference: 16, whatever the core count.
/// A scenario spends almost all of its time waiting (on deadlines of silence, on a backend's `wait`
/// and `run_ms`, on restarts), not computing: on 2 shared cores the runner used 0.05 of a core per
/// second of wall time at 2 jobs, and the whole suite (157 runs) took 17 s at 16 jobs against 26 s
/// at 8 and 62 s at the old default of 2, with every verdict the same; 24 gained nothing more. The
/// heavy scenarios run alone (`Scenario::isolated`) and a runner too loaded to read in time reports
/// a harness error ([`crate::stall`]), so more jobs cannot fail a scenario.
pub const DEFAULT_JOBS: usize = 16;

/// Scenarios run at once unless told, against any other backend (`--url`, `--exec`): 8. What such
/// a backend costs per scenario is unknown (an interpreted one spends seconds of CPU on each start
/// of its own instance), so half the reference's, which is what the suite measured with every
/// verdict the same against a Python backend sharing 2 cores.
pub const DEFAULT_JOBS_OTHER: usize = 8;

/// The default parallelism for `target`: [`DEFAULT_JOBS`] for the bundled reference, otherwise
/// [`DEFAULT_JOBS_OTHER`].
pub fn default_jobs(target: &Target) -> usize {
    match target {
        Target::Bundled { .. } => DEFAULT_JOBS,
        _ => DEFAULT_JOBS_OTHER,
    }
}

/// The suffix of a reload variant's id.
pub use crate::report::RELOAD_SUFFIX;

/// How many of `scenarios` [`run_suite`] runs a second time as `<id>@reload` under `opts`.
pub fn reload_variant_count(scenarios: &[Scenario], opts: &RunOptions) -> usize {
    scenarios.iter().filter(|s| runs_reload_variant(s, opts)).count()
}

/// Whether `scenario` also runs as `<id>@reload` under `opts` (see [`RunOptions::reload_variants`]).
fn runs_reload_variant(scenario: &Scenario, opts: &RunOptions) -> bool {
    opts.reload_variants && opts.sweep.is_none() && offer_may_catch_up(&opts.driver) && scenario.resumes_by_default()
}

/// Whether `driver`'s offer can put `resume_catch_up` in force (a version above 1.0, and no
/// feature list leaving it out), so that default resumes take the catch-up path.
pub fn offer_may_catch_up(driver: &DriverConfig) -> bool {
    driver.versions.iter().any(|v| v != "1.0")
        && driver.features.as_ref().is_none_or(|f| f.iter().any(|name| name == "resume_catch_up"))
}

/// Grace after a scenario's own deadline before the runner abandons its task.
const ABANDON_GRACE: Duration = Duration::from_secs(3);

/// Runs `scenarios` (in id order in the report), and their sweep variants when `opts.sweep` asks.
/// The exit code is not set here (see `baseline`).
pub async fn run_suite(
    scenarios: Vec<Scenario>,
    opts: &RunOptions,
    progress: ProgressFn,
) -> Result<RunReport, RunError> {
    // A restarted backend gets the same start deadline as the first start.
    let opts = &RunOptions {
        driver: DriverConfig { start_timeout: opts.start_timeout, ..opts.driver.clone() },
        ..opts.clone()
    };
    let sweep = opts.sweep.map(|max| max.max(1));
    let started = Instant::now();
    let scale = |d: Duration| d.mul_f64(opts.driver.timeout_scale.max(0.01));
    let run_deadline = started + scale(opts.run_timeout);
    let start_timeout = scale(opts.start_timeout);

    opts.cluster.check().map_err(RunError::Options)?;
    if !opts.target.is_spawned() && opts.cluster.replicas > 1 {
        return Err(RunError::Options(format!(
            "--replicas {} needs backends the runner starts (--exec or the bundled one), not --url",
            opts.cluster.replicas
        )));
    }
    let store = opts.cluster.store.clone().map(StoreServer::new);
    let mut shared = None;
    let probe_deadline = || Instant::now() + scale(Duration::from_secs(5));
    let urls = match &opts.target {
        Target::Url(url) => {
            probe(url, opts.driver.max_message_bytes, probe_deadline()).await?;
            vec![url.clone()]
        }
        target => {
            let cluster = Cluster::start(target, "shared", &opts.cluster, store.as_ref(), start_timeout).await?;
            let urls = cluster.urls();
            shared = Some(cluster);
            // Accepting TCP is not speaking WebSocket: a spawned backend gets the same probe as a
            // URL, so an HTTP server (or the wrong --exec-path) is a backend error, not a FAIL of
            // every scenario.
            for url in &urls {
                if let Err(e) = probe(url, opts.driver.max_message_bytes, probe_deadline()).await {
                    if let Some(mut cluster) = shared.take() {
                        cluster.shutdown().await;
                    }
                    return Err(e);
                }
            }
            urls
        }
    };
    let context = Arc::new(RunContext { urls, store: store.clone(), start_timeout });

    let validator = Arc::new(FrameValidator::new());
    let stalls = StallWatch::start();
    let jobs = opts.jobs.max(1);
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs));
    // Each scenario, then its reload variant where one applies; the isolated ones last, so that
    // they wait for what runs before them and nothing starts while they run (the semaphore is fair).
    let mut runs: Vec<(Arc<Scenario>, bool)> = Vec::new();
    for scenario in scenarios {
        let variant = runs_reload_variant(&scenario, opts);
        let scenario = Arc::new(scenario);
        runs.push((scenario.clone(), false));
        if variant {
            runs.push((scenario, true));
        }
    }
    runs.sort_by_key(|(scenario, _)| scenario.isolated);
    let total = runs.len();
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut handles = Vec::new();
    for (scenario, reload) in runs {
        let (validator, semaphore, progress, done, stalls) =
            (validator.clone(), semaphore.clone(), progress.clone(), done.clone(), stalls.clone());
        let (opts, context) = (opts.clone(), context.clone());
        let task_scenario = scenario.clone();
        let handle = tokio::spawn(async move {
            let scenario = task_scenario;
            let permits = if scenario.isolated { jobs } else { 1 };
            let permit = semaphore.clone().acquire_many_owned(permits as u32).await.ok();
            let label = if reload { format!("{}{RELOAD_SUFFIX}", scenario.id) } else { scenario.id.clone() };
            progress(Progress::Started(&label));
            let began = Instant::now();
            let mut reports = if began >= run_deadline {
                vec![synthetic(
                    &scenario,
                    Verdict::Timeout,
                    "run-deadline",
                    "the run deadline passed before the scenario started",
                )]
            } else if let Some(max) = sweep {
                drop(permit);
                let reports =
                    sweep_one(&scenario, &opts, &context, &validator, run_deadline, max, &semaphore, &progress).await;
                reports
            } else if reload {
                let opts =
                    RunOptions { driver: DriverConfig { reload_resumes: true, ..opts.driver.clone() }, ..opts.clone() };
                let mut report = run_one(&scenario, &opts, &context, &validator, run_deadline).await;
                report.id = label.clone();
                report.title =
                    format!("{} (every resume a reload: no state held, answered by a snapshot)", report.title);
                vec![report]
            } else {
                vec![run_one(&scenario, &opts, &context, &validator, run_deadline).await]
            };
            for report in &mut reports {
                blame_stalls(report, &stalls, began, Instant::now());
            }
            let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if let Some(first) = reports.first_mut() {
                progress(Progress::Finished { report: first, done: n, total });
            }
            reports
        });
        handles.push((scenario, reload, handle));
    }

    let mut reports = Vec::new();
    for (scenario, reload, handle) in handles {
        let abort = handle.abort_handle();
        let mut lost = match tokio::time::timeout_at(run_deadline + scale(ABANDON_GRACE) * 2, handle).await {
            Ok(Ok(mut r)) => {
                reports.append(&mut r);
                continue;
            }
            Ok(Err(e)) => {
                synthetic(&scenario, Verdict::HarnessError, "harness", &format!("the scenario task failed: {e}"))
            }
            Err(_) => {
                abort.abort();
                synthetic(&scenario, Verdict::Timeout, "run-deadline", "the run deadline passed during the scenario")
            }
        };
        if reload {
            lost.id = format!("{}{RELOAD_SUFFIX}", scenario.id);
        }
        reports.push(lost);
    }
    reports.sort_by(|a, b| a.id.cmp(&b.id));

    let mut backend_logs = Vec::new();
    if let Some(mut cluster) = shared {
        cluster.shutdown().await;
        let several = cluster.len() > 1;
        for (label, stderr) in cluster.logs() {
            if !stderr.trim().is_empty() {
                let label = if several { format!("{}, {label}", cluster.label()) } else { cluster.label().to_owned() };
                backend_logs.push(BackendLog { label, stderr });
            }
        }
    }
    if let Some(store) = &store {
        // The databases of scenario clusters abandoned at a deadline.
        for e in store.drop_leftovers().await {
            backend_logs.push(BackendLog { label: "store".into(), stderr: format!("{e}\n") });
        }
    }
    let mut report = RunReport {
        tool: concat!("chatwire-conformance ", env!("CARGO_PKG_VERSION")).to_owned(),
        target: opts.cluster.describe(&opts.target),
        replicas: if opts.target.is_spawned() { opts.cluster.replicas } else { 1 },
        timeout_scale: opts.driver.timeout_scale,
        duration_ms: started.elapsed().as_millis() as u64,
        summary: Summary::default(),
        scenarios: reports,
        stale_baseline: Vec::new(),
        backend_logs,
        sweep: sweep.map(|_| SweepSummary::default()),
        strict: false,
        levels: Vec::new(),
        exit_code: 0,
    };
    report.summarize();
    Ok(report)
}

/// What every scenario of a run shares: the shared backend's replica URLs, the store server and
/// the (scaled) start deadline of a backend.
struct RunContext {
    urls: Vec<String>,
    store: Option<StoreServer>,
    start_timeout: Duration,
}

impl RunContext {
    /// The shared backend, as a scenario's endpoint.
    fn shared(&self) -> Endpoint {
        match self.urls.as_slice() {
            [one] => Endpoint::Url(one.clone()),
            urls => Endpoint::Replicas(urls.to_vec()),
        }
    }
}

async fn run_one(
    scenario: &Scenario,
    opts: &RunOptions,
    context: &RunContext,
    validator: &Arc<FrameValidator>,
    run_deadline: Instant,
) -> ScenarioReport {
    let scenario_deadline = (Instant::now() + opts.driver.scaled(opts.scenario_timeout)).min(run_deadline);
    let target = if scenario.conformance_mode {
        opts.target.clone()
    } else {
        match opts.plain_target.clone().or_else(|| opts.target.outside_conformance()) {
            Some(t) => t,
            None => {
                return synthetic(
                    scenario,
                    Verdict::NotApplicable,
                    "backend-outside-conformance-mode",
                    "the scenario needs the backend outside conformance mode: pass --plain-url or --plain-exec",
                )
            }
        }
    };
    let has = if target.is_spawned() { opts.cluster.replicas } else { 1 };
    if scenario.min_replicas() > has {
        let message = needs_replicas(scenario.min_replicas(), has);
        return synthetic(scenario, Verdict::NotApplicable, "replicas", &message);
    }
    // A scenario that kills the backend (or a replica) gets its own instance, so parallel scenarios
    // are unaffected; so does one outside conformance mode, as the shared instance is in
    // conformance mode. An isolated one too, so the load it leaves behind (a session still
    // producing for a client gone) ends with it.
    let own_instance = scenario.controls_processes() || !scenario.conformance_mode || scenario.isolated;
    let mut endpoint = if own_instance && target.is_spawned() {
        let started =
            Cluster::start(&target, &scenario.id, &opts.cluster, context.store.as_ref(), context.start_timeout).await;
        match started {
            Ok(cluster) => Endpoint::Cluster(Box::new(cluster)),
            // The shared instance started, so this one is the same command on fresh storage: a
            // start that fails here is the machine's load or the runner's, not a requirement.
            Err(e) => {
                return synthetic(
                    scenario,
                    Verdict::HarnessError,
                    "backend-start",
                    &format!("the scenario's own backend instance could not be started: {e}"),
                )
            }
        }
    } else if let Target::Url(plain) = &target {
        Endpoint::Url(plain.clone())
    } else {
        context.shared()
    };
    let run = run_scenario(scenario, &mut endpoint, &opts.driver, validator.clone(), scenario_deadline);
    let mut report = match tokio::time::timeout_at(scenario_deadline + ABANDON_GRACE, run).await {
        Ok(report) => report,
        Err(_) => {
            synthetic(scenario, Verdict::Timeout, "scenario-deadline", "the scenario did not finish by its deadline")
        }
    };
    if let Endpoint::Cluster(mut cluster) = endpoint {
        cluster.shutdown().await;
        let stderr = cluster.stderr();
        if report.verdict != Verdict::Pass && !stderr.trim().is_empty() {
            report.backend_stderr = Some(stderr);
        }
    }
    report
}

/// The sweep of one scenario: the uninterrupted run (the scenario's own report), then its cut
/// variants, each as its own report, run with the suite's parallelism.
#[allow(clippy::too_many_arguments)]
async fn sweep_one(
    scenario: &Arc<Scenario>,
    opts: &RunOptions,
    context: &Arc<RunContext>,
    validator: &Arc<FrameValidator>,
    run_deadline: Instant,
    max: usize,
    semaphore: &Arc<tokio::sync::Semaphore>,
    progress: &ProgressFn,
) -> Vec<ScenarioReport> {
    let requirements: Vec<String> = vec!["RESUME-002".into(), "RESUME-009".into(), "TOOL-010".into()];
    let summary = "the reconnect sweep applies to the scenario";
    let not_applicable = |mut report: ScenarioReport, reason: String| {
        report.checks.push(CheckReport {
            id: SWEEP_APPLICABLE_CHECK.to_owned(),
            verdict: Verdict::NotApplicable,
            requirements: requirements.clone(),
            summary: summary.to_owned(),
            findings: vec![crate::report::Finding {
                message: reason,
                step: None,
                requirement: None,
                frame: None,
                version: None,
            }],
            findings_dropped: 0,
            baselined: None,
            errata: Vec::new(),
        });
        vec![report]
    };
    let permit = semaphore.clone().acquire_owned().await.ok();
    let scenario_deadline = (Instant::now() + opts.driver.scaled(opts.scenario_timeout)).min(run_deadline);
    if let Some(reason) = not_sweepable_reason(scenario) {
        // Still the scenario's own ordinary run, so a sweep never reports less than a plain run.
        let report = run_one(scenario, opts, context, validator, run_deadline).await;
        return not_applicable(report, reason);
    }
    let mut endpoint = context.shared();
    let run = run_sweep_baseline(scenario, &mut endpoint, &opts.driver, validator.clone(), scenario_deadline);
    let (mut base_report, baseline) = match tokio::time::timeout_at(scenario_deadline + ABANDON_GRACE, run).await {
        Ok(done) => done,
        Err(_) => {
            let r = synthetic(
                scenario,
                Verdict::Timeout,
                "scenario-deadline",
                "the scenario did not finish by its deadline",
            );
            return vec![r];
        }
    };
    drop(permit);
    let passed = matches!(base_report.verdict, Verdict::Pass | Verdict::Warn);
    let baseline = match baseline {
        Some(b) if passed => Arc::new(b),
        _ => {
            let reason = if passed {
                "the uninterrupted run ended with no state of the main connection that the monitor knows, \
                 so there is nothing to compare the cut variants with"
                    .to_owned()
            } else {
                format!(
                    "the uninterrupted run did not pass ({}), so there is nothing to compare the cut variants with",
                    base_report.verdict.as_str()
                )
            };
            return not_applicable(base_report, reason);
        }
    };
    base_report.checks.push(CheckReport {
        id: SWEEP_APPLICABLE_CHECK.to_owned(),
        verdict: Verdict::Pass,
        requirements: requirements.clone(),
        summary: format!(
            "{summary}: {} cut point(s), {} run",
            baseline.frames,
            baseline.frames.min(max).saturating_sub(baseline.first_cut - 1)
        ),
        findings: Vec::new(),
        findings_dropped: 0,
        baselined: None,
        errata: Vec::new(),
    });
    let mut handles = Vec::new();
    for k in baseline.first_cut..=baseline.frames.min(max) {
        let (scenario, opts, validator, semaphore, progress, baseline) =
            (scenario.clone(), opts.clone(), validator.clone(), semaphore.clone(), progress.clone(), baseline.clone());
        let context = context.clone();
        handles.push(tokio::spawn(async move {
            let _permit = semaphore.acquire_owned().await.ok();
            let deadline = (Instant::now() + opts.driver.scaled(opts.scenario_timeout)).min(run_deadline);
            let mut endpoint = context.shared();
            let run = run_sweep_variant(&scenario, &mut endpoint, &opts.driver, validator, deadline, &baseline, k);
            let mut report = match tokio::time::timeout_at(deadline + ABANDON_GRACE, run).await {
                Ok(report) => report,
                Err(_) => synthetic(
                    &scenario,
                    Verdict::Timeout,
                    "scenario-deadline",
                    "the variant did not finish by its deadline",
                ),
            };
            report.id = variant_id(&scenario.id, k);
            report.title = format!("{} (cut after server frame {k} of {}, resumed)", scenario.title, baseline.frames);
            report.sweep =
                Some(SweepVariant { scenario: scenario.id.clone(), cut_after_frame: k, frames: baseline.frames });
            progress(Progress::Variant(&report));
            report
        }));
    }
    let mut reports = vec![base_report];
    for (k, handle) in (1..).zip(handles) {
        let abort = handle.abort_handle();
        match tokio::time::timeout_at(run_deadline + ABANDON_GRACE * 2, handle).await {
            Ok(Ok(report)) => reports.push(report),
            other => {
                abort.abort();
                let (verdict, message) = match other {
                    Ok(Err(e)) => (Verdict::HarnessError, format!("the variant task failed: {e}")),
                    _ => (Verdict::Timeout, "the run deadline passed during the variant".to_owned()),
                };
                let mut r = synthetic(scenario, verdict, "harness", &message);
                r.id = variant_id(&scenario.id, k);
                r.sweep =
                    Some(SweepVariant { scenario: scenario.id.clone(), cut_after_frame: k, frames: baseline.frames });
                reports.push(r);
            }
        }
    }
    reports
}

/// A scenario that timed out while the runner itself stalled for [`HARNESS_STALL`] or more: its
/// timeouts say nothing about the backend (the answer may have sat unread), so each becomes a
/// harness error naming the stall, and no requirement is charged.
fn blame_stalls(report: &mut ScenarioReport, stalls: &StallWatch, from: Instant, to: Instant) {
    if report.verdict != Verdict::Timeout {
        return;
    }
    let stalled = stalls.stalled_between(from, to);
    if stalled < HARNESS_STALL {
        return;
    }
    let message = format!(
        "the runner itself was stalled for {} ms during the scenario (its own load or the machine's), so its \
         deadlines did not measure the backend; rerun with fewer --jobs or a larger --timeout-scale",
        stalled.as_millis()
    );
    for check in report.checks.iter_mut().filter(|c| c.verdict == Verdict::Timeout) {
        check.verdict = Verdict::HarnessError;
        check.requirements.clear();
        check.findings.push(crate::report::Finding {
            message: message.clone(),
            step: None,
            requirement: None,
            frame: None,
            version: None,
        });
    }
    report.verdict = crate::report::scenario_verdict(&report.checks);
}

/// A report for a scenario the driver could not report on itself.
fn synthetic(scenario: &Scenario, verdict: Verdict, check: &str, message: &str) -> ScenarioReport {
    ScenarioReport {
        id: scenario.id.clone(),
        title: scenario.title.clone(),
        level: scenario.level,
        requirements: scenario.requirements.iter().map(ToString::to_string).collect(),
        verdict,
        duration_ms: 0,
        checks: vec![CheckReport {
            id: check.to_owned(),
            verdict,
            requirements: Vec::new(),
            summary: message.to_owned(),
            findings: vec![crate::report::Finding {
                message: message.to_owned(),
                step: None,
                requirement: None,
                frame: None,
                version: None,
            }],
            findings_dropped: 0,
            baselined: None,
            errata: Vec::new(),
        }],
        wire_log: Vec::new(),
        backend_stderr: None,
        snapshots: Default::default(),
        sweep: None,
        version: None,
        in_force: Default::default(),
    }
}
