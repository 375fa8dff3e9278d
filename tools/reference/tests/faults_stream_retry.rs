//! The planted faults of streamed text and retry are observable: each test runs what exposes one
//! fault and checks the server now deviates from the contract the correct server keeps (proven in
//! `stream.rs` and `retry.rs`). The clients record without asserting (`strict = false`).

mod common;

use chatwire_reference::{DbLocation, Durability, Fault, ServeConfig};
use chatwire_schema::{RunStatus, ServerFrame};
use common::retry::{costly_script, send_retry};
use common::stream::{assistant_texts, deltas, first_delta_in, stream_script, CHUNKS};
use common::v11::{open, resume, until_run_complete};
use common::{config, Client, TestServer};
use serde_json::json;

/// The deltas a lenient connection gets after resuming `a`'s session mid-stream by catch-up.
async fn deltas_after_resume(server: &TestServer, a: &Client) -> (String, Vec<String>) {
    let (mut b, _, _) = resume(&server.url, a, a.last_state_seq, None).await;
    b.strict = false;
    let resumed = assistant_texts(&b.fold).first().map(|(text, _)| text.clone()).unwrap_or_default();
    let frames = until_run_complete(&mut b).await;
    (resumed, deltas(&frames))
}

/// How many chunks the resumed text holds.
fn chunks_in(resumed: &str) -> usize {
    (0..=CHUNKS.len()).find(|k| CHUNKS[..*k].concat() == resumed).expect("the resumed text is a prefix of the chunks")
}

#[tokio::test]
async fn stream_chunk_repeated_after_resume_sends_the_previous_chunk_again() {
    let server = TestServer::with_fault(Fault::StreamChunkRepeatedAfterResume).await;
    let a = first_delta_in(&server, false).await;
    let (resumed, got) = deltas_after_resume(&server, &a).await;
    let k = chunks_in(&resumed);
    assert!((1..CHUNKS.len()).contains(&k), "resumed mid-stream");
    assert_eq!(got[0], format!("{}{}", CHUNKS[k - 1], CHUNKS[k]), "STREAM-003: the last chunk comes again");
}

#[tokio::test]
async fn stream_chunk_lost_on_resume_never_sends_the_first_chunk_due() {
    let server = TestServer::with_fault(Fault::StreamChunkLostOnResume).await;
    let a = first_delta_in(&server, false).await;
    let (resumed, got) = deltas_after_resume(&server, &a).await;
    let k = chunks_in(&resumed);
    assert!(k < CHUNKS.len(), "resumed mid-stream");
    assert_eq!(got, CHUNKS[k + 1..], "STREAM-003: the first chunk due is missing");
}

#[tokio::test]
async fn stream_final_text_differs_ends_the_stream_with_another_text() {
    let server = TestServer::with_fault(Fault::StreamFinalTextDiffers).await;
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    open(&mut c, &["1.1"], None, stream_script(0)).await;
    c.user_message("m1", "go").await;
    let frames = until_run_complete(&mut c).await;
    assert_eq!(deltas(&frames), CHUNKS);
    let ends: Vec<&str> = frames
        .iter()
        .filter_map(|f| match f {
            ServerFrame::AssistantMessage(m) => Some(m.markdown.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ends[0], format!("{} ", CHUNKS.concat()), "STATE-047: the end differs from the deltas");
}

#[tokio::test]
async fn stream_left_open_after_restart_keeps_the_stream_and_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chat.db");
    let faulty = || ServeConfig {
        durability: Durability::Normal,
        fault: Some(Fault::StreamLeftOpenAfterRestart),
        ..config(DbLocation::File(db.clone()))
    };
    let server = TestServer::start(faulty()).await;
    let a = first_delta_in(&server, false).await;
    server.stop().await;
    let server = TestServer::start(faulty()).await;
    let (mut b, _, _) = resume(&server.url, &a, 0, None).await;
    b.strict = false;
    assert!(b.fold.open_stream().is_some(), "STREAM-004: the stream is still open after the restart");
    assert_eq!(b.fold.run.status, RunStatus::Running);
    server.stop().await;
}

/// A lenient client that played the costly turn (its run failed) on a server with `fault`.
async fn costly_turn_failed(server: &TestServer) -> Client {
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    open(&mut c, &["1.1"], None, costly_script()).await;
    c.user_message("m1", "go").await;
    until_run_complete(&mut c).await;
    c
}

#[tokio::test]
async fn retry_reexecutes_kept_tool_runs_the_costly_tool_again() {
    let server = TestServer::with_fault(Fault::RetryReexecutesKeptTool).await;
    let mut c = costly_turn_failed(&server).await;
    let call = c.tool_call_ids()[0].clone();
    send_retry(&mut c, "r1", &call).await;
    let frames = until_run_complete(&mut c).await;
    let again = frames.iter().filter(|f| matches!(f, ServerFrame::ToolCall(t) if t.tool_name == "costly")).count();
    assert_eq!(again, 1, "RETRY-002: the retried run calls the kept tool again");
}

#[tokio::test]
async fn retry_cuts_wrong_item_keeps_an_item_it_announced_removed() {
    let server = TestServer::with_fault(Fault::RetryCutsWrongItem).await;
    let script = json!({"turns": [{"steps": [
        {"op": "say", "markdown": "one"}, {"op": "say", "markdown": "two"}, {"op": "end", "status": "failed"}
    ]}]});
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    open(&mut c, &["1.1"], None, script).await;
    c.user_message("m1", "go").await;
    until_run_complete(&mut c).await;
    let user = c.fold.items[0].id().to_string();
    send_retry(&mut c, "r1", &user).await;
    let frames = until_run_complete(&mut c).await;
    let announced = frames.iter().find_map(|f| match f {
        ServerFrame::RetryAccepted(a) => Some(a.removed_item_ids.len()),
        _ => None,
    });
    assert_eq!(announced, Some(2));
    let (b, _, _) = resume(&server.url, &c, 0, None).await;
    assert_eq!(assistant_texts(&b.fold), [("one".to_owned(), false)], "RETRY-002: the server kept an item it removed");
}
