//! The session's requests: `chat.user_message`, `chat.tool_call_response`, `chat.rewind`.

use std::collections::HashSet;
use std::sync::Arc;

use chatwire_schema::chat::rewind::Rewind;
use chatwire_schema::chat::rewind_complete::RewindComplete;
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::chat::tool_call_response::{ResponseOutcome, ToolCallResponse};
use chatwire_schema::chat::user_message::UserMessage;
use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
use chatwire_schema::older_minor::RESPONSE_SCHEMA_SINCE;
use chatwire_schema::response_schema::Violation;
use chatwire_schema::script::ScriptOutcome;
use chatwire_schema::{ClientFrame, ErrorCode, Id, ServerFrame, ToolCallStatus};

use super::change::{Change, Unit};
use super::driver::run_started;
use super::launch::start_driver;
use super::pipeline::{base_seq, commit};
use super::replica::sync;
use super::state::{Inner, Session};
use crate::agent::Cursor;
use crate::protocol::{EmitError, Negotiated, Refusal, CONFLICT_RETRIES};
use crate::store::{Commit, LogKind, LogRow};
use crate::util::{random_id, rfc3339_now};

/// `chat.user_message`: opens a turn (dismissing calls it supersedes) and starts the agent.
pub(crate) async fn user_message(session: &Arc<Session>, g: &mut Inner, msg: UserMessage) -> Result<(), Refusal> {
    // TURN-006: a duplicate is told so even during a run; run_in_progress would claim it was not accepted.
    if g.history.accepted_messages.contains(&msg.id) {
        return Err(Refusal::new(ErrorCode::DuplicateMessage, format!("message {} was already accepted", msg.id)));
    }
    if g.state.run.status.is_active() {
        return Err(Refusal::new(ErrorCode::RunInProgress, "a run is in progress; wait for run_complete"));
    }
    let ts = rfc3339_now();
    let mut change = Change::default();
    for call in g.state.open_tool_calls(None) {
        change.remove_timers.push(call.id.clone());
        change.units.push(Unit::Event(ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: call.id.clone(),
            initiated_by: Initiator::Server,
            reason: Some("superseded".into()),
            in_reply_to: None,
            ts: ts.clone(),
        })));
    }
    let invocation = random_id("inv", 8);
    let turn_index = g.cursor.turns_accepted;
    change.units.push(Unit::Event(ServerFrame::UserMessageAccepted(UserMessageAccepted {
        seq: 0,
        in_reply_to: msg.id.clone(),
        invocation_id: invocation.clone(),
        item_id: random_id("um", 8),
        text: msg.text.clone(),
        ts,
    })));
    change.units.push(Unit::Event(run_started(&invocation)));
    let plan = g.agent.plan_turn_shared(g.cursor.turns_accepted, &msg.text);
    change.cursor = Some(Cursor {
        turns_accepted: g.cursor.turns_accepted + 1,
        invocation_id: Some(invocation.clone()),
        step: 0,
        batch: None,
        stream: None,
        usage: None,
        outer: Vec::new(),
    });
    change.plan = Some(plan);
    let id = msg.id.clone();
    change.requests.push(ClientFrame::UserMessage(msg));
    commit(session, g, change).await?;
    g.history.accepted_messages.insert(id);
    g.history.turns.insert(invocation, turn_index);
    start_driver(session, g);
    Ok(())
}

/// `chat.tool_call_response`: validated, committed, then executed.
pub(crate) async fn tool_call_response(
    session: &Arc<Session>,
    g: &mut Inner,
    negotiated: &Negotiated,
    response: ToolCallResponse,
) -> Result<(), Refusal> {
    let Some(call) = g.state.tool_call(&response.tool_call_id) else {
        return Err(Refusal::new(
            ErrorCode::UnknownToolCall,
            format!("no tool call {} in this session", response.tool_call_id),
        ));
    };
    if call.status.is_terminal() {
        return Err(Refusal::new(
            ErrorCode::ToolCallSettled,
            format!("tool call {} already settled as {:?}", call.id, call.status).to_lowercase(),
        ));
    }
    if call.status != ToolCallStatus::Pending || !call.awaiting_response {
        return Err(Refusal::new(
            ErrorCode::ToolCallNotAwaiting,
            format!("tool call {} does not await a response", call.id),
        ));
    }
    if let (Some(schema), ResponseOutcome::Submit { value }) = (&call.response_schema, &response.outcome) {
        if session.shared.faults.decide.checks_response_schema() {
            schema.check(value).map_err(|v| response_refusal(&v, negotiated))?;
        }
    }
    if let Some(earlier) = committed_elsewhere(session, &response).await? {
        // A response to this call is committed already (by a replica that stopped before it
        // executed it): that one is executed, exactly once (`RESUME-012`). A client that sent
        // it again after its connection was cut gets its settlement; any other response comes
        // after the call settled.
        execute_committed(session, g, &earlier).await?;
        if earlier.id == response.id {
            return Ok(());
        }
        return Err(Refusal::new(
            ErrorCode::ToolCallSettled,
            format!("tool call {} already settled by response {}", response.tool_call_id, earlier.id),
        ));
    }
    let frame = serde_json::to_string(&response).map_err(EmitError::from)?;
    let commit = Commit {
        next_seq: g.next_seq,
        base_seq: base_seq(&session.shared, g.lease, g.next_seq),
        log: vec![LogRow {
            seq: None,
            kind: LogKind::Request,
            frame_type: "chat.tool_call_response".into(),
            frame: serde_json::to_string(&ClientFrame::ToolCallResponse(response.clone())).map_err(EmitError::from)?,
        }],
        add_pending: vec![(response.tool_call_id.to_string(), frame)],
        ..Commit::default()
    };
    session.shared.store.commit(session.id.as_str(), commit).await.map_err(EmitError::from)?;
    execute_committed(session, g, &response).await
}

/// A response to the call that another replica committed and has not executed, on a shared store.
async fn committed_elsewhere(
    session: &Arc<Session>,
    response: &ToolCallResponse,
) -> Result<Option<ToolCallResponse>, Refusal> {
    let store = &session.shared.store;
    if !store.is_shared() {
        return Ok(None);
    }
    let stored =
        store.pending_response(session.id.as_str(), response.tool_call_id.as_str()).await.map_err(EmitError::from)?;
    match stored.map(|text| serde_json::from_str::<ToolCallResponse>(&text)) {
        None => Ok(None),
        Some(Ok(earlier)) => Ok(Some(earlier)),
        Some(Err(e)) => Err(EmitError::from(e).into()),
    }
}

/// Executes a committed response exactly once: where another replica committed first, again on
/// the newer state, never refused.
pub(super) async fn execute_committed(
    session: &Arc<Session>,
    g: &mut Inner,
    response: &ToolCallResponse,
) -> Result<(), Refusal> {
    let mut attempt = 0;
    loop {
        match execute_response(session, g, response).await {
            Err(r) if r.contention && attempt < CONFLICT_RETRIES => {
                attempt += 1;
                sync(session, g).await;
            }
            Err(r) if r.code == ErrorCode::InternalError => {
                // The response stays committed: sent again, it is the one executed.
                return Err(Refusal::new(
                    ErrorCode::InternalError,
                    "the response is recorded but could not be executed yet; send it again",
                ));
            }
            result => return result,
        }
    }
}

/// The refusal of a value that breaks its call's `response_schema` (`TOOL-023`): `response_invalid`
/// where 1.2 was negotiated, else `invalid_frame`, the 1.0 code for a frame the server cannot
/// take (`TOOL-025`); both name the failing JSON Pointer within the value.
fn response_refusal(violation: &Violation, negotiated: &Negotiated) -> Refusal {
    let code = match negotiated.version >= RESPONSE_SCHEMA_SINCE {
        true => ErrorCode::ResponseInvalid,
        false => ErrorCode::InvalidFrame,
    };
    let pointer = match violation.pointer.as_str() {
        "" => "the value".to_owned(),
        p => format!("value{p}"),
    };
    Refusal::new(
        code,
        format!("{pointer} breaks the call's response_schema ({}): {}", violation.keyword, violation.message),
    )
}

/// Executes a committed response: settles the call (opening a run slice if the turn waited) and
/// lets the driver continue the turn.
pub(super) async fn execute_response(
    session: &Arc<Session>,
    g: &mut Inner,
    response: &ToolCallResponse,
) -> Result<(), Refusal> {
    let mut change = Change { remove_pending: vec![response.tool_call_id.clone()], ..Change::default() };
    let Some(call) = g.state.tool_call(&response.tool_call_id).filter(|c| c.status == ToolCallStatus::Pending) else {
        // Settled meanwhile (e.g. expired before the crash): the response has nothing left to do.
        commit(session, g, change).await?;
        return Ok(());
    };
    let invocation = call.invocation_id.clone();
    let ts = rfc3339_now();
    let opens_slice = !g.state.run.status.is_active();
    if opens_slice {
        change.units.push(Unit::Event(run_started(&invocation)));
    }
    let summary = match g.batch_call(&response.tool_call_id).map(|c| &c.outcome) {
        Some(ScriptOutcome::AwaitResponse { summary, .. }) => summary.clone(),
        _ => None,
    };
    let settlement = match &response.outcome {
        ResponseOutcome::Submit { value } => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: response.tool_call_id.clone(),
            status: CompletionStatus::Completed,
            result: Some(value.clone()),
            error: None,
            summary,
            in_reply_to: Some(response.id.clone()),
            ts,
        }),
        ResponseOutcome::Dismiss { reason } => ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: response.tool_call_id.clone(),
            initiated_by: Initiator::Client,
            reason: reason.clone(),
            in_reply_to: Some(response.id.clone()),
            ts,
        }),
    };
    change.units.push(Unit::Event(settlement));
    change.remove_timers.push(response.tool_call_id.clone());
    commit(session, g, change).await?;
    if opens_slice {
        start_driver(session, g);
    }
    Ok(())
}

/// `chat.rewind`: cuts the effective state before an invocation, durably.
pub(crate) async fn rewind(session: &Arc<Session>, g: &mut Inner, rewind: Rewind) -> Result<(), Refusal> {
    if g.state.run.status.is_active() {
        return Err(Refusal::new(ErrorCode::RunInProgress, "a run is in progress; wait for run_complete"));
    }
    let invocations = g.state.invocations();
    let Some(cut) = invocations.iter().position(|i| *i == &rewind.before_invocation_id) else {
        return Err(Refusal::new(
            ErrorCode::UnknownInvocation,
            format!("no invocation {} in the effective state", rewind.before_invocation_id),
        ));
    };
    let unit = Unit::Event(ServerFrame::RewindComplete(RewindComplete {
        seq: 0,
        in_reply_to: rewind.id.clone(),
        before_invocation_id: invocations[cut].clone(),
        removed_invocation_ids: invocations[cut..].iter().map(|i| (*i).clone()).collect(),
        ts: rfc3339_now(),
    }));
    let removed: HashSet<&Id> = invocations[cut..].iter().copied().collect();
    let mut change = Change {
        remove_timers: g
            .state
            .open_tool_calls(None)
            .filter(|c| removed.contains(&c.invocation_id))
            .map(|c| c.id.clone())
            .collect(),
        ..Change::default()
    };
    change.units.push(unit);
    // Script turns are not rewound: the next message runs the next turn.
    change.cursor = Some(g.cursor.ended());
    change.requests.push(ClientFrame::Rewind(rewind));
    commit(session, g, change).await?;
    Ok(())
}
