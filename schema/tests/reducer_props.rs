//! Property tests of the reducer over generated event sequences.
//!
//! A small model of a backend ([`Plan`] → [`build`]) produces *valid* sequences: turns with
//! batches of 1–6 tool calls in call order, some awaiting a response, progress and output,
//! settlement in a random permutation, `run_complete`, superseded calls dismissed at the next
//! turn, and occasional rewinds while no run slice is in progress. On top of those, arbitrary
//! (mostly invalid) events aimed at ids that exist probe the refusals.

use std::collections::BTreeSet;
use std::sync::LazyLock;

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
use chatwire_schema::ui_state_snapshot::UiStateSnapshot;
use chatwire_schema::{
    reduce, reduce_all, Direction, DisplayItem, FrameValidator, Id, ServerFrame, UiEvent, UiState, UiStateVersion,
};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Map, Value};

const TS: &str = "2026-11-22T10:00:00Z";

static VALIDATOR: LazyLock<FrameValidator> = LazyLock::new(FrameValidator::new);

fn id(s: impl Into<String>) -> Id {
    Id::new_unchecked_valid(s)
}

// ---------------------------------------------------------------------------------------------
// The model: a plan of random choices, turned into frames deterministically
// ---------------------------------------------------------------------------------------------

/// How a self-settling (running) call ends.
#[derive(Clone, Copy, Debug)]
enum AutoOutcome {
    Complete,
    Fail,
    DismissByServer,
}

/// How an awaited (pending) call ends once the turn waits for it.
#[derive(Clone, Copy, Debug)]
enum AwaitedOutcome {
    Submit,
    DismissByClient,
    Expire,
}

/// One `chat.tool_output` frame; every field is optional on the wire.
#[derive(Clone, Debug)]
struct OutputPlan {
    command: bool,
    approval: Option<ApprovalDecision>,
    stdout: bool,
    stderr: bool,
    exit_code: Option<i32>,
}

#[derive(Clone, Debug)]
struct CallPlan {
    awaiting: bool,
    with_corr: bool,
    display: DisplayMode,
    progress_steps: u8,
    outputs: Vec<OutputPlan>,
    auto_outcome: AutoOutcome,
    awaited_outcome: AwaitedOutcome,
}

#[derive(Clone, Debug)]
struct BatchPlan {
    say_before: bool,
    calls: Vec<CallPlan>,
    /// Settle order (indices into `calls`).
    settle_order: Vec<usize>,
    /// Another settle order of the same batch, for the display-order property.
    alt_settle_order: Vec<usize>,
    /// Leave the awaited calls pending when the turn waits: the next turn supersedes them or a rewind drops them.
    abandon_when_awaiting: bool,
}

#[derive(Clone, Debug)]
struct TurnPlan {
    say_first: bool,
    batches: Vec<BatchPlan>,
    end: RunCompleteStatus,
    /// Rewind after the turn, to an invocation picked among those in the effective state.
    rewind_to: Option<Index>,
}

#[derive(Clone, Debug)]
struct Plan {
    turns: Vec<TurnPlan>,
}

fn approval_strategy() -> impl Strategy<Value = ApprovalDecision> {
    prop_oneof![
        Just(ApprovalDecision::Approve),
        Just(ApprovalDecision::DenyContinue),
        Just(ApprovalDecision::DenyAbort)
    ]
}

fn output_strategy() -> impl Strategy<Value = OutputPlan> {
    (
        any::<bool>(),
        proptest::option::of(approval_strategy()),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(-2..3),
    )
        .prop_map(|(command, approval, stdout, stderr, exit_code)| OutputPlan {
            command,
            approval,
            stdout,
            stderr,
            exit_code,
        })
}

fn call_strategy() -> impl Strategy<Value = CallPlan> {
    (
        prop::bool::weighted(0.4),
        any::<bool>(),
        prop_oneof![Just(DisplayMode::Inline), Just(DisplayMode::Artifact), Just(DisplayMode::Composer)],
        0u8..3,
        prop::collection::vec(output_strategy(), 0..3),
        prop_oneof![
            3 => Just(AutoOutcome::Complete),
            1 => Just(AutoOutcome::Fail),
            1 => Just(AutoOutcome::DismissByServer),
        ],
        prop_oneof![
            3 => Just(AwaitedOutcome::Submit),
            1 => Just(AwaitedOutcome::DismissByClient),
            1 => Just(AwaitedOutcome::Expire),
        ],
    )
        .prop_map(|(awaiting, with_corr, display, progress_steps, outputs, auto_outcome, awaited_outcome)| {
            CallPlan { awaiting, with_corr, display, progress_steps, outputs, auto_outcome, awaited_outcome }
        })
}

fn batch_strategy() -> impl Strategy<Value = BatchPlan> {
    (1usize..=6).prop_flat_map(|n| {
        let order: Vec<usize> = (0..n).collect();
        (
            any::<bool>(),
            prop::collection::vec(call_strategy(), n),
            Just(order.clone()).prop_shuffle(),
            Just(order).prop_shuffle(),
            prop::bool::weighted(0.2),
        )
            .prop_map(|(say_before, calls, settle_order, alt_settle_order, abandon_when_awaiting)| BatchPlan {
                say_before,
                calls,
                settle_order,
                alt_settle_order,
                abandon_when_awaiting,
            })
    })
}

fn turn_strategy() -> impl Strategy<Value = TurnPlan> {
    (
        any::<bool>(),
        prop::collection::vec(batch_strategy(), 0..3),
        prop_oneof![
            3 => Just(RunCompleteStatus::Completed),
            1 => Just(RunCompleteStatus::Failed),
            1 => Just(RunCompleteStatus::Cancelled),
        ],
        proptest::option::weighted(0.25, any::<Index>()),
    )
        .prop_map(|(say_first, batches, end, rewind_to)| TurnPlan { say_first, batches, end, rewind_to })
}

fn plan_strategy() -> impl Strategy<Value = Plan> {
    prop::collection::vec(turn_strategy(), 1..6).prop_map(|turns| Plan { turns })
}

/// Emits frames with increasing `seq` and tracks what the model needs to stay valid.
struct Builder {
    frames: Vec<ServerFrame>,
    seq: u64,
    /// Invocations in the effective state, oldest first.
    live_invocations: Vec<Id>,
    /// Awaited calls of an abandoned turn, still pending, in call order.
    pending: Vec<Id>,
}

impl Builder {
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn push(&mut self, frame: ServerFrame) {
        self.frames.push(frame);
    }

    fn run_started(&mut self, invocation: &Id) {
        let seq = self.next_seq();
        self.push(ServerFrame::RunStarted(RunStarted { seq, invocation_id: invocation.clone(), ts: TS.into() }));
    }

    fn run_complete(&mut self, invocation: &Id, status: RunCompleteStatus) {
        let seq = self.next_seq();
        let (reason, error) = match status {
            RunCompleteStatus::AwaitingInput => (Some("awaiting_user_input".to_owned()), None),
            RunCompleteStatus::Failed => (None, Some("tool crashed".to_owned())),
            _ => (None, None),
        };
        self.push(ServerFrame::RunComplete(RunComplete {
            seq,
            invocation_id: invocation.clone(),
            status,
            reason,
            error,
            ts: TS.into(),
        }));
    }

    fn say(&mut self, invocation: &Id, item: Id) {
        let seq = self.next_seq();
        self.push(ServerFrame::AssistantMessage(AssistantMessage {
            seq,
            invocation_id: invocation.clone(),
            markdown: format!("Working on it ({item})."),
            item_id: item,
            ts: TS.into(),
        }));
    }

    fn dismiss(&mut self, call: &Id, initiated_by: Initiator, reason: &str, in_reply_to: Option<Id>) {
        let seq = self.next_seq();
        self.push(ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq,
            tool_call_id: call.clone(),
            initiated_by,
            reason: Some(reason.into()),
            in_reply_to,
            ts: TS.into(),
        }));
    }

    fn complete(&mut self, call: &Id, status: CompletionStatus, result: Option<Value>, in_reply_to: Option<Id>) {
        let seq = self.next_seq();
        let error = match status {
            CompletionStatus::Completed => None,
            CompletionStatus::Failed => Some("exit status 1".to_owned()),
            CompletionStatus::Expired => Some("expired".to_owned()),
        };
        self.push(ServerFrame::ToolCallComplete(ToolCallComplete {
            seq,
            tool_call_id: call.clone(),
            status,
            summary: result.as_ref().map(|_| format!("{call} done")),
            result,
            error,
            in_reply_to,
            ts: TS.into(),
        }));
    }

    fn tool_call(&mut self, invocation: &Id, call_id: &Id, plan: &CallPlan, call_index: u32) {
        let seq = self.next_seq();
        let (tool_name, interaction_type, component_type) = if plan.awaiting {
            ("ask_user", InteractionType::UiTool, Some("ConfirmForm".to_owned()))
        } else {
            ("run_command", InteractionType::AutoTool, None)
        };
        let mut payload = Map::new();
        payload.insert("call_index".into(), json!(call_index));
        payload.insert("args".into(), json!({ "path": format!("/work/{call_id}"), "recursive": call_index % 2 == 0 }));
        self.push(ServerFrame::ToolCall(ToolCall {
            seq,
            invocation_id: invocation.clone(),
            tool_call_id: call_id.clone(),
            corr: plan.with_corr.then(|| call_id.clone()),
            tool_name: tool_name.into(),
            component_type,
            workflow_name: plan.awaiting.then(|| "onboarding".to_owned()),
            interaction_type,
            awaiting_response: plan.awaiting,
            display: plan.display,
            payload,
            call_index,
            ts: TS.into(),
        }));
    }

    fn progress_and_outputs(&mut self, call_id: &Id, plan: &CallPlan) {
        if !plan.awaiting {
            let steps = u32::from(plan.progress_steps);
            for step in 1..=steps {
                let seq = self.next_seq();
                let fraction = Fraction::new(f64::from(step) / f64::from(steps)).expect("step <= steps");
                self.push(ServerFrame::ToolProgress(ToolProgress {
                    seq,
                    tool_call_id: call_id.clone(),
                    message: Some(format!("step {step} of {steps}")),
                    fraction: Some(fraction),
                    ts: TS.into(),
                }));
            }
        }
        for (n, out) in plan.outputs.iter().enumerate() {
            let seq = self.next_seq();
            self.push(ServerFrame::ToolOutput(ToolOutput {
                seq,
                tool_call_id: call_id.clone(),
                command: out.command.then(|| format!("ls {call_id}")),
                approval: out.approval,
                stdout: out.stdout.then(|| format!("out {n}\n")),
                stderr: out.stderr.then(|| format!("err {n}\n")),
                exit_code: out.exit_code,
                ts: TS.into(),
            }));
        }
    }

    /// Plays one batch; returns false when the turn was abandoned while waiting for input.
    fn batch(&mut self, invocation: &Id, prefix: &str, plan: &BatchPlan, alt: bool) -> bool {
        if plan.say_before {
            self.say(invocation, id(format!("{prefix}-say")));
        }
        let call_ids: Vec<Id> = (0..plan.calls.len()).map(|i| id(format!("{prefix}-tc{i}"))).collect();
        // MULTI-001: the whole batch first, in call order.
        for (i, (call_id, call)) in call_ids.iter().zip(&plan.calls).enumerate() {
            self.tool_call(invocation, call_id, call, u32::try_from(i).expect("at most 6 calls"));
        }
        let order = if alt { &plan.alt_settle_order } else { &plan.settle_order };
        let mut awaited = Vec::new();
        for &i in order {
            let (call_id, call) = (&call_ids[i], &plan.calls[i]);
            self.progress_and_outputs(call_id, call);
            if call.awaiting {
                awaited.push(i);
                continue;
            }
            match call.auto_outcome {
                AutoOutcome::Complete => {
                    self.complete(call_id, CompletionStatus::Completed, Some(json!({ "lines": i })), None)
                }
                AutoOutcome::Fail => self.complete(call_id, CompletionStatus::Failed, None, None),
                AutoOutcome::DismissByServer => self.dismiss(call_id, Initiator::Server, "no longer needed", None),
            }
        }
        if awaited.is_empty() {
            return true;
        }
        self.run_complete(invocation, RunCompleteStatus::AwaitingInput);
        if plan.abandon_when_awaiting {
            let mut in_call_order = awaited.clone();
            in_call_order.sort_unstable();
            self.pending = in_call_order.into_iter().map(|i| call_ids[i].clone()).collect();
            return false;
        }
        for (k, &i) in awaited.iter().enumerate() {
            let still_waiting = k + 1 < awaited.len();
            let call_id = &call_ids[i];
            let response = id(format!("{call_id}-resp"));
            match plan.calls[i].awaited_outcome {
                AwaitedOutcome::Expire => {
                    // Expiry needs no run slice; the turn resumes only once nothing is awaited.
                    self.complete(call_id, CompletionStatus::Expired, None, None);
                    if !still_waiting {
                        self.run_started(invocation);
                    }
                    continue;
                }
                AwaitedOutcome::Submit => {
                    self.run_started(invocation);
                    self.complete(call_id, CompletionStatus::Completed, Some(json!({ "ok": true })), Some(response));
                }
                AwaitedOutcome::DismissByClient => {
                    self.run_started(invocation);
                    self.dismiss(call_id, Initiator::Client, "closed", Some(response));
                }
            }
            if still_waiting {
                self.run_complete(invocation, RunCompleteStatus::AwaitingInput);
            }
        }
        true
    }
}

/// Turns a plan into a valid event sequence; `alt` settles every batch in its alternative order.
fn build(plan: &Plan, alt: bool) -> Vec<ServerFrame> {
    let mut b = Builder { frames: Vec::new(), seq: 0, live_invocations: Vec::new(), pending: Vec::new() };
    for (t, turn) in plan.turns.iter().enumerate() {
        for call in std::mem::take(&mut b.pending) {
            b.dismiss(&call, Initiator::Server, "superseded", None);
        }
        let invocation = id(format!("inv{t}"));
        let seq = b.next_seq();
        b.push(ServerFrame::UserMessageAccepted(UserMessageAccepted {
            seq,
            in_reply_to: id(format!("msg{t}")),
            invocation_id: invocation.clone(),
            item_id: id(format!("t{t}-user")),
            text: format!("turn {t}"),
            ts: TS.into(),
        }));
        b.run_started(&invocation);
        b.live_invocations.push(invocation.clone());
        if turn.say_first {
            b.say(&invocation, id(format!("t{t}-hello")));
        }
        let mut finished = true;
        for (n, batch) in turn.batches.iter().enumerate() {
            if !b.batch(&invocation, &format!("t{t}b{n}"), batch, alt) {
                finished = false;
                break;
            }
        }
        if finished {
            b.run_complete(&invocation, turn.end);
        }
        if let Some(index) = turn.rewind_to {
            let cut = index.index(b.live_invocations.len());
            let removed = b.live_invocations.split_off(cut);
            let seq = b.next_seq();
            b.push(ServerFrame::RewindComplete(RewindComplete {
                seq,
                in_reply_to: id(format!("rewind{t}")),
                before_invocation_id: removed[0].clone(),
                removed_invocation_ids: removed,
                ts: TS.into(),
            }));
            // Pending calls only ever belong to the newest turn, which every rewind removes.
            b.pending.clear();
        }
    }
    b.frames
}

fn event(frame: &ServerFrame) -> UiEvent<'_> {
    frame.ui_event().unwrap_or_else(|| panic!("{} is not a UI event", frame.type_name()))
}

/// Folds a valid sequence, failing the case (with the frame) if the reducer refuses any event.
fn fold_valid(frames: &[ServerFrame]) -> Result<UiState, TestCaseError> {
    reduce_all(&UiState::default(), frames.iter().map(event))
        .map_err(|(i, e)| TestCaseError::fail(format!("valid frame {i} ({:?}) refused: {e}", frames[i])))
}

fn settled_calls(state: &UiState) -> Vec<chatwire_schema::ui_state::ToolCallItem> {
    state
        .items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::ToolCall(c) if c.status.is_terminal() => Some(c.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Arbitrary events aimed at existing ids
// ---------------------------------------------------------------------------------------------

/// Random choices for one arbitrary event; turned into a frame against the current state.
#[derive(Clone, Debug)]
struct ArbitraryEvent {
    kind: u8,
    pick_a: Index,
    pick_b: Index,
    fresh_id: bool,
    target_settled: bool,
    flag: bool,
    variant: u8,
}

fn arbitrary_event_strategy() -> impl Strategy<Value = ArbitraryEvent> {
    (0u8..10, any::<Index>(), any::<Index>(), prop::bool::weighted(0.15), any::<bool>(), any::<bool>(), 0u8..12)
        .prop_map(|(kind, pick_a, pick_b, fresh_id, target_settled, flag, variant)| ArbitraryEvent {
            kind,
            pick_a,
            pick_b,
            fresh_id,
            target_settled,
            flag,
            variant,
        })
}

fn pick(pool: &[Id], index: &Index, fresh: bool, n: usize) -> Id {
    if fresh || pool.is_empty() {
        id(format!("fresh{n}"))
    } else {
        pool[index.index(pool.len())].clone()
    }
}

/// Builds the frame: ids come from the state (or are fresh), so most events hit real items.
fn materialize(a: &ArbitraryEvent, state: &UiState, n: usize) -> ServerFrame {
    let invocations: Vec<Id> = state.invocations().into_iter().cloned().collect();
    let items: Vec<Id> = state.items.iter().map(|i| i.id().clone()).collect();
    let calls: Vec<Id> = state
        .items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::ToolCall(c) if !a.target_settled || c.status.is_terminal() => Some(c.id.clone()),
            _ => None,
        })
        .collect();
    let invocation = pick(&invocations, &a.pick_a, a.fresh_id, n);
    let call = pick(&calls, &a.pick_a, a.fresh_id, n);
    let seq = 10_000 + n as u64;
    let ts = TS.to_owned();
    match a.kind {
        0 => ServerFrame::UserMessageAccepted(UserMessageAccepted {
            seq,
            in_reply_to: id(format!("arb{n}")),
            invocation_id: invocation,
            item_id: pick(&items, &a.pick_b, a.flag, n),
            text: "arbitrary".into(),
            ts,
        }),
        1 => ServerFrame::RunStarted(RunStarted { seq, invocation_id: invocation, ts }),
        2 => ServerFrame::AssistantMessage(AssistantMessage {
            seq,
            invocation_id: invocation,
            item_id: pick(&items, &a.pick_b, a.flag, n),
            markdown: "arbitrary".into(),
            ts,
        }),
        3 => {
            let tool_call_id = pick(&items, &a.pick_b, a.flag, n);
            ServerFrame::ToolCall(ToolCall {
                seq,
                invocation_id: invocation,
                corr: match a.variant % 3 {
                    0 => None,
                    1 => Some(tool_call_id.clone()),
                    _ => Some(id(format!("other{n}"))),
                },
                tool_call_id,
                tool_name: "arbitrary".into(),
                component_type: None,
                workflow_name: None,
                interaction_type: InteractionType::AutoTool,
                awaiting_response: a.flag,
                display: DisplayMode::Inline,
                payload: Map::new(),
                call_index: 0,
                ts,
            })
        }
        4 => ServerFrame::ToolProgress(ToolProgress {
            seq,
            tool_call_id: call,
            message: Some("arbitrary".into()),
            fraction: Fraction::new(f64::from(a.variant) / 11.0).ok(),
            ts,
        }),
        5 => ServerFrame::ToolOutput(ToolOutput {
            seq,
            tool_call_id: call,
            command: a.flag.then(|| "arbitrary".into()),
            approval: Some(ApprovalDecision::DenyAbort),
            stdout: Some("arbitrary".into()),
            stderr: None,
            exit_code: Some(i32::from(a.variant)),
            ts,
        }),
        6 => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq,
            tool_call_id: call,
            status: [CompletionStatus::Completed, CompletionStatus::Failed, CompletionStatus::Expired]
                [usize::from(a.variant % 3)],
            result: Some(json!("overwritten?")),
            error: Some("overwritten?".into()),
            summary: Some("overwritten?".into()),
            in_reply_to: None,
            ts: "2099-01-01T00:00:00Z".into(),
        }),
        7 => ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq,
            tool_call_id: call,
            initiated_by: if a.flag { Initiator::Client } else { Initiator::Server },
            reason: Some("arbitrary".into()),
            in_reply_to: None,
            ts: "2099-01-01T00:00:00Z".into(),
        }),
        8 => ServerFrame::RunComplete(RunComplete {
            seq,
            invocation_id: invocation,
            status: [
                RunCompleteStatus::AwaitingInput,
                RunCompleteStatus::Completed,
                RunCompleteStatus::Failed,
                RunCompleteStatus::Cancelled,
            ][usize::from(a.variant % 4)],
            reason: None,
            error: None,
            ts,
        }),
        _ => {
            // Half the time claim exactly the suffix of invocations, so some rewinds succeed.
            let removed = match invocations.iter().position(|i| i == &invocation) {
                Some(cut) if a.flag => invocations[cut..].to_vec(),
                Some(cut) => invocations[cut..].iter().rev().cloned().collect(),
                None => vec![invocation.clone()],
            };
            ServerFrame::RewindComplete(RewindComplete {
                seq,
                in_reply_to: id(format!("arb{n}")),
                before_invocation_id: invocation,
                removed_invocation_ids: removed,
                ts,
            })
        }
    }
}

/// A valid prefix of a generated sequence and arbitrary events to throw at its end state.
fn prefix_and_probes() -> impl Strategy<Value = (Vec<ServerFrame>, Vec<ArbitraryEvent>)> {
    (plan_strategy(), any::<Index>(), prop::collection::vec(arbitrary_event_strategy(), 1..12)).prop_map(
        |(plan, cut, probes)| {
            let mut frames = build(&plan, false);
            frames.truncate(cut.index(frames.len() + 1));
            (frames, probes)
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

fn snapshot_value(state: &UiState) -> Value {
    let frame = ServerFrame::UiStateSnapshot(UiStateSnapshot { seq: 1, v: UiStateVersion::V1, state: state.clone() });
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
                ServerFrame::ToolCall(c) if state.tool_call(&c.tool_call_id).is_some() => Some(&c.tool_call_id),
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
                                matches!(frame, ServerFrame::RewindComplete(_)),
                                "settled call {} vanished without a rewind: {:?}", call.id, frame
                            ),
                        }
                    }
                }
            }
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
    }
}

/// (d) The generator exercises every event kind, and the situations the properties rely on.
#[test]
fn generator_covers_every_event_kind() {
    const SEQUENCES: usize = 256;
    let mut runner = TestRunner::deterministic();
    let strategy = plan_strategy();
    let mut counts = [0usize; 10];
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
