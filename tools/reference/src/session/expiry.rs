//! Tool-call deadlines: what happens when one passes (the timer wheel, `launch.rs`, arms them).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::{Id, ServerFrame, ToolCallStatus};

use super::change::{Change, Unit};
use super::driver::run_started;
use super::launch::start_driver;
use super::pipeline::commit;
use super::replica::sync;
use super::state::{Inner, Session};
use crate::protocol::{EmitError, CONFLICT_RETRIES};
use crate::util::{now_ms, rfc3339_now};

/// A passed deadline as the core's tasks name it (`state::Tasks`): the call expires (if still
/// pending), on the newer state where another replica committed first while this replica still
/// drives the session (`CLUSTER-003`); then the session may leave memory.
pub(crate) fn deadline_task(session: Arc<Session>, id: Id) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let mut g = session.inner.lock().await;
        g.timers.remove(&id);
        let mut attempt = 0;
        loop {
            match expire(&session, &mut g, &id).await {
                Ok(()) => break,
                Err(e) if e.is_contention() && g.lease.is_some() && attempt < CONFLICT_RETRIES => {
                    attempt += 1;
                    sync(&session, &mut g).await;
                }
                Err(e) => {
                    eprintln!("chatwire-reference: session {}: expiring {id}: {e}", session.id);
                    break;
                }
            }
        }
        drop(g);
        session.shared.evict_if_quiescent(&session).await;
    })
}

/// Expires the calls whose deadline has passed and whose task has not run yet, before a request
/// or a resume is served: a deadline's task can run late on a busy server, and a call must not
/// look pending to a resume, or take a response, after its deadline (`TOOL-018`). On a shared
/// store only the lease holder expires (`CLUSTER-003`); elsewhere the task does, as it would.
pub(super) async fn expire_due(session: &Arc<Session>, g: &mut Inner) -> Result<(), EmitError> {
    if session.shared.store.is_shared() && g.lease.is_none() {
        return Ok(());
    }
    let now = now_ms();
    let mut due: Vec<(i64, Id)> = g
        .timers
        .iter()
        .filter(|(_, armed)| armed.deadline_ms <= now)
        .map(|(id, a)| (a.deadline_ms, id.clone()))
        .collect();
    // In deadline order, as their tasks would have run.
    due.sort();
    for (_, id) in due {
        expire(session, g, &id).await?;
    }
    Ok(())
}

/// A pending call's deadline passed: it expires, and a waiting turn goes on.
pub(super) async fn expire(session: &Arc<Session>, g: &mut Inner, tool_call_id: &Id) -> Result<(), EmitError> {
    let mut change = Change { remove_timers: vec![tool_call_id.clone()], ..Change::default() };
    let Some(call) = g.state.tool_call(tool_call_id).filter(|c| c.status == ToolCallStatus::Pending) else {
        return commit(session, g, change).await;
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
    commit(session, g, change).await?;
    if opens_slice {
        start_driver(session, g);
    }
    Ok(())
}
