//! Which replica each connection goes to, and the monitor of a run against replicas: what the
//! driver decides about replicas, with no I/O.
//!
//! Placement (`Scenario::replicas` documents it for scenario authors): a step that names a replica
//! puts every connection it opens there. Otherwise a new connection name goes to the next replica
//! round-robin (in the order the scenario opens names), and a reconnect under a name used before
//! goes to the replica after the one it was on; replicas the scenario killed or paused are passed
//! over while another can take the connection. With one replica every connection goes to it.

use std::collections::HashMap;
use std::sync::Arc;

use chatwire_schema::FrameValidator;

use crate::monitor::Monitor;

/// Why a scenario needing `needs` replicas does not apply to a backend of `has`.
pub fn needs_replicas(needs: usize, has: usize) -> String {
    format!(
        "the scenario needs {needs} replicas of the backend and the run has {has}: run --replicas {needs} --store postgres://… (with --exec or the bundled backend)"
    )
}

/// The monitor of a scenario against `replicas` instances: with more than one, the cluster checks
/// run too (`spec/cluster.md`).
pub(super) fn monitor(validator: Arc<FrameValidator>, replicas: usize) -> Monitor {
    let mut monitor = Monitor::new(validator);
    if replicas > 1 {
        monitor.cluster();
    }
    monitor
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
