//! The checks of 1.3's reasoning, usage and sub-agents on hand-made traffic: a 1.3 connection where
//! the feature is in force takes them (no finding), one where it is not gets exactly the finding
//! meant.

use std::sync::Arc;

use chatwire_schema::{FrameValidator, ReqId, ServerFrame, UiState};
use serde_json::{json, Value};

use super::*;

const TS: &str = "2026-01-15T10:00:00Z";
const CAPABILITIES: &[&str] = &["reasoning", "rewind", "subagents", "ui_state_patch", "usage"];

fn found(m: &mut Monitor) -> Vec<(&'static str, String)> {
    m.take_findings().into_iter().map(|f| (f.check.id, f.requirement.to_string())).collect()
}

fn evaluated(m: &Monitor, check: &str, req: &'static str) -> bool {
    m.evaluated().get(check).is_some_and(|s| s.contains(&ReqId::new(req)))
}

/// Connection 0 on a new 1.3 session whose hello asked for `features`; the user message sent.
fn bound(features: &[&str]) -> (Monitor, u64, UiState) {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.3"], "features": features}));
    let welcome = json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h1", "version": "1.3",
        "session_id": "s-1", "resume_token": "t-1", "resumed": false, "capabilities": CAPABILITIES,
        "limits": {"max_frame_bytes": 1048576}, "features": features});
    m.server_text(0, &welcome.to_string());
    let snapshot = json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": UiState::default()});
    m.server_text(0, &snapshot.to_string());
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    assert_eq!(found(&mut m), vec![], "a clean handshake");
    (m, 3, UiState::default())
}

/// Sends each event and the reducer's patch after it.
fn emit(m: &mut Monitor, seq: &mut u64, state: &mut UiState, events: &[Value]) {
    for event in events {
        let mut event = event.clone();
        event["seq"] = json!(*seq);
        let frame: ServerFrame = serde_json::from_value(event.clone()).expect("a valid frame");
        let ops = state.apply_with_patch(frame.ui_event().expect("an event")).expect("the reducer takes it");
        m.server_text(0, &event.to_string());
        let patch =
            json!({"type": "ui_state_patch", "seq": *seq + 1, "base_seq": *seq - 1, "v": "ui_state_v1", "patch": ops});
        m.server_text(0, &patch.to_string());
        *seq += 2;
    }
}

fn turn() -> Vec<Value> {
    vec![
        json!({"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "inv-1", "item_id": "it-1", "text": "go", "ts": TS}),
        json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": TS}),
        json!({"type": "chat.reasoning", "invocation_id": "inv-1", "item_id": "rs-1", "text": "think", "encrypted": "QUJD", "ts": TS}),
        json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "completed",
            "usage": {"input_tokens": 3, "output_tokens": 1}, "ts": TS}),
    ]
}

#[test]
fn reasoning_and_usage_where_in_force_are_no_finding() {
    let (mut m, mut seq, mut state) = bound(&["reasoning", "ui_state_patch", "usage"]);
    emit(&mut m, &mut seq, &mut state, &turn());
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.state(0), Some(&state), "the monitor folds reasoning and usage");
}

#[test]
fn reasoning_where_not_in_force_is_reason_001_alone() {
    let (mut m, mut seq, mut state) = bound(&["ui_state_patch", "usage"]);
    emit(&mut m, &mut seq, &mut state, &turn()[..2]);
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "reasoning-only-in-force", "REASON-001"), "a state without reasoning is evaluated");
    emit(&mut m, &mut seq, &mut state, &turn()[2..]);
    assert_eq!(found(&mut m), vec![("reasoning-only-in-force", "REASON-001".to_owned())]);
}

#[test]
fn usage_where_not_in_force_is_usage_004_alone() {
    let (mut m, mut seq, mut state) = bound(&["reasoning", "ui_state_patch"]);
    emit(&mut m, &mut seq, &mut state, &turn()[..3]);
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "usage-only-in-force", "USAGE-004"), "a state without usage is evaluated");
    emit(&mut m, &mut seq, &mut state, &turn()[3..]);
    assert_eq!(found(&mut m), vec![("usage-only-in-force", "USAGE-004".to_owned())]);
}

/// A turn whose one call hosts a sub-agent that says one thing.
fn subagent_turn() -> Vec<Value> {
    vec![
        json!({"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "inv-1", "item_id": "it-1", "text": "go", "ts": TS}),
        json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": TS}),
        json!({"type": "chat.tool_call", "invocation_id": "inv-1", "tool_call_id": "tc-1", "tool_name": "research",
            "interaction_type": "auto_tool", "display": "inline", "awaiting_response": false, "payload": {}, "call_index": 0, "ts": TS}),
        json!({"type": "chat.subagent_started", "tool_call_id": "tc-1", "thread_id": "th-1", "input": "look", "ts": TS}),
        json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "parent_call_id": "tc-1", "item_id": "sa-1", "markdown": "found", "ts": TS}),
        json!({"type": "chat.subagent_complete", "tool_call_id": "tc-1", "status": "completed", "response": "found", "ts": TS}),
        json!({"type": "chat.tool_call_complete", "tool_call_id": "tc-1", "status": "completed", "result": {"response": "found"}, "ts": TS}),
        json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "completed", "ts": TS}),
    ]
}

#[test]
fn a_sub_agent_where_subagents_is_in_force_is_no_finding() {
    let (mut m, mut seq, mut state) = bound(&["subagents", "ui_state_patch"]);
    emit(&mut m, &mut seq, &mut state, &subagent_turn());
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.state(0), Some(&state), "the monitor folds the transcript");
}

#[test]
fn a_sub_agent_where_subagents_is_not_in_force_is_subagent_001_alone() {
    let (mut m, mut seq, mut state) = bound(&["ui_state_patch"]);
    emit(&mut m, &mut seq, &mut state, &subagent_turn()[..3]);
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "subagents-only-in-force", "SUBAGENT-001"), "a state without sub-agents is evaluated");
    emit(&mut m, &mut seq, &mut state, &subagent_turn()[3..4]);
    assert_eq!(found(&mut m), vec![("subagents-only-in-force", "SUBAGENT-001".to_owned())]);
}
