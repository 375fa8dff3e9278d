//! The cluster seam: fencing, optimistic commits, notices and the reaping of expired leases
//! (`spec/cluster.md`).

use super::list::{Fault, NoFault};

/// Faults of a replica on a shared store; the defaults are the correct server.
pub(crate) trait ClusterFaults: Send + Sync + std::fmt::Debug {
    /// Whether the run holder's commits are fenced by its lease token (`CLUSTER-003`).
    fn fences_commits(&self) -> bool {
        true
    }

    /// Whether a replica reads what others committed before it judges a request or commits,
    /// and commits only from the newest seq (`CLUSTER-002`).
    fn syncs_before_commit(&self) -> bool {
        true
    }

    /// Whether other replicas are told of a commit after which the session is `active` (its run
    /// or calls still open) or not (`CLUSTER-006`).
    fn notifies(&self, _active: bool) -> bool {
        true
    }

    /// Whether a replica claims leases nobody renewed and recovers their sessions
    /// (`CLUSTER-004`), rather than waiting for the replica that held them to restart.
    fn reaps_expired_leases(&self) -> bool {
        true
    }
}

impl ClusterFaults for NoFault {}

impl ClusterFaults for Fault {
    fn fences_commits(&self) -> bool {
        *self != Fault::OwnershipNotFenced
    }

    fn syncs_before_commit(&self) -> bool {
        *self != Fault::SeqPerReplica
    }

    fn notifies(&self, active: bool) -> bool {
        // The commit that ends the work is the one never announced: a tab elsewhere waits for
        // the run's end until it resumes.
        active || *self != Fault::NotificationLost
    }

    fn reaps_expired_leases(&self) -> bool {
        *self != Fault::RecoveryOnlyAtRestart
    }
}
