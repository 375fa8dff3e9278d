//! `chatwire-conformance soak`: many seeded random sessions at once against a backend, every frame
//! through the same [`crate::monitor::Monitor`] the scenarios use.
//!
//! `--sessions N` slots run side by side until `--duration` passes; each slot runs sessions one
//! after another, session `k` of slot `j` drawing its plan ([`plan`]) from a seed derived from
//! `--seed`, `j` and `k`, so the plans of a run are the same on every machine (the wire timing is
//! not). Against a backend the runner starts (`--exec`, the bundled one) each slot has its own
//! instance, which its sessions may kill with SIGKILL and start again; against `--url` the slots
//! share the backend and no plan restarts it. With `--replicas N --store URL` each slot's instance
//! is a cluster of N replicas on a fresh database: its connections take the replicas in turn (a
//! reconnect on the next replica), and a restart restarts them all.
//!
//! A session with a must-level finding keeps its JSON Lines wire log (`--wire-log DIR`), which
//! `check-log` replays through the monitor to the same findings; the logs of clean sessions are
//! removed. The report gives events/s and the p50/p99 time from a user message to its run's
//! `chat.run_complete`.
//!
//! [`load`] (`cluster-load`) runs the same sessions against one cluster that every slot shares,
//! whose replicas a killer kills under them, once with one replica and once with several.

mod backend;
mod config;
mod fleet;
pub mod load;
mod load_report;
pub mod plan;
mod session;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::FrameValidator;
use tokio::time::Instant;

use crate::backend::{Cluster, ClusterSpec, StoreServer, Target};
use crate::scenario::Level;
use crate::stall::StallWatch;
use backend::Backend;

pub use config::{SoakConfig, SoakFinding};
pub use session::SessionOutcome;

/// What `soak` runs.
#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// The backend.
    pub target: Target,
    /// Sessions at once (one slot each).
    pub sessions: usize,
    /// No session starts after this much time.
    pub duration: Duration,
    /// The seed every plan derives from.
    pub seed: u64,
    /// At most this many sessions in all (tests); `None`: as many as `duration` allows.
    pub max_sessions: Option<u64>,
    /// Stop starting sessions after the first failing one.
    pub fail_fast: bool,
    /// Where failing sessions' wire logs are written.
    pub log_dir: PathBuf,
    /// Keep the wire log of every session, not only of failing ones.
    pub keep_logs: bool,
    /// The session's settings.
    pub config: SoakConfig,
    /// Each slot's backend as a cluster (`--replicas`, `--store`); default one process.
    pub cluster: ClusterSpec,
}

/// A session with a must-level finding.
#[derive(Clone, Debug)]
pub struct FailedSession {
    /// The slot it ran in.
    pub slot: usize,
    /// Its index in the slot.
    pub index: u64,
    /// The seed of its plan.
    pub session_seed: u64,
    /// Its wire log, for `check-log`.
    pub wire_log: PathBuf,
    /// Its findings.
    pub findings: Vec<SoakFinding>,
    /// What the harness did to it meanwhile (kills that cut its connections, with the time since
    /// the session started, as in its wire log's `at_ms`).
    pub notes: Vec<String>,
}

/// What a soak run measured and found.
#[derive(Clone, Debug, Default)]
pub struct SoakReport {
    /// `--seed`.
    pub seed: u64,
    /// Sessions run.
    pub sessions: u64,
    /// Events received on the sessions' main connections.
    pub events: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// User message to run complete, sorted, microseconds.
    pub latencies_us: Vec<u64>,
    /// `chat.cancel`s sent while a second tab of the session read along.
    pub cancels_beside_tab: u64,
    /// Runs a recovery ended as `interrupted` (not among the latencies).
    pub interrupted: u64,
    /// Main connections a kill cut, resumed on another replica.
    pub kill_resumes: u64,
    /// User messages lost with a killed replica and sent again.
    pub lost_messages: u64,
    /// Sessions a kill cut or interrupted.
    pub sessions_hit: u64,
    /// Sessions a kill cut or interrupted that completed a run afterwards.
    pub sessions_recovered: u64,
    /// Runs completed after a kill cut or interrupted their session.
    pub runs_after_kill: u64,
    /// Sessions with a must-level finding.
    pub failed: Vec<FailedSession>,
    /// Should-level findings (warnings).
    pub warnings: Vec<SoakFinding>,
    /// Harness problems (a backend that did not come back, an unwritable log).
    pub harness: Vec<String>,
}

impl SoakReport {
    /// Events per second.
    pub fn events_per_sec(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q`-quantile (0..=1) of the latencies, in milliseconds.
    pub fn latency_ms(&self, q: f64) -> Option<f64> {
        let n = self.latencies_us.len();
        if n == 0 {
            return None;
        }
        let i = ((n as f64 * q).ceil() as usize).clamp(1, n) - 1;
        Some(self.latencies_us[i] as f64 / 1000.0)
    }

    /// Every must-level finding, with its session.
    pub fn findings(&self) -> impl Iterator<Item = (&FailedSession, &SoakFinding)> {
        self.failed.iter().flat_map(|s| s.findings.iter().filter(|f| f.level == Level::Must).map(move |f| (s, f)))
    }
}

/// Why a soak could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    /// A backend could not be started.
    #[error("{0}")]
    Start(#[from] crate::backend::StartError),
    /// The options do not go together (more than one replica without a shared store).
    #[error("{0}")]
    Options(String),
    /// The log directory cannot be created.
    #[error("cannot create the wire log directory {path}: {message}")]
    LogDir {
        /// The directory.
        path: String,
        /// The OS error.
        message: String,
    },
}

/// The name of the wire log of session `index` of `slot`.
pub fn log_name(seed: u64, slot: usize, index: u64) -> String {
    format!("soak-seed{seed}-slot{slot}-session{index}.jsonl")
}

/// Runs the soak. `on_failure` is called as each failing session ends.
pub async fn run_soak(
    options: &SoakOptions,
    on_failure: Arc<dyn Fn(&FailedSession) + Send + Sync>,
) -> Result<SoakReport, SoakError> {
    std::fs::create_dir_all(&options.log_dir)
        .map_err(|e| SoakError::LogDir { path: options.log_dir.display().to_string(), message: e.to_string() })?;
    let started = Instant::now();
    let end = started + options.duration;
    let validator = Arc::new(FrameValidator::new());
    options.cluster.check().map_err(SoakError::Options)?;
    let store = options.cluster.store.clone().map(StoreServer::new);
    let mut backends = Vec::new();
    for slot in 0..options.sessions.max(1) {
        let start = options.config.start_timeout;
        backends.push(match &options.target {
            Target::Url(url) => Backend::Url(url.clone()),
            target => Backend::Process(
                Box::new(
                    Cluster::start(target, &format!("soak-{slot}"), &options.cluster, store.as_ref(), start).await?,
                ),
                Default::default(),
            ),
        });
    }
    let mut report = run_slots(options, backends, validator, end, on_failure).await;
    if let Some(store) = &store {
        for e in store.drop_leftovers().await {
            report.harness.push(e.to_string());
        }
    }
    report.elapsed = started.elapsed();
    // Nothing failed: leave no empty directory behind.
    let _ = std::fs::remove_dir(&options.log_dir);
    Ok(report)
}

/// Runs one slot per backend until `end` (each slot's sessions one after another) and sums up
/// what they found; `elapsed` is left to the caller.
async fn run_slots(
    options: &SoakOptions,
    backends: Vec<Backend>,
    validator: Arc<FrameValidator>,
    end: Instant,
    on_failure: Arc<dyn Fn(&FailedSession) + Send + Sync>,
) -> SoakReport {
    let started_sessions = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // The runner's own stalls: a session that times out across one is the harness's, as in `run`.
    let stalls = StallWatch::start();
    let mut tasks = Vec::new();
    for (slot, backend) in backends.into_iter().enumerate() {
        let options = options.clone();
        let (validator, started_sessions, stop, on_failure, stalls) =
            (validator.clone(), started_sessions.clone(), stop.clone(), on_failure.clone(), stalls.clone());
        tasks.push(tokio::spawn(async move {
            let shared = Slots { started_sessions: &started_sessions, stop: &stop, stalls: &stalls };
            run_slot(slot, backend, &options, validator, end, shared, on_failure).await
        }));
    }
    let mut report = SoakReport { seed: options.seed, ..SoakReport::default() };
    for task in tasks {
        match task.await {
            Ok(slot) => {
                report.sessions += slot.sessions;
                report.events += slot.events;
                report.cancels_beside_tab += slot.cancels_beside_tab;
                report.interrupted += slot.interrupted;
                report.kill_resumes += slot.kill_resumes;
                report.lost_messages += slot.lost_messages;
                report.sessions_hit += slot.sessions_hit;
                report.sessions_recovered += slot.sessions_recovered;
                report.runs_after_kill += slot.runs_after_kill;
                report.latencies_us.extend(slot.latencies_us);
                report.failed.extend(slot.failed);
                report.warnings.extend(slot.warnings);
                report.harness.extend(slot.harness);
            }
            Err(e) => report.harness.push(format!("a soak slot ended abnormally: {e}")),
        }
    }
    report.latencies_us.sort_unstable();
    report.failed.sort_by_key(|f| (f.slot, f.index));
    report
}

/// Most latencies and warnings kept per slot (a bound on memory however long the soak runs).
const MOST_KEPT: usize = 1_000_000;

/// What the slots of one run share.
#[derive(Clone, Copy)]
struct Slots<'a> {
    /// Sessions started so far, by every slot.
    started_sessions: &'a AtomicU64,
    /// Set when the run stops early.
    stop: &'a AtomicBool,
    /// The runner's own stalls.
    stalls: &'a StallWatch,
}

async fn run_slot(
    slot: usize,
    mut backend: Backend,
    options: &SoakOptions,
    validator: Arc<FrameValidator>,
    end: Instant,
    shared: Slots<'_>,
    on_failure: Arc<dyn Fn(&FailedSession) + Send + Sync>,
) -> SoakReport {
    let Slots { started_sessions, stop, stalls } = shared;
    let mut out = SoakReport::default();
    let plan_options = plan::PlanOptions { restarts: backend.can_restart() };
    for index in 0.. {
        if Instant::now() >= end || stop.load(Ordering::Relaxed) {
            break;
        }
        let n = started_sessions.fetch_add(1, Ordering::Relaxed);
        if options.max_sessions.is_some_and(|max| n >= max) {
            break;
        }
        let session_seed = plan::session_seed(options.seed, slot, index);
        let plan = plan::SessionPlan::generate(session_seed, plan_options);
        let log = options.log_dir.join(log_name(options.seed, slot, index));
        let outcome =
            session::run_session(&plan, &mut backend, &options.config, validator.clone(), log.clone(), stalls).await;
        out.sessions += 1;
        out.events += outcome.events;
        out.cancels_beside_tab += outcome.cancels_beside_tab;
        out.interrupted += outcome.interrupted;
        out.kill_resumes += outcome.kill_resumes;
        out.lost_messages += outcome.lost_messages;
        out.runs_after_kill += outcome.runs_after_kill;
        if outcome.hit_by_kill() {
            out.sessions_hit += 1;
            if outcome.runs_after_kill > 0 {
                out.sessions_recovered += 1;
            }
        }
        if out.latencies_us.len() < MOST_KEPT {
            out.latencies_us.extend(outcome.latencies_us.iter().copied());
        }
        for f in outcome.findings.iter().filter(|f| f.level != Level::Must) {
            if out.warnings.len() < MOST_KEPT {
                out.warnings.push(f.clone());
            }
        }
        if let Some(h) = &outcome.harness {
            out.harness.push(format!("slot {slot}, session {index}: {h}"));
        }
        if outcome.failed() {
            let failed = FailedSession {
                slot,
                index,
                session_seed,
                wire_log: log,
                findings: outcome.findings,
                notes: outcome.notes,
            };
            on_failure(&failed);
            out.failed.push(failed);
            if options.fail_fast {
                stop.store(true, Ordering::Relaxed);
            }
        } else if !options.keep_logs {
            remove_log(&log);
        }
    }
    if let Backend::Process(mut cluster, _) = backend {
        cluster.shutdown().await;
    }
    // A shared cluster is shut down by its owner once every slot is done.
    out
}

fn remove_log(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Most findings printed per failing session (the wire log holds everything).
const FINDINGS_SHOWN: usize = 6;

/// How a failing session is reported: the seed, the session, its findings and how to replay them.
pub fn failure_text(seed: u64, failed: &FailedSession) -> String {
    let mut s = format!(
        "FINDING seed {seed}, slot {}, session {} (plan seed {:#018x}); wire log {}\n",
        failed.slot,
        failed.index,
        failed.session_seed,
        failed.wire_log.display()
    );
    let must: Vec<&SoakFinding> = failed.findings.iter().filter(|f| f.level == Level::Must).collect();
    for f in must.iter().take(FINDINGS_SHOWN) {
        let requirement = f.requirement.as_deref().unwrap_or("no requirement");
        s.push_str(&format!("  FAIL {} {requirement} (conn {}): {}\n", f.check, f.conn, f.message));
        if let Some(frame) = &f.frame {
            s.push_str(&format!("       frame: {frame}\n"));
        }
    }
    if must.len() > FINDINGS_SHOWN {
        s.push_str(&format!("  … {} more finding(s)\n", must.len() - FINDINGS_SHOWN));
    }
    for note in failed.notes.iter().take(FINDINGS_SHOWN) {
        s.push_str(&format!("  note {note}\n"));
    }
    s.push_str(&format!("  replay: chatwire-conformance check-log {}\n", failed.wire_log.display()));
    s
}

/// The closing summary: sessions, events/s, latency, findings.
pub fn summary_text(report: &SoakReport) -> String {
    let latency = match (report.latency_ms(0.5), report.latency_ms(0.99)) {
        (Some(p50), Some(p99)) => {
            format!(
                "user message to run complete p50 {p50:.1} ms, p99 {p99:.1} ms ({} runs)",
                report.latencies_us.len()
            )
        }
        _ => "no run completed".to_owned(),
    };
    let mut s = format!(
        "soak (seed {}): {} session(s), {} event(s) in {:.1} s ({:.0} events/s); {latency}; {} cancel(s) beside a second tab\n",
        report.seed,
        report.sessions,
        report.events,
        report.elapsed.as_secs_f64(),
        report.events_per_sec(),
        report.cancels_beside_tab
    );
    for h in report.harness.iter().take(FINDINGS_SHOWN) {
        s.push_str(&format!("harness error: {h}\n"));
    }
    let mut warned = std::collections::BTreeMap::new();
    for w in &report.warnings {
        let key = format!("{} {}", w.check, w.requirement.as_deref().unwrap_or_default());
        warned.entry(key).or_insert((0usize, &w.message)).0 += 1;
    }
    if !warned.is_empty() {
        s.push_str(&format!("{} warning(s) (should-level, not failing):\n", report.warnings.len()));
        for (check, (n, example)) in &warned {
            s.push_str(&format!("  WARN {check} ×{n}, e.g.: {example}\n"));
        }
    }
    let findings = report.findings().count();
    s.push_str(&format!("{findings} finding(s) in {} failing session(s)\n", report.failed.len()));
    s
}
