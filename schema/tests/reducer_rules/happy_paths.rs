//! Happy paths, `STATE-010`..`STATE-019`: the exact resulting `UiState`.

use super::*;

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
