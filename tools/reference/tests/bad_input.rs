//! One test per bad-input case, over a real WebSocket: the typed error, its `in_reply_to`, the
//! connection still serving the next valid frame, and the state unchanged.

mod common;

use chatwire_reference::DbLocation;
use chatwire_schema::{ErrorCode, ServerFrame, UiState};
use common::{allow_deviation, config, say_script, Client, TestServer};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

/// A session on a fresh server with one finished turn.
async fn session_with_one_turn(server: &TestServer) -> Client {
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(say_script(5))).await;
    c.user_message("m1", "hello").await;
    c.until_run_complete().await;
    c
}

/// After an error: the connection still serves a valid frame (a user message, whose acceptance
/// comes next with nothing in between), and a resumed view equals the client's fold, which was
/// `before` plus that turn only.
async fn assert_open_and_unchanged(server: &TestServer, c: &mut Client, before: &UiState, error_seq: Option<u64>) {
    assert_eq!(&c.fold, before, "an error changed the state");
    c.user_message("m-after", "still there?").await;
    let first = c.recv().await;
    let ServerFrame::UserMessageAccepted(accepted) = &first else { panic!("expected acceptance, got {first:?}") };
    if let Some(seq) = error_seq {
        assert_eq!(accepted.seq, seq + 1, "something was sent between the error and the acceptance");
    }
    c.until_run_complete().await;
    let resumed = Client::resume_of(&server.url, c).await;
    assert_eq!(resumed.fold, c.fold);
}

#[tokio::test]
async fn malformed_json_gets_malformed_frame() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send_raw(Message::text("{\"type\": \"chat.user_message\", \"id\": \"x\"")).await;
    let e = c.expect_error(ErrorCode::MalformedFrame).await;
    assert_eq!(e.in_reply_to, None);
    assert!(e.seq.is_some(), "errors on a session consume a seq");
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn non_object_json_gets_malformed_frame() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send_raw(Message::text("[1, 2, 3]")).await;
    let e = c.expect_error(ErrorCode::MalformedFrame).await;
    assert_eq!(e.in_reply_to, None);
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn binary_frame_gets_binary_frame() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send_raw(Message::binary(b"{\"type\":\"chat.user_message\"}".to_vec())).await;
    let e = c.expect_error(ErrorCode::BinaryFrame).await;
    assert_eq!(e.in_reply_to, None);
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn unknown_type_gets_unknown_type_with_in_reply_to() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send(json!({"type": "chat.teleport", "id": "u1"})).await;
    let e = c.expect_error(ErrorCode::UnknownType).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("u1"));
    // A server-to-client type sent by a client is unknown too, and so is a missing type.
    c.send(json!({"type": "session.welcome", "id": "u2"})).await;
    c.expect_error(ErrorCode::UnknownType).await;
    c.send(json!({"id": "u3"})).await;
    let e = c.expect_error(ErrorCode::UnknownType).await;
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

/// A reference pinned to 1.0 plays a server that predates 1.1. 1.0's `session.hello` is closed: a
/// hello carrying the 1.1 member `features` is refused as a frame with an unknown member
/// (FRAME-003), although the current types define that member. This is what a 1.1 client meets at
/// a 1.0-only server.
#[tokio::test]
async fn a_member_of_a_later_minor_is_unknown_to_a_server_that_speaks_only_1_0() {
    let v1_0 = chatwire_schema::ProtocolVersion { major: 1, minor: 0 };
    let server =
        TestServer::start(chatwire_reference::ServeConfig { versions: vec![v1_0], ..config(DbLocation::Memory) }).await;
    let mut c = Client::connect(&server.url).await;
    c.send(json!({"type": "session.hello", "id": "h-11", "versions": ["1.1"], "features": ["ui_state_patch"]})).await;
    let e = c.expect_error(ErrorCode::InvalidFrame).await;
    assert!(e.message.contains("features"), "{}", e.message);
    // The same client offering 1.0 as well sends no `features` and is served 1.0.
    c.send(json!({"type": "session.hello", "id": "h-10", "versions": ["1.1", "1.0"]})).await;
    let ServerFrame::Welcome(w) = c.recv().await else { panic!("expected a welcome") };
    assert_eq!(w.version, v1_0);
    assert_eq!(w.features, None);
    assert!(!w.capabilities.iter().any(|c| c.feature_since().is_some()), "{:?}", w.capabilities);
}

#[tokio::test]
async fn schema_invalid_frame_gets_invalid_frame() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send(json!({"type": "chat.user_message", "id": "bad1"})).await;
    let e = c.expect_error(ErrorCode::InvalidFrame).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("bad1"));
    assert!(e.message.contains("text"), "{}", e.message);
    c.send(json!({"type": "chat.user_message", "id": "bad2", "text": "x", "extra": 1})).await;
    let e = c.expect_error(ErrorCode::InvalidFrame).await;
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn oversize_frame_gets_frame_too_large_and_hard_cap_closes() {
    let limit = chatwire_schema::MIN_MAX_FRAME_BYTES;
    let _smallest_limit = allow_deviation("TRANSPORT-013", "the smallest limit the spec allows keeps the test fast");
    let server =
        TestServer::start(chatwire_reference::ServeConfig { max_frame_bytes: limit, ..config(DbLocation::Memory) })
            .await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.user_message("big", &"x".repeat(limit as usize + 1)).await;
    let e = c.expect_error(ErrorCode::FrameTooLarge).await;
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
    // Above 16x the limit the transport refuses the message and closes with 1009.
    let mut c2 = Client::connect(&server.url).await;
    c2.send_raw(Message::text("y".repeat((limit * chatwire_schema::HARD_CAP_FACTOR) as usize + 1))).await;
    assert_eq!(c2.expect_closed().await, Some(1009));
}

/// TRANSPORT-005: a server must not announce less than 65536, so it refuses to start with less.
#[tokio::test]
async fn frame_limit_below_the_spec_floor_is_refused_at_bind() {
    let floor = chatwire_schema::MIN_MAX_FRAME_BYTES;
    for bad in [0, 1024, floor - 1] {
        let refused = chatwire_reference::ServeConfig { max_frame_bytes: bad, ..config(DbLocation::Memory) };
        match chatwire_reference::Server::bind(refused).await {
            Err(e) => assert!(e.to_string().contains("TRANSPORT-005"), "{e}"),
            Ok(_) => panic!("max_frame_bytes {bad} was accepted"),
        }
    }
    let ok = chatwire_reference::ServeConfig { max_frame_bytes: floor, ..config(DbLocation::Memory) };
    assert!(chatwire_reference::Server::bind(ok).await.is_ok());
}

#[test]
fn cli_refuses_a_frame_limit_below_the_spec_floor() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chatwire-reference"))
        .args(["serve", "--db", ":memory:", "--max-frame-bytes", "1024"])
        .output()
        .expect("run the binary");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("below 65536") && stderr.contains("TRANSPORT-005"), "{stderr}");
}

#[tokio::test]
async fn frame_before_hello_gets_hello_required() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    c.user_message("early", "hi").await;
    let e = c.expect_error(ErrorCode::HelloRequired).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("early"));
    assert_eq!(e.seq, None, "no session is bound yet");
    c.hello(Some(say_script(2))).await;
    assert_eq!(c.fold, UiState::default());
    c.user_message("m1", "now").await;
    c.until_run_complete().await;
}

#[tokio::test]
async fn second_hello_gets_already_open() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send(json!({"type": "session.hello", "id": "again", "versions": ["1.0"]})).await;
    let e = c.expect_error(ErrorCode::AlreadyOpen).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("again"));
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn unsupported_version_is_fatal_and_lists_versions() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    c.send(json!({"type": "session.hello", "id": "v9", "versions": ["9.0", "2.1"]})).await;
    let e = c.expect_error(ErrorCode::UnsupportedVersion).await;
    assert!(e.fatal);
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("v9"));
    assert_eq!(e.supported_versions, Some(chatwire_schema::SUPPORTED_VERSIONS.to_vec()));
    assert_eq!(c.expect_closed().await, Some(4002));
}

#[tokio::test]
async fn response_to_unknown_call_gets_unknown_tool_call() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": "tc-nope",
        "outcome": {"action": "submit", "value": 1}}))
        .await;
    let e = c.expect_error(ErrorCode::UnknownToolCall).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("r1"));
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

fn ui_then_say_script() -> serde_json::Value {
    json!({"turns": [
        {"steps": [
            {"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool", "display": "inline",
                "component_type": "Form", "outcome": {"kind": "await_response", "summary": "answered"}}]},
            {"op": "say", "markdown": "thanks"}
        ]},
        {"steps": [{"op": "say", "markdown": "two"}]},
        {"steps": [{"op": "say", "markdown": "three"}]}
    ]})
}

#[tokio::test]
async fn response_to_settled_call_gets_tool_call_settled_and_runs_once() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(ui_then_say_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let call = c.tool_call_ids()[0].clone();
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": call,
        "outcome": {"action": "submit", "value": {"ok": true}}}))
        .await;
    c.until_run_complete().await;
    let before = c.fold.clone();
    c.send(json!({"type": "chat.tool_call_response", "id": "r2", "tool_call_id": call,
        "outcome": {"action": "submit", "value": {"ok": false}}}))
        .await;
    let e = c.expect_error(ErrorCode::ToolCallSettled).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("r2"));
    let completions = c.received.iter().filter(|f| matches!(f, ServerFrame::ToolCallComplete(_))).count();
    assert_eq!(completions, 1);
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn response_to_running_call_gets_tool_call_not_awaiting() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [{"op": "tool_calls", "calls": [{"tool_name": "build",
        "interaction_type": "auto_tool", "display": "inline", "run_ms": 400,
        "outcome": {"kind": "result", "value": "done"}}]}]}, {"steps": []}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.recv_until(|f| matches!(f, ServerFrame::ToolCall(_))).await;
    c.recv().await; // the batch's ui_state_updated
    let before = c.fold.clone();
    let call = c.tool_call_ids()[0].clone();
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": call,
        "outcome": {"action": "submit", "value": 1}}))
        .await;
    let e = c.expect_error(ErrorCode::ToolCallNotAwaiting).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("r1"));
    assert_eq!(c.fold, before);
    let rest = c.until_run_complete().await;
    assert!(rest.iter().any(|f| matches!(f, ServerFrame::ToolCallComplete(t) if t.result == Some(json!("done")))));
    let after_run = c.fold.clone();
    assert_open_and_unchanged(&server, &mut c, &after_run, None).await;
}

#[tokio::test]
async fn rewind_to_unknown_invocation_gets_unknown_invocation() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.send(json!({"type": "chat.rewind", "id": "rw1", "before_invocation_id": "inv-nope"})).await;
    let e = c.expect_error(ErrorCode::UnknownInvocation).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("rw1"));
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn rewind_and_user_message_during_a_run_get_run_in_progress() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [{"op": "say", "markdown": "a"}]},
        {"steps": [{"op": "wait", "ms": 400}, {"op": "say", "markdown": "b"}]}, {"steps": []}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "one").await;
    c.until_run_complete().await;
    let first_invocation = c.fold.invocations()[0].to_string();
    c.user_message("m2", "two").await;
    c.recv_until(|f| matches!(f, ServerFrame::RunStarted(_))).await;
    c.recv().await;
    let before = c.fold.clone();
    c.send(json!({"type": "chat.rewind", "id": "rw1", "before_invocation_id": first_invocation})).await;
    let e = c.expect_error(ErrorCode::RunInProgress).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("rw1"));
    c.user_message("m3", "three").await;
    let e = c.expect_error(ErrorCode::RunInProgress).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("m3"));
    assert_eq!(c.fold, before);
    c.until_run_complete().await;
    // m3 was refused, not accepted: the same id is accepted now.
    c.user_message("m3", "three").await;
    let ServerFrame::UserMessageAccepted(_) = c.recv().await else { panic!("m3 accepted after the run") };
    c.until_run_complete().await;
}

#[tokio::test]
async fn duplicate_user_message_gets_duplicate_message() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let before = c.fold.clone();
    c.user_message("m1", "hello again").await;
    let e = c.expect_error(ErrorCode::DuplicateMessage).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("m1"));
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn duplicate_of_a_rewound_message_is_still_duplicate() {
    let server = TestServer::memory().await;
    let mut c = session_with_one_turn(&server).await;
    let inv = c.fold.invocations()[0].to_string();
    c.send(json!({"type": "chat.rewind", "id": "rw", "before_invocation_id": inv})).await;
    c.recv_until(|f| matches!(f, ServerFrame::UiStateUpdated(_))).await;
    assert!(c.fold.items.is_empty());
    let before = c.fold.clone();
    c.user_message("m1", "hello").await;
    let e = c.expect_error(ErrorCode::DuplicateMessage).await;
    assert_open_and_unchanged(&server, &mut c, &before, e.seq).await;
}

#[tokio::test]
async fn script_without_conformance_mode_gets_script_not_allowed() {
    let server =
        TestServer::start(chatwire_reference::ServeConfig { conformance: false, ..config(DbLocation::Memory) }).await;
    let mut c = Client::connect(&server.url).await;
    c.send(json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": say_script(1)})).await;
    let e = c.expect_error(ErrorCode::ScriptNotAllowed).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("h"));
    // Still open: a hello without a script opens a session served by the echo agent.
    c.hello(None).await;
    c.user_message("m1", "ping").await;
    let frames = c.until_run_complete().await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown.contains("> ping"))));
}

#[tokio::test]
async fn script_on_resume_gets_script_not_allowed() {
    let server = TestServer::memory().await;
    let c = session_with_one_turn(&server).await;
    let mut c2 = Client::connect(&server.url).await;
    c2.send(json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": say_script(1),
        "resume": {"session_id": c.session_id, "resume_token": c.token, "last_seq": 0}}))
        .await;
    c2.expect_error(ErrorCode::ScriptNotAllowed).await;
    let resumed = Client::resume_of(&server.url, &c).await;
    assert_eq!(resumed.fold, c.fold);
}

#[tokio::test]
async fn invalid_script_gets_invalid_script() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [{"op": "tool_calls", "settle_order": [0, 0], "calls": [
        {"tool_name": "a", "interaction_type": "auto_tool", "display": "inline", "outcome": {"kind": "result", "value": 1}}]}]}]});
    c.send(json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": script})).await;
    let e = c.expect_error(ErrorCode::InvalidScript).await;
    assert_eq!(e.in_reply_to.as_ref().map(|i| i.as_str()), Some("h"));
    assert!(e.message.contains("settle_order"), "{}", e.message);
    c.hello(Some(say_script(1))).await;
}

#[tokio::test]
async fn resume_with_wrong_or_missing_token_or_unknown_session_is_refused_alike() {
    let server = TestServer::memory().await;
    let c = session_with_one_turn(&server).await;
    let mut other = Client::connect(&server.url).await;
    let wrong = other.resume(c.session_id.as_deref().unwrap(), "rt-wrong", 0).await.unwrap_err();
    assert_eq!(wrong.code, ErrorCode::ResumeRejected);
    assert_eq!(wrong.seq, None);
    let unknown = other.resume("s-00000000000000000000000000000000", c.token.as_deref().unwrap(), 0).await.unwrap_err();
    assert_eq!(unknown.code, ErrorCode::ResumeRejected);
    assert_eq!(wrong.message, unknown.message, "the refusal must not reveal whether the session exists");
    // A resume without a token is schema-invalid.
    other
        .send(json!({"type": "session.hello", "id": "h3", "versions": ["1.0"],
            "resume": {"session_id": c.session_id, "last_seq": 0}}))
        .await;
    other.expect_error(ErrorCode::InvalidFrame).await;
    // Still open, and the original session is untouched.
    let resumed = Client::resume_of(&server.url, &c).await;
    assert_eq!(resumed.fold, c.fold);
    other.hello(None).await;
}

#[tokio::test]
async fn resume_cursor_ahead_is_refused() {
    let server = TestServer::memory().await;
    let c = session_with_one_turn(&server).await;
    let mut other = Client::connect(&server.url).await;
    let e = other
        .resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), c.last_seq + 100)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ResumeCursorAhead);
    let resumed = other.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), c.last_seq).await;
    assert!(resumed.is_ok());
    assert_eq!(other.fold, c.fold);
}

/// RESUME-013: the eighth refused resume on one connection is answered, then the connection is
/// closed with 1008; other connections, and the session itself, are unaffected.
#[tokio::test]
async fn the_eighth_refused_resume_on_a_connection_closes_it_with_1008() {
    let limit = chatwire_schema::REFUSED_RESUMES_PER_CONNECTION;
    let server = TestServer::memory().await;
    let c = session_with_one_turn(&server).await;
    let mut guesser = Client::connect(&server.url).await;
    for i in 1..=limit {
        // Alternate unknown sessions and wrong tokens: both count.
        let session = if i % 2 == 0 { c.session_id.clone().unwrap() } else { format!("s-unknown{i}") };
        let e = guesser.resume(&session, &format!("rt-guess{i}"), 0).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::ResumeRejected, "refusal {i}");
        assert!(!e.fatal);
    }
    assert_eq!(guesser.expect_closed().await, Some(chatwire_schema::CloseCode::PolicyViolation.code()));
    // One refusal fewer keeps the connection usable.
    let mut unlucky = Client::connect(&server.url).await;
    for i in 1..limit {
        unlucky.resume("s-unknown", &format!("rt-guess{i}"), 0).await.unwrap_err();
    }
    let resumed = unlucky.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), 0).await;
    assert!(resumed.is_ok(), "{resumed:?}");
}
