//! One test per reducer rule (`STATE-010`..`STATE-019`) and per refusal (`STATE-020`..`STATE-033`).
//!
//! Happy paths assert the exact resulting `UiState`; refusals assert the exact error and that the
//! state after the refused event equals the state before it (atomicity), through both
//! [`UiState::apply`] and the pure [`reduce`].

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::rewind_complete::RewindComplete;
use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
use chatwire_schema::chat::run_started::RunStarted;
use chatwire_schema::chat::tool_call::{DisplayMode, InteractionType, ToolCall};
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::chat::tool_output::{ApprovalDecision, ToolOutput};
use chatwire_schema::chat::tool_progress::{Fraction, ToolProgress};
use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
use chatwire_schema::reducer::output_item_id;
use chatwire_schema::ui_state::{
    AssistantMarkdownItem, Dismissal, Progress, RunState, ToolCallItem, ToolOutputItem, UserMessageItem,
};
use chatwire_schema::{reduce, DisplayItem, Id, ReduceError, RunStatus, ServerFrame, ToolCallStatus, UiState};
use serde_json::{json, Map, Value};

const TS: &str = "2026-11-22T10:00:00Z";
const SETTLED_TS: &str = "2026-11-22T10:00:05Z";

fn id(s: &str) -> Id {
    Id::parse(s).expect("test id is valid")
}

fn ids(list: &[&str]) -> Vec<Id> {
    list.iter().map(|s| id(s)).collect()
}

fn accepted(invocation: &str, item: &str, text: &str) -> ServerFrame {
    ServerFrame::UserMessageAccepted(UserMessageAccepted {
        seq: 1,
        in_reply_to: id(&format!("client-{item}")),
        invocation_id: id(invocation),
        item_id: id(item),
        text: text.into(),
        ts: TS.into(),
    })
}

fn started(invocation: &str) -> ServerFrame {
    ServerFrame::RunStarted(RunStarted { seq: 1, invocation_id: id(invocation), ts: TS.into() })
}

fn say(invocation: &str, item: &str, markdown: &str) -> ServerFrame {
    ServerFrame::AssistantMessage(AssistantMessage {
        parent_call_id: None,
        seq: 1,
        invocation_id: id(invocation),
        item_id: id(item),
        markdown: markdown.into(),
        ts: TS.into(),
    })
}

fn payload() -> Map<String, Value> {
    let Value::Object(map) = json!({ "path": "/tmp/x" }) else { unreachable!("object literal") };
    map
}

fn tool_call_frame(invocation: &str, call: &str, awaiting: bool, call_index: u32) -> ToolCall {
    ToolCall {
        seq: 1,
        invocation_id: id(invocation),
        parent_call_id: None,
        tool_call_id: id(call),
        corr: None,
        tool_name: if awaiting { "ask_api_key".into() } else { "read_file".into() },
        component_type: awaiting.then(|| "ApiKeyForm".to_owned()),
        workflow_name: None,
        interaction_type: if awaiting { InteractionType::UiTool } else { InteractionType::AutoTool },
        awaiting_response: awaiting,
        display: DisplayMode::Inline,
        payload: payload(),
        response_schema: None,
        call_index,
        ts: TS.into(),
    }
}

fn call(invocation: &str, call: &str, awaiting: bool) -> ServerFrame {
    ServerFrame::ToolCall(tool_call_frame(invocation, call, awaiting, 0))
}

/// The item the reducer makes from [`call`], before any progress or settlement.
fn call_item(invocation: &str, call: &str, awaiting: bool) -> ToolCallItem {
    let f = tool_call_frame(invocation, call, awaiting, 0);
    ToolCallItem {
        id: f.tool_call_id,
        invocation_id: f.invocation_id,
        tool_name: f.tool_name,
        component_type: f.component_type,
        workflow_name: None,
        interaction_type: f.interaction_type,
        display: f.display,
        awaiting_response: awaiting,
        status: if awaiting { ToolCallStatus::Pending } else { ToolCallStatus::Running },
        payload: f.payload,
        response_schema: None,
        progress: None,
        summary: None,
        result: None,
        error: None,
        dismissal: None,
        ts: TS.into(),
        settled_ts: None,
        subagent: None,
    }
}

fn progress(call: &str, message: &str, fraction: f64) -> ServerFrame {
    ServerFrame::ToolProgress(ToolProgress {
        seq: 1,
        tool_call_id: id(call),
        message: Some(message.into()),
        fraction: Some(Fraction::new(fraction).expect("fraction in range")),
        ts: TS.into(),
    })
}

fn output(call: &str, edit: impl FnOnce(&mut ToolOutput)) -> ServerFrame {
    let mut f = ToolOutput {
        seq: 1,
        tool_call_id: id(call),
        command: None,
        approval: None,
        stdout: None,
        stderr: None,
        exit_code: None,
        ts: TS.into(),
    };
    edit(&mut f);
    ServerFrame::ToolOutput(f)
}

fn complete(call: &str, status: CompletionStatus, result: Option<Value>, error: Option<&str>) -> ServerFrame {
    ServerFrame::ToolCallComplete(ToolCallComplete {
        seq: 1,
        tool_call_id: id(call),
        status,
        result,
        error: error.map(str::to_owned),
        summary: None,
        in_reply_to: None,
        ts: SETTLED_TS.into(),
    })
}

fn dismiss(call: &str, initiated_by: Initiator, reason: Option<&str>) -> ServerFrame {
    ServerFrame::ToolCallDismiss(ToolCallDismiss {
        seq: 1,
        tool_call_id: id(call),
        initiated_by,
        reason: reason.map(str::to_owned),
        in_reply_to: None,
        ts: SETTLED_TS.into(),
    })
}

fn run_complete(invocation: &str, status: RunCompleteStatus) -> ServerFrame {
    ServerFrame::RunComplete(RunComplete {
        seq: 1,
        invocation_id: id(invocation),
        status,
        reason: None,
        error: None,
        usage: None,
        ts: TS.into(),
    })
}

fn rewind(before: &str, removed: &[&str]) -> ServerFrame {
    ServerFrame::RewindComplete(RewindComplete {
        seq: 1,
        in_reply_to: id("rw-1"),
        before_invocation_id: id(before),
        removed_invocation_ids: ids(removed),
        ts: TS.into(),
    })
}

fn user_item(invocation: &str, item: &str, text: &str) -> DisplayItem {
    DisplayItem::UserMessage(UserMessageItem {
        id: id(item),
        invocation_id: id(invocation),
        client_message_id: id(&format!("client-{item}")),
        text: text.into(),
        ts: TS.into(),
    })
}

fn assistant_item(invocation: &str, item: &str, markdown: &str) -> DisplayItem {
    DisplayItem::AssistantMarkdown(AssistantMarkdownItem {
        id: id(item),
        invocation_id: id(invocation),
        markdown: markdown.into(),
        streaming: false,
        ts: TS.into(),
    })
}

fn running(invocation: &str) -> RunState {
    RunState { status: RunStatus::Running, invocation_id: Some(id(invocation)) }
}

fn run(status: RunStatus, invocation: &str) -> RunState {
    RunState { status, invocation_id: Some(id(invocation)) }
}

/// Applies accepted events; panics (naming the frame) if the reducer refuses one.
fn fold(state: &mut UiState, frames: &[ServerFrame]) {
    for frame in frames {
        let event = frame.ui_event().expect("test frames are UI events");
        if let Err(e) = state.apply(event) {
            panic!("{} refused: {e}", frame.type_name());
        }
    }
}

fn state_of(frames: &[ServerFrame]) -> UiState {
    let mut state = UiState::default();
    fold(&mut state, frames);
    state
}

/// Applies `frame` expecting a refusal; checks that neither `apply` nor `reduce` changed anything.
fn refused(state: &UiState, frame: ServerFrame) -> ReduceError {
    let event = frame.ui_event().expect("test frames are UI events");
    let pure = reduce(state, event).expect_err("reduce must refuse the event");
    let mut in_place = state.clone();
    let err = in_place.apply(event).expect_err("apply must refuse the event");
    assert_eq!(&in_place, state, "a refused {} changed the state", frame.type_name());
    assert_eq!(pure, err, "reduce and apply disagree");
    err
}

/// One finished turn: `inv-1` asked, the agent answered.
fn one_finished_turn() -> Vec<ServerFrame> {
    vec![
        accepted("inv-1", "um-1", "hi"),
        started("inv-1"),
        say("inv-1", "am-1", "hello"),
        run_complete("inv-1", RunCompleteStatus::Completed),
    ]
}

/// `inv-1` running with a pending call `tc-ask` and a running call `tc-read`.
fn two_open_calls() -> Vec<ServerFrame> {
    vec![
        accepted("inv-1", "um-1", "go"),
        started("inv-1"),
        call("inv-1", "tc-ask", true),
        call("inv-1", "tc-read", false),
    ]
}

fn tool_call_at(state: &UiState, index: usize) -> &ToolCallItem {
    match &state.items[index] {
        DisplayItem::ToolCall(c) => c,
        other => panic!("item {index} is not a tool call: {other:?}"),
    }
}

/// Three turns; the second leaves a settled call with an output item behind.
fn three_turns() -> Vec<ServerFrame> {
    let mut frames = one_finished_turn();
    frames.extend([
        accepted("inv-2", "um-2", "list"),
        started("inv-2"),
        call("inv-2", "tc-2", false),
        output("tc-2", |o| o.stdout = Some("x".into())),
        complete("tc-2", CompletionStatus::Completed, Some(json!(0)), None),
        run_complete("inv-2", RunCompleteStatus::Completed),
        accepted("inv-3", "um-3", "ask"),
        started("inv-3"),
        call("inv-3", "tc-3", true),
        run_complete("inv-3", RunCompleteStatus::AwaitingInput),
    ]);
    frames
}

mod happy_paths;
mod refusals;
