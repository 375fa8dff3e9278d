//! Protocol 1.1 on the reference: negotiation and features (SESSION-012..016, COMPAT-005),
//! `ui_state_patch` in place of `ui_state_updated` (STATE-036..038) and catch-up resume
//! (RESUME-017..019), each checked by the test client (which applies every patch with the
//! json-patch crate to the state its `base_seq` names) and by the conformance monitor.

mod common;

use chatwire_reference::{DbLocation, Durability, ServeConfig};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{DisplayItem, ServerFrame};
use common::v11::{open, resume, turn};
use common::{config, tool_turns_script, Client, TestServer};
use serde_json::{json, Value};

#[tokio::test]
async fn a_1_1_offer_gets_1_1_with_every_feature_and_a_1_0_offer_gets_exactly_1_0() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let w = open(&mut c, &["1.1", "1.0"], None, tool_turns_script()).await;
    assert_eq!(w.version.to_string(), "1.1");
    // SESSION-012/013: no `features` in the hello, so every feature of 1.1 the server implements.
    assert_eq!(
        w.features,
        Some(vec![Capability::UiStatePatch, Capability::ResumeCatchUp, Capability::AssistantStream])
    );
    assert_eq!(w.resume_retention, Some(1000));
    assert!(w.capabilities.contains(&Capability::UiStatePatch) && w.capabilities.contains(&Capability::ResumeCatchUp));

    let mut old = Client::connect(&server.url).await;
    old.send(json!({"type": "session.hello", "id": "h0", "versions": ["1.0"], "script": tool_turns_script()})).await;
    // COMPAT-005: the 1.0 welcome has no member 1.0 does not define, not even an empty one.
    let ServerFrame::Welcome(w) = old.recv().await else { panic!("expected a welcome") };
    assert_eq!(w.version.to_string(), "1.0");
    assert_eq!((w.features, w.resume_retention), (None, None));
    assert!(!w.capabilities.iter().any(|c| c.feature_since().is_some()), "{:?}", w.capabilities);
    old.recv().await;
    let frames = turn(&mut old, "m1").await;
    assert!(!frames.iter().any(|f| matches!(f, ServerFrame::UiStatePatch(_))), "no patch on a 1.0 connection");
    assert!(frames.iter().any(|f| matches!(f, ServerFrame::UiStateUpdated(_))));
}

#[tokio::test]
async fn the_hello_narrows_the_features_and_unknown_names_are_ignored() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    // SESSION-016: an unknown name is ignored, not refused.
    let w = open(&mut c, &["1.1"], Some(json!(["teleport", "ui_state_patch"])), tool_turns_script()).await;
    assert_eq!(w.features, Some(vec![Capability::UiStatePatch]));
    assert_eq!(w.resume_retention, None, "RESUME-018: no retention where resume_catch_up is not in force");
    assert!(turn(&mut c, "m1").await.iter().any(|f| matches!(f, ServerFrame::UiStatePatch(_))));

    // SESSION-015: `features: []` puts nothing in force, so the 1.1 connection gets whole updates.
    let mut plain = Client::connect(&server.url).await;
    let w = open(&mut plain, &["1.1"], Some(json!([])), tool_turns_script()).await;
    assert_eq!(w.features, Some(vec![]));
    let frames = turn(&mut plain, "m1").await;
    assert!(!frames.iter().any(|f| matches!(f, ServerFrame::UiStatePatch(_))));
    assert_eq!(plain.fold.items.len(), c.fold.items.len());
}

#[tokio::test]
async fn patches_replace_every_update_chain_their_base_and_follow_the_change() {
    let server = TestServer::memory().await;
    let mut c = Client::connect(&server.url).await;
    let w = open(&mut c, &["1.1", "1.0"], None, tool_turns_script()).await;
    let mut previous_state_seq = w.seq + 1;
    let frames = turn(&mut c, "m1").await;
    let mut events_since_state = 0;
    for frame in &frames {
        match frame {
            ServerFrame::UiStateUpdated(u) => {
                panic!("STATE-036: ui_state_updated {} where patches are in force", u.seq)
            }
            ServerFrame::UiStatePatch(p) => {
                // STATE-037: the base is the previous state frame of this connection.
                assert_eq!(p.base_seq, previous_state_seq, "patch {}", p.seq);
                assert!(events_since_state > 0, "a patch follows events");
                previous_state_seq = p.seq;
                events_since_state = 0;
            }
            f if f.ui_event().is_some() => events_since_state += 1,
            _ => {}
        }
    }
    // One patch per batch: the two chat.tool_call frames are followed by a single patch.
    let names: Vec<&str> = frames.iter().map(ServerFrame::type_name).collect();
    let batch = names.iter().position(|n| *n == "chat.tool_call").unwrap();
    assert_eq!(&names[batch..batch + 3], ["chat.tool_call", "chat.tool_call", "ui_state_patch"]);
    // A patch's size follows the change: a said message is one `add` at the end of the items.
    let say = frames.iter().position(|f| matches!(f, ServerFrame::AssistantMessage(_))).unwrap();
    let ServerFrame::UiStatePatch(p) = &frames[say + 1] else { panic!("a patch after the message") };
    assert!(matches!(p.patch.as_slice(), [PatchOp::Add { path, .. }] if path == "/items/-"), "{:?}", p.patch);
    // STATE-038: the client applied every patch to its base (common::Client); the result is the
    // fold of the events, which a second turn builds on.
    turn(&mut c, "m2").await;
    let texts: Vec<&str> = c
        .fold
        .items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::AssistantMarkdown(m) => Some(m.markdown.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["first", "second", "third"]);
    assert_eq!(c.tool_call_ids().len(), 2);
}

#[tokio::test]
async fn a_resume_from_a_state_frame_gets_one_catch_up_patch_to_the_same_state_as_a_snapshot() {
    let server = TestServer::memory().await;
    let mut a = Client::connect(&server.url).await;
    let w = open(&mut a, &["1.1", "1.0"], None, tool_turns_script()).await;
    let snapshot_seq = w.seq + 1;
    let frames = turn(&mut a, "m1").await;
    turn(&mut a, "m2").await;
    let final_state = a.fold.clone();
    // Every state frame the session sent is a base: the first snapshot, a patch mid-turn, the last.
    let mid = frames.iter().filter(|f| f.carries_state()).nth(2).and_then(ServerFrame::seq).unwrap();
    for base in [snapshot_seq, mid, a.last_state_seq] {
        let (b, w, state) = resume(&server.url, &a, base, None).await;
        assert_eq!(w.resume_retention, Some(1000));
        let ServerFrame::UiStatePatch(p) = &state else {
            panic!("RESUME-017: a catch-up patch from {base}, got {state:?}")
        };
        assert_eq!((p.seq, p.base_seq), (w.seq + 1, base));
        // RESUME-019: the state the patch gives is the state a snapshot would have held.
        assert_eq!(b.fold, final_state, "catch-up from {base}");
        if base == a.last_state_seq {
            assert!(p.patch.is_empty(), "nothing happened since: {:?}", p.patch);
        }
    }
    // RESUME-018: a seq that carried no state (an event, the welcome, 0) gets the snapshot.
    let event = frames.iter().find(|f| f.ui_event().is_some()).and_then(ServerFrame::seq).unwrap();
    for base in [event, w.seq, 0] {
        let (_, _, state) = resume(&server.url, &a, base, None).await;
        assert!(matches!(state, ServerFrame::UiStateSnapshot(_)), "from {base}: {state:?}");
    }
    // ... and so does a connection on which resume_catch_up is not in force.
    let (_, w, state) = resume(&server.url, &a, mid, Some(json!(["ui_state_patch"]))).await;
    assert_eq!(w.resume_retention, None);
    let ServerFrame::UiStateSnapshot(s) = state else { panic!("expected the snapshot") };
    assert_eq!(s.state, final_state);
}

#[tokio::test]
async fn catch_up_works_across_a_restart_and_ends_at_the_retention() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chat.db");
    let durable = || ServeConfig { durability: Durability::Normal, ..config(DbLocation::File(db.clone())) };
    let server = TestServer::start(durable()).await;
    let mut a = Client::connect(&server.url).await;
    // The second turn commits exactly the retention's 1,000 events (accepted, started, 997 says,
    // complete); from the first snapshot on that is 1,004.
    let says: Vec<Value> = (0..997).map(|k| json!({"op": "say", "markdown": format!("m{k}")})).collect();
    let script = json!({"turns": [{"steps": [{"op": "say", "markdown": "hello"}]}, {"steps": says}]});
    let w = open(&mut a, &["1.1", "1.0"], None, script).await;
    turn(&mut a, "m1").await;
    let after_first = a.last_state_seq;
    server.stop().await;

    // The state frames are known from the database after a restart (RESUME-017).
    let server = TestServer::start(durable()).await;
    let (mut b, _, state) = resume(&server.url, &a, after_first, None).await;
    assert!(matches!(state, ServerFrame::UiStatePatch(ref p) if p.base_seq == after_first), "{state:?}");
    assert_eq!(b.fold, a.fold);
    b.keep_states = false;
    turn(&mut b, "m2").await;
    assert_eq!(b.fold.items.len(), 2 + 1 + 997);
    let mut again = Client::connect(&server.url).await;
    again.states = a.states.clone();
    again.session_id = a.session_id.clone();
    again.token = a.token.clone();
    let (_, _, state) = resume(&server.url, &again, w.seq + 1, None).await;
    assert!(matches!(state, ServerFrame::UiStateSnapshot(_)), "beyond the retention: the snapshot");
    let (c, _, state) = resume(&server.url, &again, after_first, None).await;
    assert!(matches!(state, ServerFrame::UiStatePatch(_)), "exactly the retention: a catch-up");
    assert_eq!(c.fold, b.fold);
    server.stop().await;
}

#[tokio::test]
async fn a_reference_pinned_to_1_0_serves_a_1_1_client_1_0() {
    let v1_0 = chatwire_schema::ProtocolVersion { major: 1, minor: 0 };
    let server = TestServer::start(chatwire_reference::ServeConfig {
        versions: vec![v1_0],
        ..config(chatwire_reference::DbLocation::Memory)
    })
    .await;
    let mut c = Client::connect(&server.url).await;
    let w = open(&mut c, &["1.1", "1.0"], None, tool_turns_script()).await;
    assert_eq!((w.version, w.features), (v1_0, None));
    assert!(!turn(&mut c, "m1").await.iter().any(|f| matches!(f, ServerFrame::UiStatePatch(_))));
}
