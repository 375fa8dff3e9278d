//! Which replica each connection goes to, and the steps on replicas (`kill_replica`,
//! `start_replica`, `pause_replica`, `continue_replica`).
//!
//! Placement (`Scenario::replicas` documents it for scenario authors): a step that names a replica
//! puts every connection it opens there. Otherwise a new connection name goes to the next replica
//! round-robin (in the order the scenario opens names), and a reconnect under a name used before
//! goes to the replica after the one it was on; replicas the scenario killed or paused are passed
//! over while another can take the connection. With one replica every connection goes to it.

use std::collections::HashMap;
use std::time::Duration;

use super::{Driver, StepError};
use crate::backend::ReplicaState;
use crate::report::Verdict;
use crate::scenario::Step;

/// Why a scenario needing `needs` replicas does not apply to a backend of `has`.
pub fn needs_replicas(needs: usize, has: usize) -> String {
    format!(
        "the scenario needs {needs} replicas of the backend and the run has {has}: run --replicas {needs} --store postgres://… (with --exec or the bundled backend)"
    )
}

/// Where connections went, for the placement of the next ones.
#[derive(Debug, Default)]
pub(super) struct Placement {
    /// The replica the next new connection name goes to, before `% n`.
    next: usize,
    /// The replica each connection name was last on.
    last: HashMap<String, usize>,
}

impl Placement {
    /// The replica connection `conn` goes to among `n`: `named` when the step names one, else as the
    /// module says; `usable` tells which replicas are running (not killed, not paused).
    pub(super) fn choose(
        &mut self,
        conn: &str,
        named: Option<usize>,
        n: usize,
        usable: impl Fn(usize) -> bool,
    ) -> usize {
        let k = match named {
            Some(k) => k,
            None if n <= 1 => 0,
            None => {
                let (start, avoid) = match self.last.get(conn) {
                    Some(&prev) => (prev + 1, Some(prev)),
                    None => {
                        self.next += 1;
                        (self.next - 1, None)
                    }
                };
                (0..n)
                    .map(|i| (start + i) % n)
                    .find(|&k| usable(k) && Some(k) != avoid)
                    .or_else(|| avoid.filter(|&k| usable(k)))
                    .unwrap_or(start % n)
            }
        };
        self.last.insert(conn.to_owned(), k);
        k
    }
}

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
            Step::PauseReplica { .. } => self.endpoint.pause_replica(k),
            Step::ContinueReplica { .. } => self.endpoint.continue_replica(k),
            other => Err(StepError::harness(format!("{} is not a step on a replica", other.kind()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: usize) -> bool {
        true
    }

    #[test]
    fn one_replica_takes_every_connection() {
        let mut p = Placement::default();
        for conn in ["main", "tab2", "main", "main", "tab3"] {
            assert_eq!(p.choose(conn, None, 1, all), 0);
        }
    }

    #[test]
    fn new_connections_go_round_robin_and_reconnects_move_on() {
        let mut p = Placement::default();
        assert_eq!(p.choose("main", None, 3, all), 0);
        assert_eq!(p.choose("tab2", None, 3, all), 1, "two tabs on two replicas");
        assert_eq!(p.choose("main", None, 3, all), 1, "a resume on another replica than before");
        assert_eq!(p.choose("main", None, 3, all), 2);
        assert_eq!(p.choose("main", None, 3, all), 0);
        assert_eq!(p.choose("tab3", None, 3, all), 2, "reconnects do not advance the round-robin");
        assert_eq!(p.choose("tab4", None, 3, all), 0);
        assert_eq!(p.choose("tab2", None, 3, all), 2);
        // The same scenario places the same way on every run.
        let mut again = Placement::default();
        let order: Vec<usize> =
            ["main", "tab2", "main", "main"].iter().map(|c| again.choose(c, None, 3, all)).collect();
        assert_eq!(order, vec![0, 1, 1, 2]);
        // Two replicas: a reconnect alternates.
        let mut two = Placement::default();
        let order: Vec<usize> = ["main", "main", "main", "tab"].iter().map(|c| two.choose(c, None, 2, all)).collect();
        assert_eq!(order, vec![0, 1, 0, 1]);
    }

    #[test]
    fn a_named_replica_wins_and_counts_as_where_the_connection_was() {
        let mut p = Placement::default();
        assert_eq!(p.choose("main", Some(2), 3, all), 2);
        assert_eq!(p.choose("main", None, 3, all), 0, "the reconnect moves on from the named replica");
        assert_eq!(p.choose("tab2", Some(0), 3, |k| k != 0), 0, "a named replica is taken even when down");
        assert_eq!(p.choose("tab2", None, 3, all), 1, "and is where its reconnect moves on from");
    }

    #[test]
    fn stopped_replicas_are_passed_over_while_another_can_take_the_connection() {
        let mut p = Placement::default();
        let up = |k: usize| k != 1;
        assert_eq!(p.choose("main", None, 3, up), 0);
        assert_eq!(p.choose("tab2", None, 3, up), 2, "replica 1 is down: the next one");
        assert_eq!(p.choose("main", None, 3, up), 2, "a reconnect skips the down replica");
        // Only the replica the connection was on is running: it takes the reconnect.
        assert_eq!(p.choose("main", None, 3, |k| k == 2), 2);
        // None running: the round-robin's pick (the connection attempt reports the failure).
        assert_eq!(p.choose("tab9", None, 3, |_| false), 2);
    }
}
