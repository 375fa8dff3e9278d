//! The checks of streamed text and retry (1.1 part 2) on hand-made traffic. Every test runs a good
//! sequence (no finding, the check evaluated) beside the bad one (exactly the finding meant).

use std::sync::Arc;

use chatwire_schema::{FrameValidator, ReqId, ServerFrame, UiState};
use serde_json::{json, Value};

use super::*;

const TS: &str = "2026-01-15T10:00:00Z";
const CAPABILITIES: &[&str] =
    &["assistant_stream", "conformance_script", "resume_catch_up", "retry", "rewind", "ui_state_patch"];
const IN_FORCE: &[&str] = &["assistant_stream", "resume_catch_up", "ui_state_patch"];

fn script() -> Value {
    json!({"turns": [{
        "steps": [{"op": "say", "markdown": "Hello, world!", "chunks": ["Hel", "lo, ", "world", "!"]}],
        "retries": [{"steps": [{"op": "say", "markdown": "Again."}]}]
    }]})
}

fn found(m: &mut Monitor) -> Vec<(&'static str, String)> {
    m.take_findings().into_iter().map(|f| (f.check.id, f.requirement.to_string())).collect()
}

/// What the server has sent on a connection: the next seq, the latest state frame's seq, the state.
struct Wire {
    conn: u64,
    seq: u64,
    base: u64,
    state: UiState,
}

impl Wire {
    /// Sends `event` with the next seq; unless it is a delta, the reducer's patch follows.
    fn emit(&mut self, m: &mut Monitor, mut event: Value) {
        event["seq"] = json!(self.seq);
        let frame: ServerFrame = serde_json::from_value(event.clone()).unwrap();
        let ops = self.state.apply_with_patch(frame.ui_event().unwrap()).unwrap();
        m.server_text(self.conn, &event.to_string());
        if matches!(frame, ServerFrame::AssistantMessageDelta(_)) {
            self.base = self.seq;
            self.seq += 1;
            return;
        }
        self.patch(m, json!(ops));
    }

    /// Sends a patch of `ops` on the latest state.
    fn patch(&mut self, m: &mut Monitor, ops: Value) {
        let patch = json!({"type": "ui_state_patch", "seq": self.seq + 1, "base_seq": self.base,
            "v": "ui_state_v1", "patch": ops});
        m.server_text(self.conn, &patch.to_string());
        self.base = self.seq + 1;
        self.seq += 2;
    }
}

fn welcome(seq: u64, hello: &str, resumed: bool, capabilities: &[&str]) -> Value {
    json!({"type": "session.welcome", "seq": seq, "in_reply_to": hello, "version": "1.1",
        "session_id": "s-1", "resume_token": "t-1", "resumed": resumed, "capabilities": capabilities,
        "limits": {"max_frame_bytes": 1048576}, "features": IN_FORCE, "resume_retention": 100})
}

/// Connection 0 on a new 1.1 session with the script and every feature; the user message sent.
fn bound(capabilities: &[&str]) -> (Monitor, Wire) {
    bound_with(capabilities, script())
}

/// [`bound`] with another script.
fn bound_with(capabilities: &[&str], script: Value) -> (Monitor, Wire) {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.1"], "script": script}));
    m.server_text(0, &welcome(1, "h1", false, capabilities).to_string());
    m.server_text(
        0,
        &json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": UiState::default()}).to_string(),
    );
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    assert_eq!(found(&mut m), vec![], "a clean handshake");
    (m, Wire { conn: 0, seq: 3, base: 2, state: UiState::default() })
}

fn accepted() -> Value {
    json!({"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "inv-1",
        "item_id": "it-1", "text": "go", "ts": TS})
}

fn started() -> Value {
    json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": TS})
}

fn delta(text: &str) -> Value {
    json!({"type": "chat.assistant_message_delta", "invocation_id": "inv-1", "item_id": "am-1", "delta": text, "ts": TS})
}

fn said(item: &str, markdown: &str) -> Value {
    json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "item_id": item, "markdown": markdown, "ts": TS})
}

fn complete(status: &str) -> Value {
    json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": status, "ts": TS})
}

fn evaluated(m: &Monitor, check: &str, req: &'static str) -> bool {
    m.evaluated().get(check).is_some_and(|s| s.contains(&ReqId::new(req)))
}

#[test]
fn a_stream_as_scripted_needs_no_state_frames_and_is_materialized() {
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), delta("Hel"), delta("lo, "), delta("world"), delta("!")] {
        w.emit(&mut m, e);
    }
    assert_eq!(m.state(0), Some(&w.state), "the runner holds the streamed text");
    assert_eq!(m.state_seq(0), Some(w.base), "a delta is a state frame: the resume cursor");
    for e in [said("am-1", "Hello, world!"), complete("completed")] {
        w.emit(&mut m, e);
    }
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.state(0), Some(&w.state));
    assert!(evaluated(&m, "patch-in-place-of-update", "STREAM-002"));
    assert!(evaluated(&m, "say-chunks-as-scripted", "SCRIPT-019"));
    assert!(evaluated(&m, "features-as-negotiated", "STREAM-001"));
    assert!(evaluated(&m, "patch-matches-reducer", "STATE-037"), "the end's patch names the last delta");
}

#[test]
fn a_state_frame_after_a_delta_is_stream_002_alone() {
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), delta("Hel")] {
        w.emit(&mut m, e);
    }
    w.patch(&mut m, json!([]));
    assert_eq!(found(&mut m), vec![("patch-in-place-of-update", "STREAM-002".to_owned())]);
}

#[test]
fn a_wrong_chunk_and_a_whole_message_where_streams_are_in_force_are_script_019() {
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), delta("Hel"), delta("world")] {
        w.emit(&mut m, e);
    }
    assert_eq!(found(&mut m), vec![("say-chunks-as-scripted", "SCRIPT-019".to_owned())]);
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), said("am-1", "Hello, world!")] {
        w.emit(&mut m, e);
    }
    assert_eq!(found(&mut m), vec![("say-chunks-as-scripted", "SCRIPT-019".to_owned())]);
}

#[test]
fn an_end_that_differs_from_the_chunks_is_named_by_the_reducer_and_the_script() {
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), delta("Hel"), delta("lo, "), delta("world"), delta("!")] {
        w.emit(&mut m, e);
    }
    let mut end = said("am-1", "Hello, World!");
    end["seq"] = json!(w.seq);
    m.server_text(0, &end.to_string());
    let got = found(&mut m);
    assert!(got.contains(&("say-chunks-as-scripted", "SCRIPT-019".to_owned())), "{got:?}");
    assert!(got.contains(&("events-follow-reducer-rules", "STATE-047".to_owned())), "{got:?}");
}

/// Connection 0 streams two chunks and drops; connection 1 resumes from the last delta's seq and
/// gets a catch-up with nothing to add. Returns the monitor and connection 1's wire.
fn resumed_mid_stream() -> (Monitor, Wire) {
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), delta("Hel"), delta("lo, ")] {
        w.emit(&mut m, e);
    }
    m.client_close(0);
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.1"],
        "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": w.base}}),
    );
    m.server_text(1, &welcome(w.seq, "h2", true, CAPABILITIES).to_string());
    let catch_up =
        json!({"type": "ui_state_patch", "seq": w.seq + 1, "base_seq": w.base, "v": "ui_state_v1", "patch": []});
    m.server_text(1, &catch_up.to_string());
    assert_eq!(found(&mut m), vec![]);
    let w = Wire { conn: 1, seq: w.seq + 2, base: w.seq + 1, state: w.state };
    (m, w)
}

#[test]
fn after_a_resume_the_next_chunk_passes_and_a_repeated_or_lost_one_is_stream_003() {
    let (mut m, mut w) = resumed_mid_stream();
    for e in [delta("world"), delta("!"), said("am-1", "Hello, world!"), complete("completed")] {
        w.emit(&mut m, e);
    }
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "stream-continues-after-resume", "STREAM-003"));
    let (mut m, mut w) = resumed_mid_stream();
    w.emit(&mut m, delta("lo, "));
    let got = m.take_findings();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].check.id, got[0].requirement), ("stream-continues-after-resume", ReqId::new("STREAM-003")));
    assert!(got[0].message.contains("repeats"), "{}", got[0].message);
    let (mut m, mut w) = resumed_mid_stream();
    w.emit(&mut m, delta("!"));
    let got = m.take_findings();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(got[0].message.contains("lost"), "{}", got[0].message);
}

/// A turn with one auto tool call that completes, then a say, then a failed run; the client
/// then asks to retry after `after`.
fn failed_turn(capabilities: &[&str], after: &str) -> (Monitor, Wire) {
    let (mut m, mut w) = bound(capabilities);
    let call = json!({"type": "chat.tool_call", "invocation_id": "inv-1", "tool_call_id": "tc-1",
        "call_index": 0, "tool_name": "costly", "interaction_type": "auto_tool", "awaiting_response": false,
        "display": "inline", "payload": {}, "ts": TS});
    let done = json!({"type": "chat.tool_call_complete", "tool_call_id": "tc-1", "status": "completed", "result": 1, "ts": TS});
    for e in [accepted(), started(), call, done, said("am-9", "Plain."), complete("failed")] {
        w.emit(&mut m, e);
    }
    m.client_frame(0, &json!({"type": "chat.retry", "id": "y1", "after_item_id": after}));
    found(&mut m);
    (m, w)
}

fn retry_accepted(after: &str, removed: &[&str]) -> Value {
    json!({"type": "chat.retry_accepted", "in_reply_to": "y1", "invocation_id": "inv-1",
        "after_item_id": after, "removed_item_ids": removed, "ts": TS})
}

#[test]
fn a_retry_accepted_then_run_started_and_the_retry_steps_pass() {
    let (mut m, mut w) = failed_turn(CAPABILITIES, "tc-1");
    for e in [retry_accepted("tc-1", &["am-9"]), started(), said("am-2", "Again."), complete("completed")] {
        w.emit(&mut m, e);
    }
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "retry-answered-as-checked", "RETRY-001"));
    assert!(evaluated(&m, "retry-plays-retry-steps", "SCRIPT-020"));
}

#[test]
fn a_retry_whose_run_plays_the_turn_again_or_touches_the_kept_call_is_named() {
    let (mut m, mut w) = failed_turn(CAPABILITIES, "tc-1");
    for e in [retry_accepted("tc-1", &["am-9"]), started(), said("am-2", "Plain.")] {
        w.emit(&mut m, e);
    }
    assert_eq!(found(&mut m), vec![("retry-plays-retry-steps", "SCRIPT-020".to_owned())]);
    let (mut m, mut w) = failed_turn(CAPABILITIES, "tc-1");
    for e in [retry_accepted("tc-1", &["am-9"]), started()] {
        w.emit(&mut m, e);
    }
    let progress =
        json!({"type": "chat.tool_progress", "seq": w.seq, "tool_call_id": "tc-1", "message": "again", "ts": TS});
    m.server_text(0, &progress.to_string());
    let got = found(&mut m);
    assert!(got.contains(&("retry-keeps-kept-calls", "RETRY-002".to_owned())), "{got:?}");
}

#[test]
fn a_retry_answered_otherwise_than_its_checks_say_is_named() {
    // Not followed by its run_started.
    let (mut m, mut w) = failed_turn(CAPABILITIES, "tc-1");
    w.emit(&mut m, retry_accepted("tc-1", &["am-9"]));
    w.emit(
        &mut m,
        json!({"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "inv-2",
        "item_id": "it-2", "text": "go", "ts": TS}),
    );
    assert_eq!(found(&mut m), vec![("retry-answered-as-checked", "RETRY-001".to_owned())]);
    // A valid retry refused.
    let (mut m, w) = failed_turn(CAPABILITIES, "tc-1");
    let refusal = |code: &str| json!({"type": "error", "seq": w.seq, "in_reply_to": "y1", "code": code, "fatal": false, "message": "no"});
    m.server_text(0, &refusal("unknown_item").to_string());
    assert_eq!(found(&mut m), vec![("retry-answered-as-checked", "RETRY-001".to_owned())]);
    // An unknown item refused with the right code, then with another one.
    let (mut m, _) = failed_turn(CAPABILITIES, "nope");
    m.server_text(0, &refusal("unknown_item").to_string());
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "retry-answered-as-checked", "RETRY-004"));
    let (mut m, _) = failed_turn(CAPABILITIES, "nope");
    m.server_text(0, &refusal("item_not_in_latest_turn").to_string());
    assert_eq!(found(&mut m), vec![("retry-answered-as-checked", "RETRY-004".to_owned())]);
    // Without the capability, capability_not_offered comes first.
    let without: Vec<&str> = CAPABILITIES.iter().copied().filter(|c| *c != "retry").collect();
    let (mut m, _) = failed_turn(&without, "nope");
    m.server_text(0, &refusal("capability_not_offered").to_string());
    assert_eq!(found(&mut m), vec![]);
}

#[test]
fn a_response_to_a_call_the_retry_removed_must_be_unknown_tool_call() {
    for (code, want) in [("unknown_tool_call", vec![]), ("tool_call_settled", vec!["RETRY-005"])] {
        let (mut m, mut w) = failed_turn(CAPABILITIES, "it-1");
        for e in [retry_accepted("it-1", &["tc-1", "am-9"]), started(), said("am-2", "Again."), complete("completed")] {
            w.emit(&mut m, e);
        }
        m.client_frame(
            0,
            &json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": "tc-1",
            "outcome": {"action": "submit", "value": 1}}),
        );
        let error =
            json!({"type": "error", "seq": w.seq, "in_reply_to": "r1", "code": code, "fatal": false, "message": "no"});
        m.server_text(0, &error.to_string());
        let got: Vec<String> = found(&mut m).into_iter().map(|(_, r)| r).collect();
        assert_eq!(got, want, "{code}");
    }
}

#[test]
fn deltas_after_a_catch_up_whose_base_is_unknown_introduce_no_id_twice() {
    // A monitor that sees only the resumed connection never held the catch-up's base.
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.1"],
        "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 8}}),
    );
    m.server_text(1, &welcome(9, "h2", true, CAPABILITIES).to_string());
    m.server_text(
        1,
        &json!({"type": "ui_state_patch", "seq": 10, "base_seq": 8, "v": "ui_state_v1", "patch": []}).to_string(),
    );
    for (seq, chunk) in [(11, "world"), (12, "!")] {
        let mut d = delta(chunk);
        d["seq"] = json!(seq);
        m.server_text(1, &d.to_string());
    }
    let got = found(&mut m);
    assert!(!got.iter().any(|(_, r)| r == "ID-002"), "{got:?}");
}

#[test]
fn a_retry_on_a_1_0_connection_is_not_judged_here() {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.0"], "script": script()}));
    let mut w = welcome(1, "h1", false, &["conformance_script", "retry", "rewind"]);
    w["version"] = json!("1.0");
    w.as_object_mut().unwrap().remove("features");
    w.as_object_mut().unwrap().remove("resume_retention");
    m.server_text(0, &w.to_string());
    m.server_text(
        0,
        &json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": UiState::default()}).to_string(),
    );
    m.client_frame(0, &json!({"type": "chat.retry", "id": "y1", "after_item_id": "x"}));
    let error = json!({"type": "error", "seq": 3, "in_reply_to": "y1", "code": "unknown_type", "fatal": false, "message": "no"});
    m.server_text(0, &error.to_string());
    assert_eq!(found(&mut m), vec![]);
}

/// Connection 0 streams "Hel", "lo, " and ends the stream there (a recovery's early end), then is
/// cut (`server_close` without a code, as a kill cuts it) before the run's end reaches it.
fn cut_after_an_early_end() -> (Monitor, Wire) {
    let (mut m, mut w) = bound(CAPABILITIES);
    for e in [accepted(), started(), delta("Hel"), delta("lo, "), said("am-1", "Hello, ")] {
        w.emit(&mut m, e);
    }
    m.server_close(0, None);
    assert_eq!(found(&mut m), vec![], "undecided at the cut: the run's end went to no connection here");
    (m, w)
}

/// Connection 1 resumes from the latest state of `w`, two seqs later (the run_complete and its
/// patch, committed while no connection was open), and gets a catch-up that sets the run to `run`.
fn resume_with_run(m: &mut Monitor, w: &Wire, run: &str) {
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.1"],
        "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": w.base}}),
    );
    m.server_text(1, &welcome(w.seq + 2, "h2", true, CAPABILITIES).to_string());
    let catch_up = json!({"type": "ui_state_patch", "seq": w.seq + 3, "base_seq": w.base, "v": "ui_state_v1",
        "patch": [{"op": "replace", "path": "/run", "value": {"status": run, "invocation_id": "inv-1"}}]});
    m.server_text(1, &catch_up.to_string());
}

/// A kill cuts the connection between a recovery's early stream end and its run_complete: the
/// resumed state shows how the run ended, and only a run that went on charges the early end.
#[test]
fn an_early_end_cut_off_from_its_run_complete_is_judged_by_the_resumed_state() {
    let (mut m, w) = cut_after_an_early_end();
    resume_with_run(&mut m, &w, "failed");
    assert_eq!(found(&mut m), vec![], "the run failed: the recovery's interrupted end");
    let (mut m, w) = cut_after_an_early_end();
    resume_with_run(&mut m, &w, "completed");
    assert_eq!(found(&mut m), vec![("say-chunks-as-scripted", "SCRIPT-019".to_owned())], "the run went on");
    // Still running at the resume: the next event decides, as on one connection.
    let (mut m, w) = cut_after_an_early_end();
    resume_with_run(&mut m, &w, "running");
    assert_eq!(found(&mut m), vec![]);
    let interrupted = json!({"type": "chat.run_complete", "seq": w.seq + 4, "invocation_id": "inv-1",
        "status": "failed", "reason": "interrupted", "error": "the server stopped", "ts": TS});
    m.server_text(1, &interrupted.to_string());
    assert_eq!(found(&mut m), vec![]);
    let (mut m, w) = cut_after_an_early_end();
    resume_with_run(&mut m, &w, "running");
    let tool_call = json!({"type": "chat.tool_call", "seq": w.seq + 4, "invocation_id": "inv-1", "tool_call_id": "tc-1",
        "call_index": 0, "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false,
        "display": "inline", "payload": {}, "ts": TS});
    m.server_text(1, &tool_call.to_string());
    assert_eq!(found(&mut m), vec![("say-chunks-as-scripted", "SCRIPT-019".to_owned())]);
}

/// A recovery ends a retried run's stream early: the message is the retry's say, ended early, so
/// SCRIPT-020 charges nothing; the early end itself is SCRIPT-019's to judge, at the next event.
#[test]
fn a_recovery_that_ends_a_retried_run_s_stream_early_is_charged_once() {
    let script = json!({"turns": [{
        "steps": [{"op": "say", "markdown": "Plain."}],
        "retries": [{"steps": [{"op": "say", "markdown": "Again, now.", "chunks": ["Again", ", now."]}]}]
    }]});
    let run = |streamed: &str, next: Value| {
        let (mut m, mut w) = bound_with(CAPABILITIES, script.clone());
        for e in [accepted(), started(), said("am-9", "Plain."), complete("failed")] {
            w.emit(&mut m, e);
        }
        m.client_frame(0, &json!({"type": "chat.retry", "id": "y1", "after_item_id": "it-1"}));
        found(&mut m);
        let retry_delta = json!({"type": "chat.assistant_message_delta", "invocation_id": "inv-1",
            "item_id": "am-2", "delta": streamed, "ts": TS});
        for e in [retry_accepted("it-1", &["am-9"]), started(), retry_delta, said("am-2", streamed), next] {
            w.emit(&mut m, e);
        }
        found(&mut m)
    };
    let interrupted = json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "failed",
        "reason": "interrupted", "error": "the server stopped", "ts": TS});
    assert_eq!(run("Again", interrupted.clone()), vec![], "the recovery's interrupted end");
    assert_eq!(run("Again", complete("completed")), vec![("say-chunks-as-scripted", "SCRIPT-019".to_owned())]);
    let got = run("Other", interrupted);
    assert!(got.contains(&("retry-plays-retry-steps", "SCRIPT-020".to_owned())), "{got:?}");
}

/// A 1.1 connection whose run is in progress sends `chat.cancel`, a 1.2 frame it does not define.
fn cancel_sent_on_1_1() -> Monitor {
    let script = json!({"turns": [{"steps": [{"op": "wait", "ms": 1000}, {"op": "say", "markdown": "Done."}]}]});
    let (mut m, mut w) = bound_with(CAPABILITIES, script);
    for e in [accepted(), started()] {
        w.emit(&mut m, e);
    }
    m.client_frame(0, &json!({"type": "chat.cancel", "id": "x1", "invocation_id": "inv-1"}));
    assert_eq!(found(&mut m), vec![]);
    m
}

#[test]
fn a_cancel_carried_out_on_a_1_1_connection_breaks_cancel_009_not_cancel_006() {
    let mut m = cancel_sent_on_1_1();
    let accepted =
        json!({"type": "chat.cancel_accepted", "seq": 7, "in_reply_to": "x1", "invocation_id": "inv-1", "ts": TS});
    m.server_text(0, &accepted.to_string());
    let got = found(&mut m);
    assert!(got.contains(&("cancel-answered-as-checked", "CANCEL-009".to_owned())), "{got:?}");
    assert!(!got.iter().any(|(_, r)| r == "CANCEL-006"), "CANCEL-006 does not bind a 1.1 connection: {got:?}");
}

#[test]
fn a_cancel_on_a_1_1_connection_is_answered_unknown_type() {
    let mut m = cancel_sent_on_1_1();
    let refused = json!({"type": "error", "seq": 7, "in_reply_to": "x1", "code": "unknown_type", "fatal": false, "message": "no"});
    m.server_text(0, &refused.to_string());
    assert_eq!(found(&mut m), vec![]);
    assert!(evaluated(&m, "cancel-answered-as-checked", "CANCEL-009"));
    let mut m = cancel_sent_on_1_1();
    let wrong = json!({"type": "error", "seq": 7, "in_reply_to": "x1", "code": "capability_not_offered", "fatal": false, "message": "no"});
    m.server_text(0, &wrong.to_string());
    assert_eq!(found(&mut m), vec![("cancel-answered-as-checked", "CANCEL-009".to_owned())]);
}

#[test]
fn a_cancel_before_any_hello_is_not_judged_as_on_an_older_connection() {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "chat.cancel", "id": "x0", "invocation_id": "inv-1"}));
    let refused =
        json!({"type": "error", "in_reply_to": "x0", "code": "hello_required", "fatal": false, "message": "no"});
    m.server_text(0, &refused.to_string());
    assert_eq!(found(&mut m), vec![], "SESSION-018's to judge, not CANCEL-009's");
}

/// A delta, or a state holding an open stream item, where `assistant_stream` is not in force is
/// STREAM-005's, once: the rule written for the case, not SESSION-015 as well, and not ID-002 or
/// STREAM-003 for a stream that connection holds none of.
#[test]
fn a_stream_where_assistant_stream_is_not_in_force_is_stream_005_once() {
    let features = ["resume_catch_up", "ui_state_patch"];
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(
        0,
        &json!({"type": "session.hello", "id": "h1", "versions": ["1.1"], "script": script(), "features": features}),
    );
    let mut hello_welcome = welcome(1, "h1", false, CAPABILITIES);
    hello_welcome["features"] = json!(features);
    m.server_text(0, &hello_welcome.to_string());
    m.server_text(
        0,
        &json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": UiState::default()}).to_string(),
    );
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    assert_eq!(found(&mut m), vec![], "a clean handshake");
    let mut w = Wire { conn: 0, seq: 3, base: 2, state: UiState::default() };
    for e in [accepted(), started(), delta("Hel"), delta("lo, ")] {
        w.emit(&mut m, e);
    }
    let f = found(&mut m);
    assert_eq!(f, vec![("feature-frames-only-in-force", "STREAM-005".to_owned())], "{f:#?}");

    // A resumed snapshot that holds the open stream item.
    let (mut m, _) = bound(CAPABILITIES);
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.1"], "features": features,
            "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 2}}),
    );
    let mut resumed = welcome(3, "h2", true, CAPABILITIES);
    resumed["features"] = json!(features);
    m.server_text(1, &resumed.to_string());
    let mut state = UiState::default();
    for (seq, mut e) in [(4, accepted()), (6, started()), (8, delta("Hel"))] {
        e["seq"] = json!(seq);
        let frame: ServerFrame = serde_json::from_value(e).unwrap();
        state.apply(frame.ui_event().unwrap()).unwrap();
    }
    m.server_text(1, &json!({"type": "ui_state_snapshot", "seq": 9, "v": "ui_state_v1", "state": state}).to_string());
    let f = found(&mut m);
    assert!(f.contains(&("feature-frames-only-in-force", "STREAM-005".to_owned())), "{f:#?}");
    assert!(!f.iter().any(|(_, r)| r == "SESSION-015"), "one defect, one finding: {f:#?}");
}
