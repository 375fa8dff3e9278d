//! The lease step of the commit pipeline (`spec/cluster.md`): what a change does to the session's
//! run lease, the base its commit names, and the lease after it.

use chatwire_schema::UiState;

use crate::session::state::{Inner, Shared};
use crate::store::LeaseOp;

/// Whether a session has work a replica must drive: a run in progress, or calls still open (a
/// pending call's deadline, a response that opens the next slice).
pub(crate) fn is_active(state: &UiState) -> bool {
    state.run.status.is_active() || state.open_tool_calls(None).next().is_some()
}

/// The base a commit from `seq` names: none under the planted fault `seq-per-replica`, nor
/// under `ownership-not-fenced` where this replica holds (or believes it holds) the run.
pub(crate) fn base_seq(shared: &Shared, lease: Option<u64>, seq: u64) -> Option<u64> {
    let unfenced = lease.is_some() && !shared.faults.cluster.fences_commits();
    (shared.faults.cluster.syncs_before_commit() && !unfenced).then_some(seq)
}

/// What a change from `was_active` to `active` does to the run lease, for a replica holding
/// `held` (`CLUSTER-003`): the change that starts work takes the lease, the one that ends it
/// releases it, every other change of the holder is fenced by its token.
pub(crate) fn lease_op(shared: &Shared, held: Option<u64>, was_active: bool, active: bool) -> LeaseOp {
    let fenced = shared.faults.cluster.fences_commits();
    match (was_active, active, held) {
        (false, true, None) => LeaseOp::Acquire,
        (_, false, held) if was_active => LeaseOp::Release(held.filter(|_| fenced)),
        (_, _, Some(token)) if fenced => LeaseOp::Hold(token),
        _ => LeaseOp::Keep,
    }
}

/// The lease after a committed change.
pub(crate) fn adopt(g: &mut Inner, op: LeaseOp, token: Option<u64>) {
    match op {
        LeaseOp::Acquire => g.lease = token,
        LeaseOp::Release(_) => g.lease = None,
        LeaseOp::Hold(_) | LeaseOp::Keep => {}
    }
}

/// The session's lease is gone (claimed by another replica after it expired, or released by a
/// change another replica committed): this replica stops driving and disarms its deadlines.
pub(crate) fn lost_lease(g: &mut Inner) {
    g.lease = None;
    if g.driver_active {
        g.stop_driver();
    }
    crate::session::launch::disarm_all(g);
}
