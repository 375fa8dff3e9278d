//! Happy paths of spec v1 over a real WebSocket; every frame is schema-validated and every
//! `ui_state_updated` checked against the client's own fold (see `common::Client`).

mod common;

use std::time::Duration;

use chatwire_reference::{DbLocation, ServeConfig};
use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::chat::tool_call_complete::CompletionStatus;
use chatwire_schema::chat::tool_call_dismiss::Initiator;
use chatwire_schema::chat::tool_output::ApprovalDecision;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{DisplayItem, ErrorCode, RunStatus, ServerFrame, ToolCallStatus};
use common::{config, say_script, Client, TestServer};
use serde_json::{json, Value};

fn call(name: &str, kind: &str, outcome: Value) -> Value {
    let mut c = json!({"tool_name": name, "interaction_type": kind, "display": "inline", "outcome": outcome});
    if kind == "ui_tool" || kind == "ui_surface" {
        c["component_type"] = json!("Card");
    }
    c
}

fn status_of(c: &Client, id: &str) -> ToolCallStatus {
    c.fold.tool_call(&chatwire_schema::Id::parse(id).unwrap()).unwrap().status
}

#[tokio::test]
async fn new_session_gets_welcome_then_empty_snapshot() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    assert_eq!(c.subprotocol.as_deref(), Some("chatwire.v1"));
    c.send(json!({"type": "session.hello", "id": "h1", "versions": ["0.9", "1.0"], "client": "test"})).await;
    let ServerFrame::Welcome(w) = c.recv().await else { panic!("welcome first") };
    assert_eq!(w.seq, 1);
    assert_eq!(w.in_reply_to.as_str(), "h1");
    assert_eq!(w.version.to_string(), "1.0");
    assert!(!w.resumed);
    assert!(w.session_id.as_str().len() >= 32 && w.resume_token.as_str().len() >= 32);
    assert!(w.capabilities.contains(&Capability::Rewind) && w.capabilities.contains(&Capability::ConformanceScript));
    assert!(!w.capabilities.contains(&Capability::RestartDurability), "an in-memory database does not survive");
    assert_eq!(w.limits.max_frame_bytes, chatwire_schema::DEFAULT_MAX_FRAME_BYTES);
    let ServerFrame::UiStateSnapshot(s) = c.recv().await else { panic!("snapshot second") };
    assert_eq!(s.seq, 2);
    assert!(s.state.items.is_empty());
    assert_eq!(s.state.run.status, RunStatus::Idle);
    // Two sessions never share ids.
    let mut other = Client::connect(&server.url).await;
    other.hello(None).await;
    assert_ne!(other.session_id, c.session_id);
}

#[tokio::test]
async fn multi_tool_turn_creates_in_call_order_and_settles_in_script_order() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [
        {"op": "say", "markdown": "working"},
        {"op": "tool_calls", "settle_order": [2, 0, 1], "calls": [
            {"tool_name": "lint", "interaction_type": "auto_tool", "display": "inline", "run_ms": 10,
             "progress": [{"message": "half", "fraction": 0.5}], "outcome": {"kind": "result", "value": {"warnings": 0}, "summary": "clean"}},
            {"tool_name": "test", "interaction_type": "auto_tool", "display": "inline",
             "output": {"command": "cargo test", "approvals": ["approve"], "stdout": "ok\n", "exit_code": 0},
             "outcome": {"kind": "error", "message": "1 failed"}},
            {"tool_name": "panel", "interaction_type": "ui_surface", "component_type": "Panel", "display": "artifact",
             "outcome": {"kind": "dismiss", "reason": "not needed"}}
        ]},
        {"op": "end", "status": "failed", "error": "tests failed"}
    ]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "check").await;
    let frames = c.until_run_complete().await;
    let types: Vec<&str> = frames.iter().map(ServerFrame::type_name).collect();
    let first_call = types.iter().position(|t| *t == "chat.tool_call").unwrap();
    assert_eq!(
        &types[first_call..first_call + 4],
        ["chat.tool_call", "chat.tool_call", "chat.tool_call", "ui_state_updated"]
    );
    let indices: Vec<u32> = frames
        .iter()
        .filter_map(|f| match f {
            ServerFrame::ToolCall(t) => Some(t.call_index),
            _ => None,
        })
        .collect();
    assert_eq!(indices, [0, 1, 2]);
    let ids = c.tool_call_ids();
    let settled: Vec<String> = frames
        .iter()
        .filter_map(|f| match f {
            ServerFrame::ToolCallComplete(t) => Some(t.tool_call_id.to_string()),
            ServerFrame::ToolCallDismiss(t) => Some(t.tool_call_id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(settled, [ids[2].clone(), ids[0].clone(), ids[1].clone()]);
    // Every event but the batch is followed by its own ui_state_updated.
    for pair in frames[first_call + 3..].windows(2) {
        if pair[0].ui_event().is_some() {
            assert!(matches!(pair[1], ServerFrame::UiStateUpdated(_)), "{pair:?}");
        }
    }
    // Display order stays call order, the output group sits right after its call.
    let kinds: Vec<String> = c.fold.items.iter().map(|i| i.id().to_string()).collect();
    let pos = |id: &str| kinds.iter().position(|k| k == id).unwrap();
    assert!(pos(&ids[0]) < pos(&ids[1]) && pos(&ids[1]) < pos(&ids[2]));
    assert_eq!(kinds[pos(&ids[1]) + 1], format!("{}.output", ids[1]));
    // SCRIPT-011: one chat.tool_output per present part, command first, exit code last.
    let parts: Vec<&str> = frames
        .iter()
        .filter_map(|f| match f {
            ServerFrame::ToolOutput(o) if o.command.is_some() => Some("command"),
            ServerFrame::ToolOutput(o) if o.approval.is_some() => Some("approval"),
            ServerFrame::ToolOutput(o) if o.stdout.is_some() => Some("stdout"),
            ServerFrame::ToolOutput(o) if o.stderr.is_some() => Some("stderr"),
            ServerFrame::ToolOutput(o) if o.exit_code.is_some() => Some("exit_code"),
            ServerFrame::ToolOutput(o) => panic!("empty output frame {o:?}"),
            _ => None,
        })
        .collect();
    assert_eq!(parts, ["command", "approval", "stdout", "exit_code"]);
    let DisplayItem::ToolOutput(out) = &c.fold.items[pos(&ids[1]) + 1] else { panic!("output item") };
    assert_eq!(out.approvals, [ApprovalDecision::Approve]);
    assert_eq!((out.stdout.as_str(), out.exit_code, out.command.as_deref()), ("ok\n", Some(0), Some("cargo test")));
    assert_eq!(status_of(&c, &ids[0]), ToolCallStatus::Completed);
    assert_eq!(status_of(&c, &ids[1]), ToolCallStatus::Failed);
    assert_eq!(status_of(&c, &ids[2]), ToolCallStatus::Dismissed);
    let first = c.fold.tool_call(&chatwire_schema::Id::parse(ids[0].as_str()).unwrap()).unwrap();
    assert_eq!(first.progress.as_ref().and_then(|p| p.message.as_deref()), Some("half"));
    assert_eq!(first.summary.as_deref(), Some("clean"));
    let ServerFrame::RunComplete(rc) = &frames[frames.len() - 2] else { panic!("run_complete") };
    assert_eq!(rc.status, RunCompleteStatus::Failed);
    assert_eq!(rc.error.as_deref(), Some("tests failed"));
}

fn hitl_script() -> Value {
    json!({"turns": [
        {"steps": [
            {"op": "tool_calls", "calls": [
                {"tool_name": "ask_key", "interaction_type": "ui_tool", "component_type": "KeyForm", "display": "inline",
                 "outcome": {"kind": "await_response", "summary": "API key saved"}},
                {"tool_name": "pick", "interaction_type": "input_request", "display": "composer",
                 "outcome": {"kind": "await_response"}},
                {"tool_name": "fetch", "interaction_type": "auto_tool", "display": "inline", "run_ms": 20,
                 "outcome": {"kind": "result", "value": 42}}
            ]},
            {"op": "say", "markdown": "all answered"}
        ]},
        {"steps": [{"op": "say", "markdown": "second"}]}
    ]})
}

#[tokio::test]
async fn hitl_submit_and_client_dismiss_continue_the_turn() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(hitl_script())).await;
    c.user_message("m1", "go").await;
    let frames = c.until_run_complete().await;
    let ServerFrame::RunComplete(rc) = &frames[frames.len() - 2] else { panic!() };
    assert_eq!(rc.status, RunCompleteStatus::AwaitingInput);
    assert_eq!(rc.reason.as_deref(), Some("awaiting_user_input"));
    assert_eq!(c.fold.run.status, RunStatus::AwaitingInput);
    let ids = c.tool_call_ids();
    assert_eq!(status_of(&c, &ids[2]), ToolCallStatus::Completed);
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": ids[0],
        "outcome": {"action": "submit", "value": {"key": "sk-1"}}}))
        .await;
    let frames = c.until_run_complete().await;
    assert!(matches!(&frames[0], ServerFrame::RunStarted(_)), "run_started comes first: {frames:?}");
    let ServerFrame::ToolCallComplete(done) = &frames[2] else { panic!("settlement: {frames:?}") };
    assert_eq!(done.in_reply_to.as_ref().map(|i| i.as_str()), Some("r1"));
    assert_eq!(done.result, Some(json!({"key": "sk-1"})));
    assert_eq!(done.summary.as_deref(), Some("API key saved"));
    assert_eq!(c.fold.run.status, RunStatus::AwaitingInput, "the second call still waits");
    c.send(json!({"type": "chat.tool_call_response", "id": "r2", "tool_call_id": ids[1],
        "outcome": {"action": "dismiss", "reason": "later"}}))
        .await;
    let frames = c.until_run_complete().await;
    let ServerFrame::ToolCallDismiss(d) = &frames[2] else { panic!("dismissal: {frames:?}") };
    assert_eq!((d.initiated_by, d.reason.as_deref()), (Initiator::Client, Some("later")));
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "all answered")));
    assert_eq!(c.fold.run.status, RunStatus::Completed);
    // Idempotent: answering again is refused and executes nothing.
    c.send(json!({"type": "chat.tool_call_response", "id": "r3", "tool_call_id": ids[0],
        "outcome": {"action": "submit", "value": 0}}))
        .await;
    c.expect_error(ErrorCode::ToolCallSettled).await;
}

#[tokio::test]
async fn new_message_supersedes_pending_calls() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(hitl_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    c.user_message("m2", "never mind").await;
    let frames = c.until_run_complete().await;
    let dismissed: Vec<_> = frames
        .iter()
        .filter_map(|f| match f {
            ServerFrame::ToolCallDismiss(d) => Some((d.initiated_by, d.reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(dismissed, vec![(Initiator::Server, Some("superseded".to_string())); 2]);
    let accepted = frames.iter().position(|f| matches!(f, ServerFrame::UserMessageAccepted(_))).unwrap();
    assert!(frames[..accepted].iter().all(|f| !matches!(f, ServerFrame::RunStarted(_))));
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "second")));
}

#[tokio::test]
async fn pending_call_expires_and_the_turn_goes_on() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [
        {"op": "tool_calls", "calls": [call("confirm", "ui_tool", json!({"kind": "await_response", "expire_after_ms": 300}))]},
        {"op": "say", "markdown": "timed out"}
    ]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let frames = c.until_run_complete().await;
    let ServerFrame::ToolCallComplete(t) = &frames[2] else { panic!("{frames:?}") };
    assert_eq!((t.status, t.error.as_deref()), (CompletionStatus::Expired, Some("expired")));
    assert_eq!(status_of(&c, &id), ToolCallStatus::Expired);
    assert_eq!(c.fold.run.status, RunStatus::Completed);
    c.send(json!({"type": "chat.tool_call_response", "id": "late", "tool_call_id": id,
        "outcome": {"action": "submit", "value": true}}))
        .await;
    c.expect_error(ErrorCode::ToolCallSettled).await;
}

/// A server whose deadline tasks run 60 s late: only the lazy check before a request or a
/// resume can expire the call in time.
async fn server_with_late_deadline_tasks() -> TestServer {
    TestServer::start(ServeConfig { deadline_lag: Duration::from_secs(60), ..config(DbLocation::Memory) }).await
}

/// A call whose deadline (200 ms) has passed, on a session whose turn then says "timed out".
async fn call_past_its_deadline(c: &mut Client) -> String {
    let script = json!({"turns": [{"steps": [
        {"op": "tool_calls", "calls": [call("confirm", "ui_tool", json!({"kind": "await_response", "expire_after_ms": 200}))]},
        {"op": "say", "markdown": "timed out"}
    ]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    assert_eq!(status_of(c, &id), ToolCallStatus::Pending);
    tokio::time::sleep(Duration::from_millis(400)).await;
    id
}

#[tokio::test]
async fn a_response_after_the_deadline_is_refused_though_the_deadline_task_is_late() {
    let server = server_with_late_deadline_tasks().await;
    let mut c = Client::connect(&server.url).await;
    let id = call_past_its_deadline(&mut c).await;
    c.send(json!({"type": "chat.tool_call_response", "id": "late", "tool_call_id": id,
        "outcome": {"action": "submit", "value": true}}))
        .await;
    // TOOL-018: the call expires before the response is judged, which then finds it settled.
    let frames = c.recv_until(|f| matches!(f, ServerFrame::Error(_))).await;
    let Some(ServerFrame::Error(e)) = frames.last() else { unreachable!() };
    assert_eq!(e.code, ErrorCode::ToolCallSettled, "{frames:?}");
    assert!(frames
        .iter()
        .any(|f| matches!(f, ServerFrame::ToolCallComplete(t) if t.status == CompletionStatus::Expired)));
    assert_eq!(status_of(&c, &id), ToolCallStatus::Expired);
    let frames = c.until_run_complete().await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "timed out")));
}

#[tokio::test]
async fn a_resume_after_the_deadline_finds_the_call_expired_though_the_deadline_task_is_late() {
    let server = server_with_late_deadline_tasks().await;
    let mut c = Client::connect(&server.url).await;
    let id = call_past_its_deadline(&mut c).await;
    let mut reload = Client::connect(&server.url).await;
    reload.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), 0).await.expect("resume accepted");
    assert_eq!(status_of(&reload, &id), ToolCallStatus::Expired);
    // The turn goes on after the expiry, as it would have on time.
    let frames = reload.until_run_complete().await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "timed out")));
}

#[tokio::test]
async fn rewind_cuts_durably_and_the_next_message_runs_the_next_turn() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [
        {"steps": [{"op": "say", "markdown": "one"}]},
        {"steps": [{"op": "tool_calls", "calls": [call("ask", "ui_tool", json!({"kind": "await_response"}))]}]},
        {"steps": [{"op": "say", "markdown": "three"}]}
    ]});
    c.hello(Some(script)).await;
    c.user_message("m1", "a").await;
    c.until_run_complete().await;
    let kept = c.fold.clone();
    c.user_message("m2", "b").await;
    c.until_run_complete().await;
    let pending = c.tool_call_ids()[0].clone();
    let second = c.fold.invocations()[1].to_string();
    c.send(json!({"type": "chat.rewind", "id": "rw1", "before_invocation_id": second})).await;
    let ServerFrame::RewindComplete(rw) = c.recv().await else { panic!("rewind_complete") };
    assert_eq!(rw.in_reply_to.as_str(), "rw1");
    assert_eq!(
        rw.removed_invocation_ids.iter().map(ToString::to_string).collect::<Vec<_>>(),
        std::slice::from_ref(&second)
    );
    c.recv().await;
    assert_eq!(c.fold.items, kept.items);
    assert_eq!(c.fold.run.status, RunStatus::Idle);
    // After a resume the cut is still there; the removed call is gone for good.
    let mut c2 = Client::resume_of(&server.url, &c).await;
    assert_eq!(c2.fold, c.fold);
    c2.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": pending,
        "outcome": {"action": "submit", "value": 1}}))
        .await;
    c2.expect_error(ErrorCode::UnknownToolCall).await;
    c2.send(json!({"type": "chat.rewind", "id": "rw2", "before_invocation_id": second})).await;
    c2.expect_error(ErrorCode::UnknownInvocation).await;
    c2.user_message("m3", "c").await;
    let frames = c2.until_run_complete().await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "three")));
}

#[tokio::test]
async fn takeover_closes_the_old_connection_and_pending_calls_answer_from_the_new() {
    let server = TestServer::memory().await;
    let mut a = Client::connect(&server.url).await;
    a.hello(Some(hitl_script())).await;
    a.user_message("m1", "go").await;
    a.until_run_complete().await;
    let ids = a.tool_call_ids();
    let mut b = Client::resume_of(&server.url, &a).await;
    assert_eq!(b.fold, a.fold);
    let e = a.expect_error(ErrorCode::SessionTakenOver).await;
    assert!(e.fatal && e.seq.is_some());
    assert_eq!(a.expect_closed().await, Some(4001));
    for (n, id) in ids[..2].iter().enumerate() {
        b.send(json!({"type": "chat.tool_call_response", "id": format!("r{n}"), "tool_call_id": id,
            "outcome": {"action": "submit", "value": n}}))
            .await;
        b.until_run_complete().await;
    }
    assert_eq!(b.fold.run.status, RunStatus::Completed);
}

#[tokio::test]
async fn script_exhausted_and_no_script_fail_the_run() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(say_script(1))).await;
    c.user_message("m1", "a").await;
    c.until_run_complete().await;
    c.user_message("m2", "b").await;
    let frames = c.until_run_complete().await;
    let ServerFrame::RunComplete(rc) = &frames[frames.len() - 2] else { panic!() };
    assert_eq!((rc.status, rc.reason.as_deref()), (RunCompleteStatus::Failed, Some("script_exhausted")));
    let mut d = Client::connect(&server.url).await;
    d.hello(None).await;
    d.user_message("m1", "a").await;
    let frames = d.until_run_complete().await;
    let types: Vec<&str> = frames.iter().map(ServerFrame::type_name).collect();
    assert_eq!(
        types,
        [
            "chat.user_message_accepted",
            "ui_state_updated",
            "chat.run_started",
            "ui_state_updated",
            "chat.run_complete",
            "ui_state_updated"
        ]
    );
}

#[tokio::test]
async fn seq_and_state_survive_a_server_restart_on_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chat.db");
    let server = TestServer::file(&db).await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(hitl_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let before = c.fold.clone();
    let last = c.last_seq;
    let ids = c.tool_call_ids();
    server.stop().await;
    let server = TestServer::file(&db).await;
    let mut c2 = Client::connect(&server.url).await;
    let welcome_seq =
        c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    assert!(welcome_seq > last, "seq {welcome_seq} must grow past {last} across restarts");
    assert_eq!(c2.fold, before);
    c2.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": ids[0],
        "outcome": {"action": "submit", "value": "x"}}))
        .await;
    c2.until_run_complete().await;
    assert_eq!(status_of(&c2, &ids[0]), ToolCallStatus::Completed);
}

#[tokio::test]
async fn expiry_deadline_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chat.db");
    let server = TestServer::file(&db).await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [
        {"op": "tool_calls", "calls": [call("confirm", "ui_tool", json!({"kind": "await_response", "expire_after_ms": 600}))]}
    ]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    server.stop().await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The deadline passed while the server was down: it fires on startup, with no client attached.
    let server = TestServer::file(&db).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let c2 = Client::resume_of(&server.url, &c).await;
    assert_eq!(status_of(&c2, &id), ToolCallStatus::Expired);
    assert_eq!(c2.fold.run.status, RunStatus::Completed);
}

fn short_timeouts() -> chatwire_reference::ServeConfig {
    chatwire_reference::ServeConfig {
        timeouts: chatwire_reference::Timeouts {
            handshake: Duration::from_millis(300),
            idle: Duration::from_millis(200),
            write: Duration::from_secs(2),
        },
        ..common::config(chatwire_reference::DbLocation::Memory)
    }
}

#[tokio::test]
async fn idle_peer_that_never_answers_pings_is_dropped_but_a_live_one_stays() {
    let server = TestServer::start(short_timeouts()).await;
    let mut silent = Client::connect(&server.url).await;
    silent.hello(None).await;
    // Not reading means not answering pings: after two idle periods the server gives up.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    silent.expect_closed().await;
    let mut live = Client::connect(&server.url).await;
    live.hello(Some(say_script(1))).await;
    // Reading (tungstenite answers pings while reading) keeps it alive through several idle periods.
    assert!(live.try_recv(Duration::from_millis(1200)).await.is_none());
    live.user_message("m1", "still here").await;
    live.until_run_complete().await;
}

#[tokio::test]
async fn a_connection_that_never_handshakes_is_closed() {
    use tokio::io::AsyncReadExt;
    let server = TestServer::start(short_timeouts()).await;
    let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf)).await.expect("closed in time");
    assert_eq!(n.unwrap_or(0), 0, "the server hung up without answering");
}

#[tokio::test]
async fn only_the_ws_path_is_served_and_no_subprotocol_is_still_served() {
    let server = TestServer::memory().await;
    let wrong = server.url.replace("/ws", "/other");
    let refused = tokio_tungstenite::connect_async(wrong.as_str()).await;
    assert!(refused.is_err());
    let (mut ws, response) = tokio_tungstenite::connect_async(server.url.as_str()).await.unwrap();
    assert!(response.headers().get("sec-websocket-protocol").is_none());
    use futures_util::{SinkExt, StreamExt};
    ws.send(tokio_tungstenite::tungstenite::Message::text(
        json!({"type": "session.hello", "id": "h", "versions": ["1.0"]}).to_string(),
    ))
    .await
    .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap().unwrap().unwrap();
    assert!(first.to_text().unwrap().contains("session.welcome"));
}

#[tokio::test]
async fn a_ui_tool_without_component_is_refused_before_it_can_break_a_run() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    // Such a call could not be sent without breaking TOOL-005, so the script is refused at the
    // hello (SCRIPT-018) instead of failing the run half-way; the connection stays usable.
    let script = json!({"turns": [
        {"steps": [{"op": "say", "markdown": "before"},
            {"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool", "display": "inline",
                "outcome": {"kind": "await_response"}}]}]}
    ]});
    c.send(json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": script})).await;
    let e = c.expect_error(ErrorCode::InvalidScript).await;
    assert!(e.message.contains("component_type"), "{}", e.message);
    c.hello(Some(json!({"turns": [{"steps": [{"op": "say", "markdown": "next"}]}]}))).await;
    c.user_message("m1", "again").await;
    c.until_run_complete().await;
    assert_eq!(c.fold.run.status, RunStatus::Completed);
}

#[tokio::test]
async fn an_orderly_shutdown_closes_every_connection_with_1001() {
    let server = TestServer::memory().await;
    let mut in_session = Client::connect(&server.url).await;
    in_session.hello(Some(say_script(1))).await;
    let mut before_hello = Client::connect(&server.url).await;
    let stopping = tokio::spawn(server.stop());
    assert_eq!(in_session.expect_closed().await, Some(1001));
    assert_eq!(before_hello.expect_closed().await, Some(1001));
    // These peers never send their close reply; the shutdown still ends, well before the 10 s
    // write timeout a normal close waits for.
    tokio::time::timeout(Duration::from_secs(8), stopping).await.expect("the server stops").expect("stop task");
}

/// The agent seam: a library user's agent answers every turn of sessions opened without a script.
#[tokio::test]
async fn a_custom_agent_answers_sessions_without_a_script() {
    #[derive(Debug)]
    struct Shouting;
    impl chatwire_reference::Agent for Shouting {
        fn plan_turn(&self, turn_index: u64, user_text: &str) -> Option<chatwire_schema::script::ScriptTurn> {
            let markdown = format!("turn {turn_index}: {}", user_text.to_uppercase());
            Some(chatwire_schema::script::ScriptTurn {
                steps: vec![chatwire_schema::script::ScriptStep::Say { markdown, chunks: None, chunk_delay_ms: None }],
                retries: Vec::new(),
            })
        }
    }
    let config = chatwire_reference::ServeConfig {
        conformance: false,
        agent: std::sync::Arc::new(Shouting),
        ..config(DbLocation::Memory)
    };
    let server = TestServer::start(config).await;
    let mut c = Client::connect(&server.url).await;
    c.hello(None).await;
    for (i, text) in ["hello", "again"].iter().enumerate() {
        c.user_message(&format!("m{i}"), text).await;
        let frames = c.until_run_complete().await;
        let want = format!("turn {i}: {}", text.to_uppercase());
        assert!(
            frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == want)),
            "{frames:?}"
        );
    }
}
