//! The planted faults of protocol 1.1 are observable: each test runs what exposes one fault and
//! checks the server now deviates from the contract the correct server keeps (proven in
//! `v11.rs` and `send_queue.rs`). The client records without asserting (`strict = false`).

mod common;

use std::time::Duration;

use chatwire_reference::{Fault, ServeConfig};
use chatwire_schema::{reduce_all, ServerFrame, UiState};
use common::{tool_turns_script, Client, TestServer};
use serde_json::{json, Value};

/// A lenient client on `server` that opened a session offering `versions` (and `features`) and
/// played one turn.
async fn played(server: &TestServer, versions: &[&str], features: Option<Value>) -> Client {
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    let mut hello = json!({"type": "session.hello", "id": "h1", "versions": versions, "script": tool_turns_script()});
    if let Some(f) = features {
        hello["features"] = f;
    }
    c.send(hello).await;
    c.recv().await;
    c.recv().await;
    c.user_message("m1", "go").await;
    c.recv_until(|f| matches!(f, ServerFrame::RunComplete(_))).await;
    c.recv().await;
    c
}

/// The fold of every event the client received (the session's first state is empty).
fn events_fold(c: &Client) -> UiState {
    reduce_all(&UiState::default(), c.received.iter().filter_map(ServerFrame::ui_event)).expect("events fold")
}

fn patches(c: &Client) -> Vec<&chatwire_schema::ui_state_patch::UiStatePatch> {
    c.received
        .iter()
        .filter_map(|f| match f {
            ServerFrame::UiStatePatch(p) => Some(p),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn patch_missing_op_gives_a_state_other_than_the_events() {
    let server = TestServer::with_fault(Fault::PatchMissingOp).await;
    let c = played(&server, &["1.1"], None).await;
    assert!(!patches(&c).is_empty());
    assert_ne!(c.fold, events_fold(&c), "STATE-038: the patches no longer give the fold of the events");
}

#[tokio::test]
async fn patch_wrong_base_seq_names_a_frame_before_the_base() {
    let server = TestServer::with_fault(Fault::PatchWrongBaseSeq).await;
    let c = played(&server, &["1.1"], None).await;
    let mut previous = 2; // the snapshot
    let mut wrong = 0;
    for frame in &c.received {
        if let ServerFrame::UiStatePatch(p) = frame {
            wrong += usize::from(p.base_seq != previous);
            previous = p.seq;
        }
    }
    assert!(wrong > 0, "STATE-037: some base_seq is not the previous state frame's seq");
}

#[tokio::test]
async fn patch_without_feature_patches_a_connection_that_left_it_out() {
    let server = TestServer::with_fault(Fault::PatchWithoutFeature).await;
    let c = played(&server, &["1.1"], Some(json!(["resume_catch_up"]))).await;
    let ServerFrame::Welcome(w) = &c.received[0] else { panic!("welcome first") };
    assert!(!w.features.as_ref().unwrap().iter().any(|f| f.as_str() == "ui_state_patch"));
    assert!(!patches(&c).is_empty(), "SESSION-015: a patch where ui_state_patch is not in force");
}

#[tokio::test]
async fn v11_member_on_v10_connection_puts_features_in_a_1_0_welcome() {
    let server = TestServer::with_fault(Fault::V11MemberOnV10Connection).await;
    let mut c = Client::connect(&server.url).await;
    c.strict = false;
    c.send(json!({"type": "session.hello", "id": "h1", "versions": ["1.0"]})).await;
    let ServerFrame::Welcome(w) = c.recv().await else { panic!("welcome first") };
    assert_eq!(w.version.to_string(), "1.0");
    assert_eq!(w.features, Some(vec![]), "COMPAT-005: a 1.1 member on a 1.0 connection");
}

#[tokio::test]
async fn catch_up_wrong_base_replays_what_the_client_already_holds() {
    let server = TestServer::with_fault(Fault::CatchUpWrongBase).await;
    let mut a = played(&server, &["1.1"], None).await;
    a.user_message("m2", "again").await;
    a.recv_until(|f| matches!(f, ServerFrame::RunComplete(_))).await;
    a.recv().await;
    let mut b = Client::connect(&server.url).await;
    b.strict = false;
    b.states = a.states.clone();
    b.send(json!({"type": "session.hello", "id": "h2", "versions": ["1.1"],
        "resume": {"session_id": a.session_id, "resume_token": a.token, "last_seq": a.last_state_seq}}))
        .await;
    b.recv().await;
    let ServerFrame::UiStatePatch(p) = b.recv().await else { panic!("a catch-up patch") };
    assert_eq!(p.base_seq, a.last_state_seq);
    assert!(!p.patch.is_empty(), "nothing happened since last_seq, yet the patch replays the session");
    assert_ne!(b.fold, a.fold, "RESUME-019: the catch-up does not give the session's state");
}

#[tokio::test]
async fn unbounded_send_queue_never_closes_a_client_that_stops_reading() {
    let fault = ServeConfig { fault: Some(Fault::UnboundedSendQueue), ..common::send_queue::small_bound() };
    let server = TestServer::start(fault).await;
    let mut c = common::send_queue::stalled_client(&server).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let frames = common::send_queue::drain(&mut c, Duration::from_secs(3)).await;
    assert_eq!(c.close_code, None, "TRANSPORT-016: no 4008 close, everything was queued ({frames} frames)");
    assert_eq!(frames, common::send_queue::EVERY_FRAME, "every frame was held for the client");
}
