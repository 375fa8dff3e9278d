//! Starting a session's work: its run driver and its deadlines. The core decides; the tasks run
//! what the wiring above it names ([`Tasks`](super::state::Tasks)), so nothing here knows what a
//! driver or a deadline does.

use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::Id;

use super::state::{Armed, DriverLaunch, Inner, Session};
use crate::util::now_ms;

/// Starts the run driver of the session unless it is already running: on a task of its own, or,
/// while recovery holds the session, when recovery is done (`driver::play_held_driver`).
pub(crate) fn start_driver(session: &Arc<Session>, g: &mut Inner) {
    // On a shared store only the replica holding the run lease drives (`CLUSTER-003`); the
    // holder starts its driver when it replays the change that gave the run a step to play.
    if g.driver_active || (session.shared.store.is_shared() && g.lease.is_none()) {
        return;
    }
    g.driver_active = true;
    match g.driver_launch {
        DriverLaunch::Spawn => {
            tokio::spawn((session.shared.tasks.drive)(session.clone(), g.driver_epoch));
        }
        DriverLaunch::HeldByRecovery { .. } => g.driver_launch = DriverLaunch::HeldByRecovery { requested: true },
    }
}

/// Arms the deadline of a pending call: at `deadline_ms` (ms since the epoch) the deadline's
/// task runs. An earlier deadline of the same call is disarmed.
pub(crate) fn arm(session: &Arc<Session>, g: &mut Inner, tool_call_id: Id, deadline_ms: i64) {
    if !session.shared.faults.timers.arms_deadlines() {
        return;
    }
    let fire = (session.shared.tasks.deadline)(session.clone(), tool_call_id.clone());
    let lag = session.shared.deadline_lag;
    let task = tokio::spawn(async move {
        let wait = u64::try_from(deadline_ms - now_ms()).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(wait) + lag).await;
        fire.await;
    });
    if let Some(old) = g.timers.insert(tool_call_id, Armed { deadline_ms, task: task.abort_handle() }) {
        old.task.abort();
    }
}

/// Disarms a call's deadline, if armed.
pub(crate) fn disarm(g: &mut Inner, tool_call_id: &Id) {
    if let Some(armed) = g.timers.remove(tool_call_id) {
        armed.task.abort();
    }
}

/// Disarms every deadline of the session.
pub(crate) fn disarm_all(g: &mut Inner) {
    for (_, armed) in g.timers.drain() {
        armed.task.abort();
    }
}
