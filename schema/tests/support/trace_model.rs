//! The model of a backend that generates valid event sequences ([`Plan`] → [`build`]) and
//! arbitrary events aimed at existing ids, shared by the property tests of the reducer
//! (`reducer_props.rs`) and of the patch builder (`state_patch.rs`).
//!
//! Turns with batches of 1–6 tool calls in call order, some awaiting a response, progress and
//! output, settlement in a random permutation, `run_complete`, superseded calls dismissed at the
//! next turn, and occasional rewinds while no run slice is in progress.

// Each test binary that includes the model uses a different part of it.
#![allow(dead_code)]

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::assistant_message_delta::AssistantMessageDelta;
use chatwire_schema::chat::reasoning::Reasoning;
use chatwire_schema::chat::reasoning_delta::ReasoningDelta;
use chatwire_schema::chat::retry_accepted::RetryAccepted;
use chatwire_schema::chat::rewind_complete::RewindComplete;
use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
use chatwire_schema::chat::run_started::RunStarted;
use chatwire_schema::chat::subagent_complete::SubagentComplete;
use chatwire_schema::chat::subagent_complete::SubagentEnd;
use chatwire_schema::chat::subagent_started::SubagentStarted;
use chatwire_schema::chat::tool_call::{DisplayMode, InteractionType, ToolCall};
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::chat::tool_output::{ApprovalDecision, ToolOutput};
use chatwire_schema::chat::tool_progress::{Fraction, ToolProgress};
use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
use chatwire_schema::usage::{Cost, Usage};
use chatwire_schema::{reduce_all, DisplayItem, Id, ServerFrame, UiEvent, UiState};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Map, Value};

#[path = "arbitrary_events.rs"]
mod arbitrary_events;
pub use arbitrary_events::*;

pub const TS: &str = "2026-11-22T10:00:00Z";

pub fn id(s: impl Into<String>) -> Id {
    Id::new_unchecked_valid(s)
}

// ---------------------------------------------------------------------------------------------
// The model: a plan of random choices, turned into frames deterministically
// ---------------------------------------------------------------------------------------------

/// How a self-settling (running) call ends.
#[derive(Clone, Copy, Debug)]
pub enum AutoOutcome {
    Complete,
    Fail,
    DismissByServer,
}

/// How an awaited (pending) call ends once the turn waits for it.
#[derive(Clone, Copy, Debug)]
pub enum AwaitedOutcome {
    Submit,
    DismissByClient,
    Expire,
}

/// One `chat.tool_output` frame; every field is optional on the wire.
#[derive(Clone, Debug)]
pub struct OutputPlan {
    pub command: bool,
    pub approval: Option<ApprovalDecision>,
    pub stdout: bool,
    pub stderr: bool,
    pub exit_code: Option<i32>,
}

#[derive(Clone, Debug)]
pub struct CallPlan {
    pub awaiting: bool,
    pub with_corr: bool,
    pub display: DisplayMode,
    pub progress_steps: u8,
    pub outputs: Vec<OutputPlan>,
    pub auto_outcome: AutoOutcome,
    pub awaited_outcome: AwaitedOutcome,
    /// The sub-agent a running call hosts (since 1.3): it plays after the call's progress, in
    /// place of its output.
    pub subagent: Option<SubagentPlan>,
}

/// A sub-agent run (since 1.3, `STATE-064` … `STATE-066`): its texts, reasoning and a nested call
/// that hosts a sub-agent of its own, then how it ends.
#[derive(Clone, Debug)]
pub struct SubagentPlan {
    pub says: u8,
    pub reason: bool,
    pub nested_call: bool,
    pub nested_host: bool,
    pub returned: bool,
    pub failed: bool,
}

pub fn subagent_strategy() -> impl Strategy<Value = SubagentPlan> {
    (0u8..3, any::<bool>(), any::<bool>(), prop::bool::weighted(0.3), any::<bool>(), prop::bool::weighted(0.2))
        .prop_map(|(says, reason, nested_call, nested_host, returned, failed)| SubagentPlan {
            says,
            reason,
            nested_call,
            nested_host,
            returned,
            failed,
        })
}

#[derive(Clone, Debug)]
pub struct BatchPlan {
    pub say_before: bool,
    pub calls: Vec<CallPlan>,
    /// Settle order (indices into `calls`).
    pub settle_order: Vec<usize>,
    /// Another settle order of the same batch, for the display-order property.
    pub alt_settle_order: Vec<usize>,
    /// Leave the awaited calls pending when the turn waits: the next turn supersedes them or a rewind drops them.
    pub abandon_when_awaiting: bool,
}

#[derive(Clone, Debug)]
pub struct TurnPlan {
    pub say_first: bool,
    pub batches: Vec<BatchPlan>,
    pub end: RunCompleteStatus,
    /// Rewind after the turn, to an invocation picked among those in the effective state.
    pub rewind_to: Option<Index>,
    /// Stream every message of the turn in this many deltas before its end frame (0: not streamed).
    pub stream_chunks: u8,
    /// Retry a turn that ended, after an item of it picked here, and run it again (since 1.1).
    pub retry_after: Option<Index>,
    /// Reason before the first message (since 1.3): 0 not, 1 whole, 2 streamed in the turn's
    /// `stream_chunks` deltas, 3 streamed and then redacted with a payload.
    pub reason: u8,
    /// The usage the turn's run slices report (since 1.3), in tokens; none when absent.
    pub usage: Option<u16>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub turns: Vec<TurnPlan>,
}

pub fn approval_strategy() -> impl Strategy<Value = ApprovalDecision> {
    prop_oneof![
        Just(ApprovalDecision::Approve),
        Just(ApprovalDecision::DenyContinue),
        Just(ApprovalDecision::DenyAbort)
    ]
}

pub fn output_strategy() -> impl Strategy<Value = OutputPlan> {
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

pub fn call_strategy() -> impl Strategy<Value = CallPlan> {
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
        proptest::option::weighted(0.2, subagent_strategy()),
    )
        .prop_map(
            |(awaiting, with_corr, display, progress_steps, outputs, auto_outcome, awaited_outcome, subagent)| {
                CallPlan {
                    awaiting,
                    with_corr,
                    display,
                    progress_steps,
                    outputs,
                    auto_outcome,
                    awaited_outcome,
                    subagent: subagent.filter(|_| !awaiting),
                }
            },
        )
}

pub fn batch_strategy() -> impl Strategy<Value = BatchPlan> {
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

pub fn turn_strategy() -> impl Strategy<Value = TurnPlan> {
    (
        any::<bool>(),
        prop::collection::vec(batch_strategy(), 0..3),
        prop_oneof![
            3 => Just(RunCompleteStatus::Completed),
            1 => Just(RunCompleteStatus::Failed),
            1 => Just(RunCompleteStatus::Cancelled),
        ],
        proptest::option::weighted(0.25, any::<Index>()),
        prop_oneof![2 => Just(0u8), 1 => 1u8..4],
        proptest::option::weighted(0.25, any::<Index>()),
        prop_oneof![2 => Just(0u8), 1 => 1u8..4],
        proptest::option::weighted(0.4, any::<u16>()),
    )
        .prop_map(|(say_first, batches, end, rewind_to, stream_chunks, retry_after, reason, usage)| TurnPlan {
            say_first,
            batches,
            end,
            rewind_to,
            stream_chunks,
            retry_after,
            reason,
            usage,
        })
}

pub fn plan_strategy() -> impl Strategy<Value = Plan> {
    prop::collection::vec(turn_strategy(), 1..6).prop_map(|turns| Plan { turns })
}

/// Emits frames with increasing `seq` and tracks what the model needs to stay valid.
pub struct Builder {
    pub frames: Vec<ServerFrame>,
    pub seq: u64,
    /// Invocations in the effective state, oldest first.
    pub live_invocations: Vec<Id>,
    /// Awaited calls of an abandoned turn, still pending, in call order.
    pub pending: Vec<Id>,
    /// How many deltas each message of the current turn streams before its end frame.
    pub stream_chunks: u8,
    /// The usage the current turn's first run slice reports (since 1.3).
    pub usage: Option<u16>,
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
        let usage = self.usage.take();
        self.push(ServerFrame::RunComplete(RunComplete {
            seq,
            invocation_id: invocation.clone(),
            status,
            reason,
            error,
            // The turn's first slice reports it: how many slices a turn has depends on the order
            // its calls settle in, and the display-order property compares whole states.
            usage: usage.map(|tokens| Usage {
                input_tokens: u64::from(tokens),
                output_tokens: 1,
                reasoning_tokens: (tokens % 2 == 0).then_some(2),
                cached_input_tokens: None,
                cost: (tokens % 3 == 0).then(|| Cost { amount: "0.001".into(), currency: "USD".into() }),
            }),
            ts: TS.into(),
        }));
    }

    /// Reasoning (since 1.3, `STATE-054`, `STATE-055`): `how` as [`TurnPlan::reason`].
    fn reason(&mut self, invocation: &Id, item: Id, how: u8) {
        self.reason_in(invocation, None, item, how);
    }

    /// [`Builder::reason`] in the transcript of `parent` (since 1.3, `STATE-065`).
    fn reason_in(&mut self, invocation: &Id, parent: Option<&Id>, item: Id, how: u8) {
        let text = format!("Thinking about {item}.");
        let chunks = if how >= 2 { usize::from(self.stream_chunks.max(1)) } else { 0 };
        let mut from = 0;
        for k in 0..chunks {
            let to = if k + 1 == chunks { text.len() } else { from + 3 };
            let seq = self.next_seq();
            self.push(ServerFrame::ReasoningDelta(ReasoningDelta {
                parent_call_id: parent.cloned(),
                seq,
                invocation_id: invocation.clone(),
                item_id: item.clone(),
                text: text[from..to].to_owned(),
                ts: "2026-11-22T09:59:58Z".into(),
            }));
            from = to;
        }
        let redacted = how == 3;
        let seq = self.next_seq();
        self.push(ServerFrame::Reasoning(Reasoning {
            parent_call_id: parent.cloned(),
            seq,
            invocation_id: invocation.clone(),
            item_id: item,
            text: if redacted { String::new() } else { text },
            redacted,
            encrypted: redacted.then(|| "c2lnbmVk+/=".to_owned()),
            ts: TS.into(),
        }));
    }

    fn say(&mut self, invocation: &Id, item: Id) {
        self.say_in(invocation, None, item);
    }

    /// [`Builder::say`] in the transcript of `parent` (since 1.3, `STATE-065`).
    fn say_in(&mut self, invocation: &Id, parent: Option<&Id>, item: Id) {
        let markdown = format!("Working on it ({item}).");
        // STATE-042: the text in `stream_chunks` deltas (the last takes the rest), then the end.
        let chunks = usize::from(self.stream_chunks);
        let mut from = 0;
        for k in 0..chunks {
            let to = if k + 1 == chunks { markdown.len() } else { from + 3 };
            let seq = self.next_seq();
            self.push(ServerFrame::AssistantMessageDelta(AssistantMessageDelta {
                parent_call_id: parent.cloned(),
                seq,
                invocation_id: invocation.clone(),
                item_id: item.clone(),
                delta: markdown[from..to].to_owned(),
                ts: "2026-11-22T09:59:59Z".into(),
            }));
            from = to;
        }
        let seq = self.next_seq();
        self.push(ServerFrame::AssistantMessage(AssistantMessage {
            parent_call_id: parent.cloned(),
            seq,
            invocation_id: invocation.clone(),
            markdown,
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
        self.tool_call_in(invocation, None, call_id, plan, call_index);
    }

    /// A sub-agent run in the call `host` (since 1.3): started on a new thread, its texts (and
    /// reasoning), a nested call that may host a sub-agent of its own, then its end.
    fn subagent(&mut self, invocation: &Id, host: &Id, plan: &SubagentPlan, depth: usize) {
        let seq = self.next_seq();
        self.push(ServerFrame::SubagentStarted(SubagentStarted {
            seq,
            tool_call_id: host.clone(),
            thread_id: id(format!("th-{host}")),
            name: Some("helper".into()),
            input: format!("help with {host}"),
            continues: None,
            answers_return: false,
            ts: TS.into(),
        }));
        if plan.reason {
            self.reason_in(invocation, Some(host), id(format!("{host}-r")), 2);
        }
        for k in 0..plan.says {
            self.say_in(invocation, Some(host), id(format!("{host}-s{k}")));
        }
        if plan.nested_call {
            let nested = id(format!("{host}-n"));
            let call = CallPlan {
                awaiting: false,
                with_corr: false,
                display: DisplayMode::Inline,
                progress_steps: 1,
                outputs: Vec::new(),
                auto_outcome: AutoOutcome::Complete,
                awaited_outcome: AwaitedOutcome::Submit,
                subagent: None,
            };
            self.tool_call_in(invocation, Some(host), &nested, &call, 0);
            self.progress_and_outputs(&nested, &call);
            if plan.nested_host && depth < chatwire_schema::MAX_SUBAGENT_DEPTH {
                let inner = SubagentPlan { nested_host: false, ..plan.clone() };
                self.subagent(invocation, &nested, &inner, depth + 1);
            }
            self.complete(&nested, CompletionStatus::Completed, Some(json!({ "nested": true })), None);
        }
        let seq = self.next_seq();
        self.push(ServerFrame::SubagentComplete(SubagentComplete {
            seq,
            tool_call_id: host.clone(),
            status: if plan.failed { SubagentEnd::Failed } else { SubagentEnd::Completed },
            response: Some(format!("done with {host}")),
            returned: plan.returned && !plan.failed,
            ts: TS.into(),
        }));
    }

    fn tool_call_in(&mut self, invocation: &Id, parent: Option<&Id>, call_id: &Id, plan: &CallPlan, call_index: u32) {
        let seq = self.next_seq();
        let (tool_name, interaction_type, component_type) = if plan.awaiting {
            ("ask_user", InteractionType::UiTool, Some("ConfirmForm".to_owned()))
        } else {
            ("run_command", InteractionType::AutoTool, None)
        };
        let mut payload = Map::new();
        payload.insert("call_index".into(), json!(call_index));
        payload.insert(
            "args".into(),
            json!({ "path": format!("/work/{call_id}"), "recursive": call_index.is_multiple_of(2) }),
        );
        self.push(ServerFrame::ToolCall(ToolCall {
            parent_call_id: parent.cloned(),
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
            response_schema: None,
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
            match &call.subagent {
                // A host's output is its transcript (STATE-074).
                Some(sub) => {
                    self.progress_and_outputs(call_id, &CallPlan { outputs: Vec::new(), ..call.clone() });
                    self.subagent(invocation, call_id, sub, 1);
                }
                None => self.progress_and_outputs(call_id, call),
            }
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
pub fn build(plan: &Plan, alt: bool) -> Vec<ServerFrame> {
    let mut b = Builder {
        frames: Vec::new(),
        seq: 0,
        live_invocations: Vec::new(),
        pending: Vec::new(),
        stream_chunks: 0,
        usage: None,
    };
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
        b.stream_chunks = turn.stream_chunks;
        b.usage = turn.usage;
        if turn.reason > 0 {
            b.reason(&invocation, id(format!("t{t}-thought")), turn.reason);
        }
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
        if let (true, Some(index)) = (finished, turn.retry_after) {
            // STATE-044: cut after an item of this turn (its user message or later), run it again.
            let state = fold_valid(&b.frames).expect("the model's frames are valid");
            let first = state.items.iter().position(|i| i.invocation_id() == &invocation).expect("the turn's items");
            let kept = first + index.index(state.items.len() - first);
            let seq = b.next_seq();
            b.push(ServerFrame::RetryAccepted(RetryAccepted {
                seq,
                in_reply_to: id(format!("retry{t}")),
                invocation_id: invocation.clone(),
                after_item_id: state.items[kept].id().clone(),
                removed_item_ids: state.items[retry_cut(&state.items, kept)..].iter().map(|i| i.id().clone()).collect(),
                ts: TS.into(),
            }));
            b.run_started(&invocation);
            b.say(&invocation, id(format!("t{t}-retried")));
            b.run_complete(&invocation, RunCompleteStatus::Completed);
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

pub fn event(frame: &ServerFrame) -> UiEvent<'_> {
    frame.ui_event().unwrap_or_else(|| panic!("{} is not a UI event", frame.type_name()))
}

/// Folds a valid sequence, failing the case (with the frame) if the reducer refuses any event.
pub fn fold_valid(frames: &[ServerFrame]) -> Result<UiState, TestCaseError> {
    reduce_all(&UiState::default(), frames.iter().map(event))
        .map_err(|(i, e)| TestCaseError::fail(format!("valid frame {i} ({:?}) refused: {e}", frames[i])))
}

pub fn settled_calls(state: &UiState) -> Vec<chatwire_schema::ui_state::ToolCallItem> {
    state
        .items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::ToolCall(c) if c.status.is_terminal() => Some(c.clone()),
            _ => None,
        })
        .collect()
}
