//! `chatwire-conformance cluster-load`: the same seeded soak load against one replica and then
//! against a cluster of several whose replicas are killed under it, on one PostgreSQL server, in
//! one invocation; the report gives both sets of figures and the cluster's as ratios to the single
//! replica's.
//!
//! Each phase starts one cluster on a fresh database of `--store` ([`Cluster::start`]) and runs
//! `--sessions` slots against it at once until `--duration` passes, every slot's sessions drawn
//! from the same seeds in both phases (the plans are the same; the wire timing is not). All the
//! sessions share the cluster: new connections take the replicas in turn, a reconnect goes to
//! another replica than before. In the cluster phase a killer SIGKILLs one replica every
//! `--kill-every` (in turn), and starts it again `--down-ms` later; the sessions whose connections
//! died with it resume on another replica, and a run the killed replica drove is recovered by
//! another one (`CLUSTER-004`), each wait allowed the recovery bound plus a margin after a kill.
//! Every frame goes through the monitor with its cluster checks on (several replicas); the soak's
//! own checks accept a run that ends `failed`, reason `interrupted`, only when a replica was killed
//! while it ran. The single replica is never killed: it is the baseline.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::FrameValidator;
use tokio::time::Instant;

use super::backend::Backend;
use super::fleet::{kill_loop, Fleet, KillPlan};
use super::{run_slots, FailedSession, SoakConfig, SoakError, SoakOptions, SoakReport};
use crate::backend::{Cluster, ClusterSpec, StoreServer, StoreUrl, Target};

pub use super::load_report::{summary_text, LoadReport, PhaseReport, Ratios};

/// How long a wait may go on past a kill beyond the recovery bound (before `--timeout-scale`):
/// the time a recovered run needs to reach the client and the client to resume.
pub const RECOVERY_MARGIN: Duration = Duration::from_secs(5);

/// What `cluster-load` runs.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// The backend each replica runs (the bundled reference, or `--exec` with `{store}`).
    pub target: Target,
    /// The PostgreSQL server the replicas share (a fresh database per phase).
    pub store: StoreUrl,
    /// Replicas of the cluster phase (2 to [`crate::backend::MAX_REPLICAS`]).
    pub replicas: usize,
    /// Sessions at once, in each phase.
    pub sessions: usize,
    /// No session starts after this much time, in each phase.
    pub duration: Duration,
    /// The seed every plan derives from.
    pub seed: u64,
    /// A kill every this long in the cluster phase (zero: no kills).
    pub kill_every: Duration,
    /// How long a killed replica stays down.
    pub down: Duration,
    /// The bound within which another replica recovers a killed replica's runs (`CLUSTER-004`;
    /// the reference documents 10 s).
    pub recovery_bound: Duration,
    /// Run the one-replica phase first (the ratios need it).
    pub single: bool,
    /// Where failing sessions' wire logs go (a subdirectory per phase).
    pub log_dir: PathBuf,
    /// Keep every session's wire log.
    pub keep_logs: bool,
    /// Where each phase's replicas' stderr (its bounded tail, with the runner's notes of kills
    /// and starts) is written at the end of the phase: `replicas-N.stderr`.
    pub stderr_dir: Option<PathBuf>,
    /// Every session's settings.
    pub config: SoakConfig,
}

impl LoadOptions {
    /// Checks what does not go together before anything starts.
    pub fn check(&self) -> Result<(), String> {
        if self.replicas < 2 || self.replicas > crate::backend::MAX_REPLICAS {
            return Err(format!(
                "--replicas must be 2 to {} for a cluster load, not {}",
                crate::backend::MAX_REPLICAS,
                self.replicas
            ));
        }
        if self.sessions == 0 {
            return Err("--sessions must be at least 1".into());
        }
        if !self.kill_every.is_zero() && self.down >= self.kill_every {
            return Err(format!(
                "--down-ms {} must be shorter than --kill-every ({} ms): one replica down at a time",
                self.down.as_millis(),
                self.kill_every.as_millis()
            ));
        }
        if matches!(self.target, Target::Url(_)) {
            return Err(
                "cluster-load starts the replicas itself (to kill them): use --exec or the bundled backend".into()
            );
        }
        Ok(())
    }
}

/// Called as each failing session ends, with the replicas of its phase.
pub type OnLoadFailure = Arc<dyn Fn(usize, &FailedSession) + Send + Sync>;

/// Runs the phases (one replica, then the cluster with kills) and reports both.
pub async fn run_load(options: &LoadOptions, on_failure: OnLoadFailure) -> Result<LoadReport, SoakError> {
    options.check().map_err(SoakError::Options)?;
    std::fs::create_dir_all(&options.log_dir)
        .map_err(|e| SoakError::LogDir { path: options.log_dir.display().to_string(), message: e.to_string() })?;
    let validator = Arc::new(FrameValidator::new());
    let store = StoreServer::new(options.store.clone());
    let mut report = LoadReport {
        seed: options.seed,
        sessions: options.sessions,
        duration: options.duration,
        kill_every: options.kill_every,
        down: options.down,
        recovery_bound: options.recovery_bound,
        single: None,
        cluster: PhaseReport::default(),
        harness: Vec::new(),
    };
    let result = async {
        if options.single {
            report.single = Some(run_phase(options, 1, validator.clone(), &store, on_failure.clone()).await?);
        }
        report.cluster = run_phase(options, options.replicas, validator, &store, on_failure).await?;
        Ok::<_, SoakError>(())
    }
    .await;
    for e in store.drop_leftovers().await {
        report.harness.push(e.to_string());
    }
    result?;
    // Nothing failed: leave no empty directory behind.
    let _ = std::fs::remove_dir(&options.log_dir);
    Ok(report)
}

/// One phase: a cluster of `replicas` on a fresh database, the sessions against it, the killer
/// where there are several replicas.
async fn run_phase(
    options: &LoadOptions,
    replicas: usize,
    validator: Arc<FrameValidator>,
    store: &StoreServer,
    on_failure: OnLoadFailure,
) -> Result<PhaseReport, SoakError> {
    let label = format!("load-{replicas}");
    let spec = ClusterSpec { replicas, store: Some(options.store.clone()) };
    spec.check().map_err(SoakError::Options)?;
    let log_dir = options.log_dir.join(format!("replicas-{replicas}"));
    std::fs::create_dir_all(&log_dir)
        .map_err(|e| SoakError::LogDir { path: log_dir.display().to_string(), message: e.to_string() })?;
    let cluster = Cluster::start(&options.target, &label, &spec, Some(store), options.config.start_timeout).await?;
    let allowance = options.config.scaled(options.recovery_bound) + options.config.scaled(RECOVERY_MARGIN);
    let fleet = Arc::new(Fleet::new(cluster.urls(), allowance));
    let started = Instant::now();
    let end = started + options.duration;
    let every = if replicas > 1 { options.kill_every } else { Duration::ZERO };
    let stop = Arc::new(AtomicBool::new(false));
    let killer =
        tokio::spawn(kill_loop(cluster, fleet.clone(), KillPlan { every, down: options.down, end }, stop.clone()));
    let soak_options = SoakOptions {
        target: options.target.clone(),
        sessions: options.sessions,
        duration: options.duration,
        seed: options.seed,
        max_sessions: None,
        fail_fast: false,
        log_dir: log_dir.clone(),
        keep_logs: options.keep_logs,
        config: options.config.clone(),
        cluster: spec,
    };
    let backends = (0..options.sessions).map(|_| Backend::Shared(fleet.clone())).collect();
    let on_failure: Arc<dyn Fn(&FailedSession) + Send + Sync> = Arc::new(move |f| on_failure(replicas, f));
    let mut soak: SoakReport = run_slots(&soak_options, backends, validator, end, on_failure).await;
    soak.elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut kills = 0;
    match killer.await {
        Ok((mut cluster, log)) => {
            kills = log.kills;
            soak.harness.extend(log.errors);
            if let Some(dir) = &options.stderr_dir {
                let path = dir.join(format!("replicas-{replicas}.stderr"));
                let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, cluster.stderr()));
                if let Err(e) = written {
                    soak.harness.push(format!("cannot write {}: {e}", path.display()));
                }
            }
            cluster.shutdown().await;
        }
        // The cluster went with the task: dropping it killed every replica.
        Err(e) => soak.harness.push(format!("the killer ended abnormally: {e}")),
    }
    let _ = std::fs::remove_dir(&log_dir);
    Ok(PhaseReport { replicas, kills, soak })
}
