//! The steps on replicas (`kill_replica`, `start_replica`, `pause_replica`, `continue_replica`)
//! and where the connections the driver opens go (see `placement.rs`).

use std::time::Duration;

use super::outcome::StepError;
use super::Driver;
use crate::backend::ReplicaState;
use crate::report::Verdict;
use crate::scenario::Step;

impl Driver<'_> {
    /// The replica a connection opened now under `conn` goes to (and is noted as being on).
    pub(super) fn place(&mut self, conn: &str) -> usize {
        let n = self.endpoint.replicas();
        let endpoint = &*self.endpoint;
        self.placement.choose(conn, self.step_replica, n, |k| endpoint.state(k) == ReplicaState::Up)
    }

    /// How the wire log names replica `k` after an opened connection: ` (replica r1)` on a cluster.
    pub(super) fn replica_note(&self, k: usize) -> String {
        if self.endpoint.replicas() > 1 {
            format!(" (replica r{k})")
        } else {
            String::new()
        }
    }

    /// Whether the replica `conn` is on was killed or paused by the scenario: a resume drops such a
    /// connection (no closing handshake can complete) instead of closing it.
    pub(super) fn on_stopped_replica(&self, conn: &str) -> bool {
        self.conns.get(conn).is_some_and(|c| self.endpoint.state(c.replica) != ReplicaState::Up)
    }

    /// Runs a step on one replica.
    pub(super) async fn replica_step(&mut self, step: &Step) -> Result<(), StepError> {
        let Some(k) = step.acts_on_replica().map(|k| k as usize) else {
            return Err(StepError::harness(format!("{} is not a step on a replica", step.kind())));
        };
        if k >= self.endpoint.replicas() {
            // Validation keeps replicas below the scenario's `replicas`, and the runner runs it only
            // with as many: reaching this is the runner's bug, not the backend's.
            return Err(StepError::new(
                Verdict::NotApplicable,
                format!("replica {k} does not exist: the backend has {}", self.endpoint.replicas()),
            ));
        }
        let line = match step {
            Step::KillReplica { down_ms: None, .. } => format!("-- kill -9 replica {k} --"),
            Step::KillReplica { down_ms: Some(ms), .. } => format!("-- kill -9 replica {k}, down {ms} ms --"),
            Step::StartReplica { .. } => format!("-- start replica {k} --"),
            Step::PauseReplica { .. } => format!("-- pause replica {k} (SIGSTOP) --"),
            Step::ContinueReplica { .. } => format!("-- continue replica {k} (SIGCONT) --"),
            other => return Err(StepError::harness(format!("{} is not a step on a replica", other.kind()))),
        };
        self.transcript(line.clone());
        self.log(line);
        match step {
            Step::KillReplica { down_ms, .. } => {
                // The connections on it die with it; what was in flight is lost, as for a restart.
                let gone: Vec<String> =
                    self.conns.iter().filter(|(_, c)| c.replica == k).map(|(n, _)| n.clone()).collect();
                for name in gone {
                    self.drop_conn(&name);
                }
                self.endpoint.kill_replica(k).await?;
                if let Some(ms) = down_ms {
                    tokio::time::sleep_until(
                        (tokio::time::Instant::now() + Duration::from_millis(*ms)).min(self.deadline),
                    )
                    .await;
                    self.endpoint.start_replica(k).await?;
                    self.restarted = true;
                }
                Ok(())
            }
            Step::StartReplica { .. } => {
                self.endpoint.start_replica(k).await?;
                self.restarted = true;
                Ok(())
            }
            Step::PauseReplica { .. } => self.endpoint.pause_replica(k).await,
            Step::ContinueReplica { .. } => self.endpoint.continue_replica(k),
            other => Err(StepError::harness(format!("{} is not a step on a replica", other.kind()))),
        }
    }
}
