//! Restart durability with the real binary: SIGKILL mid-turn (and deterministic crash points
//! right around a tool response), restart on the same database, resume, and check the client
//! sees exactly the committed state, seq keeps growing and nothing runs twice. Also the CLI.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::{ErrorCode, Id, RunStatus, ServerFrame, ToolCallStatus};
use common::process::{Proc, BIN};
use common::Client;
use serde_json::json;

fn count_events(db: &Path, frame_type: &str, needle: &str) -> usize {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT frame FROM log WHERE type = ?1 AND kind = 'event'").unwrap();
    let frames: Vec<String> = stmt.query_map([frame_type], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    frames.iter().filter(|f| f.contains(needle)).count()
}

fn status_of(c: &Client, id: &str) -> ToolCallStatus {
    c.fold.tool_call(&Id::parse(id).unwrap()).unwrap().status
}

#[tokio::test]
async fn sigkill_while_a_tool_runs_settles_it_interrupted_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = Proc::spawn(&db, None);
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [
        {"op": "say", "markdown": "starting"},
        {"op": "tool_calls", "calls": [{"tool_name": "slow", "interaction_type": "auto_tool", "display": "inline",
            "run_ms": 30000, "outcome": {"kind": "result", "value": 1}}]},
        {"op": "say", "markdown": "never said"}
    ]}, {"steps": [{"op": "say", "markdown": "next turn"}]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.recv_until(|f| matches!(f, ServerFrame::ToolCall(_))).await;
    c.recv().await;
    let id = c.tool_call_ids()[0].clone();
    let last = c.last_seq;
    server.sigkill();

    let server = Proc::spawn(&db, None);
    let mut c2 = Client::connect(&server.url).await;
    let seq = c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    assert!(seq > last);
    let call = c2.fold.tool_call(&Id::parse(id.as_str()).unwrap()).unwrap();
    assert_eq!((call.status, call.error.as_deref()), (ToolCallStatus::Failed, Some("interrupted")));
    assert_eq!(c2.fold.run.status, RunStatus::Failed);
    assert_eq!(count_events(&db, "chat.tool_call", &id), 1, "the tool call was made once");
    assert_eq!(count_events(&db, "chat.assistant_message", "starting"), 1, "nothing before the crash ran twice");
    assert_eq!(count_events(&db, "chat.assistant_message", "never said"), 0);
    let rc = count_events(&db, "chat.run_complete", "interrupted");
    assert_eq!(rc, 1);
    // The session goes on.
    c2.user_message("m2", "again").await;
    let frames = c2.until_run_complete().await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "next turn")));
}

#[tokio::test]
async fn sigkill_during_a_wait_resumes_the_turn_from_its_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = Proc::spawn(&db, None);
    let mut c = Client::connect(&server.url).await;
    let script = json!({"turns": [{"steps": [
        {"op": "say", "markdown": "before"},
        {"op": "wait", "ms": 3000},
        {"op": "say", "markdown": "after"}
    ]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    c.recv_until(|f| matches!(f, ServerFrame::AssistantMessage(_))).await;
    c.recv().await;
    let last = c.last_seq;
    server.sigkill();

    let server = Proc::spawn(&db, None);
    let mut c2 = Client::connect(&server.url).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    assert_eq!(c2.fold.run.status, RunStatus::Running, "the turn is still in progress after the restart");
    let frames = c2.until_run_complete().await;
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::AssistantMessage(a) if a.markdown == "after")));
    assert_eq!(count_events(&db, "chat.assistant_message", "before"), 1, "the step before the crash is not redone");
    assert_eq!(count_events(&db, "chat.assistant_message", "after"), 1);
}

fn ask_script() -> serde_json::Value {
    json!({"turns": [{"steps": [
        {"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool", "component_type": "Form",
            "display": "inline", "outcome": {"kind": "await_response", "summary": "done"}}]},
        {"op": "say", "markdown": "continued"}
    ]}]})
}

#[tokio::test]
async fn crash_after_the_response_is_committed_executes_it_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = Proc::spawn(&db, Some("response-committed"));
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(ask_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let last = c.last_seq;
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": {"answer": 7}}}))
        .await;
    // The server dies between commit and execution: the client saw no settlement.
    assert!(c.try_recv(Duration::from_secs(5)).await.is_none());
    assert_eq!(c.last_seq, last);
    server.wait_crash();

    let server = Proc::spawn(&db, None);
    let mut c2 = Client::connect(&server.url).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    if c2.fold.run.status == RunStatus::Running {
        c2.until_run_complete().await;
    }
    let call = c2.fold.tool_call(&Id::parse(id.as_str()).unwrap()).unwrap();
    assert_eq!(call.status, ToolCallStatus::Completed);
    assert_eq!(call.result, Some(json!({"answer": 7})));
    assert_eq!(c2.fold.run.status, RunStatus::Completed);
    assert_eq!(count_events(&db, "chat.tool_call_complete", &id), 1, "executed exactly once");
    assert_eq!(count_events(&db, "chat.assistant_message", "continued"), 1);
    // A retry of the same answer is refused, not re-executed.
    c2.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": {"answer": 7}}}))
        .await;
    c2.expect_error(ErrorCode::ToolCallSettled).await;
    assert_eq!(count_events(&db, "chat.tool_call_complete", &id), 1);
}

#[tokio::test]
async fn crash_before_the_response_is_committed_leaves_the_call_pending() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = Proc::spawn(&db, Some("response-received"));
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(ask_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let before = c.fold.clone();
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": 1}}))
        .await;
    assert!(c.try_recv(Duration::from_secs(5)).await.is_none());
    server.wait_crash();

    let server = Proc::spawn(&db, None);
    let mut c2 = Client::resume_of(&server.url, &c).await;
    assert_eq!(c2.fold, before, "nothing uncommitted shows up");
    assert_eq!(status_of(&c2, &id), ToolCallStatus::Pending);
    c2.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": 1}}))
        .await;
    let frames = c2.until_run_complete().await;
    let ServerFrame::RunComplete(rc) = &frames[frames.len() - 2] else { panic!() };
    assert_eq!(rc.status, RunCompleteStatus::Completed);
    assert_eq!(count_events(&db, "chat.tool_call_complete", &id), 1);
}

/// RESUME-014: recovery is finished before the first resume is answered. A deadline passed while
/// the server was down: recovery expires the call and plays the rest of the turn (many steps, each
/// a commit of its own), and the snapshot of the first resume already holds all of it.
#[tokio::test]
async fn recovery_plays_the_due_rest_of_a_turn_before_the_first_resume() {
    const SAYS: usize = 25;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = Proc::spawn(&db, None);
    let mut c = Client::connect(&server.url).await;
    let mut steps = vec![json!({"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool",
        "component_type": "Form", "display": "inline",
        "outcome": {"kind": "await_response", "expire_after_ms": 300, "summary": "done"}}]})];
    steps.extend((0..SAYS).map(|i| json!({"op": "say", "markdown": format!("after expiry {i}")})));
    c.hello(Some(json!({"turns": [{"steps": steps}]}))).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let last = c.last_seq;
    server.sigkill();
    // Down longer than the deadline.
    tokio::time::sleep(Duration::from_millis(600)).await;

    let server = Proc::spawn(&db, None);
    let mut c2 = Client::connect(&server.url).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    assert_eq!(status_of(&c2, &id), ToolCallStatus::Expired);
    let said = c2.fold.items.iter().filter(|i| matches!(i, chatwire_schema::DisplayItem::AssistantMarkdown(_))).count();
    assert_eq!((said, c2.fold.run.status), (SAYS, RunStatus::Completed), "the snapshot holds the whole recovery");
    assert!(
        c2.try_recv(Duration::from_millis(300)).await.is_none(),
        "no event of the recovery comes after the snapshot"
    );
}

#[test]
fn cli_lists_faults_and_refuses_non_loopback() {
    let out = Command::new(BIN).arg("--list-faults").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for f in chatwire_reference::Fault::ALL {
        assert!(text.lines().any(|l| l.starts_with(f.name())), "{f} missing from --list-faults");
    }
    let out = Command::new(BIN).args(["serve", "--addr", "0.0.0.0:0", "--db", ":memory:"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
    let out = Command::new(BIN).args(["serve", "--db", ":memory:", "--fault", "no-such"]).output().unwrap();
    assert!(!out.status.success());
    let out = Command::new(BIN).args(["serve", "--db", ":memory:", "--durability", "off"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use full or normal"));
}

#[tokio::test]
async fn a_second_process_on_the_same_database_is_refused_and_the_first_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("one.db");
    let first = Proc::spawn(&db, None);
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new(BIN).args(["serve", "--addr", "127.0.0.1:0", "--db"]).arg(&db).output(),
    )
    .await
    .expect("the second process exits by itself")
    .unwrap();
    assert!(!out.status.success(), "a second server on {db:?} must not start");
    assert!(out.stdout.is_empty(), "no URL printed: {:?}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another chatwire-reference process serves this database"), "{stderr}");
    assert!(stderr.contains("--store postgres://"), "{stderr}");
    // The first is unharmed, and once it is gone (kill -9: the kernel drops its lock) the
    // database opens again.
    let mut c = Client::connect(&first.url).await;
    c.hello(None).await;
    first.sigkill();
    let second = Proc::spawn(&db, None);
    let mut c = Client::connect(&second.url).await;
    c.hello(None).await;
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let proc = Proc::spawn(&dir.path().join("t.db"), None);
    let pid = proc.child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    let mut proc = proc;
    for _ in 0..200 {
        if let Some(status) = proc.child.try_wait().unwrap() {
            assert!(status.success(), "exit status after SIGTERM: {status:?}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("server ignored SIGTERM");
}

#[tokio::test]
async fn fault_announce_before_commit_changes_a_settled_call_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = Proc::spawn_with(&db, None, &["--fault", "announce-before-commit"]);
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    let script = json!({"turns": [{"steps": [{"op": "tool_calls", "calls": [{"tool_name": "build",
        "interaction_type": "auto_tool", "display": "inline", "run_ms": 100, "outcome": {"kind": "result", "value": "ok"}}]}]}]});
    c.hello(Some(script)).await;
    c.user_message("m1", "go").await;
    let frames = c.recv_until(|f| matches!(f, ServerFrame::ToolCallComplete(_))).await;
    let Some(ServerFrame::ToolCallComplete(seen)) = frames.last() else { unreachable!() };
    assert_eq!(seen.result, Some(json!("ok")));
    let id = seen.tool_call_id.to_string();
    server.wait_crash();
    let server = Proc::spawn(&db, None);
    let mut c2 = Client::connect(&server.url).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), 0).await.expect("resume");
    // The client was told "completed"; the server never committed it and now says otherwise.
    assert_eq!(status_of(&c2, &id), ToolCallStatus::Failed);
    assert_eq!(count_events(&db, "chat.tool_call_complete", "\"ok\""), 0);
}

/// Issue #22: a session loads from its latest state checkpoint plus the events after it. One
/// long enough to have a checkpoint comes back after a restart exactly as it was: the same
/// state, and the same turn history (a message accepted before the checkpoint is still a
/// duplicate).
#[tokio::test]
async fn a_session_past_a_checkpoint_comes_back_the_same_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let server = common::TestServer::file(&db).await;
    let mut c = Client::connect(&server.url).await;
    c.hello(None).await;
    // The checkpoint is written behind the commit that made it due; a few turns follow it.
    let checkpoint_seq = || {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("SELECT seq FROM checkpoints", [], |r| r.get::<_, i64>(0)).ok()
    };
    let (mut n, mut after) = (0, 0);
    // Bounded: a turn is at least one event, so CHECKPOINT_EVERY turns make one due.
    while after < 3 && n < 2 * chatwire_reference::store::CHECKPOINT_EVERY {
        c.user_message(&format!("m{n}"), &format!("turn {n}")).await;
        c.until_run_complete().await;
        n += 1;
        if after > 0 || checkpoint_seq().is_some() {
            after += 1;
        }
    }
    let seq = checkpoint_seq().expect("a checkpoint was stored");
    assert!(seq > 0 && (seq as u64) < c.last_seq, "the checkpoint {seq} is before the last events");
    let before = c.fold.clone();
    let (id, token) = (c.session_id.clone().unwrap(), c.token.clone().unwrap());
    drop(c);
    server.stop().await;

    let server = common::TestServer::file(&db).await;
    let mut c2 = Client::connect(&server.url).await;
    c2.resume(&id, &token, 0).await.expect("resume");
    assert_eq!(c2.fold, before, "the state after the restart");
    c2.user_message("m0", "again").await;
    c2.expect_error(ErrorCode::DuplicateMessage).await;
    c2.user_message("new", "one more").await;
    c2.until_run_complete().await;
    assert!(c2.fold.items.len() > before.items.len() && c2.fold.items.starts_with(&before.items));
    server.stop().await;
}
