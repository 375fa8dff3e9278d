//! `chat.cancel` (`spec/cancel.md`): the Stop button. One commit answers the cancel and closes the
//! run: the open stream ends with the text streamed so far, every open call of the turn is
//! dismissed, and the run completes `cancelled`; the run driver stops at its next look.

use std::sync::Arc;

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::assistant_message_delta::AssistantMessageDelta;
use chatwire_schema::chat::cancel::Cancel;
use chatwire_schema::chat::cancel_accepted::CancelAccepted;
use chatwire_schema::chat::reasoning::Reasoning;
use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::error_order::first_failing;
use chatwire_schema::reducer::{cancel_refusals, CancelScope};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ClientFrame, ErrorCode, ServerFrame};

use super::change::{Change, Unit};
use super::driver::{run_started, slice_end};
use super::nested::{close_transcripts, is_top_level, Closing};
use super::outside::send_outside_state;
use super::pipeline::commit;
use super::state::{Inner, Session};
use crate::protocol::{Negotiated, Refusal};
use crate::util::rfc3339_now;

/// The `reason` of the dismissals and of the `chat.run_complete` a cancel commits (`CANCEL-003`).
pub(crate) const CANCELLED: &str = "cancelled";

/// `chat.cancel`: refused in the order of `CANCEL-006`, else `chat.cancel_accepted` and the events
/// that close the run, in one commit (`CANCEL-002`..`CANCEL-005`, `CANCEL-008`).
pub(crate) async fn cancel(
    session: &Arc<Session>,
    g: &mut Inner,
    negotiated: &Negotiated,
    cancel: Cancel,
) -> Result<(), Refusal> {
    let decide = &session.shared.faults.decide;
    let offers = session.shared.offers(negotiated.version, &Capability::Cancel);
    let invocation = decide.cancel_target(&cancel.invocation_id, &g.state);
    let failing = cancel_refusals(&g.state, &invocation, offers);
    if let Some(code) = first_failing("chat.cancel", &failing) {
        return Err(refusal(code, &cancel));
    }
    let ts = rfc3339_now();
    let mut change = Change::default();
    change.units.push(Unit::Answer(ServerFrame::CancelAccepted(CancelAccepted {
        seq: 0,
        in_reply_to: cancel.id.clone(),
        invocation_id: invocation.clone(),
        ts: ts.clone(),
    })));
    // Fault cancel-leaves-subagent-running: the sub-agents stream on after their transcripts closed.
    let streaming_on = match decide.subagent_runs_after_cancel() {
        true => streams_going_on(&g.state, &invocation),
        false => Vec::new(),
    };
    if decide.cancel_closes_run() {
        let scope = CancelScope::of(&g.state, &invocation);
        if scope.reopens {
            change.units.push(Unit::Event(run_started(&invocation)));
        }
        // Running transcripts close first, the deepest first (SUBAGENT-010); their hosts are then
        // open calls of the top level, dismissed with the others.
        let (closing, timers) = close_transcripts(&g.state, &invocation, Closing::Cancelled { reason: CANCELLED });
        change.units.extend(closing.into_iter().map(Unit::Event));
        change.remove_timers.extend(timers.iter().cloned());
        change.remove_pending.extend(timers);
        if let Some((item_id, streamed)) = scope.stream {
            // The open stream ends with the text so far (CANCEL-003), as the kind it is.
            let text = decide.cancelled_stream_text(streamed);
            let invocation_id = invocation.clone();
            let end = match scope.stream_is_reasoning {
                true => ServerFrame::Reasoning(Reasoning {
                    parent_call_id: None,
                    seq: 0,
                    invocation_id,
                    item_id,
                    text,
                    redacted: false,
                    encrypted: None,
                    ts: ts.clone(),
                }),
                false => ServerFrame::AssistantMessage(AssistantMessage {
                    parent_call_id: None,
                    seq: 0,
                    invocation_id,
                    item_id,
                    markdown: text,
                    ts: ts.clone(),
                }),
            };
            change.units.push(Unit::Event(end));
        }
        for call in scope.open_calls.into_iter().filter(|id| is_top_level(&g.state, id)) {
            change.remove_timers.push(call.clone());
            change.remove_pending.push(call.clone());
            change.units.push(Unit::Event(ServerFrame::ToolCallDismiss(ToolCallDismiss {
                seq: 0,
                tool_call_id: call,
                initiated_by: Initiator::Client,
                reason: Some(CANCELLED.into()),
                in_reply_to: None,
                ts: ts.clone(),
            })));
        }
        // The slice ends here: it carries what its usage steps added so far (SCRIPT-028).
        let end = slice_end(&g.cursor, &invocation, RunCompleteStatus::Cancelled, CANCELLED, None);
        change.units.push(Unit::Event(end));
        change.cursor = Some(g.cursor.ended());
        change.plan = Some(None);
    }
    change.requests.push(ClientFrame::Cancel(cancel));
    commit(session, g, change).await?;
    if decide.cancel_closes_run() {
        g.stop_driver();
    }
    let conns: Vec<_> = g.attached.iter().map(|a| a.conn.clone()).collect();
    for frame in streaming_on {
        for conn in &conns {
            send_outside_state(session, g, conn, frame.clone()).await;
        }
    }
    Ok(())
}

/// One more chunk of each open text stream of `invocation`'s running transcripts, as a sub-agent
/// that was never stopped would send it (fault `cancel-leaves-subagent-running`).
fn streams_going_on(state: &chatwire_schema::UiState, invocation: &chatwire_schema::Id) -> Vec<ServerFrame> {
    let open = state.open_transcripts(invocation).into_iter();
    open.filter_map(|t| match t.stream {
        Some((item_id, _, false)) => Some(ServerFrame::AssistantMessageDelta(AssistantMessageDelta {
            seq: 0,
            invocation_id: invocation.clone(),
            parent_call_id: Some(t.host),
            item_id,
            delta: "and on ".into(),
            ts: rfc3339_now(),
        })),
        _ => None,
    })
    .collect()
}

/// The refusal for `code`, with its one sentence.
fn refusal(code: ErrorCode, cancel: &Cancel) -> Refusal {
    let invocation = &cancel.invocation_id;
    let message = match code {
        ErrorCode::CapabilityNotOffered => "this server does not offer cancel".to_owned(),
        ErrorCode::UnknownInvocation => format!("no invocation {invocation} in the effective state"),
        ErrorCode::RunNotActive => format!("invocation {invocation} has no run in progress"),
        other => format!("cancel refused: {other}"),
    };
    Refusal::new(code, message)
}
