//! The reducer rules of protocol 1.1 part 2: streamed assistant text (`STATE-042`, `STATE-043`)
//! and retry (`STATE-044`), and their refusals `STATE-045`..`STATE-051`, each beside the case it
//! allows; the patches of those events (`spec/streaming.md`); and the view of a connection without
//! `assistant_stream` (the fold without deltas is the state without its open stream).
//!
//! Refusals assert the exact error and that neither `apply`, `reduce` nor the indexed reducer
//! changed anything.

use chatwire_schema::state_patch::{catch_up, check_shape, PatchOp};
use chatwire_schema::{reduce, IndexedUiState, ReduceError, ServerFrame, UiEvent, UiState};
use serde_json::{json, Value};

fn frame(v: Value) -> ServerFrame {
    serde_json::from_value(v).expect("a test frame fits its schema")
}

fn accepted(inv: &str, item: &str) -> ServerFrame {
    frame(json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": format!("m-{item}"),
        "invocation_id": inv, "item_id": item, "text": "hi", "ts": "2026-11-22T10:00:00Z"}))
}

fn started(inv: &str) -> ServerFrame {
    frame(json!({"type": "chat.run_started", "seq": 1, "invocation_id": inv, "ts": "2026-11-22T10:00:00Z"}))
}

fn delta(inv: &str, item: &str, text: &str) -> ServerFrame {
    frame(json!({"type": "chat.assistant_message_delta", "seq": 1, "invocation_id": inv, "item_id": item,
        "delta": text, "ts": "2026-11-22T10:00:01Z"}))
}

fn say(inv: &str, item: &str, text: &str) -> ServerFrame {
    frame(json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv, "item_id": item,
        "markdown": text, "ts": "2026-11-22T10:00:02Z"}))
}

fn call(inv: &str, id: &str, awaiting: bool) -> ServerFrame {
    frame(json!({"type": "chat.tool_call", "seq": 1, "invocation_id": inv, "tool_call_id": id, "tool_name": "t",
        "interaction_type": "auto_tool", "awaiting_response": awaiting, "display": "inline", "payload": {},
        "call_index": 0, "ts": "2026-11-22T10:00:00Z"}))
}

fn settle(id: &str) -> ServerFrame {
    frame(json!({"type": "chat.tool_call_complete", "seq": 1, "tool_call_id": id, "status": "completed",
        "result": 1, "ts": "2026-11-22T10:00:03Z"}))
}

fn output(id: &str) -> ServerFrame {
    frame(
        json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": id, "stdout": "x", "ts": "2026-11-22T10:00:00Z"}),
    )
}

fn end(inv: &str, status: &str) -> ServerFrame {
    frame(json!({"type": "chat.run_complete", "seq": 1, "invocation_id": inv, "status": status,
        "ts": "2026-11-22T10:00:04Z"}))
}

fn retry(inv: &str, after: &str, removed: &[&str]) -> ServerFrame {
    frame(json!({"type": "chat.retry_accepted", "seq": 1, "in_reply_to": "r-1", "invocation_id": inv,
        "after_item_id": after, "removed_item_ids": removed, "ts": "2026-11-22T10:00:05Z"}))
}

fn ev(f: &ServerFrame) -> UiEvent<'_> {
    f.ui_event().expect("test frames are events")
}

fn state_of(frames: &[ServerFrame]) -> UiState {
    let mut state = UiState::default();
    for f in frames {
        state.apply(ev(f)).unwrap_or_else(|e| panic!("{} refused: {e}", f.type_name()));
    }
    state
}

/// The refusal of `f` in `state`, the same through `apply`, `reduce` and the indexed reducer,
/// none of which changes the state.
fn refused(state: &UiState, f: ServerFrame) -> ReduceError {
    let pure = reduce(state, ev(&f)).expect_err("reduce refuses");
    let mut in_place = state.clone();
    assert_eq!(in_place.apply(ev(&f)), Err(pure.clone()));
    assert_eq!(&in_place, state, "a refused {} changed the state", f.type_name());
    let mut indexed = IndexedUiState::new(state.clone());
    assert_eq!(indexed.apply_with_patch(ev(&f)), Err(pure.clone()));
    assert_eq!(indexed.state(), state);
    pure
}

fn id(s: &str) -> chatwire_schema::Id {
    chatwire_schema::Id::parse(s).expect("valid id")
}

fn item_json(state: &UiState, n: usize) -> Value {
    serde_json::to_value(&state.items[n]).expect("serializes")
}

fn running() -> Vec<ServerFrame> {
    vec![accepted("inv-1", "um-1"), started("inv-1")]
}

fn streaming() -> Vec<ServerFrame> {
    let mut f = running();
    f.extend([delta("inv-1", "am-1", "Hel"), delta("inv-1", "am-1", "lo")]);
    f
}

#[test]
fn state_042_a_delta_opens_a_streaming_item_and_further_deltas_append() {
    let state = state_of(&streaming());
    assert_eq!(
        item_json(&state, 1),
        json!({"kind": "assistant_markdown", "id": "am-1", "invocation_id": "inv-1", "markdown": "Hello",
            "streaming": true, "ts": "2026-11-22T10:00:01Z"})
    );
    assert_eq!(state.open_stream().map(|s| s.id.as_str()), Some("am-1"));
    // Progress and output of an earlier call are not refused while a stream is open; the output
    // item goes after its call, so the stream stays last.
    let mut f = running();
    f.extend([call("inv-1", "tc-1", false), delta("inv-1", "am-1", "a"), output("tc-1"), settle("tc-1")]);
    let state = state_of(&f);
    assert_eq!(state.open_stream().map(|s| s.id.as_str()), Some("am-1"));
}

#[test]
fn state_043_the_message_with_the_streamed_text_ends_the_stream() {
    let mut f = streaming();
    f.push(say("inv-1", "am-1", "Hello"));
    let state = state_of(&f);
    assert_eq!(
        item_json(&state, 1),
        json!({"kind": "assistant_markdown", "id": "am-1", "invocation_id": "inv-1", "markdown": "Hello",
            "ts": "2026-11-22T10:00:02Z"}),
        "no streaming member, the end frame's ts"
    );
    assert_eq!(state.open_stream(), None);
    // Ended, the run may call tools and complete.
    let mut more = f.clone();
    more.extend([call("inv-1", "tc-1", false), settle("tc-1"), end("inv-1", "completed")]);
    state_of(&more);
}

#[test]
fn state_022_a_delta_needs_its_run() {
    let idle = state_of(&[accepted("inv-1", "um-1")]);
    assert_eq!(refused(&idle, delta("inv-1", "am-1", "x")), ReduceError::NotInRun(id("inv-1")));
    let run = state_of(&running());
    assert_eq!(refused(&run, delta("inv-2", "am-1", "x")), ReduceError::NotInRun(id("inv-2")));
}

#[test]
fn state_045_a_delta_of_an_item_that_is_not_an_open_stream_is_refused() {
    let mut f = running();
    f.extend([say("inv-1", "am-0", "done"), delta("inv-1", "am-1", "x"), say("inv-1", "am-1", "x")]);
    let state = state_of(&f);
    for item in ["am-0", "am-1", "um-1"] {
        assert_eq!(refused(&state, delta("inv-1", item, "y")), ReduceError::NotStreaming(id(item)));
    }
    // A new id opens a new stream.
    let mut next = state.clone();
    next.apply(ev(&delta("inv-1", "am-2", "y"))).expect("a new stream opens");
}

#[test]
fn state_046_an_open_stream_blocks_tool_calls_the_run_end_and_other_messages() {
    let state = state_of(&streaming());
    let open = ReduceError::StreamOpen(id("am-1"));
    assert_eq!(refused(&state, call("inv-1", "tc-1", false)), open);
    assert_eq!(refused(&state, end("inv-1", "completed")), open);
    assert_eq!(refused(&state, say("inv-1", "am-2", "other")), open);
    assert_eq!(refused(&state, delta("inv-1", "am-2", "other")), open);
    assert_eq!(refused(&state, delta("inv-1", "um-1", "other")), open, "whatever the other item is");
    // The run check comes first.
    assert_eq!(refused(&state, end("inv-2", "completed")), ReduceError::NotInRun(id("inv-2")));
}

#[test]
fn state_047_the_ending_text_must_be_the_streamed_text() {
    let state = state_of(&streaming());
    for text in ["Hell", "Hello!", "hello", ""] {
        assert_eq!(refused(&state, say("inv-1", "am-1", text)), ReduceError::StreamTextMismatch(id("am-1")));
    }
}

/// inv-1 finished; inv-2 ran a tool that completed, then failed.
fn failed_turn() -> Vec<ServerFrame> {
    vec![
        accepted("inv-1", "um-1"),
        started("inv-1"),
        say("inv-1", "am-1", "a"),
        end("inv-1", "completed"),
        accepted("inv-2", "um-2"),
        started("inv-2"),
        call("inv-2", "tc-1", false),
        output("tc-1"),
        settle("tc-1"),
        say("inv-2", "am-2", "oops"),
        end("inv-2", "failed"),
    ]
}

#[test]
fn state_044_retry_cuts_after_the_item_and_goes_idle() {
    let before = state_of(&failed_turn());
    let mut f = failed_turn();
    f.push(retry("inv-2", "tc-1.output", &["am-2"]));
    let state = state_of(&f);
    assert_eq!(state.items, before.items[..before.items.len() - 1]);
    assert_eq!(serde_json::to_value(&state.run).expect("serializes"), json!({"status": "idle"}));
    // The same turn runs again and may reuse the removed id.
    let mut again = f.clone();
    again.extend([started("inv-2"), say("inv-2", "am-2", "ok"), end("inv-2", "completed")]);
    state_of(&again);
    // Cutting right after the user message keeps only it.
    let mut f = failed_turn();
    f.push(retry("inv-2", "um-2", &["tc-1", "tc-1.output", "am-2"]));
    assert_eq!(state_of(&f).items.len(), 3);
    // After the last item: nothing removed.
    let mut f = failed_turn();
    f.push(retry("inv-2", "am-2", &[]));
    assert_eq!(state_of(&f).items, before.items);
    // Naming a call keeps its output item with it: the same cut as naming the output item.
    let mut f = failed_turn();
    f.push(retry("inv-2", "tc-1", &["am-2"]));
    assert_eq!(state_of(&f).items, before.items[..before.items.len() - 1]);
}

#[test]
fn state_023_and_048_to_051_retry_refusals_in_order() {
    let failed = state_of(&failed_turn());
    // STATE-023: never during a run.
    let run = state_of(&failed_turn()[..7]);
    assert_eq!(refused(&run, retry("inv-2", "tc-1", &[])), ReduceError::RunInProgress(id("inv-2")));
    // STATE-048
    assert_eq!(refused(&failed, retry("inv-2", "nope", &[])), ReduceError::UnknownItem(id("nope")));
    // STATE-049: an item of an earlier turn, or a frame naming another turn than the item's.
    assert_eq!(refused(&failed, retry("inv-1", "am-1", &[])), ReduceError::NotInLatestTurn(id("am-1")));
    assert_eq!(refused(&failed, retry("inv-1", "tc-1", &[])), ReduceError::NotInLatestTurn(id("tc-1")));
    // STATE-051: the removed ids, in display order.
    assert_eq!(
        refused(&failed, retry("inv-2", "um-2", &["tc-1", "am-2", "tc-1.output"])),
        ReduceError::RetryMismatch {
            expected: vec![id("tc-1"), id("tc-1.output"), id("am-2")],
            claimed: vec![id("tc-1"), id("am-2"), id("tc-1.output")]
        }
    );
    // Naming a call whose output item follows it: the output item is kept, not removed.
    assert_eq!(
        refused(&failed, retry("inv-2", "tc-1", &["tc-1.output", "am-2"])),
        ReduceError::RetryMismatch { expected: vec![id("am-2")], claimed: vec![id("tc-1.output"), id("am-2")] }
    );
    // STATE-050: a pending call kept; removing it is fine.
    let waiting = state_of(&[
        accepted("inv-1", "um-1"),
        started("inv-1"),
        call("inv-1", "tc-ask", true),
        end("inv-1", "awaiting_input"),
    ]);
    assert_eq!(refused(&waiting, retry("inv-1", "tc-ask", &[])), ReduceError::OpenCallKept(vec![id("tc-ask")]));
    let cut = reduce(&waiting, ev(&retry("inv-1", "um-1", &["tc-ask"]))).expect("the open call goes");
    assert_eq!(cut.items.len(), 1);
}

/// Every event's patch, applied with RFC 6902 to the state before, gives the state after, and has
/// the shape `check_shape` requires.
fn assert_patches(frames: &[ServerFrame]) -> Vec<Vec<PatchOp>> {
    let mut state = UiState::default();
    let mut all = Vec::new();
    for f in frames {
        let before = state.clone();
        let ops = state.apply_with_patch(ev(f)).expect("applies");
        let mut doc = serde_json::to_value(&before).expect("serializes");
        let wire: Vec<json_patch::PatchOperation> =
            serde_json::from_value(serde_json::to_value(&ops).expect("serializes")).expect("RFC 6902");
        json_patch::patch(&mut doc, &wire).expect("the patch applies");
        assert_eq!(doc, serde_json::to_value(&state).expect("serializes"), "{}", f.type_name());
        assert_eq!(check_shape(&before, &[ev(f)], &ops), Ok(()), "{}", f.type_name());
        all.push(ops);
    }
    all
}

#[test]
fn stream_patches_add_then_replace_the_text_then_drop_the_flag() {
    let mut f = streaming();
    f.push(say("inv-1", "am-1", "Hello"));
    let patches = assert_patches(&f);
    let wire = |ops: &Vec<PatchOp>| serde_json::to_value(ops).expect("serializes");
    assert_eq!(
        wire(&patches[2]),
        json!([{"op": "add", "path": "/items/-", "value": {"kind": "assistant_markdown", "id": "am-1",
            "invocation_id": "inv-1", "markdown": "Hel", "streaming": true, "ts": "2026-11-22T10:00:01Z"}}])
    );
    assert_eq!(
        wire(&patches[3]),
        json!([{"op": "test", "path": "/items/1/id", "value": "am-1"},
               {"op": "replace", "path": "/items/1/markdown", "value": "Hello"}])
    );
    assert_eq!(
        wire(&patches[4]),
        json!([{"op": "test", "path": "/items/1/id", "value": "am-1"},
               {"op": "remove", "path": "/items/1/streaming"},
               {"op": "replace", "path": "/items/1/ts", "value": "2026-11-22T10:00:02Z"}])
    );
    // A retry's patch removes from the end, guarded, then sets the run.
    let mut f = failed_turn();
    f.push(retry("inv-2", "um-2", &["tc-1", "tc-1.output", "am-2"]));
    let patches = assert_patches(&f);
    assert_eq!(
        wire(patches.last().expect("a patch")),
        json!([{"op": "test", "path": "/items/5/id", "value": "am-2"}, {"op": "remove", "path": "/items/5"},
               {"op": "test", "path": "/items/4/id", "value": "tc-1.output"}, {"op": "remove", "path": "/items/4"},
               {"op": "test", "path": "/items/3/id", "value": "tc-1"}, {"op": "remove", "path": "/items/3"},
               {"op": "replace", "path": "/run", "value": {"status": "idle"}}])
    );
}

#[test]
fn a_catch_up_over_a_stream_replaces_its_text_once_per_run_of_deltas() {
    let base = state_of(&running());
    let mut events = vec![delta("inv-1", "am-1", "a")];
    events.extend((0..200).map(|_| delta("inv-1", "am-1", "0123456789")));
    events.push(say("inv-1", "am-1", &format!("a{}", "0123456789".repeat(200))));
    events.extend([call("inv-1", "tc-1", false), settle("tc-1")]);
    let evs: Vec<UiEvent<'_>> = events.iter().map(ev).collect();
    let (state, patch) = catch_up(&base, evs.iter().copied()).expect("applies");
    assert_eq!(state, state_of(&[running(), events.clone()].concat()));
    let replaces = patch.iter().filter(|op| op.path() == "/items/1/markdown").count();
    assert_eq!(replaces, 1, "one replace of the text for 200 appending deltas");
    assert_eq!(check_shape(&base, &evs, &patch), Ok(()));
    let mut doc = serde_json::to_value(&base).expect("serializes");
    let wire: Vec<json_patch::PatchOperation> =
        serde_json::from_value(serde_json::to_value(&patch).expect("serializes")).expect("RFC 6902");
    json_patch::patch(&mut doc, &wire).expect("applies");
    assert_eq!(doc, serde_json::to_value(&state).expect("serializes"));
    // Stopped mid-stream, the catch-up holds the text so far, still streaming (STREAM-003).
    let (mid, _) = catch_up(&base, evs[..3].iter().copied()).expect("applies");
    assert_eq!(mid.open_stream().map(|s| s.markdown.as_str()), Some("a01234567890123456789"));
}

#[test]
fn check_shape_refuses_a_text_replace_of_an_item_no_event_names() {
    let base = state_of(&[running(), vec![say("inv-1", "am-0", "old")]].concat());
    let mut open = base.clone();
    open.apply(ev(&delta("inv-1", "am-1", "x"))).expect("opens");
    let append = delta("inv-1", "am-1", "y");
    let sneaky = vec![
        PatchOp::Test { path: "/items/1/id".into(), value: json!("am-0") },
        PatchOp::Replace { path: "/items/1/markdown".into(), value: json!("new") },
    ];
    assert_eq!(check_shape(&open, &[ev(&append)], &sneaky).map_err(|e| e.requirement), Err("STATE-040"));
    let honest = open.clone().apply_with_patch(ev(&append)).expect("appends");
    assert_eq!(check_shape(&open, &[ev(&append)], &honest), Ok(()));
}

/// The view of a connection without `assistant_stream`: the fold without deltas equals the
/// state without its open stream, after every prefix of a session with streams, tool calls and
/// a retry.
#[test]
fn the_fold_without_deltas_is_the_state_without_its_open_stream() {
    let mut f = failed_turn();
    f.extend([
        retry("inv-2", "tc-1.output", &["am-2"]),
        started("inv-2"),
        call("inv-2", "tc-3", false),
        delta("inv-2", "am-3", "par"),
        output("tc-3"),
        delta("inv-2", "am-3", "tial"),
        settle("tc-3"),
        say("inv-2", "am-3", "partial"),
        call("inv-2", "tc-2", false),
        delta("inv-2", "am-4", "z"),
    ]);
    for n in 0..=f.len() {
        let full = state_of(&f[..n]);
        let plain: Vec<ServerFrame> = f[..n].iter().filter(|x| !ev(x).is_stream_delta()).cloned().collect();
        assert_eq!(state_of(&plain), full.without_open_stream(), "after {n} events");
        assert_eq!(full.items_without_open_stream(), &full.without_open_stream().items[..]);
    }
    assert!(state_of(&f).open_stream().is_some(), "the session ends mid-stream");
}
