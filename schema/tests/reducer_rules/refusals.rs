//! Refusals, `STATE-020`..`STATE-033`: the exact error, and the state untouched.

use super::*;

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
