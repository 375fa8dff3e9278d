//! The frame facts about ids and kinds (`chatwire_schema::frame_facts`, `frame_ids`) against the
//! fixtures: every frame type's shared facts agree with its frames, and "which ids a frame
//! introduces" gives what the two places that wrote it by hand before gave, on every server frame
//! of `fixtures/messages`, `fixtures/wire-logs`, `fixtures/reducer-traces` and
//! `fixtures/stream-deltas`, with the state before each frame known and unknown, and on the final
//! states of the scenarios' goldens (`fixtures/snapshots`) with a frame naming each of their items.
//!
//! The two earlier implementations are kept here, as they were, as the oracles:
//! - the monitor's `introduced_ids(frame, state)` (which ids `ID-002` counts as new);
//! - the reconnect sweep's `note_frame` (the order in which a session introduced ids, per kind).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chatwire_schema::frame_ids::{IdKind, Introduction};
use chatwire_schema::{ClientFrame, IndexedUiState, ServerFrame, UiEvent, UiState};
use serde_json::Value;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn read_json_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: a line is not JSON: {e}", path.display())))
        .collect()
}

/// Every `.json` file under `dir`, recursively, parsed.
fn json_files(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("a readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(json_files(&path));
        } else if path.extension().and_then(|e| e.to_str()) == Some("json") {
            let text = std::fs::read_to_string(&path).expect("a readable fixture");
            out.push(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display())));
        }
    }
    out
}

/// The monitor's rule before it became a frame fact (`monitor/session/flow.rs`, `introduced_ids`).
fn monitor_oracle(frame: &ServerFrame, state: Option<&UiState>) -> Vec<String> {
    let streaming = |item: &chatwire_schema::Id| state.and_then(UiState::open_stream_id) == Some(item);
    let held = |item: &chatwire_schema::Id| state.is_some_and(|s| !s.items.iter().any(|i| i.id() == item));
    match frame {
        ServerFrame::UserMessageAccepted(f) => vec![f.invocation_id.to_string(), f.item_id.to_string()],
        // Since 1.3: a reasoning stream introduces its item like a text stream.
        ServerFrame::Reasoning(f) if streaming(&f.item_id) => Vec::new(),
        ServerFrame::Reasoning(f) => vec![f.item_id.to_string()],
        ServerFrame::ReasoningDelta(f) if !streaming(&f.item_id) && held(&f.item_id) => vec![f.item_id.to_string()],
        ServerFrame::ReasoningDelta(_) => Vec::new(),
        ServerFrame::AssistantMessage(f) if streaming(&f.item_id) => Vec::new(),
        ServerFrame::AssistantMessageDelta(f) if streaming(&f.item_id) => Vec::new(),
        ServerFrame::AssistantMessage(f) => vec![f.item_id.to_string()],
        ServerFrame::AssistantMessageDelta(f)
            if state.is_some_and(|s| !s.items.iter().any(|i| i.id() == &f.item_id)) =>
        {
            vec![f.item_id.to_string()]
        }
        ServerFrame::AssistantMessageDelta(_) => Vec::new(),
        ServerFrame::ToolCall(f) => vec![f.tool_call_id.to_string()],
        _ => Vec::new(),
    }
}

/// The sweep's rule before it became a frame fact (`driver/sweep.rs`, `note_frame`): the ids it
/// notes, with their kind, in order.
fn sweep_oracle(frame: &ServerFrame) -> Vec<(IdKind, String)> {
    match frame {
        ServerFrame::UserMessageAccepted(f) => {
            vec![(IdKind::Invocation, f.invocation_id.to_string()), (IdKind::Item, f.item_id.to_string())]
        }
        ServerFrame::AssistantMessage(f) => vec![(IdKind::Item, f.item_id.to_string())],
        ServerFrame::AssistantMessageDelta(f) => vec![(IdKind::Item, f.item_id.to_string())],
        ServerFrame::ReasoningDelta(f) => vec![(IdKind::Item, f.item_id.to_string())],
        ServerFrame::Reasoning(f) => vec![(IdKind::Item, f.item_id.to_string())],
        ServerFrame::ToolCall(f) => vec![(IdKind::ToolCall, f.tool_call_id.to_string())],
        _ => Vec::new(),
    }
}

/// What the frame fact says is new, given the state before the frame.
fn new_ids(frame: &ServerFrame, state: Option<&UiState>) -> Vec<String> {
    frame.introduced_ids().iter().filter(|i| i.is_new(state)).map(|i| i.id.to_string()).collect()
}

/// The same, with the state held indexed (what a monitor or server that folds long logs holds).
fn new_ids_indexed(frame: &ServerFrame, state: Option<&IndexedUiState>) -> Vec<String> {
    frame.introduced_ids().iter().filter(|i| i.is_new(state)).map(|i| i.id.to_string()).collect()
}

/// One server frame and the state before it, where known.
struct Case {
    frame: ServerFrame,
    before: Option<UiState>,
}

/// Server frames of the message corpus, each with no known state and with the empty state.
fn message_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for value in json_files(&repo("fixtures/messages/valid")) {
        let Ok(frame) = serde_json::from_value::<ServerFrame>(value) else { continue };
        out.push(Case { frame: frame.clone(), before: None });
        out.push(Case { frame, before: Some(UiState::default()) });
    }
    out
}

/// Folds one connection's frames: a snapshot or a whole state sets the state, an event applies to
/// it; an event the state refuses leaves it unknown until the next whole state.
fn fold_connection(frames: impl IntoIterator<Item = ServerFrame>, out: &mut Vec<Case>) {
    let mut state: Option<UiState> = None;
    for frame in frames {
        out.push(Case { frame: frame.clone(), before: state.clone() });
        match &frame {
            ServerFrame::UiStateSnapshot(s) => state = Some(s.state.clone()),
            ServerFrame::UiStateUpdated(u) => state = Some(u.state.clone()),
            _ => {
                if let (Some(event), Some(s)) = (frame.ui_event(), state.as_mut()) {
                    if s.apply(event).is_err() {
                        state = None;
                    }
                }
            }
        }
    }
}

/// Server frames of every wire log, per connection, with the state folded from the log.
fn wire_log_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let dir = repo("fixtures/wire-logs/cluster-load");
    let mut logs: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("the wire logs").map(|e| e.expect("an entry").path()).collect();
    logs.sort();
    for log in logs.iter().filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jsonl")) {
        let records = read_json_lines(log);
        let conns: BTreeSet<u64> = records.iter().filter_map(|r| r["conn"].as_u64()).collect();
        for conn in conns {
            let frames = records
                .iter()
                .filter(|r| r["conn"].as_u64() == Some(conn) && r["from"] == "server")
                .filter_map(|r| serde_json::from_value::<ServerFrame>(r["frame"].clone()).ok());
            fold_connection(frames, &mut out);
        }
    }
    out
}

/// The events of every reducer trace, folded from the trace's initial state.
fn trace_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for trace in read_json_lines(&repo("fixtures/reducer-traces/traces.jsonl")) {
        let initial: UiState = serde_json::from_value(trace["initial"].clone()).expect("a trace's initial state");
        let snapshot = ServerFrame::UiStateUpdated(chatwire_schema::ui_state_updated::UiStateUpdated {
            seq: 0,
            v: chatwire_schema::UiStateVersion::V1,
            state: initial,
        });
        let events = trace["steps"]
            .as_array()
            .expect("a trace's steps")
            .iter()
            .filter_map(|step| serde_json::from_value::<ServerFrame>(step["event"].clone()).ok());
        fold_connection(std::iter::once(snapshot).chain(events), &mut out);
    }
    out
}

/// Every delta of the stream-delta corpus, on the state its case gives.
fn stream_delta_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for case in read_json_lines(&repo("fixtures/stream-deltas/cases.jsonl")) {
        let (Ok(state), Ok(frame)) = (
            serde_json::from_value::<UiState>(case["state"].clone()),
            serde_json::from_value::<ServerFrame>(case["delta"].clone()),
        ) else {
            continue;
        };
        out.push(Case { frame: frame.clone(), before: Some(state) });
        out.push(Case { frame, before: None });
    }
    out
}

/// The final state of every scenario golden, its placeholders made ids again (`[item:2]` is
/// `item-2`), with the frames that may introduce an item naming each of its items and a new one.
fn golden_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let dir = repo("fixtures/snapshots");
    let mut goldens: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("the goldens").map(|e| e.expect("an entry").path()).collect();
    goldens.sort();
    for golden in goldens.iter().filter(|p| p.extension().and_then(|e| e.to_str()) == Some("snap")) {
        let text = std::fs::read_to_string(golden).expect("a readable golden");
        let Some(body) = text.splitn(3, "---\n").nth(2) else { continue };
        let mut body = body.replace("\"[ts]\"", "\"2026-01-01T00:00:00Z\"");
        for kind in ["invocation", "item", "tool_call"] {
            // `"[tool_call:1]"`, also inside an output item's id (`"[tool_call:1].output"`).
            while let Some(at) = body.find(&format!("\"[{kind}:")) {
                let end = at + body[at..].find(']').expect("a closed placeholder");
                let n = body[at + kind.len() + 3..end].to_owned();
                body.replace_range(at..=end, &format!("\"{kind}-{n}"));
            }
        }
        let golden: serde_json::Value = serde_json::from_str(&body).expect("a golden is JSON");
        let Ok(state) = serde_json::from_value::<UiState>(golden["state"].clone()) else { continue };
        let run = state.run.invocation_id.as_ref().map_or("invocation-1".to_owned(), ToString::to_string);
        let mut ids: Vec<String> = state.items.iter().map(|i| i.id().to_string()).collect();
        ids.push("item-new".to_owned());
        for id in ids {
            for frame in [
                serde_json::json!({"type": "chat.assistant_message_delta", "seq": 1, "invocation_id": run,
                                   "item_id": id, "delta": "x", "ts": "2026-01-01T00:00:00Z"}),
                serde_json::json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": run,
                                   "item_id": id, "markdown": "x", "ts": "2026-01-01T00:00:00Z"}),
            ] {
                let frame: ServerFrame = serde_json::from_value(frame).expect("a valid frame");
                out.push(Case { frame, before: Some(state.clone()) });
            }
        }
    }
    assert!(out.len() > 500, "only {} cases from the goldens", out.len());
    out
}

fn all_cases() -> Vec<Case> {
    let mut cases = message_cases();
    cases.extend(golden_cases());
    cases.extend(wire_log_cases());
    cases.extend(trace_cases());
    cases.extend(stream_delta_cases());
    cases
}

#[test]
fn introduced_ids_are_what_the_monitor_counted_as_new() {
    let cases = all_cases();
    // The corpus must reach every outcome of every rule, or agreeing on it proves little.
    let mut outcomes: BTreeSet<(&'static str, Introduction, bool, bool)> = BTreeSet::new();
    for case in &cases {
        let before = case.before.as_ref();
        let expected = monitor_oracle(&case.frame, before);
        assert_eq!(
            new_ids(&case.frame, before),
            expected,
            "{} on a state {}",
            serde_json::to_string(&case.frame).expect("a frame serializes"),
            if before.is_some() { "known" } else { "not known" },
        );
        let indexed = case.before.clone().map(IndexedUiState::new);
        assert_eq!(new_ids_indexed(&case.frame, indexed.as_ref()), expected, "the indexed state answers the same");
        for id in case.frame.introduced_ids() {
            outcomes.insert((case.frame.type_name(), id.rule, before.is_some(), id.is_new(before)));
        }
    }
    let wanted = [
        ("chat.user_message_accepted", Introduction::Always, true, true),
        ("chat.tool_call", Introduction::Always, true, true),
        ("chat.assistant_message", Introduction::UnlessOpenStream, true, true),
        ("chat.assistant_message", Introduction::UnlessOpenStream, true, false),
        ("chat.assistant_message", Introduction::UnlessOpenStream, false, true),
        ("chat.assistant_message_delta", Introduction::UnlessHeld, true, true),
        ("chat.assistant_message_delta", Introduction::UnlessHeld, true, false),
        ("chat.assistant_message_delta", Introduction::UnlessHeld, false, false),
    ];
    for outcome in wanted {
        assert!(outcomes.contains(&outcome), "no case of {outcome:?} in {} frames", cases.len());
    }
}

#[test]
fn introduced_ids_are_what_the_sweep_noted_in_order() {
    let mut noted = 0;
    for case in all_cases() {
        let facts: Vec<(IdKind, String)> =
            case.frame.introduced_ids().iter().map(|i| (i.kind, i.id.to_string())).collect();
        assert_eq!(facts, sweep_oracle(&case.frame), "{}", case.frame.type_name());
        noted += facts.len();
    }
    assert!(noted > 1000, "only {noted} ids noted: the corpus is too thin to compare the rules");
}

/// Every server frame of the message corpus.
fn server_messages() -> Vec<(ServerFrame, Value)> {
    json_files(&repo("fixtures/messages/valid"))
        .into_iter()
        .filter_map(|v| serde_json::from_value::<ServerFrame>(v.clone()).ok().map(|f| (f, v)))
        .collect()
}

#[test]
fn a_server_frame_types_shared_facts_are_its_frames_facts() {
    let mut seen = BTreeSet::new();
    for (frame, value) in server_messages() {
        let kind = frame.kind();
        assert_eq!(kind.carries_state, frame.carries_state(), "{}", frame.type_name());
        assert_eq!(kind.event, frame.ui_event().is_some(), "{}", frame.type_name());
        let ids: Vec<_> = frame.introduced_ids().iter().collect();
        assert_eq!(ids.len(), kind.introduces.len(), "{}", frame.type_name());
        for (slot, id) in kind.introduces.iter().zip(ids) {
            assert_eq!((slot.kind, slot.rule), (id.kind, id.rule), "{}", frame.type_name());
            assert_eq!(value[slot.member].as_str(), Some(id.id.as_str()), "{}.{}", frame.type_name(), slot.member);
        }
        seen.insert(frame.type_name());
    }
    let all: BTreeSet<&str> = ServerFrame::TYPES.iter().copied().collect();
    assert_eq!(seen, all, "every server frame type has an example in fixtures/messages");
    let kinds: Vec<&str> = ServerFrame::kinds().into_iter().map(|(wire, _)| wire).collect();
    assert_eq!(kinds, ServerFrame::TYPES, "one kind per server frame type, in union order");
}

#[test]
fn the_event_list_is_the_server_frames_that_are_events() {
    let events: Vec<&str> =
        ServerFrame::kinds().into_iter().filter(|(_, kind)| kind.event).map(|(wire, _)| wire).collect();
    assert_eq!(events, UiEvent::TYPES, "UiEvent lists the event frames, in union order");
    for (frame, _) in server_messages() {
        if let Some(event) = frame.ui_event() {
            assert_eq!(event.type_name(), frame.type_name());
        }
    }
}

#[test]
fn a_client_frames_answers_and_named_id_are_its_members() {
    let answers: BTreeSet<&str> = ServerFrame::kinds().into_iter().map(|(wire, _)| wire).collect();
    let mut seen = BTreeSet::new();
    for value in json_files(&repo("fixtures/messages/valid")) {
        let Ok(frame) = serde_json::from_value::<ClientFrame>(value.clone()) else { continue };
        let kind = frame.kind();
        assert_eq!(kind.answered_by, frame.answered_by());
        assert!(!kind.answered_by.is_empty(), "{} is answered", frame.type_name());
        for answer in kind.answered_by {
            assert!(answers.contains(answer), "{} is answered by {answer}, no server frame", frame.type_name());
        }
        match (kind.names, frame.named_id()) {
            (Some(member), Some(named)) => {
                assert_eq!(member.kind, named.kind);
                assert_eq!(value[member.member].as_str(), Some(named.id.as_str()), "{}", frame.type_name());
                let by_kind = match named.kind {
                    IdKind::Invocation => frame.invocation_id(),
                    IdKind::Item => frame.item_id(),
                    IdKind::ToolCall => frame.tool_call_id(),
                };
                assert_eq!(by_kind, Some(named.id));
            }
            (None, None) => {
                assert_eq!((frame.invocation_id(), frame.item_id(), frame.tool_call_id()), (None, None, None));
            }
            other => panic!("{}: the type names {:?}, the frame {:?}", frame.type_name(), other.0, other.1),
        }
        seen.insert(frame.type_name());
    }
    let all: BTreeSet<&str> = ClientFrame::TYPES.iter().copied().collect();
    assert_eq!(seen, all, "every client frame type has an example in fixtures/messages");
}
