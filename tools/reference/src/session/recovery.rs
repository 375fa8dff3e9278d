//! What a crash left behind, finished at server start.

use std::sync::Arc;

use chatwire_schema::chat::tool_call_response::ToolCallResponse;
use chatwire_schema::script::ScriptOutcome;
use chatwire_schema::{Id, RunStatus, ToolCallStatus};

use super::driver::{end_run_failed, play_held_driver};
use super::expiry::expire;
use super::launch::{arm, start_driver};
use super::requests::execute_committed;
use super::state::{DriverLaunch, Session};

/// Finishes what a crash interrupted: executes committed responses exactly once, settles
/// interrupted tools, resumes a turn between steps, expires deadlines that passed while the server
/// was down and re-arms the others. Returns once every step that is due now has been played, so
/// the first resume sees all of it (RESUME-014); steps that wait continue on the driver's task.
pub(super) async fn recover(session: &Arc<Session>, pending: Vec<(String, String)>, timers: Vec<(String, i64)>) {
    let mut g = session.inner.lock().await;
    // A driver started below (by a response, an expiry or a turn between steps) is played by
    // `play_held_driver` once this lock is released, not on a task that a resume could overtake.
    g.driver_launch = DriverLaunch::HeldByRecovery { requested: false };
    for (tool_call_id, text) in pending {
        match serde_json::from_str::<ToolCallResponse>(&text) {
            Ok(response) => {
                if let Err(e) = execute_committed(session, &mut g, &response).await {
                    eprintln!(
                        "chatwire-reference: session {}: committed response {}: {}",
                        session.id, response.id, e.message
                    );
                }
            }
            Err(e) => {
                eprintln!("chatwire-reference: session {}: response for {tool_call_id} unreadable: {e}", session.id)
            }
        }
    }
    // A text or a reasoning stream (STATE-060: at most one is open).
    let streaming = (g.state.open_stream().map(|s| &s.invocation_id))
        .or_else(|| g.state.open_reasoning().map(|r| &r.invocation_id))
        .cloned();
    if let Some(invocation) = streaming {
        // STREAM-004: the stream ends with exactly the text committed so far, and its run fails
        // as interrupted, before any client is served (RESUME-014).
        if session.shared.faults.decide.ends_open_streams() {
            if let Err(e) = end_run_failed(session, &mut g, invocation, "interrupted", "interrupted").await {
                eprintln!("chatwire-reference: session {}: cannot end the interrupted stream: {e}", session.id);
            }
        }
    } else if g.state.run.status == RunStatus::Running && !g.driver_active {
        let invocation = g.state.run.invocation_id.clone();
        let interrupted: Vec<Id> = g
            .state
            .open_tool_calls(invocation.as_ref())
            .filter(|c| c.status == ToolCallStatus::Running)
            .map(|c| c.id.clone())
            .collect();
        let carry_on = interrupted.is_empty() || session.shared.faults.decide.continues_interrupted_turns();
        if carry_on && g.cursor.invocation_id == invocation {
            start_driver(session, &mut g);
        } else if let Some(invocation) = invocation {
            if let Err(e) = end_run_failed(session, &mut g, invocation, "interrupted", "interrupted").await {
                eprintln!("chatwire-reference: session {}: cannot settle interrupted run: {e}", session.id);
            }
        }
    }
    for (id, deadline) in timers {
        match Id::parse(id) {
            Ok(id) => {
                let expire_after_ms = match g.batch_call(&id).map(|c| &c.outcome) {
                    Some(ScriptOutcome::AwaitResponse { expire_after_ms, .. }) => *expire_after_ms,
                    _ => None,
                };
                let deadline = session.shared.faults.timers.reloaded_deadline(deadline, expire_after_ms);
                // A deadline that passed while the server was down expires here, before any
                // resume can be answered (RESUME-014), not on a timer that races the first resume.
                if session.shared.faults.timers.arms_deadlines() && deadline <= crate::util::now_ms() {
                    if let Err(e) = expire(session, &mut g, &id).await {
                        eprintln!("chatwire-reference: session {}: expiring {id}: {e}", session.id);
                    }
                } else {
                    arm(session, &mut g, id, deadline)
                }
            }
            Err(e) => eprintln!("chatwire-reference: session {}: stored timer id invalid: {e}", session.id),
        }
    }
    drop(g);
    play_held_driver(session).await;
}
