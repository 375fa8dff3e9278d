//! Streamed assistant text on the reference (`spec/streaming.md`): one committed delta per chunk
//! and no state frame for it (STREAM-002, SCRIPT-019), the view of a connection where
//! `assistant_stream` is not in force (STATE-012 for the end, no deltas), and resume or takeover
//! mid-stream by catch-up (from a delta's seq and from a seq before the stream) and by snapshot,
//! continuing exactly (STREAM-003). Every frame is also judged by the conformance monitor.
//!
//! Mid-stream resumes need the stream to be open when the resume is answered: the chunks are
//! spaced by `STREAM_GAP_MS`, far longer than a resume takes, which is a script delay and not a
//! timed assertion (no test measures how long anything took).

mod common;

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{RunStatus, ServerFrame};
use common::stream::{assistant_texts, deltas, first_delta_in, stream_script, CHUNKS, STREAM_GAP_MS};
use common::v11::{open, resume, turn, until_run_complete};
use common::{Client, TestServer};
use serde_json::{json, Value};

/// The whole text after a stream ended and "after" was said.
fn finished() -> Vec<(String, bool)> {
    vec![(CHUNKS.concat(), false), ("after".to_owned(), false)]
}

#[tokio::test]
async fn a_streamed_say_is_one_delta_per_chunk_with_no_state_frame_then_the_whole_text() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    open(&mut c, &["1.1"], None, stream_script(0)).await;
    let frames = turn(&mut c, "m1").await;
    assert_eq!(deltas(&frames), CHUNKS, "SCRIPT-019: one delta per chunk, in order");
    let names: Vec<&str> = frames.iter().map(ServerFrame::type_name).collect();
    let first = names.iter().position(|n| *n == "chat.assistant_message_delta").unwrap();
    // STREAM-002: no state frame between the deltas nor before the end.
    assert_eq!(
        &names[first..first + 5],
        [
            "chat.assistant_message_delta",
            "chat.assistant_message_delta",
            "chat.assistant_message_delta",
            "chat.assistant_message",
            "ui_state_patch"
        ]
    );
    let ServerFrame::AssistantMessage(end) = &frames[first + 3] else { unreachable!() };
    let ServerFrame::AssistantMessageDelta(d) = &frames[first] else { unreachable!() };
    assert_eq!((end.item_id.clone(), end.markdown.as_str()), (d.item_id.clone(), CHUNKS.concat().as_str()));
    // The end's patch names the last delta as its base and only closes the item.
    let ServerFrame::UiStatePatch(p) = &frames[first + 4] else { unreachable!() };
    assert_eq!(Some(p.base_seq), frames[first + 2].seq());
    assert!(p.patch.iter().all(|op| !matches!(op, PatchOp::Add { .. })), "{:?}", p.patch);
    assert_eq!(assistant_texts(&c.fold), finished());
    assert_eq!(c.fold.run.status, RunStatus::Completed);
}

#[tokio::test]
async fn a_connection_without_assistant_stream_gets_the_whole_message_as_in_1_0() {
    let server = TestServer::memory().await;
    // STREAM-001: features without assistant_stream; and a 1.0 connection.
    for (versions, features) in
        [(&["1.1"][..], Some(json!(["ui_state_patch", "resume_catch_up"]))), (&["1.0"][..], None)]
    {
        let mut c = Client::connect(&server.url).await;
        let w = open(&mut c, versions, features, stream_script(0)).await;
        assert!(!w.features.unwrap_or_default().iter().any(|f| f.as_str() == "assistant_stream"));
        let frames = turn(&mut c, "m1").await;
        assert!(deltas(&frames).is_empty(), "no delta where assistant_stream is not in force");
        let say = frames.iter().position(|f| matches!(f, ServerFrame::AssistantMessage(_))).unwrap();
        match &frames[say + 1] {
            // STATE-012: the end appends the whole item to this connection's view.
            ServerFrame::UiStatePatch(p) => {
                assert!(
                    matches!(p.patch.as_slice(), [PatchOp::Add { path, .. }] if path == "/items/-"),
                    "{:?}",
                    p.patch
                )
            }
            ServerFrame::UiStateUpdated(u) => assert_eq!(assistant_texts(&u.state), [(CHUNKS.concat(), false)]),
            other => panic!("expected the state frame of the message, got {other:?}"),
        }
        assert_eq!(assistant_texts(&c.fold), finished());
    }
}

#[tokio::test]
async fn a_server_without_assistant_stream_sends_every_say_whole() {
    let capability = chatwire_schema::session::welcome::Capability::AssistantStream;
    let config = chatwire_reference::ServeConfig {
        without: vec![capability.clone()],
        ..common::config(chatwire_reference::DbLocation::Memory)
    };
    let server = TestServer::start(config).await;
    let mut c = Client::connect(&server.url).await;
    let w = open(&mut c, &["1.1"], None, stream_script(0)).await;
    assert!(!w.capabilities.contains(&capability) && !w.features.unwrap().contains(&capability));
    let frames = turn(&mut c, "m1").await;
    assert!(deltas(&frames).is_empty());
    assert_eq!(assistant_texts(&c.fold), finished());
}

/// After a resume mid-stream: the resumed state holds a prefix of the text, the deltas that
/// follow continue it exactly (STREAM-003), and the turn ends with the whole text.
async fn continues_exactly(c: &mut Client) {
    let resumed = assistant_texts(&c.fold);
    let [(text, true)] = resumed.as_slice() else { panic!("the resumed state holds the open stream: {resumed:?}") };
    let sent = CHUNKS.iter().scan(String::new(), |acc, ch| {
        acc.push_str(ch);
        Some(acc.clone())
    });
    let k = sent.clone().position(|prefix| &prefix == text).expect("the resumed text is a prefix of chunks") + 1;
    assert!(k < CHUNKS.len(), "the resume came after the last chunk; raise STREAM_GAP_MS");
    let frames = until_run_complete(c).await;
    assert_eq!(deltas(&frames), CHUNKS[k..], "STREAM-003: no chunk lost or repeated");
    assert_eq!(assistant_texts(&c.fold), finished());
}

#[tokio::test]
async fn a_resume_mid_stream_by_catch_up_from_the_last_delta_continues_exactly() {
    let server = TestServer::memory().await;
    let mut a = first_delta_in(&server, true).await;
    // Take over without closing (SESSION-010): the old connection gets session_taken_over.
    let (mut b, _, state) = resume(&server.url, &a, a.last_state_seq, None).await;
    let ServerFrame::UiStatePatch(p) = &state else { panic!("RESUME-017: a catch-up from a delta, got {state:?}") };
    assert_eq!(p.base_seq, a.last_seq, "the delta's seq is the base");
    continues_exactly(&mut b).await;
    let taken = a.recv_until(|f| matches!(f, ServerFrame::Error(_))).await;
    assert!(deltas(&taken).len() <= 1, "the old connection got nothing after the takeover");
}

#[tokio::test]
async fn a_resume_mid_stream_by_catch_up_from_before_the_stream_continues_exactly() {
    let server = TestServer::memory().await;
    let a = first_delta_in(&server, true).await;
    let before_stream = *a.states.keys().rev().nth(1).unwrap();
    let (mut b, _, state) = resume(&server.url, &a, before_stream, None).await;
    drop(a);
    let ServerFrame::UiStatePatch(p) = &state else { panic!("a catch-up from {before_stream}, got {state:?}") };
    assert!(matches!(p.patch.first(), Some(PatchOp::Add { path, .. }) if path == "/items/-"), "{:?}", p.patch);
    continues_exactly(&mut b).await;
}

#[tokio::test]
async fn a_resume_mid_stream_by_snapshot_continues_exactly() {
    let server = TestServer::memory().await;
    let a = first_delta_in(&server, true).await;
    // No catch-up in force: the snapshot holds the open stream with its text so far.
    let features = Some(json!(["ui_state_patch", "assistant_stream"]));
    let (mut b, _, state) = resume(&server.url, &a, a.last_state_seq, features).await;
    drop(a);
    let ServerFrame::UiStateSnapshot(s) = &state else { panic!("expected the snapshot, got {state:?}") };
    assert!(s.state.open_stream().is_some());
    continues_exactly(&mut b).await;
}

#[tokio::test]
async fn a_resume_mid_stream_without_assistant_stream_sees_no_stream_then_the_whole_message() {
    let server = TestServer::memory().await;
    let a = first_delta_in(&server, true).await;
    for (features, from) in [(json!(["ui_state_patch", "resume_catch_up"]), a.last_state_seq), (json!([]), 0)] {
        let (mut b, _, state) = resume(&server.url, &a, from, Some(features)).await;
        // The state this connection gets is its view: the stream left out (a snapshot, since its
        // client held the stream it does not see any more).
        let ServerFrame::UiStateSnapshot(s) = &state else { panic!("expected the snapshot, got {state:?}") };
        assert!(assistant_texts(&s.state).is_empty(), "{:?}", s.state.items);
        assert_eq!(s.state.run.status, RunStatus::Running);
        if from == 0 {
            let frames = until_run_complete(&mut b).await;
            assert!(deltas(&frames).is_empty());
            assert_eq!(assistant_texts(&b.fold), finished());
        }
    }
}

#[tokio::test]
async fn a_restart_mid_stream_ends_the_stream_with_the_text_so_far_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chat.db");
    let durable = || chatwire_reference::ServeConfig {
        durability: chatwire_reference::Durability::Normal,
        ..common::config(chatwire_reference::DbLocation::File(db.clone()))
    };
    let server = TestServer::start(durable()).await;
    let a = first_delta_in(&server, true).await;
    server.stop().await;

    // The chunks committed before the stop (the stop waits for closing handshakes, so more than
    // the one this client saw may be).
    let streamed: String = log_frames(&db, "chat.assistant_message_delta")
        .iter()
        .map(|d| d["delta"].as_str().unwrap().to_owned())
        .collect();
    assert!(streamed.len() < CHUNKS.concat().len(), "the stream was still open; raise STREAM_GAP_MS");

    let server = TestServer::start(durable()).await;
    // STREAM-004 and RESUME-014: recovery ended the stream and the run before this resume.
    let (mut b, _, state) = resume(&server.url, &a, a.last_state_seq, None).await;
    assert!(matches!(state, ServerFrame::UiStatePatch(ref p) if p.base_seq == a.last_seq), "{state:?}");
    assert_eq!(assistant_texts(&b.fold), [(streamed.clone(), false)]);
    assert_eq!(b.fold.run.status, RunStatus::Failed);
    // The turn does not continue: nothing more comes.
    assert!(b.try_recv(std::time::Duration::from_millis(2 * STREAM_GAP_MS)).await.is_none());
    // A 1.0 client sees the same item, whole.
    let mut old = Client::connect(&server.url).await;
    old.resume(a.session_id.as_deref().unwrap(), a.token.as_deref().unwrap(), 0).await.expect("resume");
    assert_eq!(assistant_texts(&old.fold), [(streamed.clone(), false)]);
    server.stop().await;
    // The end and the run's failure are in the log, once: exactly the text streamed, and
    // SCRIPT-015's reason and error.
    let ends = log_frames(&db, "chat.assistant_message");
    let runs = log_frames(&db, "chat.run_complete");
    assert_eq!((ends.len(), runs.len()), (1, 1));
    assert_eq!(ends[0]["markdown"], streamed.as_str());
    let run = &runs[0];
    assert_eq!(
        (&run["status"], &run["reason"], &run["error"]),
        (&json!("failed"), &json!("interrupted"), &json!("interrupted"))
    );
}

/// The events of `frame_type` in the log of the database at `db`, in order.
fn log_frames(db: &std::path::Path, frame_type: &str) -> Vec<Value> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT frame FROM log WHERE kind = 'event' AND type = ?1 ORDER BY pos").unwrap();
    let frames: Vec<String> = stmt.query_map([frame_type], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    frames.iter().map(|f| serde_json::from_str(f).unwrap()).collect()
}
