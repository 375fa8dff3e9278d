//! Where the backend is: one URL, the replicas of a shared cluster, or a cluster of the scenario's
//! own that the steps restart, kill, start, pause and continue.

use std::time::Duration;

use super::outcome::StepError;
use crate::backend::{Cluster, ReplicaState, StartError};
use crate::report::Verdict;

/// Where the backend is, for one scenario.
#[derive(Debug)]
pub enum Endpoint {
    /// A backend the runner cannot restart (a URL, or the shared spawned instance).
    Url(String),
    /// The replicas of a shared cluster the runner cannot restart (the shared spawned cluster of a
    /// run with `--replicas N`), by their URLs, in order.
    Replicas(Vec<String>),
    /// A backend (one or more replicas) the runner started for this scenario alone; `restart` and
    /// the steps on replicas work.
    Cluster(Box<Cluster>),
}

/// Why a step on processes cannot run against `--url`.
const NEEDS_PROCESSES: &str = "needs a backend the runner starts (--exec or the bundled one), not --url";

impl Endpoint {
    /// How many replicas connections can go to.
    pub fn replicas(&self) -> usize {
        match self {
            Endpoint::Url(_) => 1,
            Endpoint::Replicas(urls) => urls.len().max(1),
            Endpoint::Cluster(c) => c.len().max(1),
        }
    }

    /// Whether the runner controls the processes (restarts, steps on replicas).
    pub fn controls_processes(&self) -> bool {
        matches!(self, Endpoint::Cluster(_))
    }

    /// The URL of replica `k` (of the first where there is no such replica).
    pub(super) fn url(&self, k: usize) -> String {
        match self {
            Endpoint::Url(u) => u.clone(),
            Endpoint::Replicas(urls) => urls.get(k).or(urls.first()).cloned().unwrap_or_default(),
            Endpoint::Cluster(c) => c.url(k).or(c.url(0)).unwrap_or_default().to_owned(),
        }
    }

    /// What the runner did to replica `k` last (always up where it controls nothing).
    pub(super) fn state(&self, k: usize) -> ReplicaState {
        match self {
            Endpoint::Url(_) | Endpoint::Replicas(_) => ReplicaState::Up,
            Endpoint::Cluster(c) => c.state(k),
        }
    }

    fn cluster(&mut self, what: &str) -> Result<&mut Cluster, StepError> {
        match self {
            Endpoint::Url(_) | Endpoint::Replicas(_) => {
                Err(StepError::new(Verdict::NotApplicable, format!("{what} {NEEDS_PROCESSES}")))
            }
            Endpoint::Cluster(c) => Ok(c),
        }
    }

    /// Asks the backend to shut down in an orderly way (SIGTERM to every replica).
    pub(super) fn request_shutdown(&mut self) -> Result<(), StepError> {
        self.cluster("an orderly restart")?.request_shutdown();
        Ok(())
    }

    /// After [`Endpoint::request_shutdown`]: waits up to `grace` for the exit (killing the backend
    /// otherwise) and starts it again. True when it exited by itself.
    pub(super) async fn restart_after_shutdown(&mut self, grace: Duration) -> Result<bool, StepError> {
        let cluster = self.cluster("an orderly restart")?;
        cluster.restart_after_shutdown(grace).await.map_err(|e| restart_error("its orderly shutdown", &e))
    }

    /// Kills the backend (every replica), keeps it down for `down`, and starts it again.
    pub(super) async fn restart(&mut self, down: Duration) -> Result<(), StepError> {
        self.cluster("restart")?.restart(down).await.map_err(|e| restart_error("kill -9", &e))
    }

    /// Kills replica `k` with SIGKILL.
    pub(super) async fn kill_replica(&mut self, k: usize) -> Result<(), StepError> {
        self.cluster("kill_replica")?.kill_replica(k).await.map_err(|e| StepError::harness(e.to_string()))
    }

    /// Starts replica `k` again.
    pub(super) async fn start_replica(&mut self, k: usize) -> Result<(), StepError> {
        let cluster = self.cluster("start_replica")?;
        cluster.start_replica(k).await.map_err(|e| restart_error(&format!("replica {k} was killed"), &e))
    }

    /// Stops replica `k` with SIGSTOP.
    pub(super) async fn pause_replica(&mut self, k: usize) -> Result<(), StepError> {
        self.cluster("pause_replica")?.pause_replica(k).await.map_err(|e| StepError::harness(e.to_string()))
    }

    /// Continues replica `k` with SIGCONT.
    pub(super) fn continue_replica(&mut self, k: usize) -> Result<(), StepError> {
        self.cluster("continue_replica")?.continue_replica(k).map_err(|e| StepError::harness(e.to_string()))
    }
}

/// Why a backend did not come back after `after`. A backend that exits when started again on its own
/// storage is broken: it cannot accept the resume of its sessions (RESUME-010). One that is merely
/// slow, or cannot be spawned, is a backend-start (harness) problem, not the scenario's failure.
fn restart_error(after: &str, e: &StartError) -> StepError {
    match e {
        StartError::Exited { .. } => {
            StepError::fail(format!("the backend crashed when started again after {after}: {e}"))
                .with_requirement("RESUME-010")
        }
        _ => StepError::harness(format!("backend start: the backend did not come back after {after}: {e}")),
    }
}
