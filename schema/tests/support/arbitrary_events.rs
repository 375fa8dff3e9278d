//! Arbitrary events aimed at existing ids (part of the trace model, `trace_model.rs`): random
//! choices turned into a frame against the current state, so that most events hit real items
//! and the reducer's refusals are exercised as often as its rules.

// Each test binary that includes the model uses a different part of it.
#![allow(dead_code)]

use super::*;

/// Random choices for one arbitrary event; turned into a frame against the current state.
#[derive(Clone, Debug)]
pub struct ArbitraryEvent {
    pub kind: u8,
    pub pick_a: Index,
    pub pick_b: Index,
    pub fresh_id: bool,
    pub target_settled: bool,
    pub flag: bool,
    pub variant: u8,
}

pub fn arbitrary_event_strategy() -> impl Strategy<Value = ArbitraryEvent> {
    (0u8..16, any::<Index>(), any::<Index>(), prop::bool::weighted(0.15), any::<bool>(), any::<bool>(), 0u8..12)
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

pub fn pick(pool: &[Id], index: &Index, fresh: bool, n: usize) -> Id {
    if fresh || pool.is_empty() {
        id(format!("fresh{n}"))
    } else {
        pool[index.index(pool.len())].clone()
    }
}

/// Builds the frame: ids come from the state (or are fresh), so most events hit real items.
pub fn materialize(a: &ArbitraryEvent, state: &UiState, n: usize) -> ServerFrame {
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
            parent_call_id: None,
            seq,
            invocation_id: invocation,
            item_id: pick(&items, &a.pick_b, a.flag, n),
            markdown: "arbitrary".into(),
            ts,
        }),
        3 => {
            let tool_call_id = pick(&items, &a.pick_b, a.flag, n);
            ServerFrame::ToolCall(ToolCall {
                parent_call_id: None,
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
                response_schema: None,
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
            usage: a.flag.then(|| Usage {
                input_tokens: u64::from(a.variant),
                output_tokens: 1,
                reasoning_tokens: None,
                cached_input_tokens: None,
                cost: Some(Cost {
                    amount: "0.5".into(),
                    currency: if a.variant.is_multiple_of(2) { "USD" } else { "EUR" }.into(),
                }),
            }),
            ts,
        }),
        12 => ServerFrame::ReasoningDelta(ReasoningDelta {
            parent_call_id: None,
            seq,
            invocation_id: invocation,
            item_id: match state.open_reasoning() {
                Some(open) if !a.flag => open.id.clone(),
                _ => pick(&items, &a.pick_b, a.fresh_id, n),
            },
            text: "hmm".into(),
            ts,
        }),
        13 => ServerFrame::Reasoning(Reasoning {
            parent_call_id: None,
            seq,
            invocation_id: invocation,
            item_id: match state.open_reasoning() {
                Some(open) if !a.flag => open.id.clone(),
                _ => pick(&items, &a.pick_b, a.fresh_id, n),
            },
            text: if a.variant.is_multiple_of(3) { String::new() } else { "hmm".into() },
            redacted: a.variant.is_multiple_of(2),
            encrypted: None,
            ts,
        }),
        10 => ServerFrame::AssistantMessageDelta(AssistantMessageDelta {
            parent_call_id: None,
            seq,
            // Mostly the open stream's item, so that some deltas append.
            invocation_id: invocation,
            item_id: match state.open_stream() {
                Some(open) if !a.flag => open.id.clone(),
                _ => pick(&items, &a.pick_b, a.fresh_id, n),
            },
            delta: "more".into(),
            ts,
        }),
        11 => {
            let kept = state.items.iter().position(|i| i.id() == &pick(&items, &a.pick_b, false, n));
            let mut removed: Vec<Id> = kept.map_or_else(Vec::new, |k| {
                state.items[retry_cut(&state.items, k)..].iter().map(|i| i.id().clone()).collect()
            });
            if !a.flag {
                removed.reverse();
                removed.push(id("extra"));
            }
            ServerFrame::RetryAccepted(RetryAccepted {
                seq,
                in_reply_to: id(format!("arb{n}")),
                invocation_id: state
                    .latest_user_invocation()
                    .filter(|_| !a.variant.is_multiple_of(4))
                    .cloned()
                    .unwrap_or(invocation),
                after_item_id: pick(&items, &a.pick_b, a.fresh_id, n),
                removed_item_ids: removed,
                ts,
            })
        }
        14 => ServerFrame::SubagentStarted(SubagentStarted {
            seq,
            tool_call_id: call,
            thread_id: id(format!("th-arb{}", a.variant % 3)),
            name: None,
            input: "arbitrary".into(),
            continues: a.flag.then(|| pick(&items, &a.pick_b, a.fresh_id, n)),
            answers_return: a.variant.is_multiple_of(5),
            ts,
        }),
        15 => ServerFrame::SubagentComplete(SubagentComplete {
            seq,
            tool_call_id: call,
            status: [SubagentEnd::Completed, SubagentEnd::Failed, SubagentEnd::Cancelled][usize::from(a.variant % 3)],
            response: None,
            returned: a.flag,
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
pub fn prefix_and_probes() -> impl Strategy<Value = (Vec<ServerFrame>, Vec<ArbitraryEvent>)> {
    (plan_strategy(), any::<Index>(), prop::collection::vec(arbitrary_event_strategy(), 1..12)).prop_map(
        |(plan, cut, probes)| {
            let mut frames = build(&plan, false);
            frames.truncate(cut.index(frames.len() + 1));
            (frames, probes)
        },
    )
}

/// Where a retry naming `items[named]` cuts (STATE-044): right after it, or after its output item
/// when it is a tool call followed by one. The model's own statement of the rule, so the property
/// tests check the reducer against it rather than against itself.
pub fn retry_cut(items: &[DisplayItem], named: usize) -> usize {
    match (&items[named], items.get(named + 1)) {
        (DisplayItem::ToolCall(c), Some(DisplayItem::ToolOutput(o))) if o.tool_call_id == c.id => named + 2,
        _ => named + 1,
    }
}
