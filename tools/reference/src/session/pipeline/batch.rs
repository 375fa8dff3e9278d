//! The batch step of the commit pipeline: the run driver's consecutive changes that are due now
//! (a `say`, a tool call, a self-settling tool's progress and result, the run's end…) are staged
//! one after the other on the session's state and committed together, one commit and one fsync
//! for all of them; their frames go out once that commit is durable, as each change's would after
//! its own (nothing is sent before it is durable). A client sees the same frames, in the same
//! order, with the same seqs.
//!
//! A batch is played under the session lock and ends where the turn waits (a `wait` step, a
//! running tool, a streamed chunk's delay), where the slice ends (an awaited call, the run's end),
//! before any change that is not the driver's plain progress ([`joins`]: a plan, deadlines,
//! committed responses, a request or an answer), and after [`MAX_BATCH_CHANGES`] changes, so a
//! cancel or a resume waits for at most that many. A crash before the commit loses the whole
//! batch, none of which was sent: recovery continues from the cursor committed before it, as it
//! would from a crash before its first change. Only on an embedded store: on a shared one each
//! change is fenced by the run lease on its own (`spec/cluster.md`).

use std::sync::Arc;

use chatwire_schema::{RunStatus, ServerFrame};

use super::around::{before_commit, restore_state, wait_for_slowest};
use super::checkpoint;
use super::stage::stage;
use crate::protocol::EmitError;
use crate::session::attachment::deliver;
use crate::session::change::{Change, Unit};
use crate::session::state::{Batch, Inner, Session};
use crate::store::Commit;

/// The most changes one batch holds: bounds what a cancel or a resume waits for, and the frames
/// and rows held in memory before a commit.
pub(crate) const MAX_BATCH_CHANGES: usize = 32;

/// Starts batching the driver's changes, where the store allows it (an embedded store).
pub(crate) fn begin(session: &Session, g: &mut Inner) {
    if !session.shared.store.is_shared() {
        g.batch = Some(Batch::default());
    }
}

/// Whether the batch being played has room for another change.
pub(crate) fn has_room(g: &Inner) -> bool {
    g.batch.as_ref().is_some_and(|b| b.changes < MAX_BATCH_CHANGES)
}

/// Whether `change` can join a batch: the driver's plain progress, events and a cursor. A change
/// that sets a plan, arms or ends deadlines, commits responses, logs a request or answers one is
/// committed on its own, after the batch before it.
pub(crate) fn joins(change: &Change) -> bool {
    let turn_event = |f: &ServerFrame| matches!(f, ServerFrame::UserMessageAccepted(_) | ServerFrame::RetryAccepted(_));
    change.requests.is_empty()
        && change.plan.is_none()
        && change.add_timers.is_empty()
        && change.remove_timers.is_empty()
        && change.add_pending.is_empty()
        && change.remove_pending.is_empty()
        && change.units.iter().all(|u| !matches!(u, Unit::Answer(_)) && !u.frames().iter().any(turn_event))
}

/// Stages `change` into the batch: its events are applied to the state and its frames added to
/// each group's, the session's seq and cursor move on; nothing is committed or sent yet. If the
/// change cannot be staged, what was staged before it is committed and sent (as it would have
/// been on its own) and the state goes back to the log.
pub(crate) async fn stage_into(session: &Arc<Session>, g: &mut Inner, mut change: Change) -> Result<(), EmitError> {
    if g.partial.is_some() {
        return Err(EmitError::Partial);
    }
    let Some(mut batch) = g.batch.take() else { return Err(EmitError::NotAnEvent("no batch is being played")) };
    batch.before.get_or_insert_with(|| (g.next_seq, g.cursor.clone()));
    let mut groups = batch.groups.take();
    // Where each group stood, to take a failed change's frames back out.
    let marks: Vec<_> =
        groups.iter().flatten().map(|gr| (gr.wire.len(), gr.base, gr.resumed_mid_stream, gr.window.clone())).collect();
    let units = std::mem::take(&mut change.units);
    let staged = stage(session, g, &[], units, false, groups.as_mut());
    let staged = match staged {
        Ok(staged) => staged,
        Err(e) => {
            for (gr, (len, base, resumed, window)) in groups.iter_mut().flatten().zip(marks) {
                gr.wire.truncate(len);
                (gr.base, gr.resumed_mid_stream, gr.window) = (base, resumed, window);
            }
            batch.groups = groups;
            g.batch = Some(batch);
            let flushed = commit_batch(session, g, false).await;
            restore_state(session, g).await;
            flushed?;
            return Err(e);
        }
    };
    let mut groups = staged.groups;
    // Each change's frames go out as one unit, as after its own commit: a connection whose send
    // queue overflows gets whole changes only (`TRANSPORT-016`).
    groups.iter_mut().for_each(|gr| gr.unit_ends.push(gr.wire.len()));
    batch.groups = Some(groups);
    batch.log.extend(staged.log);
    batch.state_seqs.extend(staged.state_seqs);
    batch.streamed_state_seqs.extend(staged.streamed_state_seqs);
    batch.events += staged.recent.len() as u64;
    for event in staged.recent {
        // As `Recent::push` keeps them: of a run of deltas only the last one's patch (the
        // stream's whole text) is read, so a streamed batch holds the text once.
        if event.appends {
            if let Some(before) = batch.recent.last_mut().filter(|e| e.appends) {
                before.seen = Vec::new();
            }
        }
        batch.recent.push(event);
    }
    batch.changes += 1;
    batch.run_active = g.state.run.status == RunStatus::Running;
    g.next_seq = staged.next_seq;
    if let Some(cursor) = change.cursor {
        batch.cursor = Some(cursor.clone());
        g.cursor = cursor;
    }
    g.batch = Some(batch);
    Ok(())
}

/// Commits what the batch staged (one commit), then sends each group its frames; the batch is
/// left empty, ready for more. On error the session goes back to where it stood before the
/// batch: nothing of it was committed or sent.
pub(crate) async fn flush(session: &Arc<Session>, g: &mut Inner) -> Result<(), EmitError> {
    commit_batch(session, g, true).await
}

/// [`flush`]; `checkpoint`: the state in memory is the batch's, so a checkpoint may be taken of it.
async fn commit_batch(session: &Arc<Session>, g: &mut Inner, checkpoint: bool) -> Result<(), EmitError> {
    let Some(batch) = g.batch.as_mut() else { return Ok(()) };
    let batch = std::mem::take(batch);
    let Some(before) = batch.before.filter(|_| batch.changes > 0) else { return Ok(()) };
    let sh = &session.shared;
    let groups = batch.groups.unwrap_or_default();
    before_commit(session, g, &groups, &batch.log);
    let cursor = batch.cursor.as_ref().map(serde_json::to_string).transpose();
    let committed = match cursor {
        Ok(cursor) => {
            let rows = Commit {
                next_seq: g.next_seq,
                log: batch.log,
                cursor,
                run_active: Some(batch.run_active),
                state_seqs: batch.state_seqs,
                streamed_state_seqs: batch.streamed_state_seqs,
                ..Commit::default()
            };
            sh.store.commit(session.id.as_str(), rows).await.map_err(EmitError::from)
        }
        Err(e) => Err(EmitError::from(e)),
    };
    if let Err(e) = committed {
        (g.next_seq, g.cursor) = before;
        restore_state(session, g).await;
        return Err(e);
    }
    match checkpoint {
        true => checkpoint::adopt_events(session, g, batch.events),
        false => g.since_checkpoint += batch.events,
    }
    for event in batch.recent {
        g.recent.push(event);
    }
    if sh.faults.fanout.fan_out_waits_for_slowest() {
        wait_for_slowest(&g.attached).await;
    }
    deliver(&mut g.attached, groups);
    Ok(())
}
