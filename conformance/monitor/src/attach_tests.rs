//! Two tabs of one session on hand-made traffic: what one tab asks and only it is answered (a
//! cancel, a retry) reaches the other as events and state frames alone, and its frames may be read
//! before the requester's answer. Each test runs the correct exchange (no finding) and then a
//! fresh, independent violation in the same session (charged).

use std::sync::Arc;

use chatwire_schema::{FrameValidator, ReqId, ServerFrame, UiState};
use serde_json::{json, Value};

use super::*;
use crate::checks::cancel;

const TS: &str = "2026-01-15T10:00:00Z";
const CAPABILITIES: &[&str] = &[
    "assistant_stream",
    "cancel",
    "conformance_script",
    "multi_attach",
    "resume_catch_up",
    "retry",
    "rewind",
    "ui_state_patch",
];
const IN_FORCE: &[&str] = &["assistant_stream", "multi_attach", "resume_catch_up", "ui_state_patch"];

fn found(m: &mut Monitor) -> Vec<(&'static str, String, u64)> {
    m.take_findings().into_iter().map(|f| (f.check.id, f.requirement.to_string(), f.conn)).collect()
}

fn welcome(seq: u64, hello: &str, resumed: bool) -> Value {
    json!({"type": "session.welcome", "seq": seq, "in_reply_to": hello, "version": "1.2",
        "session_id": "s-1", "resume_token": "t-1", "resumed": resumed, "capabilities": CAPABILITIES,
        "limits": {"max_frame_bytes": 1048576, "max_attached_connections": 8}, "features": IN_FORCE,
        "resume_retention": 100})
}

/// The server's side of two tabs (connections 0 and 1) on one session: one seq counter, one state,
/// and per tab the seq of its latest state frame. Frames are queued per tab and handed to the
/// monitor in the order a test chooses.
struct Tabs {
    seq: u64,
    state: UiState,
    base: [u64; 2],
    queued: [Vec<Value>; 2],
}

impl Tabs {
    /// Queues `frame` with the next seq for `to`; a state change is followed by its patch on every tab.
    fn send(&mut self, mut frame: Value, to: &[usize]) {
        frame["seq"] = json!(self.seq);
        let typed: ServerFrame = serde_json::from_value(frame.clone()).expect("a valid frame");
        let seq = self.seq;
        self.seq += 1;
        for t in to {
            self.queued[*t].push(frame.clone());
        }
        let Some(event) = typed.ui_event() else { return };
        // A frame the reducer refuses (a test's violation) changes no state: no patch follows.
        let Ok(ops) = self.state.apply_with_patch(event) else { return };
        if matches!(typed, ServerFrame::AssistantMessageDelta(_)) {
            // A delta is its own state frame where streams are seen (every tab here).
            for t in to {
                self.base[*t] = seq;
            }
            return;
        }
        let patch_seq = self.seq;
        self.seq += 1;
        for t in [0, 1] {
            let patch = json!({"type": "ui_state_patch", "seq": patch_seq, "base_seq": self.base[t],
                "v": "ui_state_v1", "patch": ops});
            self.queued[t].push(patch);
            self.base[t] = patch_seq;
        }
    }

    /// Hands tab `t`'s queued frames to the monitor.
    fn read(&mut self, m: &mut Monitor, t: usize) {
        for frame in std::mem::take(&mut self.queued[t]) {
            m.server_text(t as u64, &frame.to_string());
        }
    }
}

fn script() -> Value {
    json!({"turns": [{
        "steps": [{"op": "say", "markdown": "Hello, world!", "chunks": ["Hel", "lo, ", "world", "!"]}],
        "retries": [{"steps": [{"op": "say", "markdown": "Again."}]}]
    }]})
}

/// Tab 0 opens the session with the script, tab 1 attaches to it; tab 0 sends a message, the run
/// streams two of the say's four chunks to both tabs, and tab 0 sends `chat.cancel`.
fn cancelled_mid_stream() -> (Monitor, Tabs) {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    let empty = UiState::default();
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.2"], "script": script()}));
    m.server_text(0, &welcome(1, "h1", false).to_string());
    m.server_text(0, &json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": empty}).to_string());
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.2"],
            "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 0}}),
    );
    m.server_text(1, &welcome(3, "h2", true).to_string());
    m.server_text(1, &json!({"type": "ui_state_snapshot", "seq": 4, "v": "ui_state_v1", "state": empty}).to_string());
    assert_eq!(found(&mut m), vec![], "a clean handshake on both tabs");
    let mut tabs = Tabs { seq: 5, state: UiState::default(), base: [2, 4], queued: [Vec::new(), Vec::new()] };
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    tabs.send(
        json!({"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "inv-1",
            "item_id": "it-1", "text": "go", "ts": TS}),
        &[0],
    );
    tabs.send(json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": TS}), &[0, 1]);
    for chunk in ["Hel", "lo, "] {
        tabs.send(
            json!({"type": "chat.assistant_message_delta", "invocation_id": "inv-1", "item_id": "am-1",
                "delta": chunk, "ts": TS}),
            &[0, 1],
        );
    }
    tabs.read(&mut m, 0);
    tabs.read(&mut m, 1);
    assert_eq!(found(&mut m), vec![], "the run so far, seen by both tabs");
    m.client_frame(0, &json!({"type": "chat.cancel", "id": "x1", "invocation_id": "inv-1"}));
    (m, tabs)
}

/// The server answers the cancel (tab 0 only) and closes the run (both tabs).
fn close_the_run(tabs: &mut Tabs) {
    tabs.send(json!({"type": "chat.cancel_accepted", "in_reply_to": "x1", "invocation_id": "inv-1", "ts": TS}), &[0]);
    tabs.send(
        json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "item_id": "am-1",
            "markdown": "Hello, ", "ts": TS}),
        &[0, 1],
    );
    tabs.send(json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "cancelled", "ts": TS}), &[0, 1]);
}

/// Tab 0 retries the closed run (answered on tab 0 only), which runs again to its end (both tabs).
fn retry_the_run(m: &mut Monitor, tabs: &mut Tabs) {
    m.client_frame(0, &json!({"type": "chat.retry", "id": "y1", "after_item_id": "it-1"}));
    tabs.send(
        json!({"type": "chat.retry_accepted", "in_reply_to": "y1", "after_item_id": "it-1",
            "invocation_id": "inv-1", "removed_item_ids": ["am-1"], "ts": TS}),
        &[0],
    );
    tabs.send(json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": TS}), &[0, 1]);
    tabs.send(
        json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "item_id": "am-3",
            "markdown": "Again.", "ts": TS}),
        &[0, 1],
    );
    tabs.send(json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "completed", "ts": TS}), &[0, 1]);
}

#[test]
fn a_cancel_from_one_tab_is_judged_on_the_other_without_its_answer() {
    let (mut m, mut tabs) = cancelled_mid_stream();
    close_the_run(&mut tabs);
    // The watching tab's frames are read first: it sees the stream end short and the run end
    // cancelled before the monitor reads the requester's chat.cancel_accepted.
    tabs.read(&mut m, 1);
    tabs.read(&mut m, 0);
    assert_eq!(found(&mut m), vec![], "no SCRIPT-019 for the short end on the tab that did not ask");
    assert!(m.evaluated().get(cancel::CANCEL_CLOSES_RUN.id).is_some_and(|r| r.contains(&ReqId::new("CANCEL-004"))));
    // A fresh violation in the same session: the cancelled run goes on streaming.
    tabs.send(
        json!({"type": "chat.assistant_message_delta", "invocation_id": "inv-1", "item_id": "am-2",
            "delta": "more", "ts": TS}),
        &[0, 1],
    );
    tabs.read(&mut m, 1);
    tabs.read(&mut m, 0);
    let findings = found(&mut m);
    assert!(
        findings.iter().any(|(check, req, conn)| *check == cancel::CANCELLED_RUN_STAYS_CLOSED.id
            && req == "CANCEL-005"
            && *conn == 1),
        "an event of the cancelled run is charged on the tab that did not ask too: {findings:?}"
    );
}

#[test]
fn a_short_end_on_the_requesting_tab_is_still_judged_by_its_cancel() {
    let (mut m, mut tabs) = cancelled_mid_stream();
    tabs.send(json!({"type": "chat.cancel_accepted", "in_reply_to": "x1", "invocation_id": "inv-1", "ts": TS}), &[0]);
    // The end drops the second chunk: not the text streamed so far (CANCEL-004), on the requester.
    tabs.send(
        json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "item_id": "am-1",
            "markdown": "Hel", "ts": TS}),
        &[0, 1],
    );
    tabs.read(&mut m, 1);
    tabs.read(&mut m, 0);
    let findings = found(&mut m);
    assert!(
        findings
            .iter()
            .any(|(check, req, conn)| *check == cancel::CANCEL_CLOSES_RUN.id && req == "CANCEL-004" && *conn == 0),
        "{findings:?}"
    );
    assert!(
        !findings.iter().any(|(_, req, conn)| req == "SCRIPT-019" && *conn == 1),
        "the watching tab is not charged the script for the cancel's end: {findings:?}"
    );
}

#[test]
fn a_retried_cancelled_run_starts_again_on_the_tab_that_did_not_ask() {
    let (mut m, mut tabs) = cancelled_mid_stream();
    close_the_run(&mut tabs);
    tabs.read(&mut m, 0);
    tabs.read(&mut m, 1);
    assert_eq!(found(&mut m), vec![]);
    retry_the_run(&mut m, &mut tabs);
    // The watching tab sees the retried run before the monitor reads the requester's answer.
    tabs.read(&mut m, 1);
    tabs.read(&mut m, 0);
    let findings = found(&mut m);
    assert!(!findings.iter().any(|(_, req, _)| req == "CANCEL-005"), "the retry reopened the run: {findings:?}");
    assert_eq!(findings, vec![], "the retried run, seen by both tabs");
}

#[test]
fn a_seq_reused_after_a_restart_is_seq_001_once_not_again_by_every_attach_comparison() {
    let (mut m, mut tabs) = cancelled_mid_stream();
    close_the_run(&mut tabs);
    tabs.read(&mut m, 0);
    tabs.read(&mut m, 1);
    assert_eq!(found(&mut m), vec![]);
    // The backend restarts and counts seq from 1 again: both tabs were cut; tab 2 resumes.
    m.client_close(0);
    m.client_close(1);
    m.open(2);
    m.client_frame(
        2,
        &json!({"type": "session.hello", "id": "h3", "versions": ["1.2"],
            "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 0}}),
    );
    m.server_text(2, &welcome(1, "h3", true).to_string());
    let state = serde_json::to_value(&tabs.state).expect("a state");
    m.server_text(2, &json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": state}).to_string());
    // Seq 5 named the run_started of the old numbering; now it names another frame.
    m.client_frame(2, &json!({"type": "chat.user_message", "id": "u2", "text": "again"}));
    let accepted = json!({"type": "chat.user_message_accepted", "seq": 3, "in_reply_to": "u2",
        "invocation_id": "inv-2", "item_id": "it-2", "text": "again", "ts": TS});
    m.server_text(2, &accepted.to_string());
    let findings = found(&mut m);
    let reqs: Vec<&str> = findings.iter().map(|(_, r, _)| r.as_str()).collect();
    assert!(reqs.contains(&"SEQ-001"), "the reused seq is charged: {findings:?}");
    assert!(
        !reqs.iter().any(|r| r.starts_with("ATTACH-")),
        "no attach comparison with the connections of the old numbering: {findings:?}"
    );
}

#[test]
fn a_tab_that_has_not_yet_got_an_event_another_tab_got_is_not_idle() {
    let (mut m, mut tabs) = cancelled_mid_stream();
    close_the_run(&mut tabs);
    tabs.read(&mut m, 0);
    tabs.read(&mut m, 1);
    assert!(!m.busy(0) && !m.busy(1), "both tabs hold the cancelled run's end and its state");
    // Tab 0 retries; its frames are read, tab 1's not yet (on another instance, say).
    retry_the_run(&mut m, &mut tabs);
    tabs.read(&mut m, 0);
    assert!(!m.busy(0), "the requester holds the retried run's end and its state");
    // Tab 1's own fold shows no run open and no update due, as an idle tab's would.
    assert!(m.busy(1), "a tab is busy while an event another tab got is still owed to it");
    tabs.read(&mut m, 1);
    assert!(!m.busy(1), "once it has the run's end and its state, it is idle");
    // An answer only tab 0 is owed does not keep tab 1 waiting.
    m.client_frame(0, &json!({"type": "chat.cancel", "id": "x2", "invocation_id": "inv-1"}));
    tabs.send(
        json!({"type": "error", "in_reply_to": "x2", "code": "run_not_active", "message": "no run", "fatal": false}),
        &[0],
    );
    tabs.read(&mut m, 0);
    assert!(!m.busy(1), "an answer to another tab is not owed here");
    assert_eq!(found(&mut m), vec![]);
}
