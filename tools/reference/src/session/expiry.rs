//! Tool-call deadlines: armed when a call that awaits a response is announced.

use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::{Id, ServerFrame, ToolCallStatus};

use super::driver::{run_started, start_driver};
use super::emit::{emit, Change, Unit};
use super::replica::is_contention;
use super::{EmitError, Inner, Session};
use crate::util::{now_ms, rfc3339_now};

/// Arms the deadline of a pending call: at `deadline_ms` it expires (if still pending).
pub(super) fn schedule_expiry(session: &Arc<Session>, g: &mut Inner, tool_call_id: Id, deadline_ms: i64) {
    if !session.shared.hooks.arms_deadlines() {
        return;
    }
    let s = session.clone();
    let id = tool_call_id.clone();
    let task = tokio::spawn(async move {
        let wait = u64::try_from(deadline_ms - now_ms()).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let mut g = s.inner.lock().await;
        g.timers.remove(&id);
        let mut attempt = 0;
        loop {
            match expire(&s, &mut g, &id).await {
                Ok(()) => break,
                // Another replica committed first: expire on the newer state, while this
                // replica still drives the session (`CLUSTER-003`).
                Err(e) if is_contention(&e) && g.lease.is_some() && attempt < super::CONFLICT_RETRIES => {
                    attempt += 1;
                    super::replica::sync(&s, &mut g).await;
                }
                Err(e) => {
                    eprintln!("chatwire-reference: session {}: expiring {id}: {e}", s.id);
                    break;
                }
            }
        }
        drop(g);
        s.shared.evict_if_quiescent(&s).await;
    });
    if let Some(old) = g.timers.insert(tool_call_id, task.abort_handle()) {
        old.abort();
    }
}

/// A pending call's deadline passed: it expires, and a waiting turn goes on.
pub(super) async fn expire(session: &Arc<Session>, g: &mut Inner, tool_call_id: &Id) -> Result<(), EmitError> {
    let mut change = Change { remove_timers: vec![tool_call_id.clone()], ..Change::default() };
    let Some(call) = g.state.tool_call(tool_call_id).filter(|c| c.status == ToolCallStatus::Pending) else {
        return emit(session, g, change).await;
    };
    let invocation = call.invocation_id.clone();
    let opens_slice = !g.state.run.status.is_active();
    if opens_slice {
        change.units.push(Unit::Event(run_started(&invocation)));
    }
    change.units.push(Unit::Event(ServerFrame::ToolCallComplete(ToolCallComplete {
        seq: 0,
        tool_call_id: tool_call_id.clone(),
        status: CompletionStatus::Expired,
        result: None,
        error: Some("expired".into()),
        summary: None,
        in_reply_to: None,
        ts: rfc3339_now(),
    })));
    emit(session, g, change).await?;
    if opens_slice {
        start_driver(session, g);
    }
    Ok(())
}
