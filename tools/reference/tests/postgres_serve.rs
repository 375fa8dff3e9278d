//! The reference served on PostgreSQL (`serve --store postgres://…`) end to end, on a throwaway
//! server (chatwire-pgtmp; skipped with a printed reason only where PostgreSQL is not installed,
//! never in CI): conversations, restarts, a crash point, the command line.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use chatwire_pgtmp::for_test;
use chatwire_reference::DbLocation;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ErrorCode, Id, RunStatus, ServerFrame, ToolCallStatus};
use common::process::{Proc, BIN};
use common::{config, Client, TestServer};
use serde_json::json;

fn ask_script() -> serde_json::Value {
    json!({"turns": [{"steps": [
        {"op": "say", "markdown": "let me ask"},
        {"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool", "component_type": "Form",
            "display": "inline", "outcome": {"kind": "await_response", "summary": "done"}}]},
        {"op": "say", "markdown": "continued"}
    ]}, {"steps": [{"op": "say", "markdown": "second turn"}]}]})
}

/// Event rows of `frame_type` whose frame contains `needle`.
async fn count_events(url: &str, frame_type: &str, needle: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .query_one(
            "SELECT COUNT(*) FROM log WHERE type = $1 AND kind = 'event' AND strpos(frame, $2) > 0",
            &[&frame_type, &needle],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn a_conversation_on_postgres_survives_a_restart_and_continues() {
    let Some(pg) = for_test("a_conversation_on_postgres_survives_a_restart_and_continues") else { return };
    let db = DbLocation::Postgres(pg.url().to_owned());
    let server = TestServer::start(config(db.clone())).await;
    let mut c = Client::connect(&server.url).await;
    c.send(json!({"type": "session.hello", "id": "h1", "versions": ["1.0"], "script": ask_script()})).await;
    let ServerFrame::Welcome(w) = c.recv().await else { panic!("welcome first") };
    assert!(w.capabilities.contains(&Capability::RestartDurability), "postgres survives a restart");
    c.session_id = Some(w.session_id.to_string());
    c.token = Some(w.resume_token.to_string());
    let ServerFrame::UiStateSnapshot(_) = c.recv().await else { panic!("snapshot second") };
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let (before, last) = (c.fold.clone(), c.last_seq);
    server.stop().await;

    let server = TestServer::start(config(db)).await;
    let mut c2 = Client::connect(&server.url).await;
    let welcome_seq =
        c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    assert!(welcome_seq > last, "seq {welcome_seq} grows past {last} across restarts");
    assert_eq!(c2.fold, before);
    c2.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": {"answer": 7}}}))
        .await;
    c2.until_run_complete().await;
    assert_eq!(c2.fold.tool_call(&Id::parse(id.as_str()).unwrap()).unwrap().status, ToolCallStatus::Completed);
    c2.user_message("m2", "again").await;
    c2.until_run_complete().await;
    assert_eq!(count_events(pg.url(), "chat.assistant_message", "second turn").await, 1);
    // A wrong token is refused as on SQLite.
    let mut wrong = Client::connect(&server.url).await;
    let refused = wrong.resume(c.session_id.as_deref().unwrap(), "rt_not-the-token-at-all-000000000000", 0).await;
    assert_eq!(refused.unwrap_err().code, ErrorCode::ResumeRejected);
    server.stop().await;
}

#[tokio::test]
async fn a_crash_after_the_response_is_committed_executes_it_exactly_once_on_postgres() {
    let Some(pg) = for_test("a_crash_after_the_response_is_committed_executes_it_exactly_once_on_postgres") else {
        return;
    };
    let url = pg.url().to_owned();
    // One instance, restarted under its name: it claims its own run leases before it serves
    // anyone, so the first resume sees the committed response executed (RESUME-014).
    let server = Proc::spawn_with(Path::new(&url), Some("response-committed"), &["--replica", "r0"]);
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(ask_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let last = c.last_seq;
    c.send(json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": {"answer": 7}}}))
        .await;
    assert!(c.try_recv(Duration::from_secs(5)).await.is_none(), "the server died before executing it");
    server.wait_crash();

    let server = Proc::spawn_with(Path::new(&url), None, &["--replica", "r0"]);
    let mut c2 = Client::connect(&server.url).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), last).await.expect("resume");
    if c2.fold.run.status == RunStatus::Running {
        c2.until_run_complete().await;
    }
    let call = c2.fold.tool_call(&Id::parse(id.as_str()).unwrap()).unwrap();
    assert_eq!(call.status, ToolCallStatus::Completed);
    assert_eq!(call.result, Some(json!({"answer": 7})));
    assert_eq!(count_events(&url, "chat.tool_call_complete", &id).await, 1, "executed exactly once");
    assert_eq!(count_events(&url, "chat.assistant_message", "continued").await, 1);
}

#[tokio::test]
async fn a_response_sent_again_on_another_replica_executes_the_one_a_dead_replica_committed() {
    let Some(pg) = for_test("a_response_sent_again_on_another_replica_executes_the_one_a_dead_replica_committed")
    else {
        return;
    };
    let url = pg.url().to_owned();
    // r0 drives the session and dies between committing the response and executing it; its
    // run lease is still live when the client, cut, resumes on r1 and sends the response again.
    let r0 = Proc::spawn_with(Path::new(&url), Some("response-committed"), &["--replica", "r0"]);
    let r1 = Proc::spawn_with(Path::new(&url), None, &["--replica", "r1"]);
    let mut c = Client::connect(&r0.url).await;
    c.hello(Some(ask_script())).await;
    c.user_message("m1", "go").await;
    c.until_run_complete().await;
    let id = c.tool_call_ids()[0].clone();
    let response = json!({"type": "chat.tool_call_response", "id": "r1", "tool_call_id": id,
        "outcome": {"action": "submit", "value": {"answer": 7}}});
    c.send(response.clone()).await;
    assert!(c.try_recv(Duration::from_secs(5)).await.is_none(), "r0 died before executing it");
    r0.wait_crash();

    let mut c2 = Client::connect(&r1.url).await;
    c2.resume(c.session_id.as_deref().unwrap(), c.token.as_deref().unwrap(), c.last_seq).await.expect("resume");
    assert_eq!(c2.fold.tool_call(&Id::parse(id.as_str()).unwrap()).unwrap().status, ToolCallStatus::Pending);
    c2.send(response).await;
    // The committed response is executed, and answers the request sent again: no internal_error.
    let frames = c2.recv_until(|f| matches!(f, ServerFrame::ToolCallComplete(_) | ServerFrame::Error(_))).await;
    match frames.last() {
        Some(ServerFrame::ToolCallComplete(done)) => {
            assert_eq!(done.in_reply_to.as_ref().map(|r| r.as_str()), Some("r1"));
        }
        other => panic!("expected the settlement, got {other:?}"),
    }
    // The dead replica's lease expires and r1 recovers the run: the turn goes on, once.
    c2.until_run_complete().await;
    if c2.fold.run.status == RunStatus::Running {
        c2.until_run_complete().await;
    }
    let call = c2.fold.tool_call(&Id::parse(id.as_str()).unwrap()).unwrap();
    assert_eq!(call.result, Some(json!({"answer": 7})));
    assert_eq!(count_events(&url, "chat.tool_call_complete", &id).await, 1, "executed exactly once");
    // A different response to the settled call is refused as settled.
    c2.send(json!({"type": "chat.tool_call_response", "id": "r2", "tool_call_id": id,
        "outcome": {"action": "submit", "value": {"answer": 8}}}))
        .await;
    c2.expect_error(ErrorCode::ToolCallSettled).await;
    drop(r1);
}

#[test]
fn the_command_line_takes_a_postgres_store_and_a_replica_name() {
    // A bad replica name and an unreachable store are refused at start, with the reason.
    let out = Command::new(BIN)
        .args(["serve", "--store", "postgres://postgres@127.0.0.1:1/x", "--replica", "no spaces"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid replica name"), "{out:?}");
    let out = Command::new(BIN).args(["serve", "--store", "postgresql://127.0.0.1:notaport/x"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid postgres url"), "{out:?}");
    let out = Command::new(BIN).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--store") && help.contains("--replica"), "{help}");
    let Some(pg) = for_test("the_command_line_takes_a_postgres_store_and_a_replica_name") else { return };
    // The log names the replica and never the password.
    let with_password = pg.url().replace("postgres@", "postgres:hunter2@");
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--store", &with_password, "--replica", "alpha-1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(stdout).lines();
        let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
    });
    let url = rx.recv_timeout(Duration::from_secs(20)).expect("the server printed its url");
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut text);
        text
    });
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let log = log.join().unwrap();
    assert!(log.contains("replica alpha-1"), "{log}");
    assert!(log.contains("postgres:***@") && !log.contains("hunter2"), "{log}");
}
