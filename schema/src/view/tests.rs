//! The view commutes with the reducer and with its patches, over random event sequences that mix
//! reasoning (whole, streamed, redacted, with a payload), text, tool calls, usage, rewinds and
//! sub-agents (texts whole and streamed, reasoning, a nested call hosting a sub-agent of its own).

use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;
use crate::patch_op::PatchOp;

const V1_2: ProtocolVersion = ProtocolVersion { major: 1, minor: 2 };

/// One step of a generated session, as the frames it turns into.
#[derive(Clone, Debug)]
enum Step {
    Say,
    Reason { chunks: usize, redacted: bool, encrypted: bool },
    Tool,
    Usage(u64),
    Rewind,
    Subagent { texts: usize, streamed: bool, reason: bool, nested: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Say),
        (0usize..3, any::<bool>(), any::<bool>()).prop_map(|(chunks, redacted, encrypted)| Step::Reason {
            chunks,
            redacted,
            encrypted
        }),
        Just(Step::Tool),
        (0u64..1000).prop_map(Step::Usage),
        Just(Step::Rewind),
        (0usize..3, any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(texts, streamed, reason, nested)| Step::Subagent { texts, streamed, reason, nested }),
    ]
}

/// The frames of a sub-agent run hosted by the call `host` (at `depth`), each item id from `n`.
fn subagent_frames(inv: &str, host: &str, step: &Step, depth: usize, out: &mut Vec<Value>) {
    let Step::Subagent { texts, streamed, reason, nested } = step else { return };
    let ts = "2026-01-01T00:00:00Z";
    out.push(json!({"type": "chat.subagent_started", "seq": 1, "tool_call_id": host, "thread_id": format!("th-{host}"), "input": "go", "ts": ts}));
    if *reason {
        out.push(json!({"type": "chat.reasoning_delta", "seq": 1, "invocation_id": inv, "parent_call_id": host, "item_id": format!("{host}-r"), "text": "hm", "ts": ts}));
        out.push(json!({"type": "chat.reasoning", "seq": 1, "invocation_id": inv, "parent_call_id": host, "item_id": format!("{host}-r"), "text": "hm", "ts": ts}));
    }
    for k in 0..*texts {
        let item = format!("{host}-t{k}");
        if *streamed {
            out.push(json!({"type": "chat.assistant_message_delta", "seq": 1, "invocation_id": inv, "parent_call_id": host, "item_id": item, "delta": "pa", "ts": ts}));
            out.push(json!({"type": "chat.assistant_message_delta", "seq": 1, "invocation_id": inv, "parent_call_id": host, "item_id": item, "delta": "rt", "ts": ts}));
        }
        out.push(json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv, "parent_call_id": host, "item_id": item, "markdown": "part", "ts": ts}));
    }
    if *nested {
        let call = format!("{host}-c");
        out.push(json!({"type": "chat.tool_call", "seq": 1, "invocation_id": inv, "parent_call_id": host, "tool_call_id": call, "tool_name": "t", "interaction_type": "auto_tool", "display": "inline", "awaiting_response": false, "payload": {}, "call_index": 0, "ts": ts}));
        out.push(json!({"type": "chat.tool_progress", "seq": 1, "tool_call_id": call, "message": "m", "ts": ts}));
        if depth < 2 {
            subagent_frames(inv, &call, step, depth + 1, out);
        } else {
            out.push(json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": call, "stdout": "o", "ts": ts}));
        }
        out.push(json!({"type": "chat.tool_call_complete", "seq": 1, "tool_call_id": call, "status": "completed", "result": 1, "ts": ts}));
    }
    out.push(json!({"type": "chat.subagent_complete", "seq": 1, "tool_call_id": host, "status": "completed", "response": "r", "ts": ts}));
}

/// The frames of turns made of `steps` (each turn: user message, run, its steps, run end).
fn frames(turns: &[Vec<Step>]) -> Vec<ServerFrame> {
    let mut out = Vec::new();
    let mut n = 0;
    let ts = "2026-01-01T00:00:00Z";
    let push = |v: Value, out: &mut Vec<ServerFrame>| out.push(serde_json::from_value(v).expect("a valid frame"));
    let mut invocations: Vec<String> = Vec::new();
    for (t, steps) in turns.iter().enumerate() {
        let inv = format!("inv-{t}");
        if steps.iter().any(|s| matches!(s, Step::Rewind)) && !invocations.is_empty() {
            let removed = invocations.split_off(invocations.len() - 1);
            push(
                json!({"type": "chat.rewind_complete", "seq": 1, "in_reply_to": format!("rw-{t}"), "before_invocation_id": removed[0], "removed_invocation_ids": removed, "ts": ts}),
                &mut out,
            );
        }
        invocations.push(inv.clone());
        push(
            json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": format!("m-{t}"), "invocation_id": inv, "item_id": format!("u-{t}"), "text": "hi", "ts": ts}),
            &mut out,
        );
        push(json!({"type": "chat.run_started", "seq": 1, "invocation_id": inv, "ts": ts}), &mut out);
        let mut used: Option<u64> = None;
        for step in steps {
            n += 1;
            let item = format!("i-{n}");
            match step {
                Step::Say => push(
                    json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv, "item_id": item, "markdown": "ok", "ts": ts}),
                    &mut out,
                ),
                Step::Reason { chunks, redacted, encrypted } => {
                    let parts: Vec<String> = (0..*chunks).map(|c| format!("r{c} ")).collect();
                    for part in &parts {
                        push(
                            json!({"type": "chat.reasoning_delta", "seq": 1, "invocation_id": inv, "item_id": item, "text": part, "ts": ts}),
                            &mut out,
                        );
                    }
                    let text = if *redacted { String::new() } else { parts.concat() };
                    let mut end = json!({"type": "chat.reasoning", "seq": 1, "invocation_id": inv, "item_id": item, "text": text, "ts": ts});
                    if *redacted {
                        end["redacted"] = json!(true);
                    }
                    if *encrypted {
                        end["encrypted"] = json!("QUJD+/==");
                    }
                    push(end, &mut out);
                }
                Step::Tool => {
                    push(
                        json!({"type": "chat.tool_call", "seq": 1, "invocation_id": inv, "tool_call_id": item, "tool_name": "t", "interaction_type": "auto_tool", "display": "inline", "awaiting_response": false, "payload": {}, "call_index": 0, "ts": ts}),
                        &mut out,
                    );
                    push(
                        json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": item, "stdout": "x", "ts": ts}),
                        &mut out,
                    );
                    push(
                        json!({"type": "chat.tool_call_complete", "seq": 1, "tool_call_id": item, "status": "completed", "result": 1, "ts": ts}),
                        &mut out,
                    );
                }
                Step::Usage(tokens) => used = Some(used.unwrap_or(0) + tokens),
                Step::Subagent { .. } => {
                    push(
                        json!({"type": "chat.tool_call", "seq": 1, "invocation_id": inv, "tool_call_id": item, "tool_name": "agent", "interaction_type": "auto_tool", "display": "inline", "awaiting_response": false, "payload": {}, "call_index": 0, "ts": ts}),
                        &mut out,
                    );
                    let mut nested = Vec::new();
                    subagent_frames(&inv, &item, step, 1, &mut nested);
                    for frame in nested {
                        push(frame, &mut out);
                    }
                    push(
                        json!({"type": "chat.tool_call_complete", "seq": 1, "tool_call_id": item, "status": "completed", "result": 1, "ts": ts}),
                        &mut out,
                    );
                }
                Step::Rewind => {}
            }
        }
        let mut end =
            json!({"type": "chat.run_complete", "seq": 1, "invocation_id": inv, "status": "completed", "ts": ts});
        if let Some(tokens) = used {
            end["usage"] =
                json!({"input_tokens": tokens, "output_tokens": 1, "cost": {"amount": "0.01", "currency": "USD"}});
        }
        push(end, &mut out);
    }
    out
}

/// `frames` followed by a retry of the last turn after its user message: the cut removes every
/// item the turn made (reasoning and hosts included), which each view must name as it holds them.
fn with_retry(mut frames: Vec<ServerFrame>) -> Vec<ServerFrame> {
    let mut state = UiState::default();
    for frame in &frames {
        state.apply(frame.ui_event().expect("an event")).expect("the generated session follows the rules");
    }
    let Some(at) = state.items.iter().rposition(|i| matches!(i, DisplayItem::UserMessage(_))) else { return frames };
    let retry = json!({"type": "chat.retry_accepted", "seq": 1, "in_reply_to": "rt-1",
        "invocation_id": state.items[at].invocation_id(), "after_item_id": state.items[at].id(),
        "removed_item_ids": state.items[at + 1..].iter().map(|i| i.id()).collect::<Vec<_>>(), "ts": "2026-01-15T10:00:00Z"});
    frames.push(serde_json::from_value(retry).expect("a retry_accepted"));
    frames
}

fn views() -> [ConnView; 6] {
    let v13 = REASONING_USAGE_SINCE;
    [
        ConnView::new(v13, Some(&[Capability::Reasoning, Capability::Usage, Capability::Subagents])),
        ConnView::new(v13, Some(&[Capability::Reasoning, Capability::Usage])),
        ConnView::new(v13, Some(&[Capability::Usage, Capability::Subagents])),
        ConnView::new(v13, Some(&[Capability::Usage])),
        ConnView::new(v13, Some(&[])),
        ConnView::new(V1_2, Some(&[Capability::Reasoning, Capability::Usage, Capability::Subagents])),
    ]
}

fn apply(base: &UiState, ops: &[PatchOp]) -> UiState {
    let mut doc = serde_json::to_value(base).expect("a state serializes");
    let parsed: Vec<json_patch::PatchOperation> =
        serde_json::from_value(serde_json::to_value(ops).expect("ops serialize")).expect("RFC 6902");
    json_patch::patch(&mut doc, &parsed).expect("the projected patch applies to the view");
    serde_json::from_value(doc).expect("a patched view is a state")
}

proptest! {
    #[test]
    fn the_view_commutes_with_the_reducer_and_its_patches(turns in prop::collection::vec(prop::collection::vec(step(), 0..5), 1..5)) {
        let frames = with_retry(frames(&turns));
        for view in views() {
            let mut whole = UiState::default();
            let mut seen = UiState::default();
            let mut held = UiState::default();
            for frame in &frames {
                let event = frame.ui_event().expect("every generated frame is an event");
                let before = whole.clone();
                let ops = whole.apply_with_patch(event).expect("the generated session follows the rules");
                // What the connection is sent of the frame: itself, another frame (a sub-agent's
                // text as its host's output, SUBAGENT-002), or nothing.
                if let Some(shown) = view.frame_at(frame, &before) {
                    let shown_event = shown.ui_event().expect("an event stays an event");
                    prop_assert!(view.sees_event(event) || shown.type_name() != frame.type_name());
                    seen.apply(shown_event).expect("the view's events follow the rules");
                } else {
                    prop_assert!(!view.sees_event(event) || event.parent_call_id().is_none());
                }
                if !event.is_stream_delta() {
                    let projected = view.patch_at(&before, frame, ops).expect("the view's event applies to the view");
                    held = apply(&held, &projected);
                } else {
                    held = view.state(&whole).into_owned();
                }
                let expected = view.state(&whole).into_owned();
                prop_assert_eq!(&seen, &expected, "fold of the seen events = view of the fold");
                prop_assert_eq!(&held, &expected, "the projected patches keep the view");
            }
        }
    }
}

#[test]
fn a_connection_without_the_features_sees_no_reasoning_and_no_usage() {
    let frames =
        frames(&[vec![Step::Reason { chunks: 2, redacted: false, encrypted: true }, Step::Say, Step::Usage(5)]]);
    let mut whole = UiState::default();
    for frame in &frames {
        whole.apply(frame.ui_event().unwrap()).unwrap();
    }
    assert!(whole
        .items
        .iter()
        .any(|i| matches!(i, DisplayItem::Reasoning(r) if r.encrypted.as_deref() == Some("QUJD+/=="))));
    assert_eq!(whole.usage.as_ref().map(|u| u.total.input_tokens), Some(5));
    let none = ConnView::new(REASONING_USAGE_SINCE, Some(&[]));
    let seen = none.state(&whole);
    assert!(seen.items.iter().all(|i| !matches!(i, DisplayItem::Reasoning(_))) && seen.usage.is_none());
    assert!(frames
        .iter()
        .filter_map(|f| none.frame(f))
        .all(|f| !matches!(&*f, ServerFrame::Reasoning(_) | ServerFrame::ReasoningDelta(_))));
    let older = ConnView::new(V1_2, Some(&[Capability::Reasoning, Capability::Usage]));
    assert_eq!(
        older,
        ConnView { version: V1_2, reasoning: false, usage: false, subagents: false },
        "1.2 defines neither feature"
    );
    assert!(ConnView::new(
        REASONING_USAGE_SINCE,
        Some(&[Capability::Reasoning, Capability::Usage, Capability::Subagents])
    )
    .is_whole());
}

#[test]
fn a_rewind_keeps_the_total_and_drops_the_removed_turns_entries() {
    let frames = frames(&[vec![Step::Usage(10)], vec![Step::Rewind, Step::Usage(3)]]);
    let mut whole = UiState::default();
    for frame in &frames {
        whole.apply(frame.ui_event().unwrap()).unwrap();
    }
    let usage = whole.usage.expect("usage was reported");
    assert_eq!(usage.total.input_tokens, 13, "tokens spent stay spent");
    assert_eq!(usage.total.cost.map(|c| c.amount), Some("0.02".to_owned()));
    assert_eq!(usage.invocations.keys().map(|k| k.as_str()).collect::<Vec<_>>(), vec!["inv-1"]);
}

#[test]
fn an_older_connection_sees_a_sub_agent_as_its_host_streaming_output() {
    let step = Step::Subagent { texts: 2, streamed: true, reason: true, nested: true };
    let frames = frames(&[vec![step]]);
    let mut whole = UiState::default();
    let older = ConnView::new(V1_2, Some(&[Capability::Reasoning, Capability::Usage, Capability::Subagents]));
    let mut sent = Vec::new();
    for frame in &frames {
        if let Some(shown) = older.frame_at(frame, &whole) {
            sent.push(shown.into_owned());
        }
        whole.apply(frame.ui_event().unwrap()).unwrap();
    }
    assert!(sent.iter().all(|f| !matches!(
        f,
        ServerFrame::SubagentStarted(_) | ServerFrame::SubagentComplete(_) | ServerFrame::AssistantMessageDelta(_)
    )));
    let outputs: Vec<&str> = sent
        .iter()
        .filter_map(|f| match f {
            ServerFrame::ToolOutput(o) => o.stdout.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(outputs, ["part\n\n", "part\n\n"], "the depth-1 texts only, each as the host's output");
    let seen = older.state(&whole);
    assert_eq!(seen.items.len(), 3, "user message, host, its output: {:?}", seen.items);
    assert!(matches!(&seen.items[2], DisplayItem::ToolOutput(o) if o.stdout == "part\n\npart\n\n"));
    assert!(seen.items.iter().all(|i| !matches!(i, DisplayItem::ToolCall(c) if c.subagent.is_some())));
}
