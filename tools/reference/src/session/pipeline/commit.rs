//! The one way state changes: decide the change's effects (stage, lease, checkpoint), commit them
//! in the store, then carry out the rest (the outbox fans the frames out, the timer wheel arms
//! and disarms the deadlines). On an error nothing is committed or sent, and the session's state
//! is what the log holds.
//!
//! The events are applied to the session's state in place: a copy of the whole state per change
//! would make the server's time per event grow with the state. Where a connection gets patches,
//! each state frame is the patch the reducer's change set gives (`STATE-036`), so nothing on this
//! path is proportional to the state; the frames are built once per group of connections that
//! see the same bytes (`attachment.rs`).

use std::sync::Arc;

use chatwire_schema::RunStatus;

use super::around::{before_commit, restore_state, wait_for_slowest};
use super::batch;
use super::checkpoint::{self, Due};
use super::lease;
use super::stage::{stage, Staged};
use crate::protocol::EmitError;
use crate::session::attachment::deliver;
use crate::session::change::{Change, ChangeRecord, Unit};
use crate::session::launch;
use crate::session::state::{Inner, Session};
use crate::store::{Commit, LeaseOp, StoreError};

/// What a change does besides its commit, carried out once the commit succeeded.
struct Effects {
    staged_next_seq: u64,
    lease: LeaseOp,
    checkpoint: Due,
    change: Change,
}

/// Commits `change` and carries out what it decides: the store commits, then the outbox sends,
/// the timer wheel arms. On error nothing is committed or sent. While the run driver plays a
/// batch (`batch.rs`) a change that joins it is only staged; one that does not is committed after
/// the batch before it.
pub(crate) async fn commit(session: &Arc<Session>, g: &mut Inner, mut change: Change) -> Result<(), EmitError> {
    if g.batch.is_some() {
        if batch::joins(&change) {
            return batch::stage_into(session, g, change).await;
        }
        batch::flush(session, g).await?;
    }
    let sh = &session.shared;
    // Every path that changes a session makes its state whole first (`partial.rs`); one that did
    // not is refused here rather than committing a change judged on a window.
    if g.partial.is_some() {
        return Err(EmitError::Partial);
    }
    // On a shared store the change is also committed as other replicas replay it (`replica.rs`).
    let record = match sh.store.is_shared() {
        true => Some(serde_json::to_string(&ChangeRecord::of(&change.units))?),
        false => None,
    };
    let base_seq = g.next_seq;
    let was_active = lease::is_active(&g.state);
    let due = checkpoint::due(session, g, &change.units);
    let units = std::mem::take(&mut change.units);
    let mut staged = match stage(session, g, &change.requests, units, false, None) {
        Ok(staged) => staged,
        Err(e) => {
            restore_state(session, g).await;
            return Err(e);
        }
    };
    before_commit(session, g, &staged.groups, &staged.log);
    let active = lease::is_active(&g.state);
    let lease = lease::lease_op(sh, g.lease, was_active, active);
    let rows = (|| {
        Ok::<_, serde_json::Error>(Commit {
            base_seq: lease::base_seq(sh, g.lease, base_seq),
            lease,
            notify: sh.faults.cluster.notifies(active),
            units: record,
            next_seq: staged.next_seq,
            log: std::mem::take(&mut staged.log),
            cursor: change.cursor.as_ref().map(serde_json::to_string).transpose()?,
            turn_plan: change.plan.as_ref().map(|plan| serde_json::to_string(&plan.as_deref())).transpose()?,
            run_active: Some(g.state.run.status == RunStatus::Running),
            add_timers: change.add_timers.iter().map(|(id, d)| (id.to_string(), *d)).collect(),
            remove_timers: change.remove_timers.iter().map(ToString::to_string).collect(),
            clear_timers: false,
            add_pending: change.add_pending.iter().map(|(id, f)| (id.to_string(), f.clone())).collect(),
            remove_pending: change.remove_pending.iter().map(ToString::to_string).collect(),
            state_seqs: std::mem::take(&mut staged.state_seqs),
            streamed_state_seqs: std::mem::take(&mut staged.streamed_state_seqs),
        })
    })();
    let committed = match rows {
        Ok(rows) => sh.store.commit(session.id.as_str(), rows).await.map_err(EmitError::from),
        Err(e) => Err(EmitError::from(e)),
    };
    let token = match committed {
        Ok(token) => token,
        Err(e) => {
            if matches!(e, EmitError::Store(StoreError::Fenced)) {
                lease::lost_lease(g);
            }
            restore_state(session, g).await;
            return Err(e);
        }
    };
    let effects = Effects { staged_next_seq: staged.next_seq, lease, checkpoint: due, change };
    carry_out(session, g, staged, effects, token).await;
    Ok(())
}

/// After the commit: the session adopts what it committed (lease, seq, checkpoint, recent
/// patches, cursor and plan), the outbox sends each group its frames, the timer wheel disarms and
/// arms the deadlines. Deadlines are armed by the replica that drives the session (`CLUSTER-003`).
async fn carry_out(session: &Arc<Session>, g: &mut Inner, staged: Staged, effects: Effects, token: Option<u64>) {
    let sh = &session.shared;
    let Effects { staged_next_seq, lease: lease_op, checkpoint: due, change } = effects;
    lease::adopt(g, lease_op, token);
    g.next_seq = staged_next_seq;
    checkpoint::adopt(session, g, due);
    for event in staged.recent {
        g.recent.push(event);
    }
    if let Some(cursor) = change.cursor {
        g.cursor = cursor;
    }
    if let Some(plan) = change.plan {
        g.plan = plan;
    }
    if sh.faults.fanout.fan_out_waits_for_slowest() {
        wait_for_slowest(&g.attached).await;
    }
    deliver(&mut g.attached, staged.groups);
    for id in &change.remove_timers {
        launch::disarm(g, id);
    }
    if !sh.store.is_shared() || g.lease.is_some() {
        for (id, deadline) in change.add_timers {
            launch::arm(session, g, id, deadline);
        }
    }
}

/// Replays a change another replica committed (`replica.rs`): its events are applied with the
/// seqs they were committed with, and this replica's connections get what the committer's would
/// have, answers excepted (they went to the requester, `ATTACH-005`). Returns the first seq the
/// change did not use.
pub(crate) async fn replay(session: &Arc<Session>, g: &mut Inner, units: Vec<Unit>) -> Result<u64, EmitError> {
    let staged = stage(session, g, &[], units, true, None)?;
    // A state frame the committing replica marked as seen only by streaming connections went to
    // one that does not stream here: recorded before it is sent (`STREAM-006`).
    let unstreamed: Vec<u64> =
        staged.state_seqs.iter().filter(|s| !staged.streamed_state_seqs.contains(s)).copied().collect();
    if !unstreamed.is_empty() {
        session.shared.store.mark_unstreamed(session.id.as_str(), &unstreamed).await?;
    }
    for event in staged.recent {
        g.recent.push(event);
    }
    deliver(&mut g.attached, staged.groups);
    Ok(staged.next_seq)
}
