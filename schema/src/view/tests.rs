//! The view commutes with the reducer and with its patches, over random event sequences that mix
//! reasoning (whole, streamed, redacted, with a payload), text, tool calls, usage and rewinds.

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
    ]
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

fn views() -> [ConnView; 4] {
    let v13 = REASONING_USAGE_SINCE;
    [
        ConnView::new(v13, Some(&[Capability::Reasoning, Capability::Usage])),
        ConnView::new(v13, Some(&[Capability::Usage])),
        ConnView::new(v13, Some(&[])),
        ConnView::new(V1_2, Some(&[Capability::Reasoning, Capability::Usage])),
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
        let frames = frames(&turns);
        for view in views() {
            let mut whole = UiState::default();
            let mut seen = UiState::default();
            let mut held = UiState::default();
            for frame in &frames {
                let event = frame.ui_event().expect("every generated frame is an event");
                let before = whole.clone();
                let ops = whole.apply_with_patch(event).expect("the generated session follows the rules");
                if let Some(shown) = view.frame(frame) {
                    let shown_event = shown.ui_event().expect("an event stays an event");
                    prop_assert!(view.sees_event(event));
                    seen.apply(shown_event).expect("the view's events follow the rules");
                } else {
                    prop_assert!(!view.sees_event(event));
                }
                if !event.is_stream_delta() {
                    held = apply(&held, &view.patch(&before, ops));
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
    assert_eq!(older, ConnView { version: V1_2, reasoning: false, usage: false }, "1.2 defines neither feature");
    assert!(ConnView::new(REASONING_USAGE_SINCE, Some(&[Capability::Reasoning, Capability::Usage])).is_whole());
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
