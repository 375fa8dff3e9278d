//! The patch builder (`UiState::apply_with_patch`, `IndexedUiState::apply_with_patch`, the
//! `ui_state_patch` payload, and the catch-up patch of `state_patch::catch_up`) against an
//! independent RFC 6902 implementation (the json-patch crate): for every event of the shared
//! reducer-trace corpus and of generated sequences, the built patch applied to the JSON of the
//! state before gives exactly the JSON of the state after, it touches only what the event names,
//! and its size is bounded by those items, whatever the size of the state.

#[path = "support/trace_model.rs"]
mod trace_model;

use chatwire_schema::state_patch::{self, PatchOp};
use chatwire_schema::{DisplayItem, Id, IndexedUiState, ServerFrame, UiEvent, UiState};
use proptest::prelude::*;
use serde_json::Value;
use trace_model::*;

/// Bytes allowed per op beyond the values it carries: `{"op":"replace","path":"/items/12345/settled_ts","value":}`.
const OP_OVERHEAD: usize = 96;

fn json(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).expect("serializes")
}

fn size(v: &impl serde::Serialize) -> usize {
    serde_json::to_string(v).expect("serializes").len()
}

/// The indices of the items `event` may touch in place, read from the state before it.
fn named_indices(before: &UiState, event: UiEvent<'_>) -> Vec<usize> {
    let call = |id: &Id| before.items.iter().rposition(|i| matches!(i, DisplayItem::ToolCall(c) if &c.id == id));
    // Since 1.3: an event inside a transcript touches the top-level item that holds it.
    let top = |id: &Id| before.find_call(id).map(|(path, _)| path[0]);
    let nested = |id: &Id| before.find_call(id).filter(|(path, _)| path.len() > 1).map(|(path, _)| path[0]);
    if let Some(parent) = event.parent_call_id() {
        return top(parent).into_iter().collect();
    }
    match event {
        UiEvent::SubagentStarted(e) => top(&e.tool_call_id).into_iter().collect(),
        UiEvent::SubagentComplete(e) => top(&e.tool_call_id).into_iter().collect(),
        UiEvent::ToolProgress(e) => call(&e.tool_call_id).or(nested(&e.tool_call_id)).into_iter().collect(),
        UiEvent::ToolCallComplete(e) => call(&e.tool_call_id).or(nested(&e.tool_call_id)).into_iter().collect(),
        UiEvent::ToolCallDismiss(e) => call(&e.tool_call_id).or(nested(&e.tool_call_id)).into_iter().collect(),
        UiEvent::ToolOutput(e) => match (call(&e.tool_call_id), nested(&e.tool_call_id)) {
            (Some(c), _) => vec![c, c + 1],
            (None, Some(host)) => vec![host],
            (None, None) => Vec::new(),
        },
        UiEvent::RewindComplete(e) => {
            let cut = before.items.iter().position(|i| i.invocation_id() == &e.before_invocation_id);
            cut.map(|c| (c..before.items.len()).collect()).unwrap_or_default()
        }
        UiEvent::RetryAccepted(e) => {
            let named = before.items.iter().rposition(|i| i.id() == &e.after_item_id);
            let cut = named.map(|k| chatwire_schema::reducer::retry_cut(&before.items, k));
            cut.map(|c| (c..before.items.len()).collect()).unwrap_or_default()
        }
        // A delta appending to the open stream, or the message ending it, names the open stream.
        UiEvent::AssistantMessageDelta(chatwire_schema::chat::assistant_message_delta::AssistantMessageDelta {
            item_id,
            ..
        })
        | UiEvent::AssistantMessage(chatwire_schema::chat::assistant_message::AssistantMessage { item_id, .. }) => {
            match before.open_stream() {
                Some(open) if &open.id == item_id => vec![before.items.len() - 1],
                _ => Vec::new(),
            }
        }
        // Since 1.3: the same for a reasoning stream.
        UiEvent::ReasoningDelta(chatwire_schema::chat::reasoning_delta::ReasoningDelta { item_id, .. })
        | UiEvent::Reasoning(chatwire_schema::chat::reasoning::Reasoning { item_id, .. }) => {
            match before.open_reasoning() {
                Some(open) if &open.id == item_id => vec![before.items.len() - 1],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Applies `event` with a patch and checks the patch against the reducer's own result.
fn apply_and_check(state: &mut UiState, event: UiEvent<'_>) -> Result<Option<Vec<PatchOp>>, String> {
    let before = state.clone();
    let before_json = json(&before);
    let reduced = chatwire_schema::reduce(&before, event);
    let ops = match (state.apply_with_patch(event), reduced) {
        (Ok(ops), Ok(expected)) => {
            if *state != expected {
                return Err(format!("apply_with_patch reduced {event:?} differently from reduce"));
            }
            ops
        }
        (Err(a), Err(b)) if a == b => {
            return if *state == before { Ok(None) } else { Err(format!("refused {event:?} but changed the state")) };
        }
        (a, b) => return Err(format!("{event:?}: apply_with_patch {:?}, reduce {:?}", a.err(), b.err())),
    };

    // The patch, applied by an independent implementation, gives exactly the new state.
    let wire = json(&ops);
    let parsed: Vec<json_patch::PatchOperation> =
        serde_json::from_value(wire.clone()).map_err(|e| format!("not an RFC 6902 patch ({e}): {wire}"))?;
    let mut patched = before_json.clone();
    json_patch::patch(&mut patched, &parsed).map_err(|e| format!("{event:?}: patch does not apply: {e}; {wire}"))?;
    if patched != json(&*state) {
        return Err(format!("{event:?}: patched state differs from the reduced one; patch {wire}"));
    }

    // The crate's own shape check (STATE-039, STATE-040) accepts it.
    chatwire_schema::state_patch::check_shape(&before, &[event], &ops)
        .map_err(|e| format!("{event:?}: {e}; {wire}"))?;

    // It touches only the items the event names, appends at the end, and the run.
    let named = named_indices(&before, event);
    for op in &ops {
        let path = op.path();
        let index = path.strip_prefix("/items/").map(|rest| rest.split('/').next().unwrap_or(rest));
        let allowed = match index {
            // Since 1.3: the usage sums, by a run's end with usage or a rewind.
            None => {
                path == "/run"
                    || (path == "/usage" && matches!(event, UiEvent::RunComplete(_) | UiEvent::RewindComplete(_)))
            }
            Some("-") => matches!(op, PatchOp::Add { .. }) && path == "/items/-",
            Some(n) => n.parse::<usize>().is_ok_and(|n| named.contains(&n)),
        };
        if !allowed {
            return Err(format!("{event:?}: op on {path} outside the items it names {named:?}: {wire}"));
        }
    }
    // Appending an item is one add; starting a run one replace. Since 1.3 an item appended to a
    // sub-agent's transcript is one add behind the test of the top-level item that holds it.
    let ends_stream = matches!(event, UiEvent::AssistantMessage(_)) && before.open_stream().is_some();
    let nested = event.parent_call_id().is_some();
    let expected_len = match event {
        _ if nested => None,
        UiEvent::AssistantMessage(_) if ends_stream => Some(3),
        UiEvent::UserMessageAccepted(_) | UiEvent::AssistantMessage(_) | UiEvent::ToolCall(_) => Some(1),
        UiEvent::RunStarted(_) => Some(1),
        _ => None,
    };
    if expected_len.is_some_and(|n| n != ops.len()) {
        return Err(format!("{event:?}: {} ops where one does: {wire}", ops.len()));
    }

    // Its size is bounded by the items it names (before and after) and the run, not the state.
    let named_bytes: usize = named.iter().filter_map(|&i| before.items.get(i)).map(size).sum::<usize>()
        + named.iter().filter_map(|&i| state.items.get(i)).map(size).sum::<usize>()
        + state.items[before.items.len().min(state.items.len())..].iter().map(size).sum::<usize>()
        + size(&state.run)
        // Since 1.3: the usage sums, whole (their size follows the invocations, not the items).
        + state.usage.as_ref().map_or(0, size);
    let bound = named_bytes + OP_OVERHEAD * ops.len();
    if size(&ops) > bound {
        return Err(format!("{event:?}: patch of {} bytes exceeds its bound {bound}: {wire}", size(&ops)));
    }
    Ok(Some(ops))
}

/// Every applied and every refused event of `fixtures/reducer-traces/traces.jsonl`.
#[test]
fn every_event_of_the_shared_trace_corpus_gets_a_patch_that_reproduces_the_reduced_state() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reducer-traces/traces.jsonl");
    let text = std::fs::read_to_string(&path).expect("the reducer-trace corpus exists");
    let (mut applied, mut refused, mut failures) = (0, 0, Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let trace: Value = serde_json::from_str(line).expect("a trace is JSON");
        let name = trace["name"].as_str().unwrap_or("?").to_owned();
        let mut state: UiState = serde_json::from_value(trace["initial"].clone()).expect("initial state");
        // What a server holds: the indexed state, which must build the very same patches.
        let mut indexed = IndexedUiState::new(state.clone());
        for (n, step) in trace["steps"].as_array().expect("steps").iter().enumerate() {
            let frame: ServerFrame = serde_json::from_value(step["event"].clone()).expect("an event frame");
            let event = frame.ui_event().expect("a UI event");
            let refusal = chatwire_schema::reduce(&state, event).err();
            let twin = indexed.apply_with_patch(event);
            match apply_and_check(&mut state, event) {
                Ok(Some(ops)) if twin.as_ref() == Ok(&ops) => applied += 1,
                Ok(None) if twin.as_ref().err() == refusal.as_ref() => refused += 1,
                Ok(_) => failures.push(format!("{name} step {n}: the indexed state answered {twin:?}")),
                Err(e) => failures.push(format!("{name} step {n}: {e}")),
            }
            if indexed.state() != &state {
                failures.push(format!("{name} step {n}: the indexed state differs"));
            }
        }
        assert_eq!(json(&state), trace["final"], "{name}: final state");
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(applied > 1000 && refused > 100, "corpus too thin: {applied} applied, {refused} refused");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Generated valid sequences (tool batches, output, settlement in any order, rewinds), then
    /// arbitrary events aimed at existing ids: every patch reproduces the reduced state and stays
    /// within the items its event names.
    #[test]
    fn built_patches_reproduce_every_reduced_state((frames, probes) in prefix_and_probes()) {
        let mut state = UiState::default();
        for frame in &frames {
            let event = frame.ui_event().expect("a UI event");
            prop_assert!(apply_and_check(&mut state, event).map_err(TestCaseError::fail)?.is_some(), "valid frame refused");
        }
        for (n, probe) in probes.iter().enumerate() {
            let frame = materialize(probe, &state, n);
            let event = frame.ui_event().expect("a UI event");
            apply_and_check(&mut state, event).map_err(TestCaseError::fail)?;
        }
    }

    /// The same events on top of a state that already holds many items give patches of the same
    /// size: the cost of an event does not grow with the state.
    #[test]
    fn patch_size_does_not_grow_with_the_state(plan in plan_strategy()) {
        let frames = build(&plan, false);
        let (small, large) = (UiState::default(), padded_state(500));
        let (mut small, mut large) = (small, large);
        for frame in &frames {
            let event = frame.ui_event().expect("a UI event");
            let a = small.apply_with_patch(event).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let b = large.apply_with_patch(event).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(a.len(), b.len(), "{:?}", event);
            // Indices are longer numbers in the large state: "/items/7" vs "/items/507".
            prop_assert!(size(&b) <= size(&a) + 4 * b.len(), "{:?}: {} vs {} bytes", event, size(&a), size(&b));
        }
    }
}

/// A state holding `n` finished turns of an earlier conversation (a user message and an answer
/// each), so that later events of a generated plan apply on top of it.
fn padded_state(n: usize) -> UiState {
    use chatwire_schema::chat::assistant_message::AssistantMessage;
    use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
    use chatwire_schema::chat::run_started::RunStarted;
    use chatwire_schema::chat::user_message_accepted::UserMessageAccepted;
    let mut state = UiState::default();
    for t in 0..n / 2 {
        let inv = id(format!("old-inv{t}"));
        let frames = [
            ServerFrame::UserMessageAccepted(UserMessageAccepted {
                seq: 1,
                in_reply_to: id(format!("old-msg{t}")),
                invocation_id: inv.clone(),
                item_id: id(format!("old-u{t}")),
                text: format!("earlier question {t}"),
                ts: TS.into(),
            }),
            ServerFrame::RunStarted(RunStarted { seq: 2, invocation_id: inv.clone(), ts: TS.into() }),
            ServerFrame::AssistantMessage(AssistantMessage {
                parent_call_id: None,
                seq: 3,
                invocation_id: inv.clone(),
                item_id: id(format!("old-a{t}")),
                markdown: format!("earlier answer {t}"),
                ts: TS.into(),
            }),
            ServerFrame::RunComplete(RunComplete {
                seq: 4,
                invocation_id: inv,
                status: RunCompleteStatus::Completed,
                reason: None,
                error: None,
                usage: None,
                ts: TS.into(),
            }),
        ];
        for f in &frames {
            state.apply(f.ui_event().expect("a UI event")).expect("padding applies");
        }
    }
    state
}

/// A patch applied to a state whose items sit at other indices fails on its `test` ops instead
/// of changing the wrong item.
#[test]
fn a_patch_applied_to_the_wrong_base_fails_instead_of_corrupting() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut guarded = 0;
    for _ in 0..64 {
        let plan = proptest::strategy::ValueTree::current(
            &proptest::strategy::Strategy::new_tree(&plan_strategy(), &mut runner).expect("a plan"),
        );
        let mut state = padded_state(4);
        for frame in build(&plan, false) {
            let before = json(&state);
            let ops = state.apply_with_patch(frame.ui_event().expect("a UI event")).expect("valid");
            if !ops.iter().any(|op| matches!(op, PatchOp::Test { .. })) {
                continue;
            }
            // The same state with its first item gone: every index is off by one.
            let mut shifted = before.clone();
            shifted["items"].as_array_mut().expect("items").remove(0);
            let parsed: Vec<json_patch::PatchOperation> = serde_json::from_value(json(&ops)).expect("RFC 6902");
            let result = json_patch::patch(&mut shifted, &parsed);
            assert!(result.is_err(), "{frame:?}: a patch for another base applied: {}", json(&ops));
            guarded += 1;
        }
    }
    assert!(guarded > 50, "only {guarded} patches with a guard were tried");
}

/// The applied events of every trace of the shared corpus (`fixtures/reducer-traces`), as frames,
/// with the trace's name and initial state.
fn corpus_logs() -> Vec<(String, UiState, Vec<ServerFrame>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reducer-traces/traces.jsonl");
    let text = std::fs::read_to_string(&path).expect("the reducer-trace corpus exists");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let trace: Value = serde_json::from_str(line).expect("a trace is JSON");
            let initial: UiState = serde_json::from_value(trace["initial"].clone()).expect("initial state");
            let committed = trace["steps"]
                .as_array()
                .expect("steps")
                .iter()
                .filter(|step| step["refused"].is_null())
                .map(|step| serde_json::from_value(step["event"].clone()).expect("an event frame"))
                .collect();
            (trace["name"].as_str().unwrap_or("?").to_owned(), initial, committed)
        })
        .collect()
}

fn apply_rfc6902(base: &Value, ops: &[PatchOp]) -> Result<Value, json_patch::PatchError> {
    let parsed: Vec<json_patch::PatchOperation> = serde_json::from_value(json(&ops)).expect("an RFC 6902 patch");
    let mut doc = base.clone();
    json_patch::patch(&mut doc, &parsed)?;
    Ok(doc)
}

/// RESUME-017 / RESUME-019: from every state of every corpus trace, the catch-up over the next
/// 1 to 10 committed events and over all the rest, applied by json-patch to that state, gives
/// exactly the state the reducer folds; its shape passes `check_shape` against those events.
#[test]
fn a_catch_up_patch_applied_to_its_base_gives_the_folded_state_on_the_shared_corpus() {
    let (mut catch_ups, mut guarded) = (0, 0);
    for (name, initial, committed) in corpus_logs() {
        let events: Vec<UiEvent<'_>> = committed.iter().map(event).collect();
        let mut base = initial.clone();
        for from in 0..=events.len() {
            let ends = (from..=events.len().min(from + 10)).chain([events.len()]);
            for to in ends {
                let window = &events[from..to];
                let folded = chatwire_schema::reduce_all(&base, window.iter().copied()).expect("committed events");
                let (state, patch) = state_patch::catch_up(&base, window.iter().copied())
                    .unwrap_or_else(|e| panic!("{name} {from}..{to}: refused {e:?}"));
                assert_eq!(state, folded, "{name} {from}..{to}: catch_up folds like reduce_all");
                let patched = apply_rfc6902(&json(&base), &patch)
                    .unwrap_or_else(|e| panic!("{name} {from}..{to}: {e}; {}", json(&patch)));
                assert_eq!(patched, json(&folded), "{name} {from}..{to}: patched state");
                state_patch::check_shape(&base, window, &patch)
                    .unwrap_or_else(|e| panic!("{name} {from}..{to}: {e}; {}", json(&patch)));
                if to == from {
                    assert!(patch.is_empty(), "{name}: a catch-up over no events is empty");
                }
                catch_ups += 1;
                guarded += usize::from(patch.iter().any(|op| matches!(op, PatchOp::Test { .. })));
            }
            if let Some(&next) = events.get(from) {
                base.apply(next).expect("committed events apply");
            }
        }
    }
    assert!(catch_ups > 10_000 && guarded > 1_000, "corpus too thin: {catch_ups} catch-ups, {guarded} guarded");
}

/// RESUME-017: a catch-up patch applied to a state other than its base (here: the base with its
/// first item gone, so every index is off by one) fails on its first `test` op, before it could
/// change the wrong item.
#[test]
fn a_catch_up_patch_applied_to_a_wrong_base_fails_on_a_test() {
    let mut tried = 0;
    for (name, initial, committed) in corpus_logs() {
        let events: Vec<UiEvent<'_>> = committed.iter().map(event).collect();
        let mut base = initial.clone();
        for from in 0..events.len() {
            let (_, patch) = state_patch::catch_up(&base, events[from..].iter().copied()).expect("committed events");
            let first_test = patch.iter().position(|op| matches!(op, PatchOp::Test { .. }));
            // Only a guard can tell two bases apart; a base with no item has no shifted twin.
            if let (Some(first_test), false) = (first_test, base.items.is_empty()) {
                let mut shifted = json(&base);
                shifted["items"].as_array_mut().expect("items").remove(0);
                match apply_rfc6902(&shifted, &patch) {
                    // The guard fails: its value differs, or its item is not there at all.
                    Err(e) => assert_eq!(e.operation, first_test, "{name} {from}: not stopped by its first guard: {e}"),
                    Ok(_) => panic!("{name} {from}: applied to a wrong base: {}", json(&patch)),
                }
                tried += 1;
            }
            base.apply(events[from]).expect("committed events apply");
        }
    }
    assert!(tried > 500, "only {tried} guarded catch-ups were tried on a wrong base");
}

/// A catch-up over a refused event is refused with the reducer's error and the event's position,
/// as `reduce_all` reports it; the base is untouched.
#[test]
fn a_catch_up_over_a_refused_event_is_refused_as_the_reducer_refuses_it() {
    let mut refusals = 0;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reducer-traces/traces.jsonl");
    for line in std::fs::read_to_string(&path).expect("corpus").lines().filter(|l| !l.trim().is_empty()) {
        let trace: Value = serde_json::from_str(line).expect("a trace is JSON");
        let initial: UiState = serde_json::from_value(trace["initial"].clone()).expect("initial state");
        let frames: Vec<ServerFrame> = trace["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|step| serde_json::from_value(step["event"].clone()).expect("an event frame"))
            .collect();
        let events: Vec<UiEvent<'_>> = frames.iter().map(event).collect();
        let before = initial.clone();
        let expected = chatwire_schema::reduce_all(&initial, events.iter().copied()).err();
        let got = state_patch::catch_up(&initial, events.iter().copied()).err();
        assert_eq!(got, expected, "{}", trace["name"]);
        assert_eq!(initial, before);
        refusals += usize::from(got.is_some());
    }
    assert!(refusals > 100, "only {refusals} traces refused an event");
}

/// Since 1.3 (RESUME-017 inside a transcript): a catch-up over a sub-agent's streams (reasoning,
/// then text, interleaved with a nested call and the top level's own stream) gives one `replace`
/// of a nested stream's text per run of its deltas, not one per delta, and from every base and to
/// every end it still turns the base into the folded state and passes `check_shape`.
#[test]
fn a_catch_up_over_a_nested_stream_replaces_its_text_once_per_run_of_deltas() {
    let inv = "inv-1";
    let mut frames = vec![
        serde_json::json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": "m1", "invocation_id": inv, "item_id": "um-1", "text": "go", "ts": TS}),
        serde_json::json!({"type": "chat.run_started", "seq": 1, "invocation_id": inv, "ts": TS}),
        serde_json::json!({"type": "chat.tool_call", "seq": 1, "invocation_id": inv, "tool_call_id": "tc-host", "tool_name": "research",
            "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline", "payload": {}, "call_index": 0, "ts": TS}),
        serde_json::json!({"type": "chat.subagent_started", "seq": 1, "tool_call_id": "tc-host", "thread_id": "th-1", "input": "look", "ts": TS}),
    ];
    // A text delta carries `delta`, a reasoning delta `text`.
    let nested_delta = |kind: &str, item: &str, text: &str| {
        let member = if kind == "chat.reasoning_delta" { "text" } else { "delta" };
        let mut f = serde_json::json!({"type": kind, "seq": 1, "invocation_id": inv, "parent_call_id": "tc-host", "item_id": item, "ts": TS});
        f[member] = serde_json::json!(text);
        f
    };
    for k in 0..4 {
        frames.push(nested_delta("chat.reasoning_delta", "rs-1", &format!("thought {k}. ")));
    }
    frames.push(serde_json::json!({"type": "chat.reasoning", "seq": 1, "invocation_id": inv, "parent_call_id": "tc-host", "item_id": "rs-1",
        "text": "thought 0. thought 1. thought 2. thought 3. ", "ts": TS}));
    for k in 0..5 {
        frames.push(nested_delta("chat.assistant_message_delta", "am-1", &format!("part {k} ")));
    }
    frames.push(serde_json::json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv, "parent_call_id": "tc-host", "item_id": "am-1",
        "markdown": "part 0 part 1 part 2 part 3 part 4 ", "ts": TS}));
    frames.push(serde_json::json!({"type": "chat.tool_call", "seq": 1, "invocation_id": inv, "parent_call_id": "tc-host", "tool_call_id": "tc-inner",
        "tool_name": "search", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline", "payload": {}, "call_index": 0, "ts": TS}));
    frames.push(serde_json::json!({"type": "chat.tool_call_complete", "seq": 1, "tool_call_id": "tc-inner", "status": "completed", "result": {}, "ts": TS}));
    for k in 0..3 {
        frames.push(nested_delta("chat.assistant_message_delta", "am-2", &format!("found {k} ")));
    }
    frames.push(serde_json::json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv, "parent_call_id": "tc-host", "item_id": "am-2",
        "markdown": "found 0 found 1 found 2 ", "ts": TS}));
    frames.push(serde_json::json!({"type": "chat.subagent_complete", "seq": 1, "tool_call_id": "tc-host", "status": "completed", "response": "found it", "ts": TS}));
    frames.push(serde_json::json!({"type": "chat.tool_call_complete", "seq": 1, "tool_call_id": "tc-host", "status": "completed", "result": {}, "ts": TS}));
    for k in 0..3 {
        frames.push(serde_json::json!({"type": "chat.assistant_message_delta", "seq": 1, "invocation_id": inv, "item_id": "am-top", "delta": format!("top {k} "), "ts": TS}));
    }
    let frames: Vec<ServerFrame> =
        frames.into_iter().map(|f| serde_json::from_value(f).expect("a valid frame")).collect();
    let events: Vec<UiEvent<'_>> = frames.iter().map(event).collect();

    let (_, whole) = state_patch::catch_up(&UiState::default(), events.iter().copied()).expect("valid events");
    let text_replaces = |member: &str| {
        whole.iter().filter(|op| matches!(op, PatchOp::Replace { path, .. } if path.ends_with(member))).count()
    };
    // From the empty state every stream is opened by an add; its later deltas come to one
    // replace of its text per run: reasoning, the first text, the second text, the top level's.
    assert_eq!(text_replaces("/text"), 1, "{}", json(&whole));
    assert_eq!(text_replaces("/markdown"), 3, "{}", json(&whole));

    let mut base = UiState::default();
    for from in 0..=events.len() {
        for to in from..=events.len() {
            let window = &events[from..to];
            let folded = chatwire_schema::reduce_all(&base, window.iter().copied()).expect("valid events");
            let (state, patch) = state_patch::catch_up(&base, window.iter().copied()).expect("valid events");
            assert_eq!(state, folded, "{from}..{to}");
            let patched = apply_rfc6902(&json(&base), &patch).unwrap_or_else(|e| panic!("{from}..{to}: {e}"));
            assert_eq!(patched, json(&folded), "{from}..{to}: patched state");
            state_patch::check_shape(&base, window, &patch).unwrap_or_else(|e| panic!("{from}..{to}: {e}"));
        }
        if let Some(&next) = events.get(from) {
            base.apply(next).expect("valid events");
        }
    }
}
