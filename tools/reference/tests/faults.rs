//! Every planted fault is observable: each test runs the scenario that exposes one fault and
//! checks the server now deviates from the contract the correct server keeps (proven by the
//! other test files). The client here records without asserting (`strict = false`), except in
//! the test that shows the strict monitor failing.

mod common;

use std::time::Duration;

use chatwire_reference::Fault;
use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::{ErrorCode, Id, RunStatus, ServerFrame, ToolCallStatus};
use common::{say_script, Client, TestServer};
use serde_json::{json, Value};

async fn lenient(server: &TestServer) -> Client {
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    c
}

async fn lenient_resume(server: &TestServer, of: &Client) -> Client {
    let mut c = lenient(server).await;
    c.send(json!({"type": "session.hello", "id": "hr", "versions": ["1.0"],
        "resume": {"session_id": of.session_id, "resume_token": of.token, "last_seq": 0}}))
        .await;
    c
}

fn ask_script(expire: Option<u64>) -> Value {
    let mut outcome = json!({"kind": "await_response"});
    if let Some(ms) = expire {
        outcome["expire_after_ms"] = json!(ms);
    }
    json!({"turns": [
        {"steps": [{"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool",
            "component_type": "Form", "display": "inline", "outcome": outcome}]}]},
        {"steps": [{"op": "say", "markdown": "two"}]},
        {"steps": [{"op": "say", "markdown": "three"}]}
    ]})
}

/// Opens a session with `script`, sends one message and waits for the slice to end.
async fn one_turn(server: &TestServer, script: Value) -> Client {
    let mut c = lenient(server).await;
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    c
}

async fn answer(c: &mut Client, id: &str, call: &str, outcome: Value) {
    c.send(json!({"type": "chat.tool_call_response", "id": id, "tool_call_id": call, "outcome": outcome})).await;
}

fn status(c: &Client, id: &str) -> Option<ToolCallStatus> {
    c.fold.tool_call(&Id::parse(id).unwrap()).map(|t| t.status)
}

/// Drops the connection and waits until the server has let go of the session.
async fn disconnect(c: Client) {
    drop(c);
    tokio::time::sleep(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn completion_not_persisted_comes_back_pending() {
    let server = TestServer::with_fault(Fault::CompletionNotPersisted).await;
    let mut c = one_turn(&server, ask_script(None)).await;
    let call = c.tool_call_ids()[0].clone();
    answer(&mut c, "r1", &call, json!({"action": "submit", "value": 1})).await;
    c.until_run_complete().await;
    assert_eq!(status(&c, &call), Some(ToolCallStatus::Completed));
    let (sid, token) = (c.session_id.clone(), c.token.clone());
    disconnect(c).await;
    let mut c2 = lenient(&server).await;
    c2.resume(sid.as_deref().unwrap(), token.as_deref().unwrap(), 0).await.unwrap();
    assert_eq!(status(&c2, &call), Some(ToolCallStatus::Pending));
}

#[tokio::test]
async fn dismissal_not_persisted_comes_back_open() {
    let server = TestServer::with_fault(Fault::DismissalNotPersisted).await;
    let mut c = one_turn(&server, ask_script(None)).await;
    let call = c.tool_call_ids()[0].clone();
    answer(&mut c, "r1", &call, json!({"action": "dismiss"})).await;
    c.until_run_complete().await;
    assert_eq!(status(&c, &call), Some(ToolCallStatus::Dismissed));
    let (sid, token) = (c.session_id.clone(), c.token.clone());
    disconnect(c).await;
    let mut c2 = lenient(&server).await;
    c2.resume(sid.as_deref().unwrap(), token.as_deref().unwrap(), 0).await.unwrap();
    assert_eq!(status(&c2, &call), Some(ToolCallStatus::Pending));
}

#[tokio::test]
async fn rewind_not_persisted_brings_the_turn_back() {
    let server = TestServer::with_fault(Fault::RewindNotPersisted).await;
    let mut c = one_turn(&server, say_script(3)).await;
    let inv = c.fold.invocations()[0].to_string();
    c.send(json!({"type": "chat.rewind", "id": "rw", "before_invocation_id": inv})).await;
    c.recv_until(|f| matches!(f, ServerFrame::UiStateUpdated(_))).await;
    assert!(c.fold.items.is_empty());
    let (sid, token) = (c.session_id.clone(), c.token.clone());
    disconnect(c).await;
    let mut c2 = lenient(&server).await;
    c2.resume(sid.as_deref().unwrap(), token.as_deref().unwrap(), 0).await.unwrap();
    assert!(!c2.fold.items.is_empty(), "the rewound turn is back");
}

#[tokio::test]
async fn rewind_wrong_cut_differs_from_the_announced_rewind() {
    let server = TestServer::with_fault(Fault::RewindWrongCut).await;
    let mut c = one_turn(&server, say_script(3)).await;
    c.user_message("m2", "again").await;
    c.until_run_complete().await;
    let first = c.fold.invocations()[0].to_string();
    c.send(json!({"type": "chat.rewind", "id": "rw", "before_invocation_id": first})).await;
    let ServerFrame::RewindComplete(rw) = c.recv().await else { panic!("rewind_complete") };
    assert_eq!(rw.before_invocation_id.as_str(), first);
    let ServerFrame::UiStateUpdated(u) = c.recv().await else { panic!("ui_state_updated") };
    assert_ne!(u.state, c.fold, "the state sent is not the announced cut");
}

#[tokio::test]
async fn display_order_by_completion_breaks_call_order() {
    let server = TestServer::with_fault(Fault::DisplayOrderByCompletion).await;
    let call = |n: &str| {
        json!({"tool_name": n, "interaction_type": "auto_tool", "display": "inline", "run_ms": 5,
        "outcome": {"kind": "result", "value": n}})
    };
    let script =
        json!({"turns": [{"steps": [{"op": "tool_calls", "settle_order": [1, 0], "calls": [call("a"), call("b")]}]}]});
    let c = one_turn(&server, script).await;
    let Some(ServerFrame::UiStateUpdated(last)) = c.received.last() else { panic!() };
    assert_ne!(last.state.items, c.fold.items, "display order differs from call order");
}

#[tokio::test]
async fn terminal_while_awaiting_says_completed_with_a_pending_call() {
    let server = TestServer::with_fault(Fault::TerminalWhileAwaiting).await;
    let c = one_turn(&server, ask_script(None)).await;
    let rc = c.received.iter().rev().find_map(|f| match f {
        ServerFrame::RunComplete(rc) => Some(rc.status),
        _ => None,
    });
    assert_eq!(rc, Some(RunCompleteStatus::Completed));
    assert_eq!(status(&c, &c.tool_call_ids()[0]), Some(ToolCallStatus::Pending));
}

#[tokio::test]
async fn duplicate_response_executed_completes_twice() {
    let server = TestServer::with_fault(Fault::DuplicateResponseExecuted).await;
    let mut c = one_turn(&server, ask_script(None)).await;
    let call = c.tool_call_ids()[0].clone();
    answer(&mut c, "r1", &call, json!({"action": "submit", "value": 1})).await;
    c.until_run_complete().await;
    answer(&mut c, "r2", &call, json!({"action": "submit", "value": 2})).await;
    let ServerFrame::ToolCallComplete(again) = c.recv().await else { panic!("a second completion") };
    assert_eq!(again.in_reply_to.as_ref().map(Id::as_str), Some("r2"));
}

#[tokio::test]
async fn seq_restarts_after_reload() {
    let server = TestServer::with_fault(Fault::SeqRestartsAfterRestart).await;
    let c = one_turn(&server, say_script(1)).await;
    let (sid, token, last) = (c.session_id.clone(), c.token.clone(), c.last_seq);
    disconnect(c).await;
    let mut c2 = lenient(&server).await;
    let seq = c2.resume(sid.as_deref().unwrap(), token.as_deref().unwrap(), 0).await.unwrap();
    assert!(seq <= last, "welcome seq {seq} reuses seqs up to {last}");
}

#[tokio::test]
async fn resume_skips_token_check_accepts_a_wrong_token() {
    let server = TestServer::with_fault(Fault::ResumeSkipsTokenCheck).await;
    let c = one_turn(&server, say_script(1)).await;
    let mut c2 = lenient(&server).await;
    assert!(c2.resume(c.session_id.as_deref().unwrap(), "rt-not-the-token", 0).await.is_ok());
}

#[tokio::test]
async fn state_diverges_drops_progress_from_updates() {
    let server = TestServer::with_fault(Fault::StateDiverges).await;
    let script = json!({"turns": [{"steps": [{"op": "tool_calls", "calls": [{"tool_name": "t", "interaction_type": "auto_tool",
        "display": "inline", "progress": [{"message": "half"}], "outcome": {"kind": "result", "value": 1}}]}]}]});
    let c = one_turn(&server, script).await;
    let Some(ServerFrame::UiStateUpdated(last)) = c.received.last() else { panic!() };
    assert_ne!(last.state, c.fold);
}

#[tokio::test]
async fn drop_connection_on_error_closes_instead_of_answering() {
    let server = TestServer::with_fault(Fault::DropConnectionOnError).await;
    let mut c = one_turn(&server, say_script(1)).await;
    c.send_raw(tokio_tungstenite::tungstenite::Message::text("{oops")).await;
    assert!(c.try_recv(Duration::from_secs(3)).await.is_none(), "no error frame, the connection ends");
}

#[tokio::test]
async fn unknown_type_ignored_gets_no_answer() {
    let server = TestServer::with_fault(Fault::UnknownTypeIgnored).await;
    let mut c = one_turn(&server, say_script(1)).await;
    c.send(json!({"type": "chat.teleport", "id": "x"})).await;
    assert!(c.try_recv(Duration::from_millis(500)).await.is_none());
    // Other errors still work.
    c.user_message("m1", "dup").await;
    assert!(matches!(c.recv().await, ServerFrame::Error(e) if e.code == ErrorCode::DuplicateMessage));
}

#[tokio::test]
async fn corr_mismatch_sends_a_different_corr() {
    let server = TestServer::with_fault(Fault::CorrMismatch).await;
    let c = one_turn(&server, ask_script(None)).await;
    let corr = c.received.iter().find_map(|f| match f {
        ServerFrame::ToolCall(t) => Some((t.tool_call_id.clone(), t.corr.clone())),
        _ => None,
    });
    let (id, corr) = corr.unwrap();
    assert!(corr.is_some_and(|c| c != id));
}

#[tokio::test]
async fn pending_lost_on_resume_hides_the_pending_call() {
    let server = TestServer::with_fault(Fault::PendingLostOnResume).await;
    let c = one_turn(&server, ask_script(None)).await;
    let call = c.tool_call_ids()[0].clone();
    let mut c2 = lenient(&server).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), 0).await.unwrap();
    assert_eq!(status(&c2, &call), None);
    assert_eq!(c2.fold.run.status, RunStatus::AwaitingInput);
}

#[tokio::test]
async fn snapshot_missing_on_resume_sends_only_the_welcome() {
    let server = TestServer::with_fault(Fault::SnapshotMissingOnResume).await;
    let c = one_turn(&server, say_script(1)).await;
    let mut c2 = lenient_resume(&server, &c).await;
    assert!(matches!(c2.recv().await, ServerFrame::Welcome(_)));
    assert!(c2.try_recv(Duration::from_millis(500)).await.is_none());
}

#[tokio::test]
async fn expiry_ignored_never_expires() {
    let server = TestServer::with_fault(Fault::ExpiryIgnored).await;
    let mut c = one_turn(&server, ask_script(Some(100))).await;
    assert!(c.try_recv(Duration::from_millis(700)).await.is_none());
    assert_eq!(status(&c, &c.tool_call_ids()[0]), Some(ToolCallStatus::Pending));
}

/// A server outside conformance mode with `fault`.
async fn plain_with_fault(fault: Fault) -> TestServer {
    TestServer::start(chatwire_reference::ServeConfig {
        conformance: false,
        fault: Some(fault),
        ..common::config(chatwire_reference::DbLocation::Memory)
    })
    .await
}

fn capabilities(c: &Client) -> Vec<String> {
    c.received
        .iter()
        .find_map(|f| match f {
            ServerFrame::Welcome(w) => Some(w.capabilities.iter().map(|c| c.as_str().to_owned()).collect()),
            _ => None,
        })
        .expect("a welcome was received")
}

#[tokio::test]
async fn subprotocol_required_refuses_a_handshake_without_one() {
    let server = TestServer::with_fault(Fault::SubprotocolRequired).await;
    let refused = tokio_tungstenite::connect_async(server.url.as_str()).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status().as_u16(), 400),
        other => panic!("expected an HTTP refusal, got {:?}", other.map(|(_, r)| r.status())),
    }
    // Offering chatwire.v1 still works.
    let c = one_turn(&server, say_script(1)).await;
    assert_eq!(c.subprotocol.as_deref(), Some("chatwire.v1"));
}

#[tokio::test]
async fn script_capability_unconditional_lists_it_outside_conformance_mode() {
    let server = plain_with_fault(Fault::ScriptCapabilityUnconditional).await;
    let mut c = lenient(&server).await;
    c.hello(None).await;
    assert!(capabilities(&c).contains(&"conformance_script".to_owned()));
    // It is only listed: scripts are still refused there.
    let mut s = lenient(&server).await;
    s.send(json!({"type": "session.hello", "id": "h1", "versions": ["1.0"], "script": say_script(1)})).await;
    s.expect_error(ErrorCode::ScriptNotAllowed).await;
}

#[tokio::test]
async fn script_capability_missing_leaves_it_out_in_conformance_mode() {
    let server = TestServer::with_fault(Fault::ScriptCapabilityMissing).await;
    let c = one_turn(&server, say_script(1)).await;
    assert!(!capabilities(&c).contains(&"conformance_script".to_owned()));
    // The script is still played.
    assert!(c.received.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(_))));
}

#[tokio::test]
async fn script_accepted_outside_conformance_plays_a_clients_script() {
    let server = plain_with_fault(Fault::ScriptAcceptedOutsideConformance).await;
    let c = one_turn(&server, json!({"turns": [{"steps": [{"op": "say", "markdown": "hijacked"}]}]})).await;
    assert!(!capabilities(&c).contains(&"conformance_script".to_owned()));
    assert!(c.received.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "hijacked")));
}

#[tokio::test]
async fn shutdown_without_close_drops_connections_without_1001() {
    let server = TestServer::with_fault(Fault::ShutdownWithoutClose).await;
    let mut c = one_turn(&server, say_script(1)).await;
    let stopping = tokio::spawn(server.stop());
    assert_eq!(c.expect_closed().await, None, "dropped without a close frame");
    tokio::time::timeout(Duration::from_secs(10), stopping).await.expect("the server stops").expect("stop task");
}

/// The strict client of the other test files fails at the first frame the monitor finds wrong:
/// here `completed` while a call is pending, which the reducer refuses (STATE-031).
#[tokio::test]
#[should_panic(expected = "[STATE-031]")]
async fn the_strict_monitor_fails_a_test_at_the_first_finding() {
    let server = TestServer::with_fault(Fault::TerminalWhileAwaiting).await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(ask_script(None))).await;
    c.user_message("u1", "go").await;
    c.until_run_complete().await;
}
