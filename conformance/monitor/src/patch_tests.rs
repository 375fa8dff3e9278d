//! The 1.1 checks on hand-made traffic: features in force, the patch oracle and catch-up resumes.
//! Every test runs a good sequence (no finding) beside the bad one (exactly the finding meant).

use std::sync::Arc;

use chatwire_schema::{FrameValidator, ReqId, ServerFrame, UiState};
use serde_json::{json, Value};

use super::*;

const TS: &str = "2026-01-15T10:00:00Z";
const ALL: &[&str] = &["rewind", "ui_state_patch", "resume_catch_up"];

fn server(m: &mut Monitor, conn: u64, frame: Value) {
    m.server_text(conn, &frame.to_string());
}

fn found(m: &mut Monitor) -> Vec<(&'static str, String)> {
    m.take_findings().into_iter().map(|f| (f.check.id, f.requirement.to_string())).collect()
}

/// A welcome answering hello `h` on 1.1 with every feature the capabilities hold in force.
fn welcome(seq: u64, hello: &str, features: &[&str], extra: Value) -> Value {
    let mut w = json!({"type": "session.welcome", "seq": seq, "in_reply_to": hello, "version": "1.1",
        "session_id": "s-1", "resume_token": "t-1", "resumed": false, "capabilities": ALL,
        "limits": {"max_frame_bytes": 1048576}, "features": features});
    if features.contains(&"resume_catch_up") {
        w["resume_retention"] = json!(100);
    }
    for (k, v) in extra.as_object().into_iter().flatten() {
        w[k] = v.clone();
    }
    w
}

/// A monitor with connection 0 on a new 1.1 session; `asked` is the hello's `features`.
fn bound(asked: Option<&[&str]>) -> Monitor {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    let mut hello = json!({"type": "session.hello", "id": "h1", "versions": ["1.1"]});
    if let Some(asked) = asked {
        hello["features"] = json!(asked);
    }
    m.client_frame(0, &hello);
    let in_force: Vec<&str> =
        ["resume_catch_up", "ui_state_patch"].into_iter().filter(|f| asked.is_none_or(|a| a.contains(f))).collect();
    server(&mut m, 0, welcome(1, "h1", &in_force, json!({})));
    server(&mut m, 0, json!({"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": UiState::default()}));
    assert_eq!(found(&mut m), vec![], "a clean 1.1 handshake");
    m
}

/// The events of a turn with one auto tool call that completes: accepted, started, call, complete.
fn turn() -> Vec<Value> {
    vec![
        json!({"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "inv-1",
            "item_id": "it-1", "text": "go", "ts": TS}),
        json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": TS}),
        json!({"type": "chat.tool_call", "invocation_id": "inv-1", "tool_call_id": "tc-1",
            "call_index": 0, "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false,
            "display": "inline", "payload": {}, "ts": TS}),
        json!({"type": "chat.tool_call_complete", "tool_call_id": "tc-1", "status": "completed", "result": 1, "ts": TS}),
    ]
}

/// Plays `events` from `seq` on, each followed by the patch the reducer builds for it, after
/// `tamper` changed it (given the event's index). Returns the next seq and the final state.
fn play(
    m: &mut Monitor,
    conn: u64,
    mut seq: u64,
    mut base_seq: u64,
    events: &[Value],
    state: &mut UiState,
    mut tamper: impl FnMut(usize, &mut Value),
) -> u64 {
    m.client_frame(conn, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    for (i, e) in events.iter().enumerate() {
        let mut e = e.clone();
        e["seq"] = json!(seq);
        let frame: ServerFrame = serde_json::from_value(e.clone()).unwrap();
        let ops = state.apply_with_patch(frame.ui_event().unwrap()).unwrap();
        server(m, conn, e);
        let mut patch = json!({"type": "ui_state_patch", "seq": seq + 1, "base_seq": base_seq, "v": "ui_state_v1",
            "patch": ops});
        tamper(i, &mut patch);
        server(m, conn, patch);
        base_seq = seq + 1;
        seq += 2;
    }
    seq
}

#[test]
fn patches_built_by_the_reducer_pass_and_are_evaluated() {
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn(), &mut state, |_, _| {});
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.state(0), Some(&state), "the materialized state is the reducer's");
    assert_eq!(m.state_seq(0), Some(10));
    let evaluated = m.evaluated();
    for (check, req) in [
        ("patch-matches-reducer", "STATE-037"),
        ("patch-matches-reducer", "STATE-038"),
        ("patch-matches-reducer", "STATE-039"),
        ("patch-matches-reducer", "STATE-040"),
        ("patch-in-place-of-update", "STATE-036"),
        ("feature-frames-only-in-force", "SESSION-015"),
        ("features-as-negotiated", "SESSION-012"),
        ("features-as-negotiated", "SESSION-013"),
        ("features-as-negotiated", "RESUME-018"),
    ] {
        assert!(evaluated[check].contains(&ReqId::new(req)), "{check} did not evaluate {req}");
    }
}

#[test]
fn a_wrong_base_seq_is_state_037_alone() {
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn(), &mut state, |i, p| {
        if i == 2 {
            p["base_seq"] = json!(5);
        }
    });
    assert_eq!(found(&mut m), vec![("patch-matches-reducer", "STATE-037".to_owned())]);
}

#[test]
fn a_patch_missing_an_op_is_state_038_once() {
    let mut m = bound(None);
    let mut state = UiState::default();
    // The completion's patch loses its last op (settled_ts or result): it applies, but the state
    // differs from the reducer's.
    play(&mut m, 0, 3, 2, &turn(), &mut state, |i, p| {
        if i == 3 {
            p["patch"].as_array_mut().unwrap().pop();
        }
    });
    let got = found(&mut m);
    assert_eq!(got, vec![("patch-matches-reducer", "STATE-038".to_owned())], "{got:?}");
}

#[test]
fn a_patch_that_does_not_apply_is_state_038_and_the_run_goes_on() {
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn(), &mut state, |i, p| {
        if i == 3 {
            // A removal of an item that does not exist: the patch fails as a whole.
            p["patch"].as_array_mut().unwrap().push(json!({"op": "remove", "path": "/items/7"}));
        }
    });
    let got = m.take_findings();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].requirement, ReqId::new("STATE-038"));
    assert!(got[0].message.contains("does not apply"), "{}", got[0].message);
    assert_eq!(m.state(0), Some(&state), "the monitor goes on with the reducer's state");
}

#[test]
fn an_unguarded_op_is_state_039_and_an_unnamed_item_state_040() {
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn(), &mut state, |i, p| {
        if i == 3 {
            p["patch"].as_array_mut().unwrap().remove(0);
        }
    });
    assert_eq!(found(&mut m), vec![("patch-matches-reducer", "STATE-039".to_owned())]);

    // The run_started patch also rewrites the user message's text (guarded): the event names no item.
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn()[..2], &mut state, |i, p| {
        if i == 1 {
            let ops = p["patch"].as_array_mut().unwrap();
            ops.insert(0, json!({"op": "test", "path": "/items/0/id", "value": "it-1"}));
            ops.insert(1, json!({"op": "replace", "path": "/items/0/text", "value": "went"}));
        }
    });
    let got = found(&mut m);
    assert_eq!(
        got,
        vec![("patch-matches-reducer", "STATE-040".to_owned()), ("patch-matches-reducer", "STATE-038".to_owned())],
        "the shape and, separately, the resulting state"
    );
}

#[test]
fn an_update_where_patches_are_in_force_is_state_036_and_so_is_a_missing_patch() {
    let mut m = bound(None);
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    let mut e = turn()[0].clone();
    e["seq"] = json!(3);
    server(&mut m, 0, e);
    let state = m.state(0).cloned().unwrap();
    server(&mut m, 0, json!({"type": "ui_state_updated", "seq": 4, "v": "ui_state_v1", "state": state}));
    assert_eq!(found(&mut m), vec![("patch-in-place-of-update", "STATE-036".to_owned())]);
    let mut e = turn()[1].clone();
    e["seq"] = json!(5);
    server(&mut m, 0, e);
    let mut e = turn()[2].clone();
    e["seq"] = json!(6);
    server(&mut m, 0, e);
    assert_eq!(found(&mut m), vec![("patch-in-place-of-update", "STATE-036".to_owned())], "no patch after run_started");
}

/// An event the reducer refuses (here a second `chat.run_started` for a running turn) is charged
/// to the rule it breaks, once: there is no valid state after it, so whether a patch follows it is
/// a consequence, neither STATE-036 when none does nor STATE-007 when one does. The next event
/// owes its patch again.
#[test]
fn after_an_event_the_reducer_refuses_a_state_frame_is_neither_owed_nor_refused() {
    for patch_follows in [false, true] {
        let mut m = bound(None);
        m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
        let mut seq = 3;
        for e in &turn()[..2] {
            let mut e = e.clone();
            e["seq"] = json!(seq);
            server(&mut m, 0, e);
            let state = m.state(0).cloned().unwrap();
            let ops = if seq == 3 {
                json!([{"op": "add", "path": "/items/-", "value": serde_json::to_value(&state.items[0]).unwrap()}])
            } else {
                json!([{"op": "replace", "path": "/run", "value": serde_json::to_value(&state.run).unwrap()}])
            };
            server(
                &mut m,
                0,
                json!({"type": "ui_state_patch", "seq": seq + 1, "base_seq": seq - 1, "v": "ui_state_v1", "patch": ops}),
            );
            seq += 2;
        }
        assert_eq!(found(&mut m), vec![], "a clean start");
        let mut again = turn()[1].clone();
        again["seq"] = json!(seq);
        server(&mut m, 0, again);
        let refused: Vec<(&str, String)> = found(&mut m);
        assert!(
            !refused.is_empty() && refused.iter().all(|(check, _)| *check == "events-follow-reducer-rules"),
            "{refused:?}"
        );
        if patch_follows {
            // The server's own fold took it; its patch changes nothing the oracle can check here.
            server(
                &mut m,
                0,
                json!({"type": "ui_state_patch", "seq": seq + 1, "base_seq": seq - 1, "v": "ui_state_v1", "patch": []}),
            );
            seq += 1;
        }
        let mut call = turn()[2].clone();
        call["seq"] = json!(seq + 1);
        server(&mut m, 0, call);
        let got = found(&mut m);
        assert!(
            !got.iter().any(|(_, r)| r == "STATE-036" || r == "STATE-007"),
            "patch follows: {patch_follows}: {got:?}"
        );
        // The accepted call owes its patch: the next event without one is STATE-036 again.
        let mut complete = turn()[3].clone();
        complete["seq"] = json!(seq + 2);
        server(&mut m, 0, complete);
        assert!(found(&mut m).contains(&("patch-in-place-of-update", "STATE-036".to_owned())));
    }
}

#[test]
fn without_ui_state_patch_in_force_updates_are_right_and_a_patch_is_session_015_once() {
    let mut m = bound(Some(&["resume_catch_up", "teleport"]));
    assert!(m.features(0).iter().all(|f| f.as_str() == "resume_catch_up"), "{:?}", m.features(0));
    m.client_frame(0, &json!({"type": "chat.user_message", "id": "u1", "text": "go"}));
    let mut state = UiState::default();
    let mut seq = 3;
    for e in &turn()[..2] {
        let mut e = e.clone();
        e["seq"] = json!(seq);
        let frame: ServerFrame = serde_json::from_value(e.clone()).unwrap();
        state.apply(frame.ui_event().unwrap()).unwrap();
        server(&mut m, 0, e);
        server(&mut m, 0, json!({"type": "ui_state_updated", "seq": seq + 1, "v": "ui_state_v1", "state": state}));
        seq += 2;
    }
    assert_eq!(found(&mut m), vec![], "updates are what 1.1 sends without the feature");
    let mut state2 = state.clone();
    play(&mut m, 0, 7, 6, &turn()[2..], &mut state2, |_, _| {});
    assert_eq!(found(&mut m), vec![("feature-frames-only-in-force", "SESSION-015".to_owned())], "once per connection");
}

#[test]
fn the_welcome_lists_exactly_the_features_in_force() {
    let run = |asked: Option<&[&str]>, listed: &[&str], extra: Value| {
        let mut m = Monitor::new(Arc::new(FrameValidator::new()));
        m.open(0);
        let mut hello = json!({"type": "session.hello", "id": "h1", "versions": ["1.1"]});
        if let Some(asked) = asked {
            hello["features"] = json!(asked);
        }
        m.client_frame(0, &hello);
        let mut w = welcome(1, "h1", listed, extra);
        if w.get("features") == Some(&json!("drop")) {
            w.as_object_mut().unwrap().remove("features");
        }
        server(&mut m, 0, w);
        found(&mut m)
    };
    // A list that is not the set in force is the welcome's own finding (SESSION-013), whatever
    // the server then sends (the template kill matrix's welcome-lists-implemented-features).
    let session_013 = vec![("features-as-negotiated", "SESSION-013".to_owned())];
    assert_eq!(run(None, &["resume_catch_up", "ui_state_patch"], json!({})), vec![]);
    assert_eq!(run(Some(&["ui_state_patch", "x"]), &["ui_state_patch"], json!({})), vec![]);
    assert_eq!(run(None, &["ui_state_patch"], json!({"resume_retention": 100})), session_013, "catch-up left out");
    assert_eq!(run(Some(&["ui_state_patch"]), &["ui_state_patch", "resume_catch_up"], json!({})).len(), 2);
    assert_eq!(
        run(None, &[], json!({"features": "drop", "resume_retention": 100})),
        vec![("features-as-negotiated", "SESSION-013".to_owned())],
        "a 1.1 welcome must carry features"
    );
    assert_eq!(
        run(None, &["resume_catch_up", "ui_state_patch"], json!({"resume_retention": null})),
        vec![("features-as-negotiated", "RESUME-018".to_owned())],
        "resume_retention missing where catch-up is in force"
    );
    assert_eq!(
        run(Some(&[]), &[], json!({"resume_retention": 5})),
        vec![("feature-frames-only-in-force", "SESSION-015".to_owned())],
        "resume_retention where catch-up is not in force"
    );
}

/// Connection 0 plays a turn's first two events with patches and disconnects; connection 1
/// resumes with `last_seq` and the hello's features. Returns the monitor and the session's state.
fn resumed(last_seq: u64, asked: Option<&[&str]>) -> (Monitor, UiState) {
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn()[..2], &mut state, |_, _| {});
    assert_eq!(found(&mut m), vec![]);
    m.client_close(0);
    m.open(1);
    let mut hello = json!({"type": "session.hello", "id": "h2", "versions": ["1.1"],
        "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": last_seq}});
    if let Some(asked) = asked {
        hello["features"] = json!(asked);
    }
    m.client_frame(1, &hello);
    let in_force: Vec<&str> =
        ["resume_catch_up", "ui_state_patch"].into_iter().filter(|f| asked.is_none_or(|a| a.contains(f))).collect();
    server(&mut m, 1, welcome(10, "h2", &in_force, json!({"resumed": true})));
    assert_eq!(found(&mut m), vec![]);
    (m, state)
}

/// The catch-up from `base` to `base` + the tool call (an event the client missed).
fn catch_up_ops(base: &UiState) -> (Value, UiState) {
    let mut after = base.clone();
    let mut e = turn()[2].clone();
    e["seq"] = json!(7);
    let frame: ServerFrame = serde_json::from_value(e).unwrap();
    let ops = after.apply_with_patch(frame.ui_event().unwrap()).unwrap();
    (json!(ops), after)
}

#[test]
fn a_catch_up_from_the_last_state_passes_and_gives_the_state() {
    let (mut m, state) = resumed(6, None);
    let (ops, after) = catch_up_ops(&state);
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": 11, "base_seq": 6, "v": "ui_state_v1", "patch": ops}));
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.state(1), Some(&after));
    assert!(m.evaluated()["catch-up-resume"].contains(&ReqId::new("RESUME-017")));
    // The next patch builds on the caught-up state.
    let mut s = after.clone();
    play(&mut m, 1, 12, 11, &turn()[3..], &mut s, |_, _| {});
    assert_eq!(found(&mut m), vec![]);
    // A client that resumes from an older state it holds (11, not 13) gets a catch-up from there.
    m.client_close(1);
    m.open(2);
    m.client_frame(
        2,
        &json!({"type": "session.hello", "id": "h3", "versions": ["1.1"],
        "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 11}}),
    );
    server(&mut m, 2, welcome(20, "h3", &["resume_catch_up", "ui_state_patch"], json!({"resumed": true})));
    let mut from_11 = after.clone();
    let mut e = turn()[3].clone();
    e["seq"] = json!(12);
    let frame: ServerFrame = serde_json::from_value(e).unwrap();
    let ops = from_11.apply_with_patch(frame.ui_event().unwrap()).unwrap();
    server(&mut m, 2, json!({"type": "ui_state_patch", "seq": 21, "base_seq": 11, "v": "ui_state_v1", "patch": ops}));
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.state(2), Some(&s));
}

#[test]
fn a_catch_up_from_another_base_is_resume_017() {
    let (mut m, state) = resumed(6, None);
    let (ops, _) = catch_up_ops(&state);
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": 11, "base_seq": 4, "v": "ui_state_v1", "patch": ops}));
    assert_eq!(found(&mut m), vec![("catch-up-resume", "RESUME-017".to_owned())]);

    // Built from an older state: its guard or its result does not fit the state of last_seq.
    let (mut m, _) = resumed(6, None);
    let ops = json!([{"op": "test", "path": "/run/status", "value": "idle"},
        {"op": "replace", "path": "/run", "value": {"status": "running", "invocation_id": "inv-1"}}]);
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": 11, "base_seq": 6, "v": "ui_state_v1", "patch": ops}));
    let got = m.take_findings();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].requirement, ReqId::new("RESUME-017"));
    assert!(got[0].message.contains("does not apply"), "{}", got[0].message);
}

#[test]
fn a_catch_up_where_a_snapshot_is_due_is_resume_018() {
    // last_seq names an event (chat.run_started had seq 5).
    let (mut m, state) = resumed(5, None);
    let (ops, _) = catch_up_ops(&state);
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": 11, "base_seq": 5, "v": "ui_state_v1", "patch": ops}));
    assert!(found(&mut m).contains(&("catch-up-resume", "RESUME-018".to_owned())));
    // resume_catch_up not in force.
    let (mut m, state) = resumed(6, Some(&["ui_state_patch"]));
    let (ops, _) = catch_up_ops(&state);
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": 11, "base_seq": 6, "v": "ui_state_v1", "patch": ops}));
    assert_eq!(found(&mut m), vec![("catch-up-resume", "RESUME-018".to_owned())]);
    // A snapshot is always a right answer.
    let (mut m, state) = resumed(5, None);
    server(&mut m, 1, json!({"type": "ui_state_snapshot", "seq": 11, "v": "ui_state_v1", "state": state}));
    assert_eq!(found(&mut m), vec![]);
    assert_eq!(m.latest_non_state_seq("s-1", u64::MAX), Some(10), "the welcome carried no state");
}

#[test]
fn a_patch_in_place_of_the_first_snapshot_is_state_002() {
    let mut m = Monitor::new(Arc::new(FrameValidator::new()));
    m.open(0);
    m.client_frame(0, &json!({"type": "session.hello", "id": "h1", "versions": ["1.1"]}));
    server(&mut m, 0, welcome(1, "h1", &["resume_catch_up", "ui_state_patch"], json!({})));
    server(&mut m, 0, json!({"type": "ui_state_patch", "seq": 2, "base_seq": 0, "v": "ui_state_v1", "patch": []}));
    assert_eq!(found(&mut m), vec![("welcome-then-snapshot", "STATE-002".to_owned())]);
}

/// Connection 0 plays a whole turn with patches (seqs 3..=10) and disconnects; connection 1
/// resumes from the state of seq 4 with its welcome at `welcome_seq`, and gets the catch-up from
/// that state to the turn's end, `tamper`ed. Returns the monitor and the session's state.
fn caught_up_from_4(welcome_seq: u64, tamper: impl FnOnce(&mut Vec<Value>)) -> (Monitor, UiState) {
    let mut m = bound(None);
    let mut state = UiState::default();
    play(&mut m, 0, 3, 2, &turn(), &mut state, |_, _| {});
    assert_eq!(found(&mut m), vec![]);
    m.client_close(0);
    m.open(1);
    m.client_frame(
        1,
        &json!({"type": "session.hello", "id": "h2", "versions": ["1.1"],
        "resume": {"session_id": "s-1", "resume_token": "t-1", "last_seq": 4}}),
    );
    server(&mut m, 1, welcome(welcome_seq, "h2", &["resume_catch_up", "ui_state_patch"], json!({"resumed": true})));
    // The state of seq 4 (the message accepted), then the patches of the events after it.
    let mut base = UiState::default();
    let mut e = turn()[0].clone();
    e["seq"] = json!(3);
    base.apply(serde_json::from_value::<ServerFrame>(e).unwrap().ui_event().unwrap()).unwrap();
    let mut ops = Vec::new();
    for (n, e) in turn()[1..].iter().enumerate() {
        let mut e = e.clone();
        e["seq"] = json!(5 + 2 * n as u64);
        let frame: ServerFrame = serde_json::from_value(e).unwrap();
        ops.extend(base.apply_with_patch(frame.ui_event().unwrap()).unwrap().into_iter().map(|op| json!(op)));
    }
    assert_eq!(base, state);
    tamper(&mut ops);
    let seq = welcome_seq + 1;
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": seq, "base_seq": 4, "v": "ui_state_v1", "patch": ops}));
    (m, state)
}

#[test]
fn a_catch_up_is_compared_with_the_state_the_monitor_knows() {
    // Nothing happened between seq 10, which connection 0 received, and the welcome at 11.
    let (mut m, state) = caught_up_from_4(11, |_| {});
    assert_eq!(found(&mut m), vec![]);
    assert!(m.evaluated()["catch-up-resume"].contains(&ReqId::new("RESUME-019")));
    assert_eq!(m.state(1), Some(&state));

    // The same catch-up without its last op applies, but gives another state: RESUME-019, once,
    // and the connection goes on from the session's state.
    let (mut m, state) = caught_up_from_4(11, |ops| {
        ops.pop();
    });
    let got = m.take_findings();
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!((got[0].check.id, got[0].requirement), ("catch-up-resume", ReqId::new("RESUME-019")));
    assert!(got[0].message.contains("gives a state other than the session's"), "{}", got[0].message);
    assert_eq!(m.state(1), Some(&state), "the monitor goes on with the session's state");
    let mut s = state.clone();
    let e = json!({"type": "chat.run_complete", "seq": 13, "invocation_id": "inv-1", "status": "completed", "ts": TS});
    let frame: ServerFrame = serde_json::from_value(e.clone()).unwrap();
    let ops = s.apply_with_patch(frame.ui_event().unwrap()).unwrap();
    server(&mut m, 1, e);
    server(&mut m, 1, json!({"type": "ui_state_patch", "seq": 14, "base_seq": 12, "v": "ui_state_v1", "patch": ops}));
    assert_eq!(found(&mut m), vec![], "the next patch is judged from the session's state");
}

#[test]
fn a_catch_up_after_seqs_no_connection_here_received_is_not_compared() {
    // Seq 11 went to no connection here: the session may have changed, the driver's comparison
    // with a snapshot judges it.
    let (mut m, _) = caught_up_from_4(12, |ops| {
        ops.pop();
    });
    assert_eq!(found(&mut m), vec![]);
    assert!(!m.evaluated().get("catch-up-resume").is_some_and(|r| r.contains(&ReqId::new("RESUME-019"))));
}
