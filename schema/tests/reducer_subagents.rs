//! The reducer folds sub-agent transcripts (since 1.3, `spec/subagents.md`): `STATE-064` …
//! `STATE-067` and each of their refusals `STATE-068` … `STATE-075`, the indexed state and the
//! patches agreeing with the plain reducer on nested events.

use chatwire_schema::subagent::SubagentStatus;
use chatwire_schema::{DisplayItem, IndexedUiState, ReduceError, ServerFrame, UiState};
use serde_json::{json, Value};

const TS: &str = "2026-11-28T10:00:00Z";

fn frame(mut v: Value) -> ServerFrame {
    v["seq"] = json!(1);
    if v.get("ts").is_none() {
        v["ts"] = json!(TS);
    }
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn call(id: &str, parent: Option<&str>, awaiting: bool) -> Value {
    let mut v = json!({"type": "chat.tool_call", "invocation_id": "inv-1", "tool_call_id": id, "tool_name": "t",
        "interaction_type": if awaiting { "ui_tool" } else { "auto_tool" }, "display": "inline",
        "awaiting_response": awaiting, "payload": {}, "call_index": 0});
    if awaiting {
        v["component_type"] = json!("Form");
    }
    if let Some(p) = parent {
        v["parent_call_id"] = json!(p);
    }
    v
}

fn started(host: &str, thread: &str) -> Value {
    json!({"type": "chat.subagent_started", "tool_call_id": host, "thread_id": thread, "input": "go"})
}

fn complete(host: &str, returned: bool) -> Value {
    json!({"type": "chat.subagent_complete", "tool_call_id": host, "status": "completed", "response": "done", "returned": returned})
}

fn say(item: &str, parent: &str, text: &str) -> Value {
    json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "parent_call_id": parent, "item_id": item, "markdown": text})
}

fn delta(item: &str, parent: &str, text: &str) -> Value {
    json!({"type": "chat.assistant_message_delta", "invocation_id": "inv-1", "parent_call_id": parent, "item_id": item, "delta": text})
}

fn settle(call: &str) -> Value {
    json!({"type": "chat.tool_call_complete", "tool_call_id": call, "status": "completed", "result": {"ok": true}})
}

fn opening() -> Vec<Value> {
    vec![
        json!({"type": "chat.user_message_accepted", "in_reply_to": "m-1", "invocation_id": "inv-1", "item_id": "u-1", "text": "hi"}),
        json!({"type": "chat.run_started", "invocation_id": "inv-1"}),
        call("tc-1", None, false),
        started("tc-1", "th-1"),
    ]
}

/// Folds `values` three ways (plain, indexed, and by applying each patch to the JSON of the state
/// before it) and checks they agree; returns the state, or the first refusal.
fn fold(values: Vec<Value>) -> Result<UiState, ReduceError> {
    let frames: Vec<ServerFrame> = values.into_iter().map(frame).collect();
    let mut plain = UiState::default();
    let mut indexed = IndexedUiState::default();
    let mut doc = serde_json::to_value(&plain).unwrap();
    for f in &frames {
        let event = f.ui_event().expect("an event");
        let refused = plain.apply(event);
        let indexed_refused = indexed.apply_with_patch(event);
        match (refused, indexed_refused) {
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "the indexed reducer refuses alike");
                return Err(a);
            }
            (Ok(()), Ok(ops)) => {
                let ops: Vec<json_patch::PatchOperation> =
                    serde_json::from_value(serde_json::to_value(&ops).unwrap()).unwrap();
                json_patch::patch(&mut doc, &ops).unwrap_or_else(|e| panic!("the patch of {f:?} applies: {e}"));
                assert_eq!(
                    doc,
                    serde_json::to_value(&plain).unwrap(),
                    "the patch of {} gives the state",
                    f.type_name()
                );
                assert_eq!(indexed.state(), &plain, "the indexed state equals the plain one");
            }
            (a, b) => panic!("the reducers disagree on {f:?}: {a:?} / {b:?}"),
        }
    }
    Ok(plain)
}

fn host(state: &UiState, id: &str) -> chatwire_schema::ui_state::ToolCallItem {
    state.tool_call(&chatwire_schema::Id::parse(id).unwrap()).cloned().expect("the call")
}

fn refusal(values: Vec<Value>) -> &'static str {
    fold(values).expect_err("refused").requirement()
}

#[test]
fn a_sub_agent_streams_and_finalizes_inside_its_host_which_then_settles() {
    let mut values = opening();
    values.extend([
        json!({"type": "chat.reasoning", "invocation_id": "inv-1", "parent_call_id": "tc-1", "item_id": "r-1", "text": "plan"}),
        delta("s-1", "tc-1", "Check"),
        delta("s-1", "tc-1", "ing"),
    ]);
    let mid = fold(values.clone()).unwrap();
    let sub = host(&mid, "tc-1").subagent.expect("a sub-agent");
    assert_eq!(sub.items.len(), 2);
    assert!(matches!(&sub.items[1], DisplayItem::AssistantMarkdown(m) if m.streaming && m.markdown == "Checking"));
    assert!(mid.is_open_stream_anywhere(&chatwire_schema::Id::parse("s-1").unwrap()));
    let plain = mid.without_open_stream();
    assert_eq!(host(&plain, "tc-1").subagent.unwrap().items.len(), 1, "STREAM-011: no nested open stream");
    values.extend([
        say("s-1", "tc-1", "Checking"),
        call("n-1", Some("tc-1"), false),
        json!({"type": "chat.tool_progress", "tool_call_id": "n-1", "message": "half", "fraction": 0.5}),
        json!({"type": "chat.tool_output", "tool_call_id": "n-1", "stdout": "x"}),
        settle("n-1"),
        complete("tc-1", true),
        settle("tc-1"),
        json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "completed"}),
    ]);
    let end = fold(values).unwrap();
    let call = host(&end, "tc-1");
    let sub = call.subagent.expect("kept");
    assert_eq!((sub.status, sub.returned, sub.response.as_deref()), (SubagentStatus::Completed, true, Some("done")));
    let kinds: Vec<&str> = sub
        .items
        .iter()
        .map(|i| match i {
            DisplayItem::Reasoning(_) => "reasoning",
            DisplayItem::AssistantMarkdown(_) => "text",
            DisplayItem::ToolCall(_) => "call",
            DisplayItem::ToolOutput(_) => "output",
            DisplayItem::UserMessage(_) => "user",
        })
        .collect();
    assert_eq!(kinds, ["reasoning", "text", "call", "output"], "the output sits after its nested call");
    assert_eq!(end.items.len(), 2, "nothing of the sub-agent at the top level");
}

#[test]
fn a_thread_continues_from_its_latest_call_and_answers_its_return() {
    let mut values = opening();
    values.extend([complete("tc-1", true), settle("tc-1"), call("tc-2", None, false)]);
    let mut again = started("tc-2", "th-1");
    again["continues"] = json!("tc-1");
    again["answers_return"] = json!(true);
    let mut ok = values.clone();
    ok.push(again.clone());
    let state = fold(ok).unwrap();
    assert_eq!(host(&state, "tc-2").subagent.unwrap().continues.map(|c| c.to_string()), Some("tc-1".into()));
    // SUBAGENT-005: the return was pending, so the input answers it.
    let mut no_answer = values.clone();
    no_answer.push({
        let mut v = again.clone();
        v.as_object_mut().unwrap().remove("answers_return");
        v
    });
    assert_eq!(refusal(no_answer), "STATE-070");
    // SUBAGENT-004: a used thread is continued, never started anew, and from its latest call.
    let mut anew = values.clone();
    anew.push(started("tc-2", "th-1"));
    assert_eq!(refusal(anew), "STATE-070");
    let mut wrong = values;
    wrong.push({
        let mut v = again;
        v["continues"] = json!("u-1");
        v
    });
    assert_eq!(refusal(wrong), "STATE-070");
}

#[test]
fn a_nested_form_lets_the_slice_wait_and_is_answered_in_the_parent_thread() {
    let mut values = opening();
    values.extend([
        call("f-1", Some("tc-1"), true),
        json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "awaiting_input"}),
        json!({"type": "chat.run_started", "invocation_id": "inv-1"}),
        json!({"type": "chat.tool_call_complete", "tool_call_id": "f-1", "status": "completed", "result": {"yes": true}, "in_reply_to": "r-1"}),
        complete("tc-1", false),
        settle("tc-1"),
        json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "completed"}),
    ]);
    fold(values).expect("a waiting host does not count as running (STATE-067)");
    // Without a pending form inside, the host runs: the slice cannot wait.
    let mut busy = opening();
    busy.push(json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "awaiting_input"}));
    assert_eq!(refusal(busy), "STATE-031");
}

#[test]
fn every_sub_agent_refusal_names_its_rule() {
    let with = |more: Vec<Value>| {
        let mut v = opening();
        v.extend(more);
        v
    };
    let base = || {
        vec![
            json!({"type": "chat.user_message_accepted", "in_reply_to": "m-1", "invocation_id": "inv-1", "item_id": "u-1", "text": "hi"}),
            json!({"type": "chat.run_started", "invocation_id": "inv-1"}),
        ]
    };
    let mut pending = base();
    pending.extend([call("tc-1", None, true), started("tc-1", "th-1")]);
    assert_eq!(refusal(pending), "STATE-068", "a form hosts no sub-agent");
    let mut output = base();
    output.extend([
        call("tc-1", None, false),
        json!({"type": "chat.tool_output", "tool_call_id": "tc-1", "stdout": "x"}),
        started("tc-1", "th-1"),
    ]);
    assert_eq!(refusal(output), "STATE-068", "a call with output hosts no sub-agent");
    assert_eq!(refusal(with(vec![started("tc-1", "th-2")])), "STATE-068", "a call hosts once");
    let mut deep = opening();
    for depth in 1..=4 {
        let (parent, host) =
            (if depth == 1 { "tc-1".to_owned() } else { format!("d-{}", depth - 1) }, format!("d-{depth}"));
        deep.extend([call(&host, Some(&parent), false), started(&host, &format!("th-d{depth}"))]);
    }
    assert_eq!(refusal(deep), "STATE-069", "a fifth level is too deep");
    assert_eq!(refusal(with(vec![say("s-1", "u-1", "x")])), "STATE-025", "the parent is no call");
    assert_eq!(refusal(with(vec![complete("tc-1", false), say("s-1", "tc-1", "x")])), "STATE-071");
    assert_eq!(refusal(with(vec![delta("s-1", "tc-1", "x"), complete("tc-1", false)])), "STATE-072");
    assert_eq!(refusal(with(vec![call("n-1", Some("tc-1"), false), complete("tc-1", false)])), "STATE-072");
    assert_eq!(refusal(with(vec![settle("tc-1")])), "STATE-073");
    assert_eq!(
        refusal(with(vec![
            json!({"type": "chat.tool_call_dismiss", "tool_call_id": "tc-1", "initiated_by": "client"})
        ])),
        "STATE-073"
    );
    assert_eq!(
        refusal(with(vec![json!({"type": "chat.tool_output", "tool_call_id": "tc-1", "stdout": "x"})])),
        "STATE-074"
    );
    let mut failed_return = complete("tc-1", true);
    failed_return["status"] = json!("failed");
    assert_eq!(refusal(with(vec![failed_return])), "STATE-075");
    // Ids stay unique across transcripts (STATE-020), and a nested stream is its transcript's own.
    assert_eq!(refusal(with(vec![say("u-1", "tc-1", "x")])), "STATE-020");
    assert_eq!(refusal(with(vec![delta("s-1", "tc-1", "x"), say("s-2", "tc-1", "y")])), "STATE-046");
    fold(with(vec![
        delta("s-1", "tc-1", "x"),
        json!({"type": "chat.assistant_message_delta", "invocation_id": "inv-1", "item_id": "top", "delta": "y"}),
    ]))
    .expect("the top level streams beside a sub-agent's stream");
}

#[test]
fn a_rewind_removes_transcripts_with_their_turn_and_a_retry_keeps_a_kept_host_whole() {
    let mut values = opening();
    values.extend([
        say("s-1", "tc-1", "x"),
        complete("tc-1", false),
        settle("tc-1"),
        json!({"type": "chat.assistant_message", "invocation_id": "inv-1", "item_id": "a-1", "markdown": "ok"}),
        json!({"type": "chat.run_complete", "invocation_id": "inv-1", "status": "completed"}),
    ]);
    let mut retry = values.clone();
    retry.push(json!({"type": "chat.retry_accepted", "in_reply_to": "r-1", "invocation_id": "inv-1", "after_item_id": "tc-1", "removed_item_ids": ["a-1"]}));
    let kept = fold(retry).unwrap();
    assert_eq!(host(&kept, "tc-1").subagent.unwrap().items.len(), 1, "SUBAGENT-012");
    let mut nested_named = values.clone();
    nested_named.push(json!({"type": "chat.retry_accepted", "in_reply_to": "r-1", "invocation_id": "inv-1", "after_item_id": "s-1", "removed_item_ids": []}));
    assert_eq!(refusal(nested_named), "STATE-048", "a retry names a top-level item");
    values.push(json!({"type": "chat.rewind_complete", "in_reply_to": "w-1", "before_invocation_id": "inv-1", "removed_invocation_ids": ["inv-1"]}));
    let rewound = fold(values).unwrap();
    assert!(rewound.items.is_empty());
    assert!(!rewound.holds_item_anywhere(&chatwire_schema::Id::parse("s-1").unwrap()));
}

#[test]
fn a_nested_append_costs_a_guard_and_an_add_and_a_nested_chunk_one_replace() {
    let mut values = opening();
    values.push(delta("s-1", "tc-1", "Check"));
    let mut state = UiState::default();
    for v in values {
        state.apply(frame(v).ui_event().unwrap()).unwrap();
    }
    let append = frame(say("s-2", "tc-1", "x"));
    let more = frame(delta("s-1", "tc-1", "ing"));
    let ops = state.clone().apply_with_patch(more.ui_event().unwrap()).unwrap();
    let paths: Vec<String> = ops.iter().map(|o| o.path().to_owned()).collect();
    assert_eq!(paths, ["/items/1/id", "/items/1/subagent/items/0/id", "/items/1/subagent/items/0/markdown"]);
    // A stream is open: another item is refused, and its patch never built.
    assert_eq!(state.clone().apply_with_patch(append.ui_event().unwrap()).unwrap_err().requirement(), "STATE-046");
}
