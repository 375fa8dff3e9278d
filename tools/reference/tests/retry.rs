//! Retry from a point on the reference (`spec/retry.md`): the accepted retry and its run
//! (RETRY-001, SCRIPT-020 with `k` counted across a restart), kept tool calls not run again
//! (RETRY-002), the cut durable (RETRY-003), refusals in their order (RETRY-004) and a removed
//! call unanswerable (RETRY-005). Every frame is also judged by the conformance monitor.

mod common;

use std::time::Duration;

use chatwire_reference::{DbLocation, Durability, ServeConfig};
use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{DisplayItem, ErrorCode, RunStatus, ServerFrame, ToolCallStatus};
use common::retry::{costly_script, send_retry};
use common::v11::{open, resume, turn, until_run_complete};
use common::{config, Client, TestServer};
use serde_json::json;

/// The ids of the fold's items, in display order.
fn item_ids(c: &Client) -> Vec<String> {
    c.fold.items.iter().map(|i| i.id().to_string()).collect()
}

/// The assistant texts of the fold.
fn said(c: &Client) -> Vec<String> {
    c.fold
        .items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::AssistantMarkdown(m) => Some(m.markdown.clone()),
            _ => None,
        })
        .collect()
}

/// Sends a retry after `after` and checks its answer (RETRY-001): `chat.retry_accepted` removing
/// `removed`, then `chat.run_started` of the same invocation; returns the frames to the end of the run.
async fn accepted_retry(c: &mut Client, id: &str, after: &str, removed: &[String]) -> Vec<ServerFrame> {
    let invocation = c.fold.latest_user_invocation().cloned().unwrap();
    send_retry(c, id, after).await;
    let frames = until_run_complete(c).await;
    let events: Vec<&ServerFrame> = frames.iter().filter(|f| f.ui_event().is_some()).collect();
    let ServerFrame::RetryAccepted(a) = events[0] else { panic!("expected chat.retry_accepted, got {frames:?}") };
    assert_eq!((a.in_reply_to.as_str(), a.after_item_id.as_str()), (id, after));
    assert_eq!(a.invocation_id, invocation);
    let removed_ids: Vec<String> = a.removed_item_ids.iter().map(ToString::to_string).collect();
    assert_eq!(removed_ids, removed);
    assert!(matches!(events[1], ServerFrame::RunStarted(r) if r.invocation_id == invocation), "{frames:?}");
    assert!(!frames.iter().any(|f| matches!(f, ServerFrame::UserMessageAccepted(_))));
    frames
}

#[tokio::test]
async fn a_retry_after_a_failed_run_keeps_the_costly_result_and_plays_the_retry_steps() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let w = open(&mut c, &["1.1"], None, costly_script()).await;
    assert!(w.capabilities.contains(&Capability::Retry));
    turn(&mut c, "m1").await;
    assert_eq!(c.fold.run.status, RunStatus::Failed);
    let call = c.tool_call_ids()[0].clone();
    let kept = c.fold.items.clone();

    let frames = accepted_retry(&mut c, "r1", &call, &[]).await;
    // RETRY-002: no frame of the retried run names the kept call; it is exactly as it was.
    assert!(!frames.iter().any(|f| matches!(f, ServerFrame::ToolCall(_) | ServerFrame::ToolCallComplete(_))));
    assert_eq!(c.fold.items[..kept.len()], kept[..]);
    let costly = c.fold.tool_call(&kept[1].id().clone()).unwrap();
    assert_eq!((costly.status, costly.result.clone()), (ToolCallStatus::Completed, Some(json!({"rows": 42}))));
    assert_eq!(said(&c), ["recovered"]);
    assert_eq!(c.fold.run.status, RunStatus::Completed);

    // SCRIPT-020: the second retry plays retries[1] and cuts what the first one said.
    // The cut after the call keeps its output item with it (STATE-044).
    assert!(matches!(c.fold.items[2], DisplayItem::ToolOutput(_)));
    let recovered = item_ids(&c)[3].clone();
    accepted_retry(&mut c, "r2", &call, &[recovered]).await;
    assert_eq!(said(&c), ["again"]);
    // No retries[2]: the slice fails at once, as a message without a turn does.
    let again = item_ids(&c)[3].clone();
    let frames = accepted_retry(&mut c, "r3", &call, &[again]).await;
    assert!(said(&c).is_empty());
    let rc = frames.iter().find_map(|f| match f {
        ServerFrame::RunComplete(rc) => Some((rc.status, rc.reason.clone())),
        _ => None,
    });
    assert_eq!(rc, Some((RunCompleteStatus::Failed, Some("script_exhausted".to_owned()))));
}

#[tokio::test]
async fn a_retry_is_durable_and_its_count_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chat.db");
    let durable = || ServeConfig { durability: Durability::Normal, ..config(DbLocation::File(db.clone())) };
    let server = TestServer::start(durable()).await;
    let mut a = Client::connect(&server.url).await;
    open(&mut a, &["1.1"], None, costly_script()).await;
    turn(&mut a, "m1").await;
    let call = a.tool_call_ids()[0].clone();
    accepted_retry(&mut a, "r1", &call, &[]).await;
    let after_first = a.fold.clone();
    server.stop().await;

    // RETRY-003: reload and restart show the cut, by snapshot and by catch-up.
    let server = TestServer::start(durable()).await;
    let (_, _, state) = resume(&server.url, &a, 0, None).await;
    let ServerFrame::UiStateSnapshot(s) = state else { panic!("expected the snapshot") };
    assert_eq!(s.state, after_first);
    let (mut b, _, state) = resume(&server.url, &a, a.last_state_seq, None).await;
    assert!(matches!(state, ServerFrame::UiStatePatch(_)), "{state:?}");
    assert_eq!(b.fold, after_first);
    // k counts the retry accepted before the restart: this one plays retries[1].
    let recovered = item_ids(&b)[3].clone();
    accepted_retry(&mut b, "r2", &call, &[recovered]).await;
    assert_eq!(said(&b), ["again"]);
    server.stop().await;
    // The log keeps the removed items, as a rewind's does.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM log WHERE type = 'chat.assistant_message' AND frame LIKE '%recovered%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[tokio::test]
async fn refusals_come_in_the_order_of_retry_004_and_change_nothing() {
    let script = json!({"turns": [
        {"steps": [{"op": "say", "markdown": "one"}]},
        {"steps": [{"op": "say", "markdown": "two"}, {"op": "wait", "ms": 1500}]},
        {"steps": [{"op": "say", "markdown": "ask"}, {"op": "tool_calls", "calls": [{"tool_name": "ask",
            "interaction_type": "ui_tool", "component_type": "Form", "display": "inline",
            "outcome": {"kind": "await_response"}}]}]}
    ]});
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    open(&mut c, &["1.1"], None, script.clone()).await;
    turn(&mut c, "m1").await;
    let one = item_ids(&c)[1].clone();
    // run_in_progress comes before unknown_item (RETRY-004), during the wait of turn two.
    c.user_message("m2", "go").await;
    c.recv_until(|f| matches!(f, ServerFrame::AssistantMessage(_))).await;
    c.recv().await;
    let before = c.fold.clone();
    send_retry(&mut c, "x1", "no-such-item").await;
    c.expect_error(ErrorCode::RunInProgress).await;
    until_run_complete(&mut c).await;
    send_retry(&mut c, "x2", "no-such-item").await;
    c.expect_error(ErrorCode::UnknownItem).await;
    send_retry(&mut c, "x3", &one).await;
    c.expect_error(ErrorCode::ItemNotInLatestTurn).await;
    // The third turn awaits a response: retrying after the pending call would keep it open.
    turn(&mut c, "m3").await;
    let ask = c.tool_call_ids()[0].clone();
    send_retry(&mut c, "x4", &ask).await;
    c.expect_error(ErrorCode::RetryKeepsOpenCall).await;
    assert_eq!(c.fold.items.len(), before.items.len() + 3, "nothing changed but the third turn");

    // A server without retry refuses it first of all, even during a run.
    let without = ServeConfig { without: vec![Capability::Retry], ..config(DbLocation::Memory) };
    let server = TestServer::start(without).await;
    let mut c = Client::connect(&server.url).await;
    let w = open(&mut c, &["1.1"], None, script.clone()).await;
    assert!(!w.capabilities.contains(&Capability::Retry));
    turn(&mut c, "m1").await;
    c.user_message("m2", "go").await;
    c.recv_until(|f| matches!(f, ServerFrame::AssistantMessage(_))).await;
    c.recv().await;
    send_retry(&mut c, "x1", "no-such-item").await;
    c.expect_error(ErrorCode::CapabilityNotOffered).await;
    until_run_complete(&mut c).await;

    // On a 1.0 connection chat.retry is no frame at all (ERROR-007).
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    open(&mut c, &["1.0"], None, script).await;
    turn(&mut c, "m1").await;
    let one = item_ids(&c)[1].clone();
    send_retry(&mut c, "x1", &one).await;
    c.expect_error(ErrorCode::UnknownType).await;
}

#[tokio::test]
async fn a_call_a_retry_removed_cannot_be_answered_and_does_not_expire() {
    let script = json!({"turns": [{"steps": [
        {"op": "say", "markdown": "let me ask"},
        {"op": "tool_calls", "calls": [{"tool_name": "ask", "interaction_type": "ui_tool", "component_type": "Form",
            "display": "inline", "outcome": {"kind": "await_response", "expire_after_ms": 1000}}]}
    ]}]});
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    open(&mut c, &["1.1"], None, script).await;
    turn(&mut c, "m1").await;
    assert_eq!(c.fold.run.status, RunStatus::AwaitingInput);
    let ask = c.tool_call_ids()[0].clone();
    let said_item = item_ids(&c)[1].clone();
    accepted_retry(&mut c, "r1", &said_item, std::slice::from_ref(&ask)).await;
    // RETRY-005: the removed call is unknown now.
    c.send(json!({"type": "chat.tool_call_response", "id": "t1", "tool_call_id": ask,
        "outcome": {"action": "submit", "value": 1}}))
        .await;
    c.expect_error(ErrorCode::UnknownToolCall).await;
    // Its deadline went with it: no dismissal comes when it would have expired.
    assert!(c.try_recv(Duration::from_millis(2000)).await.is_none());
}
