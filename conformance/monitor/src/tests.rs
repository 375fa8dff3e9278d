//! The monitor on hand-made traffic: each check fires under its own requirement, once.

use std::sync::Arc;

use chatwire_schema::{FrameValidator, ReqId};
use serde_json::{json, Value};

use super::*;

const TS: &str = "2026-01-15T10:00:00Z";

/// A monitor with one open connection (0) bound to a fresh session, state empty.
fn bound() -> Monitor {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.0"]}));
    server(
        &mut m,
        json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h1", "version": "1.0",
        "session_id": "s-1", "resume_token": "t-1", "resumed": false, "capabilities": [],
        "limits": {"max_frame_bytes": 1048576}}),
    );
    server(&mut m, json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": empty_state()}));
    let f = m.take_findings();
    assert!(f.is_empty(), "a clean handshake: {f:#?}");
    m
}

fn empty_state() -> Value {
    serde_json::to_value(chatwire_schema::UiState::default()).unwrap()
}

fn server(m: &mut Monitor, frame: Value) {
    m.server_text(0, &frame.to_string());
}

fn found(m: &mut Monitor) -> Vec<(&'static str, String)> {
    m.take_findings().into_iter().map(|f| (f.check.id, f.requirement.to_string())).collect()
}

/// Opens a turn with one tool call `tc-1` (with `corr`), each event followed by its state.
fn turn_with_call(m: &mut Monitor, corr: &str) {
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    let events = [
        json!({"type": "chat.user_message_accepted", "seq": 3, "in_reply_to": "u1", "invocation_id": "inv-1",
            "item_id": "it-1", "text": "go", "ts": TS}),
        json!({"type": "chat.run_started", "seq": 5, "invocation_id": "inv-1", "ts": TS}),
        json!({"type": "chat.tool_call", "seq": 7, "invocation_id": "inv-1", "tool_call_id": "tc-1", "corr": corr,
            "call_index": 0, "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline",
            "payload": {}, "ts": TS}),
    ];
    let mut seq = 4;
    for e in events {
        server(m, e);
        let state = m.state(0).cloned().unwrap();
        server(m, json!({"type": "ui_state_updated", "seq": seq, "v": "ui_state_v1", "state": state}));
        seq += 2;
    }
}

#[test]
fn a_corr_that_differs_from_the_call_id_is_tool_004_once_with_redacted_ids() {
    let mut m = bound();
    turn_with_call(&mut m, "tc-other");
    let findings = m.take_findings();
    let tool_004: Vec<&Finding> = findings.iter().filter(|f| f.requirement == ReqId::new("TOOL-004")).collect();
    assert_eq!(tool_004.len(), 1, "{findings:#?}");
    assert_eq!(findings.len(), 1, "the call is folded in as announced, so no STATE-004 follows: {findings:#?}");
    assert!(findings.iter().all(|f| f.requirement != ReqId::new("STATE-029")), "{findings:#?}");
    let message = &tool_004[0].message;
    assert!(!message.contains("tc-other") && !message.contains("tc-1"), "raw ids in {message}");
    assert!(message.contains("[tool_call:"), "{message}");
}

#[test]
fn progress_after_settlement_is_tool_010() {
    let mut m = bound();
    turn_with_call(&mut m, "tc-1");
    server(
        &mut m,
        json!({"type": "chat.tool_call_complete", "seq": 10, "tool_call_id": "tc-1",
        "status": "completed", "result": 1, "ts": TS}),
    );
    let state = m.state(0).cloned().unwrap();
    server(&mut m, json!({"type": "ui_state_updated", "seq": 11, "v": "ui_state_v1", "state": state}));
    assert_eq!(found(&mut m), vec![]);
    server(&mut m, json!({"type": "chat.tool_progress", "seq": 12, "tool_call_id": "tc-1", "fraction": 0.5, "ts": TS}));
    assert_eq!(found(&mut m), vec![("settled-calls-stay-settled", "TOOL-010".to_owned())]);
}

#[test]
fn a_close_after_a_non_fatal_error_is_error_003() {
    let mut m = bound();
    server(&mut m, json!({"type": "error", "seq": 3, "code": "invalid_frame", "message": "bad", "fatal": false}));
    assert_eq!(found(&mut m), vec![]);
    m.server_close(0, Some(1000));
    assert_eq!(found(&mut m), vec![("nonfatal-errors-keep-open", "ERROR-003".to_owned())]);

    let mut m = bound();
    server(&mut m, json!({"type": "error", "seq": 3, "code": "invalid_frame", "message": "bad", "fatal": false}));
    m.server_close(0, Some(1001));
    assert_eq!(found(&mut m), vec![], "an orderly shutdown may close any connection");
    assert!(m.evaluated().get("nonfatal-errors-keep-open").is_none());

    let mut m = bound();
    server(&mut m, json!({"type": "error", "seq": 3, "code": "invalid_frame", "message": "bad", "fatal": false}));
    m.client_close(0);
    m.server_close(0, Some(1000));
    assert_eq!(found(&mut m), vec![], "the client closed first");
    assert!(m.evaluated()["nonfatal-errors-keep-open"].contains(&ReqId::new("ERROR-003")));
}

#[test]
fn a_fatal_error_must_close_with_its_code_and_nothing_after_it() {
    let mut m = bound();
    server(&mut m, json!({"type": "error", "seq": 3, "code": "session_taken_over", "message": "taken", "fatal": true}));
    server(&mut m, json!({"type": "error", "seq": 4, "code": "invalid_frame", "message": "bad", "fatal": false}));
    m.server_close(0, Some(4002));
    let got = found(&mut m);
    assert_eq!(
        got,
        vec![("fatal-errors-close", "TRANSPORT-008".to_owned()), ("fatal-errors-close", "TRANSPORT-008".to_owned())]
    );
}

#[test]
fn a_divergent_state_is_state_004_and_reported_once() {
    let mut m = bound();
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    server(
        &mut m,
        json!({"type": "chat.user_message_accepted", "seq": 3, "in_reply_to": "u1", "invocation_id": "inv-1",
        "item_id": "it-1", "text": "go", "ts": TS}),
    );
    server(&mut m, json!({"type": "ui_state_updated", "seq": 4, "v": "ui_state_v1", "state": empty_state()}));
    let findings = m.take_findings();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].requirement, ReqId::new("STATE-004"));
    assert!(!findings[0].message.contains("inv-1"), "{}", findings[0].message);
}

#[test]
fn frame_level_problems_are_named_precisely() {
    let mut m = bound();
    m.server_text(0, &("[".repeat(100_000) + &"]".repeat(100_000)));
    m.server_text(0, "[1, 2]");
    m.server_binary(0, 3);
    let f = m.take_findings();
    assert!(f[0].message.contains("nested deeper"), "{}", f[0].message);
    assert!(f[1].message.contains("an array, not a JSON object"), "{}", f[1].message);
    assert_eq!(f[2].requirement, ReqId::new("TRANSPORT-001"));
}

#[test]
fn every_check_names_only_requirements_the_spec_defines() {
    let mut ids: Vec<&str> = ALWAYS_ON.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), ALWAYS_ON.len(), "check ids are unique");
    for def in ALWAYS_ON {
        assert!(!def.requirements.is_empty(), "{} names no requirement", def.id);
        for id in def.requirements {
            assert!(id.is_defined(), "check {} names {id}, which the spec does not define", def.id);
        }
    }
}

#[test]
fn a_call_id_too_long_for_its_output_item_is_id_003() {
    let mut m = bound();
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    server(
        &mut m,
        json!({"type": "chat.tool_call", "seq": 3, "invocation_id": "inv-1", "tool_call_id": "t".repeat(122),
            "call_index": 0, "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false,
            "display": "inline", "payload": {}, "ts": TS}),
    );
    let ids: Vec<(&str, String)> = found(&mut m);
    assert!(ids.contains(&("ids-consistent", "ID-003".to_owned())), "{ids:#?}");
    // 121 characters leave room for ".output".
    let mut m = bound();
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    server(
        &mut m,
        json!({"type": "chat.tool_call", "seq": 3, "invocation_id": "inv-1", "tool_call_id": "t".repeat(121),
            "call_index": 0, "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false,
            "display": "inline", "payload": {}, "ts": TS}),
    );
    assert!(!found(&mut m).iter().any(|(_, r)| r == "ID-003"));
}

#[test]
fn a_frame_the_negotiated_version_does_not_define_is_compat_005_once() {
    // A 1.1 frame on a connection that negotiated 1.0: valid under the current schemas, so only
    // COMPAT-005 is charged, not a schema violation as well.
    let mut m = bound();
    server(&mut m, json!({"type": "ui_state_patch", "seq": 3, "base_seq": 2, "v": "ui_state_v1", "patch": []}));
    let first = found(&mut m);
    let compat: Vec<_> = first.iter().filter(|(_, r)| r == "COMPAT-005").collect();
    assert_eq!(compat.len(), 1, "{first:#?}");
    assert!(!first.iter().any(|(_, r)| r == "SESSION-015"), "one defect, one finding: {first:#?}");
    assert!(!first.iter().any(|(c, _)| *c == "wire-schema-valid"), "{first:#?}");
    // A 1.0 welcome carrying the 1.1 member `features` breaks it too.
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.0"]}));
    server(
        &mut m,
        json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h1", "version": "1.0",
        "session_id": "s-1", "resume_token": "t-1", "resumed": false, "capabilities": [],
        "limits": {"max_frame_bytes": 1048576}, "features": []}),
    );
    assert!(found(&mut m).iter().any(|(_, r)| r == "COMPAT-005"));
}

/// An update that drops what an event did (STATE-004) leaves the client apart from the fold: later
/// updates built on it are not the server's state again until one gives the fold of every event
/// sent, so what follows (a golden snapshot, a later refusal) is charged under that one finding.
#[test]
fn an_update_apart_from_the_fold_stays_apart_until_an_update_gives_it() {
    let mut m = bound();
    turn_with_call(&mut m, "tc-1");
    let mut truth = m.state(0).cloned().unwrap();
    let send = |m: &mut Monitor, truth: &mut chatwire_schema::UiState, event: Value, sent: Option<Value>| {
        let frame: chatwire_schema::ServerFrame = serde_json::from_value(event.clone()).unwrap();
        truth.apply(frame.ui_event().unwrap()).unwrap();
        let seq = event["seq"].as_u64().unwrap();
        server(m, event);
        let state = sent.unwrap_or_else(|| serde_json::to_value(&*truth).unwrap());
        server(m, json!({"type": "ui_state_updated", "seq": seq + 1, "v": "ui_state_v1", "state": state}));
    };
    let progress = json!({"type": "chat.tool_progress", "seq": 9, "tool_call_id": "tc-1", "message": "half", "ts": TS});
    let before = serde_json::to_value(m.state(0).unwrap()).unwrap();
    send(&mut m, &mut truth, progress, Some(before));
    assert_eq!(found(&mut m), vec![("state-matches-reducer", "STATE-004".to_owned())]);
    // The next update is the fold of the state the client holds, not of the events sent.
    let output = json!({"type": "chat.tool_output", "seq": 11, "tool_call_id": "tc-1", "stdout": "x", "ts": TS});
    let mut held = m.state(0).cloned().unwrap();
    held.apply(serde_json::from_value::<chatwire_schema::ServerFrame>(output.clone()).unwrap().ui_event().unwrap())
        .unwrap();
    send(&mut m, &mut truth, output, Some(serde_json::to_value(&held).unwrap()));
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.divergence(0), Some(ReqId::new("STATE-004")), "still apart: a golden snapshot follows from it");
    // An update that gives the fold of every event sent: judging resumes.
    let done = json!({"type": "chat.tool_call_complete", "seq": 13, "tool_call_id": "tc-1", "status": "completed",
        "result": 1, "ts": TS});
    send(&mut m, &mut truth, done, None);
    assert_eq!(m.divergence(0), None);
}

/// Opens a turn that waits for the user: a pending form `tc-1`, the run `awaiting_input`.
fn turn_awaiting_input(m: &mut Monitor) {
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    let events = [
        json!({"type": "chat.user_message_accepted", "seq": 3, "in_reply_to": "u1", "invocation_id": "inv-1",
            "item_id": "it-1", "text": "go", "ts": TS}),
        json!({"type": "chat.run_started", "seq": 5, "invocation_id": "inv-1", "ts": TS}),
        json!({"type": "chat.tool_call", "seq": 7, "invocation_id": "inv-1", "tool_call_id": "tc-1",
            "call_index": 0, "tool_name": "confirm", "interaction_type": "ui_tool", "awaiting_response": true,
            "display": "inline", "component_type": "ConfirmDialog", "payload": {}, "ts": TS}),
        json!({"type": "chat.run_complete", "seq": 9, "invocation_id": "inv-1", "status": "awaiting_input", "ts": TS}),
    ];
    let mut seq = 4;
    for e in events {
        server(m, e);
        let state = m.state(0).cloned().unwrap();
        server(m, json!({"type": "ui_state_updated", "seq": seq, "v": "ui_state_v1", "state": state}));
        seq += 2;
    }
}

/// The session's only connection drops while a form waits; connection 1 resumes and its snapshot
/// shows the form after `event` (none: as it was).
fn resume_after(m: &mut Monitor, event: Option<Value>) -> Vec<(&'static str, String)> {
    let mut state = m.state(0).cloned().unwrap();
    if let Some(event) = event {
        let frame: chatwire_schema::ServerFrame = serde_json::from_value(event).unwrap();
        state.apply(frame.ui_event().unwrap()).unwrap();
    }
    m.client_close(0);
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.0"],
            "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 10}}),
    );
    for frame in [
        json!({"type": "session.welcome", "seq": 12, "in_reply_to": "h2", "version": "1.0", "session_id": "s-1",
            "resume_token": "t-1", "resumed": true, "capabilities": [], "limits": {"max_frame_bytes": 1048576}}),
        json!({"type": "ui_state_snapshot", "seq": 13, "v": "ui_state_v1", "state": state}),
    ] {
        m.server_text(1, &frame.to_string());
    }
    found(m)
}

#[test]
fn a_form_settled_while_nobody_was_connected_is_resume_008_unless_it_expired() {
    let dismissed = json!({"type": "chat.tool_call_dismiss", "seq": 11, "tool_call_id": "tc-1",
        "initiated_by": "server", "reason": "client_gone", "ts": TS});
    let mut m = bound();
    turn_awaiting_input(&mut m);
    let clean = found(&mut m);
    assert!(clean.iter().all(|(c, _)| *c == "run-complete-explained"), "only advice (no reason given): {clean:#?}");
    let f = resume_after(&mut m, Some(dismissed.clone()));
    assert!(f.contains(&("pending-calls-survive-disconnect", "RESUME-008".to_owned())), "{f:#?}");

    // Still pending, or expired at its deadline: what RESUME-008 and TOOL-018 allow. A cancel's
    // dismissals follow its answer, so a connection that read the answer and dropped never saw
    // them: a client-initiated dismissal is the client's own doing, never charged.
    let expired = json!({"type": "chat.tool_call_complete", "seq": 11, "tool_call_id": "tc-1",
        "status": "expired", "error": "expired", "ts": TS});
    let cancelled = json!({"type": "chat.tool_call_dismiss", "seq": 11, "tool_call_id": "tc-1",
        "initiated_by": "client", "reason": "cancelled", "ts": TS});
    for event in [None, Some(expired), Some(cancelled)] {
        let mut m = bound();
        turn_awaiting_input(&mut m);
        let f = resume_after(&mut m, event);
        assert!(!f.iter().any(|(c, _)| *c == "pending-calls-survive-disconnect"), "{f:#?}");
    }

    // A response the client sent before it dropped, never answered, may have settled it.
    let mut m = bound();
    turn_awaiting_input(&mut m);
    m.client_frame(
        0,
        &json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": "tc-1",
            "outcome": {"action": "dismiss"}}),
    );
    let f = resume_after(&mut m, Some(dismissed));
    assert!(!f.iter().any(|(c, _)| *c == "pending-calls-survive-disconnect"), "{f:#?}");
}
