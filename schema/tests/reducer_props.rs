//! Property tests of the reducer over generated event sequences.
//!
//! A small model of a backend ([`Plan`] → [`build`]) produces *valid* sequences: turns with
//! batches of 1–6 tool calls in call order, some awaiting a response, progress and output,
//! settlement in a random permutation, `run_complete`, superseded calls dismissed at the next
//! turn, and occasional rewinds while no run slice is in progress. On top of those, arbitrary
//! (mostly invalid) events aimed at ids that exist probe the refusals.

#[path = "support/trace_model.rs"]
mod trace_model;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use chatwire_schema::ui_state_snapshot::UiStateSnapshot;
use chatwire_schema::{
    reduce, reduce_all, Direction, DisplayItem, FrameValidator, Id, IndexedUiState, ServerFrame, UiEvent, UiState,
    UiStateVersion,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::Value;
use trace_model::*;

static VALIDATOR: LazyLock<FrameValidator> = LazyLock::new(FrameValidator::new);

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

fn snapshot_value(state: &UiState) -> Value {
    let frame = ServerFrame::UiStateSnapshot(UiStateSnapshot {
        seq: 1,
        v: UiStateVersion::V1,
        state: state.clone(),
        window: None,
    });
    serde_json::to_value(&frame).expect("a UiState always serializes")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (a) MULTI-001: display order is call order whatever order the calls settle in.
    #[test]
    fn display_order_is_call_order_whatever_the_settle_order(plan in plan_strategy()) {
        let frames = build(&plan, false);
        let alt_frames = build(&plan, true);
        let state = fold_valid(&frames)?;
        let alt_state = fold_valid(&alt_frames)?;
        let ids: Vec<&Id> = state.items.iter().map(DisplayItem::id).collect();
        let alt_ids: Vec<&Id> = alt_state.items.iter().map(DisplayItem::id).collect();
        prop_assert_eq!(&ids, &alt_ids);
        // Everything but the order of frames is the same, so the whole state must be too.
        prop_assert_eq!(&state, &alt_state);

        // The calls still shown appear in the order they were made, each output right after its call.
        let made: Vec<&Id> = frames
            .iter()
            .filter_map(|f| match f {
                // Top-level calls: a nested one sits in its host's transcript (since 1.3).
                ServerFrame::ToolCall(c) if c.parent_call_id.is_none() && state.tool_call(&c.tool_call_id).is_some() => {
                    Some(&c.tool_call_id)
                }
                _ => None,
            })
            .collect();
        let shown: Vec<&Id> = state
            .items
            .iter()
            .filter_map(|i| match i {
                DisplayItem::ToolCall(c) => Some(&c.id),
                _ => None,
            })
            .collect();
        prop_assert_eq!(made, shown);
        for (k, item) in state.items.iter().enumerate() {
            if let DisplayItem::ToolOutput(out) = item {
                let before = k.checked_sub(1).map(|p| &state.items[p]);
                prop_assert!(
                    matches!(before, Some(DisplayItem::ToolCall(c)) if c.id == out.tool_call_id),
                    "output {} is not right after its call", out.id
                );
            }
        }
    }

    /// (b) TOOL-010 and (e) atomicity: arbitrary events never change a settled call, and a
    /// refused event leaves the state exactly as it was.
    #[test]
    fn settled_calls_never_change_and_refusals_change_nothing((frames, probes) in prefix_and_probes()) {
        let mut state = fold_valid(&frames)?;
        for (n, probe) in probes.iter().enumerate() {
            let frame = materialize(probe, &state, n);
            let e = event(&frame);
            let before = state.clone();
            let settled = settled_calls(&before);
            let pure = reduce(&before, e);
            match state.apply(e) {
                Err(err) => {
                    prop_assert_eq!(&state, &before, "refused {:?} ({}) changed the state", frame, err);
                    prop_assert_eq!(pure, Err(err));
                }
                Ok(()) => {
                    prop_assert_eq!(pure.as_ref(), Ok(&state), "reduce and apply disagree on {:?}", frame);
                    for call in &settled {
                        match state.tool_call(&call.id) {
                            Some(now) => prop_assert_eq!(now, call, "settled call changed by {:?}", frame),
                            None => prop_assert!(
                                matches!(frame, ServerFrame::RewindComplete(_) | ServerFrame::RetryAccepted(_)),
                                "settled call {} vanished without a rewind or retry: {:?}", call.id, frame
                            ),
                        }
                    }
                }
            }
        }
    }

    /// The indexed reducer (`IndexedUiState`, a live session's state and the fold of long logs)
    /// is the reducer: the same result, error and state at every step, and with patches the same
    /// patch, over valid sequences (rewinds included) and the probes; its index stays exactly the
    /// index of its state.
    #[test]
    fn indexed_fold_equals_apply((frames, probes) in prefix_and_probes()) {
        let mut plain = UiState::default();
        let mut indexed = IndexedUiState::default();
        let mut plain_patched = UiState::default();
        let mut indexed_patched = IndexedUiState::default();
        for n in 0..frames.len() + probes.len() {
            let frame = match frames.get(n) {
                Some(frame) => frame.clone(),
                None => materialize(&probes[n - frames.len()], &plain, n - frames.len()),
            };
            let e = event(&frame);
            prop_assert_eq!(indexed.apply(e), plain.apply(e), "{:?}", frame);
            prop_assert_eq!(indexed.state(), &plain);
            prop_assert_eq!(indexed_patched.apply_with_patch(e), plain_patched.apply_with_patch(e), "{:?}", frame);
            prop_assert_eq!(indexed_patched.state(), &plain);
            prop_assert_eq!(&plain_patched, &plain);
        }
        prop_assert_eq!(&IndexedUiState::new(plain.clone()), &indexed, "the index is the state's");
        prop_assert_eq!(&IndexedUiState::new(plain.clone()), &indexed_patched, "the index is the state's");
        for item in &plain.items {
            prop_assert!(indexed.has_item(item.id()), "{} is in the state", item.id());
        }
        // A call a rewind cut, or a refused probe's, is in neither.
        for id in frames.iter().filter_map(ServerFrame::tool_call_id) {
            prop_assert_eq!(indexed.has_item(id), plain.holds_item_anywhere(id), "{}", id);
        }
    }

    /// (c) Determinism: the same events give the same state, in place or pure, step by step.
    #[test]
    fn folding_is_deterministic_and_reduce_equals_apply(plan in plan_strategy()) {
        let frames = build(&plan, false);
        let mut in_place = UiState::default();
        let mut pure = UiState::default();
        for frame in &frames {
            let e = event(frame);
            let next = reduce(&pure, e).map_err(|err| TestCaseError::fail(format!("{frame:?} refused: {err}")))?;
            in_place.apply(e).map_err(|err| TestCaseError::fail(format!("{frame:?} refused: {err}")))?;
            prop_assert_eq!(&next, &in_place);
            pure = next;
        }
        prop_assert_eq!(&fold_valid(&frames)?, &in_place);
        prop_assert_eq!(&fold_valid(&frames)?, &in_place);
        prop_assert_eq!(&fold_valid(&build(&plan, false))?, &in_place);
    }
}

proptest! {
    // Validating every intermediate state is the slowest property; fewer cases keep it quick.
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// (f) Every generated frame is schema-valid and round-trips; every state it leads to
    /// round-trips through serde and validates as a `ui_state_snapshot`.
    #[test]
    fn every_state_round_trips_and_validates(plan in plan_strategy()) {
        let frames = build(&plan, false);
        let mut state = UiState::default();
        for frame in &frames {
            let wire = serde_json::to_value(frame).expect("frames serialize");
            let checked = VALIDATOR.check(Direction::ServerToClient, &wire);
            prop_assert_eq!(checked, Ok(frame.type_name()), "generated frame breaks its schema: {}", wire);
            let back: ServerFrame = VALIDATOR
                .from_value(Direction::ServerToClient, wire)
                .map_err(|e| TestCaseError::fail(format!("{frame:?}: {e}")))?;
            prop_assert_eq!(&back, frame);

            state.apply(event(frame)).map_err(|e| TestCaseError::fail(format!("{frame:?} refused: {e}")))?;
            let text = serde_json::to_string(&state).expect("a UiState always serializes");
            let parsed: UiState = serde_json::from_str(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&parsed, &state);
            let snapshot = snapshot_value(&state);
            prop_assert_eq!(
                VALIDATOR.check(Direction::ServerToClient, &snapshot),
                Ok("ui_state_snapshot"),
                "state breaks ui-state.json: {}", snapshot
            );
        }
    }
}

/// The index of an event kind; exhaustive, so a new `UiEvent` variant breaks the build here.
fn kind_index(e: UiEvent<'_>) -> usize {
    match e {
        UiEvent::UserMessageAccepted(_) => 0,
        UiEvent::RunStarted(_) => 1,
        UiEvent::AssistantMessage(_) => 2,
        UiEvent::ToolCall(_) => 3,
        UiEvent::ToolProgress(_) => 4,
        UiEvent::ToolOutput(_) => 5,
        UiEvent::ToolCallComplete(_) => 6,
        UiEvent::ToolCallDismiss(_) => 7,
        UiEvent::RunComplete(_) => 8,
        UiEvent::RewindComplete(_) => 9,
        UiEvent::AssistantMessageDelta(_) => 10,
        UiEvent::RetryAccepted(_) => 11,
        UiEvent::ReasoningDelta(_) => 12,
        UiEvent::Reasoning(_) => 13,
        UiEvent::SubagentStarted(_) => 14,
        UiEvent::SubagentComplete(_) => 15,
    }
}

/// (d) The generator exercises every event kind, and the situations the properties rely on.
#[test]
fn generator_covers_every_event_kind() {
    const SEQUENCES: usize = 256;
    let mut runner = TestRunner::deterministic();
    let strategy = plan_strategy();
    let mut counts = [0usize; 16];
    let mut run_statuses = BTreeSet::new();
    let mut completion_statuses = BTreeSet::new();
    let mut superseded = 0;
    let mut reordered_batches = 0;
    for _ in 0..SEQUENCES {
        let plan = strategy.new_tree(&mut runner).expect("plans always generate").current();
        reordered_batches += plan
            .turns
            .iter()
            .flat_map(|t| &t.batches)
            .filter(|b| b.calls.len() > 1 && b.settle_order != b.alt_settle_order)
            .count();
        for frame in build(&plan, false) {
            counts[kind_index(event(&frame))] += 1;
            match &frame {
                ServerFrame::RunComplete(r) => {
                    run_statuses.insert(format!("{:?}", r.status));
                }
                ServerFrame::ToolCallComplete(c) => {
                    completion_statuses.insert(format!("{:?}", c.status));
                }
                ServerFrame::ToolCallDismiss(d) if d.reason.as_deref() == Some("superseded") => superseded += 1,
                _ => {}
            }
        }
    }
    let names = [
        "user_message_accepted",
        "run_started",
        "assistant_message",
        "tool_call",
        "tool_progress",
        "tool_output",
        "tool_call_complete",
        "tool_call_dismiss",
        "run_complete",
        "rewind_complete",
        "assistant_message_delta",
        "retry_accepted",
        "reasoning_delta",
        "reasoning",
        "subagent_started",
        "subagent_complete",
    ];
    for (name, count) in names.iter().zip(counts) {
        assert!(count > 0, "no {name} in {SEQUENCES} sequences: {counts:?}");
    }
    assert_eq!(run_statuses.len(), 4, "run_complete statuses seen: {run_statuses:?}");
    assert_eq!(completion_statuses.len(), 3, "tool_call_complete statuses seen: {completion_statuses:?}");
    assert!(superseded > 0, "no pending call was ever superseded by a new turn");
    assert!(reordered_batches > 0, "no batch ever had two different settle orders");
}

/// (e) The arbitrary events are not all accepted or all refused, so both branches are exercised.
#[test]
fn arbitrary_events_hit_both_refusals_and_acceptances() {
    let mut runner = TestRunner::deterministic();
    let strategy = prefix_and_probes();
    let (mut accepted, mut refused) = (0, 0);
    let mut errors = BTreeSet::new();
    for _ in 0..128 {
        let (frames, probes) = strategy.new_tree(&mut runner).expect("cases always generate").current();
        let mut state = reduce_all(&UiState::default(), frames.iter().map(event)).expect("prefix is valid");
        for (n, probe) in probes.iter().enumerate() {
            let frame = materialize(probe, &state, n);
            match state.apply(event(&frame)) {
                Ok(()) => accepted += 1,
                Err(e) => {
                    refused += 1;
                    // The variant name, without its fields.
                    let name = format!("{e:?}");
                    errors.insert(name.split(['(', ' ']).next().unwrap_or_default().to_owned());
                }
            }
        }
    }
    assert!(accepted > 0 && refused > accepted, "accepted {accepted}, refused {refused}");
    assert!(errors.len() >= 12, "only {} refusal kinds reached: {errors:?}", errors.len());
}
