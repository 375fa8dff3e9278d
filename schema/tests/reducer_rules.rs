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

// ---------------------------------------------------------------------------------------------
// Happy paths, STATE-010..STATE-019
// ---------------------------------------------------------------------------------------------

#[test]
fn state_010_user_message_accepted_appends_a_user_item_and_keeps_the_run() {
    let mut state = state_of(&one_finished_turn());
    let before_run = state.run.clone();
    fold(&mut state, &[accepted("inv-2", "um-2", "again")]);
    let mut items = state_of(&one_finished_turn()).items;
    items.push(user_item("inv-2", "um-2", "again"));
    // The run is untouched: the turn only runs once `chat.run_started` arrives.
    assert_eq!(state, UiState { items, run: before_run, usage: None });
    assert_eq!(state.run, run(RunStatus::Completed, "inv-1"));
}

#[test]
fn state_011_run_started_marks_the_invocation_running() {
    let state = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1")]);
    assert_eq!(state, UiState { items: vec![user_item("inv-1", "um-1", "hi")], run: running("inv-1"), usage: None });
}

#[test]
fn state_011_run_started_resumes_a_turn_awaiting_input() {
    let mut state = state_of(&[
        accepted("inv-1", "um-1", "hi"),
        started("inv-1"),
        call("inv-1", "tc-1", true),
        run_complete("inv-1", RunCompleteStatus::AwaitingInput),
    ]);
    assert_eq!(state.run, run(RunStatus::AwaitingInput, "inv-1"));
    fold(&mut state, &[started("inv-1")]);
    assert_eq!(state.run, running("inv-1"));
}

#[test]
fn state_012_assistant_message_appends_markdown() {
    let state = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1"), say("inv-1", "am-1", "**hello**")]);
    let expected = UiState {
        items: vec![user_item("inv-1", "um-1", "hi"), assistant_item("inv-1", "am-1", "**hello**")],
        run: running("inv-1"),
        usage: None,
    };
    assert_eq!(state, expected);
}

#[test]
fn state_013_tool_call_starts_pending_when_awaiting_and_running_otherwise() {
    let state = state_of(&two_open_calls());
    let expected = UiState {
        items: vec![
            user_item("inv-1", "um-1", "go"),
            DisplayItem::ToolCall(call_item("inv-1", "tc-ask", true)),
            DisplayItem::ToolCall(call_item("inv-1", "tc-read", false)),
        ],
        run: running("inv-1"),
        usage: None,
    };
    assert_eq!(state, expected);
}

#[test]
fn state_013_tool_call_accepts_corr_equal_to_its_id() {
    let mut frame = tool_call_frame("inv-1", "tc-1", false, 0);
    frame.corr = Some(id("tc-1"));
    let state = state_of(&[accepted("inv-1", "um-1", "go"), started("inv-1"), ServerFrame::ToolCall(frame)]);
    assert_eq!(state.tool_call(&id("tc-1")), Some(&call_item("inv-1", "tc-1", false)));
}

#[test]
fn state_014_tool_progress_replaces_the_previous_progress() {
    let mut frames = two_open_calls();
    frames.push(progress("tc-read", "reading", 0.25));
    frames.push(progress("tc-read", "almost", 0.75));
    let state = state_of(&frames);
    let mut read = call_item("inv-1", "tc-read", false);
    read.progress = Some(Progress { message: Some("almost".into()), fraction: Some(Fraction::new(0.75).unwrap()) });
    let expected = UiState {
        items: vec![
            user_item("inv-1", "um-1", "go"),
            DisplayItem::ToolCall(call_item("inv-1", "tc-ask", true)),
            DisplayItem::ToolCall(read),
        ],
        run: running("inv-1"),
        usage: None,
    };
    assert_eq!(state, expected);
}

#[test]
fn state_015_tool_output_is_inserted_right_after_its_call_and_merged_later() {
    let mut frames = two_open_calls();
    // The output of the first call of the batch lands between the two calls, not at the end.
    frames.push(output("tc-ask", |o| {
        o.command = Some("ls -la".into());
        o.approval = Some(ApprovalDecision::Approve);
        o.stdout = Some("a\n".into());
    }));
    let after_first = state_of(&frames);
    let first_output = ToolOutputItem {
        id: id("tc-ask.output"),
        invocation_id: id("inv-1"),
        tool_call_id: id("tc-ask"),
        tool_name: "ask_api_key".into(),
        command: Some("ls -la".into()),
        approvals: vec![ApprovalDecision::Approve],
        stdout: "a\n".into(),
        stderr: String::new(),
        exit_code: None,
    };
    let expected = UiState {
        items: vec![
            user_item("inv-1", "um-1", "go"),
            DisplayItem::ToolCall(call_item("inv-1", "tc-ask", true)),
            DisplayItem::ToolOutput(first_output.clone()),
            DisplayItem::ToolCall(call_item("inv-1", "tc-read", false)),
        ],
        run: running("inv-1"),
        usage: None,
    };
    assert_eq!(after_first, expected);

    // The second output merges into the same item: appends streams and approvals, sets the exit code.
    frames.push(output("tc-ask", |o| {
        o.approval = Some(ApprovalDecision::DenyContinue);
        o.stdout = Some("b\n".into());
        o.stderr = Some("warn\n".into());
        o.exit_code = Some(2);
    }));
    let after_second = state_of(&frames);
    let merged = ToolOutputItem {
        approvals: vec![ApprovalDecision::Approve, ApprovalDecision::DenyContinue],
        stdout: "a\nb\n".into(),
        stderr: "warn\n".into(),
        exit_code: Some(2),
        ..first_output
    };
    let mut expected_items = expected.items;
    expected_items[2] = DisplayItem::ToolOutput(merged);
    assert_eq!(after_second, UiState { items: expected_items, run: running("inv-1"), usage: None });
}

#[test]
fn state_015_approvals_are_appended_in_the_order_they_were_made() {
    let decisions = [
        ApprovalDecision::DenyContinue,
        ApprovalDecision::Approve,
        ApprovalDecision::DenyAbort,
        ApprovalDecision::Approve,
    ];
    let mut frames = two_open_calls();
    frames.extend(decisions.iter().map(|&d| output("tc-read", |o| o.approval = Some(d))));
    let state = state_of(&frames);
    assert_eq!(state.items.len(), 4, "one output item, not one per frame");
    let DisplayItem::ToolOutput(out) = &state.items[3] else { panic!("output right after tc-read: {state:?}") };
    assert_eq!(out.id, id("tc-read.output"));
    assert_eq!(out.approvals, decisions);
    assert_eq!(out.command, None);
    assert_eq!(out.exit_code, None);
}

#[test]
fn state_015_tool_output_keeps_a_later_command_and_exit_code() {
    let mut frames = two_open_calls();
    frames.push(output("tc-read", |o| {
        o.command = Some("first".into());
        o.exit_code = Some(1);
    }));
    frames.push(output("tc-read", |o| {
        o.command = Some("second".into());
        o.exit_code = Some(0);
    }));
    let state = state_of(&frames);
    let DisplayItem::ToolOutput(out) = &state.items[3] else { panic!("output right after tc-read: {state:?}") };
    assert_eq!((out.command.as_deref(), out.exit_code), (Some("second"), Some(0)));
}

#[test]
fn state_016_tool_call_complete_settles_completed_failed_and_expired() {
    let mut frames = two_open_calls();
    frames.push(call("inv-1", "tc-late", true));
    frames.push(complete("tc-read", CompletionStatus::Completed, Some(json!({"bytes": 12})), None));
    frames.push(complete("tc-ask", CompletionStatus::Failed, None, Some("form crashed")));
    frames.push(run_complete("inv-1", RunCompleteStatus::AwaitingInput));
    // Expiry happens while the turn waits: no run slice is needed.
    frames.push(complete("tc-late", CompletionStatus::Expired, None, Some("expired")));
    let state = state_of(&frames);

    let mut read = call_item("inv-1", "tc-read", false);
    read.status = ToolCallStatus::Completed;
    read.result = Some(json!({"bytes": 12}));
    read.settled_ts = Some(SETTLED_TS.into());
    let mut ask = call_item("inv-1", "tc-ask", true);
    ask.status = ToolCallStatus::Failed;
    ask.error = Some("form crashed".into());
    ask.settled_ts = Some(SETTLED_TS.into());
    let mut late = call_item("inv-1", "tc-late", true);
    late.status = ToolCallStatus::Expired;
    late.error = Some("expired".into());
    late.settled_ts = Some(SETTLED_TS.into());
    let expected = UiState {
        items: vec![
            user_item("inv-1", "um-1", "go"),
            DisplayItem::ToolCall(ask),
            DisplayItem::ToolCall(read),
            DisplayItem::ToolCall(late),
        ],
        run: run(RunStatus::AwaitingInput, "inv-1"),
        usage: None,
    };
    assert_eq!(state, expected);
}

#[test]
fn state_016_tool_call_complete_carries_the_summary() {
    let mut frames = two_open_calls();
    let ServerFrame::ToolCallComplete(mut done) =
        complete("tc-ask", CompletionStatus::Completed, Some(json!("k")), None)
    else {
        unreachable!("complete builds a tool_call_complete")
    };
    done.summary = Some("API key saved".into());
    done.in_reply_to = Some(id("resp-1"));
    frames.push(ServerFrame::ToolCallComplete(done));
    let state = state_of(&frames);
    let ask = tool_call_at(&state, 1);
    assert_eq!(ask.summary.as_deref(), Some("API key saved"));
    assert_eq!(ask.result, Some(json!("k")));
    assert_eq!(ask.status, ToolCallStatus::Completed);
}

#[test]
fn state_017_tool_call_dismiss_settles_pending_and_running_calls() {
    let mut frames = two_open_calls();
    frames.push(dismiss("tc-ask", Initiator::Client, Some("closed the form")));
    frames.push(dismiss("tc-read", Initiator::Server, None));
    let state = state_of(&frames);
    let mut ask = call_item("inv-1", "tc-ask", true);
    ask.status = ToolCallStatus::Dismissed;
    ask.dismissal = Some(Dismissal { initiated_by: Initiator::Client, reason: Some("closed the form".into()) });
    ask.settled_ts = Some(SETTLED_TS.into());
    let mut read = call_item("inv-1", "tc-read", false);
    read.status = ToolCallStatus::Dismissed;
    read.dismissal = Some(Dismissal { initiated_by: Initiator::Server, reason: None });
    read.settled_ts = Some(SETTLED_TS.into());
    let expected = UiState {
        items: vec![user_item("inv-1", "um-1", "go"), DisplayItem::ToolCall(ask), DisplayItem::ToolCall(read)],
        run: running("inv-1"),
        usage: None,
    };
    assert_eq!(state, expected);
}

#[test]
fn state_018_run_complete_awaiting_input_with_a_pending_call() {
    let frames = vec![
        accepted("inv-1", "um-1", "go"),
        started("inv-1"),
        call("inv-1", "tc-ask", true),
        run_complete("inv-1", RunCompleteStatus::AwaitingInput),
    ];
    let state = state_of(&frames);
    let expected = UiState {
        items: vec![user_item("inv-1", "um-1", "go"), DisplayItem::ToolCall(call_item("inv-1", "tc-ask", true))],
        run: run(RunStatus::AwaitingInput, "inv-1"),
        usage: None,
    };
    assert_eq!(state, expected);
}

#[test]
fn state_018_run_complete_terminal_statuses_once_nothing_is_open() {
    for (status, run_status) in [
        (RunCompleteStatus::Completed, RunStatus::Completed),
        (RunCompleteStatus::Failed, RunStatus::Failed),
        (RunCompleteStatus::Cancelled, RunStatus::Cancelled),
    ] {
        let mut frames = two_open_calls();
        frames.push(complete("tc-ask", CompletionStatus::Completed, Some(json!(1)), None));
        frames.push(dismiss("tc-read", Initiator::Server, None));
        let before = state_of(&frames);
        frames.push(run_complete("inv-1", status));
        let state = state_of(&frames);
        assert_eq!(state, UiState { items: before.items, run: run(run_status, "inv-1"), usage: None }, "{status:?}");
    }
}

#[test]
fn state_018_other_invocations_calls_do_not_block_run_complete() {
    // Calls are counted per invocation; the earlier turn's settled call is irrelevant, and
    // the awaited call of this turn is enough for awaiting_input.
    let mut frames = one_finished_turn();
    frames.extend([
        accepted("inv-2", "um-2", "next"),
        started("inv-2"),
        call("inv-2", "tc-2", true),
        run_complete("inv-2", RunCompleteStatus::AwaitingInput),
    ]);
    assert_eq!(state_of(&frames).run, run(RunStatus::AwaitingInput, "inv-2"));
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

#[test]
fn state_019_rewind_cuts_before_the_invocation_and_goes_idle() {
    let mut state = state_of(&three_turns());
    let kept = state_of(&one_finished_turn()).items;
    fold(&mut state, &[rewind("inv-2", &["inv-2", "inv-3"])]);
    assert_eq!(state, UiState { items: kept, run: RunState::default(), usage: None });
    assert!(state.tool_call(&id("tc-3")).is_none(), "the pending call went with its turn");
}

#[test]
fn state_019_rewind_of_the_last_invocation_keeps_earlier_ones() {
    let mut state = state_of(&three_turns());
    let before = state.items.clone();
    fold(&mut state, &[rewind("inv-3", &["inv-3"])]);
    assert_eq!(state.items, before[..before.len() - 2]);
    assert_eq!(state.invocations(), vec![&id("inv-1"), &id("inv-2")]);
    assert_eq!(state.run, RunState::default());
}

#[test]
fn state_019_rewind_of_the_first_invocation_empties_the_state() {
    let mut state = state_of(&three_turns());
    fold(&mut state, &[rewind("inv-1", &["inv-1", "inv-2", "inv-3"])]);
    assert_eq!(state, UiState::default());
}

#[test]
fn state_019_removed_ids_can_be_used_again_after_a_rewind() {
    let mut state = state_of(&three_turns());
    fold(&mut state, &[rewind("inv-3", &["inv-3"])]);
    // The removed turn's ids no longer exist in the effective state, so nothing clashes.
    fold(&mut state, &[accepted("inv-3", "um-3", "ask again"), started("inv-3"), call("inv-3", "tc-3", false)]);
    assert_eq!(state.run, running("inv-3"));
    assert_eq!(state.tool_call(&id("tc-3")).map(|c| c.status), Some(ToolCallStatus::Running));
}

// ---------------------------------------------------------------------------------------------
// Refusals, STATE-020..STATE-033: exact error, state untouched
// ---------------------------------------------------------------------------------------------

#[test]
fn state_020_duplicate_item_id_is_refused() {
    let running_turn = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1"), say("inv-1", "am-1", "a")]);
    assert_eq!(refused(&running_turn, say("inv-1", "am-1", "b")), ReduceError::DuplicateItemId(id("am-1")));
    assert_eq!(refused(&running_turn, say("inv-1", "um-1", "b")), ReduceError::DuplicateItemId(id("um-1")));
    assert_eq!(refused(&running_turn, call("inv-1", "am-1", false)), ReduceError::DuplicateItemId(id("am-1")));

    let finished = state_of(&one_finished_turn());
    assert_eq!(refused(&finished, accepted("inv-2", "am-1", "x")), ReduceError::DuplicateItemId(id("am-1")));
}

#[test]
fn state_020_tool_call_whose_output_id_is_taken_is_refused() {
    // `am.output` is an ordinary item id; a call named `am` could never get its output item.
    let state = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1"), say("inv-1", "am.output", "a")]);
    assert_eq!(refused(&state, call("inv-1", "am", false)), ReduceError::DuplicateItemId(id("am.output")));
}

#[test]
fn state_020_tool_output_never_duplicates_an_item_id() {
    // An item took the id the call's output item would get; inserting the output would
    // leave two items with one id, so the output is refused instead.
    let state = state_of(&[
        accepted("inv-1", "um-1", "hi"),
        started("inv-1"),
        call("inv-1", "tc-1", false),
        say("inv-1", "tc-1.output", "squatting"),
    ]);
    let err = refused(&state, output("tc-1", |o| o.stdout = Some("x".into())));
    assert_eq!(err, ReduceError::DuplicateItemId(id("tc-1.output")));
}

#[test]
fn state_021_reused_invocation_is_refused() {
    let state = state_of(&one_finished_turn());
    assert_eq!(refused(&state, accepted("inv-1", "um-9", "again")), ReduceError::InvocationReused(id("inv-1")));
}

#[test]
fn state_022_events_outside_their_run_are_refused() {
    let finished = state_of(&one_finished_turn());
    assert_eq!(refused(&finished, say("inv-1", "am-2", "late")), ReduceError::NotInRun(id("inv-1")));
    assert_eq!(refused(&finished, call("inv-1", "tc-1", false)), ReduceError::NotInRun(id("inv-1")));
    assert_eq!(
        refused(&finished, run_complete("inv-1", RunCompleteStatus::Completed)),
        ReduceError::NotInRun(id("inv-1"))
    );

    // A run of inv-2 is in progress: inv-1 may not speak, even though it exists.
    let mut other = finished.clone();
    fold(&mut other, &[accepted("inv-2", "um-2", "next"), started("inv-2")]);
    assert_eq!(refused(&other, say("inv-1", "am-2", "stale")), ReduceError::NotInRun(id("inv-1")));

    // Awaiting input is not running: a new call needs run_started first.
    let awaiting = state_of(&[
        accepted("inv-1", "um-1", "go"),
        started("inv-1"),
        call("inv-1", "tc-1", true),
        run_complete("inv-1", RunCompleteStatus::AwaitingInput),
    ]);
    assert_eq!(refused(&awaiting, call("inv-1", "tc-2", false)), ReduceError::NotInRun(id("inv-1")));
}

#[test]
fn state_023_new_run_user_message_or_rewind_during_a_run_is_refused() {
    let state = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1")]);
    assert_eq!(refused(&state, accepted("inv-2", "um-2", "more")), ReduceError::RunInProgress(id("inv-1")));
    assert_eq!(refused(&state, started("inv-1")), ReduceError::RunInProgress(id("inv-1")));
    assert_eq!(refused(&state, rewind("inv-1", &["inv-1"])), ReduceError::RunInProgress(id("inv-1")));
}

#[test]
fn state_024_unknown_invocation_is_refused() {
    let state = state_of(&one_finished_turn());
    assert_eq!(refused(&state, started("inv-9")), ReduceError::UnknownInvocation(id("inv-9")));
    assert_eq!(refused(&state, rewind("inv-9", &["inv-9"])), ReduceError::UnknownInvocation(id("inv-9")));

    // An invocation that was rewound away is unknown too.
    let mut rewound = state_of(&three_turns());
    fold(&mut rewound, &[rewind("inv-2", &["inv-2", "inv-3"])]);
    assert_eq!(refused(&rewound, rewind("inv-3", &["inv-3"])), ReduceError::UnknownInvocation(id("inv-3")));
    assert_eq!(refused(&rewound, started("inv-2")), ReduceError::UnknownInvocation(id("inv-2")));
}

#[test]
fn state_025_unknown_tool_call_is_refused_by_every_call_event() {
    let state = state_of(&two_open_calls());
    let unknown = || ReduceError::UnknownToolCall(id("tc-x"));
    assert_eq!(refused(&state, progress("tc-x", "m", 0.5)), unknown());
    assert_eq!(refused(&state, output("tc-x", |o| o.stdout = Some("s".into()))), unknown());
    assert_eq!(refused(&state, complete("tc-x", CompletionStatus::Completed, None, None)), unknown());
    assert_eq!(refused(&state, dismiss("tc-x", Initiator::Client, None)), unknown());
    // An item id that is not a tool call does not count as one.
    assert_eq!(
        refused(&state, complete("um-1", CompletionStatus::Completed, None, None)),
        ReduceError::UnknownToolCall(id("um-1"))
    );
}

#[test]
fn state_026_settled_call_never_changes() {
    let mut frames = two_open_calls();
    frames.push(complete("tc-read", CompletionStatus::Completed, Some(json!("done")), None));
    frames.push(dismiss("tc-ask", Initiator::Client, None));
    let state = state_of(&frames);
    let completed = || ReduceError::AlreadySettled { id: id("tc-read"), status: ToolCallStatus::Completed };
    assert_eq!(refused(&state, progress("tc-read", "m", 0.5)), completed());
    assert_eq!(refused(&state, output("tc-read", |o| o.stdout = Some("s".into()))), completed());
    assert_eq!(refused(&state, complete("tc-read", CompletionStatus::Failed, None, Some("no"))), completed());
    assert_eq!(refused(&state, dismiss("tc-read", Initiator::Server, None)), completed());
    assert_eq!(
        refused(&state, complete("tc-ask", CompletionStatus::Expired, None, Some("expired"))),
        ReduceError::AlreadySettled { id: id("tc-ask"), status: ToolCallStatus::Dismissed }
    );
}

#[test]
fn state_027_progress_for_a_pending_call_is_refused() {
    let state = state_of(&two_open_calls());
    assert_eq!(refused(&state, progress("tc-ask", "m", 0.5)), ReduceError::NotRunning(id("tc-ask")));
}

#[test]
fn state_028_expiry_of_a_running_call_is_refused() {
    let state = state_of(&two_open_calls());
    assert_eq!(
        refused(&state, complete("tc-read", CompletionStatus::Expired, None, Some("expired"))),
        ReduceError::NotAwaiting(id("tc-read"))
    );
}

#[test]
fn state_029_corr_mismatch_is_refused() {
    let state = state_of(&[accepted("inv-1", "um-1", "go"), started("inv-1")]);
    let mut frame = tool_call_frame("inv-1", "tc-1", false, 0);
    frame.corr = Some(id("tc-2"));
    assert_eq!(
        refused(&state, ServerFrame::ToolCall(frame)),
        ReduceError::CorrMismatch { id: id("tc-1"), corr: id("tc-2") }
    );
}

#[test]
fn state_030_awaiting_input_without_a_pending_call_is_refused() {
    let state = state_of(&[accepted("inv-1", "um-1", "go"), started("inv-1")]);
    assert_eq!(
        refused(&state, run_complete("inv-1", RunCompleteStatus::AwaitingInput)),
        ReduceError::NothingAwaited(id("inv-1"))
    );
    // A settled call is not awaited any more.
    let mut settled = state;
    fold(&mut settled, &[call("inv-1", "tc-1", true), dismiss("tc-1", Initiator::Client, None)]);
    assert_eq!(
        refused(&settled, run_complete("inv-1", RunCompleteStatus::AwaitingInput)),
        ReduceError::NothingAwaited(id("inv-1"))
    );
}

#[test]
fn state_031_awaiting_input_with_running_calls_is_refused() {
    let state = state_of(&two_open_calls());
    assert_eq!(
        refused(&state, run_complete("inv-1", RunCompleteStatus::AwaitingInput)),
        ReduceError::OpenToolCalls {
            invocation_id: id("inv-1"),
            status: RunCompleteStatus::AwaitingInput,
            open: ids(&["tc-read"]),
        }
    );
}

#[test]
fn state_031_terminal_run_complete_with_open_calls_is_refused() {
    let state = state_of(&two_open_calls());
    for status in [RunCompleteStatus::Completed, RunCompleteStatus::Failed, RunCompleteStatus::Cancelled] {
        assert_eq!(
            refused(&state, run_complete("inv-1", status)),
            ReduceError::OpenToolCalls { invocation_id: id("inv-1"), status, open: ids(&["tc-ask", "tc-read"]) }
        );
    }
    // Only pending ones left: still open, so still refused for a terminal status.
    let mut pending_only = state;
    fold(&mut pending_only, &[complete("tc-read", CompletionStatus::Completed, None, None)]);
    assert_eq!(
        refused(&pending_only, run_complete("inv-1", RunCompleteStatus::Completed)),
        ReduceError::OpenToolCalls {
            invocation_id: id("inv-1"),
            status: RunCompleteStatus::Completed,
            open: ids(&["tc-ask"]),
        }
    );
}

#[test]
fn state_032_new_turn_with_open_calls_is_refused() {
    let state = state_of(&[
        accepted("inv-1", "um-1", "go"),
        started("inv-1"),
        call("inv-1", "tc-1", true),
        call("inv-1", "tc-2", true),
        run_complete("inv-1", RunCompleteStatus::AwaitingInput),
    ]);
    assert_eq!(
        refused(&state, accepted("inv-2", "um-2", "next")),
        ReduceError::OpenToolCallsAtNewTurn(ids(&["tc-1", "tc-2"]))
    );
    // Once the server dismissed them as superseded, the turn may begin.
    let mut superseded = state;
    fold(
        &mut superseded,
        &[
            dismiss("tc-1", Initiator::Server, Some("superseded")),
            dismiss("tc-2", Initiator::Server, Some("superseded")),
        ],
    );
    fold(&mut superseded, &[accepted("inv-2", "um-2", "next")]);
    assert_eq!(superseded.invocations(), vec![&id("inv-1"), &id("inv-2")]);
}

#[test]
fn state_033_rewind_claims_must_match_the_cut() {
    let state = state_of(&three_turns());
    for claimed in [
        &["inv-2"][..],                   // too few
        &["inv-3", "inv-2"][..],          // wrong order
        &["inv-1", "inv-2", "inv-3"][..], // too many
        &[][..],                          // nothing
    ] {
        assert_eq!(
            refused(&state, rewind("inv-2", claimed)),
            ReduceError::RewindMismatch { expected: ids(&["inv-2", "inv-3"]), claimed: ids(claimed) },
            "claimed {claimed:?}"
        );
    }
}

#[test]
fn state_015_tool_call_id_too_long_for_its_output_item_is_refused() {
    let state = state_of(&[accepted("inv-1", "um-1", "go"), started("inv-1")]);
    // 128 bytes is a valid id, but 128 + ".output" is not.
    let long = "t".repeat(128);
    assert_eq!(refused(&state, call("inv-1", &long, false)), ReduceError::OutputIdTooLong(id(&long)));
    let longest_ok = "t".repeat(128 - ".output".len());
    assert!(output_item_id(&id(&longest_ok)).is_ok());
}

#[test]
fn refusals_follow_the_documented_precondition_order() {
    // STATE-010: run in progress, then open calls, then reused invocation, then duplicate item id.
    let running_with_open_call = state_of(&two_open_calls());
    assert_eq!(
        refused(&running_with_open_call, accepted("inv-1", "um-1", "again")),
        ReduceError::RunInProgress(id("inv-1"))
    );
    let mut awaiting = running_with_open_call.clone();
    fold(
        &mut awaiting,
        &[
            complete("tc-read", CompletionStatus::Completed, None, None),
            run_complete("inv-1", RunCompleteStatus::AwaitingInput),
        ],
    );
    assert_eq!(
        refused(&awaiting, accepted("inv-1", "um-1", "again")),
        ReduceError::OpenToolCallsAtNewTurn(ids(&["tc-ask"]))
    );
    let finished = state_of(&one_finished_turn());
    assert_eq!(refused(&finished, accepted("inv-1", "um-1", "again")), ReduceError::InvocationReused(id("inv-1")));

    // STATE-013: not in run before corr, corr before duplicate id.
    let mut mismatched = tool_call_frame("inv-1", "um-1", false, 0);
    mismatched.corr = Some(id("other"));
    assert_eq!(refused(&finished, ServerFrame::ToolCall(mismatched.clone())), ReduceError::NotInRun(id("inv-1")));
    let running_turn = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1")]);
    assert_eq!(
        refused(&running_turn, ServerFrame::ToolCall(mismatched)),
        ReduceError::CorrMismatch { id: id("um-1"), corr: id("other") }
    );

    // STATE-016: settled before the expiry check.
    let mut settled = running_with_open_call;
    fold(&mut settled, &[complete("tc-read", CompletionStatus::Failed, None, Some("boom"))]);
    assert_eq!(
        refused(&settled, complete("tc-read", CompletionStatus::Expired, None, None)),
        ReduceError::AlreadySettled { id: id("tc-read"), status: ToolCallStatus::Failed }
    );

    // STATE-019: run in progress before unknown invocation before the claim check.
    assert_eq!(refused(&running_turn, rewind("inv-9", &[])), ReduceError::RunInProgress(id("inv-1")));
    assert_eq!(refused(&finished, rewind("inv-9", &[])), ReduceError::UnknownInvocation(id("inv-9")));
}

#[test]
fn state_034_only_the_latest_turn_may_start_a_run() {
    let mut two_turns = state_of(&one_finished_turn());
    fold(
        &mut two_turns,
        &[accepted("inv-2", "um-2", "next"), started("inv-2"), run_complete("inv-2", RunCompleteStatus::Completed)],
    );
    assert_eq!(refused(&two_turns, started("inv-1")), ReduceError::StaleInvocation(id("inv-1")));
    // The latest turn itself may start another slice.
    let again = reduce(&two_turns, started("inv-2").ui_event().expect("event")).expect("latest turn may run");
    assert_eq!(again.run, running("inv-2"));
}

#[test]
fn state_035_ui_tools_and_surfaces_need_a_component_type() {
    let running_turn = state_of(&[accepted("inv-1", "um-1", "hi"), started("inv-1")]);
    for interaction_type in [InteractionType::UiTool, InteractionType::UiSurface] {
        let mut frame = tool_call_frame("inv-1", "tc-ui", true, 0);
        frame.interaction_type = interaction_type;
        frame.component_type = None;
        assert_eq!(
            refused(&running_turn, ServerFrame::ToolCall(frame)),
            ReduceError::MissingComponentType(id("tc-ui"))
        );
    }
    // Auto tools and input requests render without a workflow component.
    for interaction_type in [InteractionType::AutoTool, InteractionType::InputRequest] {
        let mut frame = tool_call_frame("inv-1", "tc-ok", true, 0);
        frame.interaction_type = interaction_type;
        frame.component_type = None;
        reduce(&running_turn, ServerFrame::ToolCall(frame).ui_event().expect("event")).expect("accepted");
    }
}
