//! The shared sub-agent corpus (`fixtures/subagent-traces/traces.jsonl`, since 1.3,
//! `spec/subagents.md`): written traces that start, stream, finalize and complete sub-agent runs,
//! judged by `chatwire_schema::reduce`, so that the TypeScript and Python reducers prove they fold
//! nested items as the Rust one does. Written, not drawn: random events almost never build a
//! running host, so every rule of `STATE-064` … `STATE-075` is met here on purpose.
//!
//! Each step also holds the state after it (`state`) and, when applied, its `ui_state_patch`
//! payload (`patch`): a client that folds the deltas itself and takes every other change as a
//! patch (tools/npm) replays each delta, and applies each patch, on the state before it.

use chatwire_schema::{Direction, FrameValidator, ServerFrame, UiState};
use serde_json::{json, Value};

use super::{check_or_update, step};

pub(super) const SUBAGENT_TRACES: &str = "fixtures/subagent-traces/traces.jsonl";

/// Frames of one invocation, written short: the `seq` and `ts` come from the trace.
struct Turn(&'static str);

impl Turn {
    fn user(&self, item: &str) -> Value {
        json!({"type": "chat.user_message_accepted", "in_reply_to": format!("m-{item}"), "invocation_id": self.0, "item_id": item, "text": "go"})
    }
    fn run(&self) -> Value {
        json!({"type": "chat.run_started", "invocation_id": self.0})
    }
    fn end(&self, status: &str) -> Value {
        json!({"type": "chat.run_complete", "invocation_id": self.0, "status": status})
    }
    /// A tool call, nested in `parent`'s transcript when there is one; awaited calls are forms.
    fn call(&self, parent: Option<&str>, id: &str, awaited: bool) -> Value {
        let (interaction, component) = if awaited { ("ui_tool", json!("Form")) } else { ("auto_tool", Value::Null) };
        let mut f = json!({"type": "chat.tool_call", "invocation_id": self.0, "tool_call_id": id, "tool_name": "research",
            "interaction_type": interaction, "awaiting_response": awaited, "display": "inline", "payload": {"q": id}, "call_index": 0});
        if !component.is_null() {
            f["component_type"] = component;
        }
        nest(f, parent)
    }
    fn delta(&self, parent: Option<&str>, item: &str, text: &str) -> Value {
        nest(
            json!({"type": "chat.assistant_message_delta", "invocation_id": self.0, "item_id": item, "delta": text}),
            parent,
        )
    }
    fn say(&self, parent: Option<&str>, item: &str, text: &str) -> Value {
        nest(
            json!({"type": "chat.assistant_message", "invocation_id": self.0, "item_id": item, "markdown": text}),
            parent,
        )
    }
    fn think(&self, parent: Option<&str>, item: &str, text: &str) -> Value {
        nest(json!({"type": "chat.reasoning_delta", "invocation_id": self.0, "item_id": item, "text": text}), parent)
    }
    fn thought(&self, parent: Option<&str>, item: &str, text: &str) -> Value {
        nest(
            json!({"type": "chat.reasoning", "invocation_id": self.0, "item_id": item, "text": text, "encrypted": "RW5j"}),
            parent,
        )
    }
}

fn nest(mut frame: Value, parent: Option<&str>) -> Value {
    if let Some(parent) = parent {
        frame["parent_call_id"] = json!(parent);
    }
    frame
}

fn started(call: &str, thread: &str, continues: Option<&str>, answers_return: bool) -> Value {
    let mut f = json!({"type": "chat.subagent_started", "tool_call_id": call, "thread_id": thread, "name": "researcher", "input": format!("input of {call}")});
    if let Some(c) = continues {
        f["continues"] = json!(c);
    }
    if answers_return {
        f["answers_return"] = json!(true);
    }
    f
}

fn ended(call: &str, status: &str, returned: bool) -> Value {
    let mut f = json!({"type": "chat.subagent_complete", "tool_call_id": call, "status": status, "response": format!("answer of {call}")});
    if returned {
        f["returned"] = json!(true);
    }
    f
}

fn complete(call: &str) -> Value {
    json!({"type": "chat.tool_call_complete", "tool_call_id": call, "status": "completed", "result": {"response": call}})
}

fn dismiss(call: &str) -> Value {
    json!({"type": "chat.tool_call_dismiss", "tool_call_id": call, "initiated_by": "client", "reason": "cancelled"})
}

fn output(call: &str) -> Value {
    json!({"type": "chat.tool_output", "tool_call_id": call, "stdout": format!("out of {call}\n")})
}

fn progress(call: &str) -> Value {
    json!({"type": "chat.tool_progress", "tool_call_id": call, "message": "half", "fraction": 0.5})
}

/// A user turn whose run hosts a sub-agent on `tc-h1` (thread `th-1`), depth 1.
fn hosting(t: &Turn) -> Vec<Value> {
    vec![t.user("um-1"), t.run(), t.call(None, "tc-h1", false), started("tc-h1", "th-1", None, false)]
}

/// The traces, each a name and its frames (and, for a resumed one, the frames folded into its initial state).
fn written() -> Vec<(&'static str, Vec<Value>, Vec<Value>)> {
    let a = Turn("inv-1");
    let b = Turn("inv-2");
    let h = Some("tc-h1");
    let mut traces = Vec::new();

    // Nested reasoning, nested text, a nested call with its output, the host's own refusals.
    let mut f = hosting(&a);
    f.extend([
        a.think(h, "rs-n1", "weigh"),
        a.think(h, "rs-n1", " the fares"),
        a.delta(h, "am-n1", "too early"), // STATE-060: nested reasoning open
        a.thought(h, "rs-n1", "weigh the fares"),
        a.delta(h, "am-n1", "Looking"),
        a.delta(h, "am-n1", " up"),
        a.delta(None, "am-t1", "meanwhile"), // the top level streams on its own
        a.say(None, "am-t1", "meanwhile"),
        a.delta(h, "am-n2", "other"),       // STATE-046: another nested stream is open
        a.delta(h, "um-1", "taken"),        // STATE-046 before the id check
        ended("tc-h1", "completed", false), // STATE-072: nested stream open
        a.say(h, "am-n1", "Looking up"),
        a.delta(h, "um-1", "taken"), // STATE-045: the id is taken in another transcript
        a.delta(None, "am-n1", "x"), // STATE-045: a nested id named at the top level
        a.delta(Some("tc-zz"), "am-n3", "x"), // STATE-025: unknown host
        Turn("inv-9").delta(h, "am-n3", "x"), // STATE-022: not the running invocation
        a.call(h, "tc-n1", false),
        a.call(h, "tc-h1", false), // STATE-020: the host's own id
        progress("tc-n1"),
        output("tc-n1"),
        output("tc-n1"),
        ended("tc-h1", "completed", false), // STATE-072: a nested call is open
        complete("tc-n1"),
        output("tc-h1"),                       // STATE-074: a host's output is its transcript
        complete("tc-h1"),                     // STATE-073: its sub-agent runs
        started("tc-h1", "th-1", None, false), // STATE-068: already hosts one
        ended("tc-h1", "failed", true),        // STATE-075: returned but failed
        a.think(h, "rs-n2", "last thought"),
        a.thought(h, "rs-n2", "last thought"),
        ended("tc-h1", "completed", false),
        ended("tc-h1", "completed", false), // STATE-071: not running any more
        a.delta(h, "am-n4", "late"),        // STATE-071
        a.call(h, "tc-n9", false),          // STATE-071
        complete("tc-h1"),
        a.end("completed"),
        started("tc-n1", "th-9", None, false), // STATE-022: its run has ended
    ]);
    traces.push(("subagent-streams-and-completes", Vec::new(), f));

    // Depth 2, an awaited nested form the user answers in the parent thread, and a return.
    let h2 = Some("tc-h2");
    let mut f = hosting(&a);
    f.extend([
        a.call(h, "tc-h2", false),
        started("tc-h2", "th-2", None, false),
        a.delta(h2, "am-d2", "deep"),
        a.delta(h, "am-d1", "shallow"), // both transcripts stream at once
        a.say(h2, "am-d2", "deep"),
        a.say(h, "am-d1", "shallow"),
        a.call(h2, "tc-f1", true),
        started("tc-f1", "th-3", None, false), // STATE-068: a pending call hosts nothing
        a.end("awaiting_input"),               // every open call waits: the hosts are waiting hosts
        ended("tc-h2", "completed", false),    // STATE-022: no run slice is in progress
        a.user("um-2"),                        // STATE-032: calls open at a new turn
        complete("tc-f1"),                     // the user's answer settles the nested form
        a.run(),
        a.think(h2, "rs-d2", "answered"),
        a.end("completed"), // STATE-031: calls are open (a nested stream is no top-level one)
        a.thought(h2, "rs-d2", "answered"),
        ended("tc-h2", "completed", true),
        complete("tc-h2"),
        ended("tc-h1", "completed", true),
        complete("tc-h1"),
        a.end("completed"),
        // A later turn continues both threads: wrongly first, then as the return rule says.
        b.user("um-3"),
        b.run(),
        b.call(None, "tc-c1", false),
        started("tc-c1", "th-1", Some("tc-h1"), false), // STATE-070: th-1 returned
        started("tc-c1", "th-1", None, true),           // STATE-070: does not name tc-h1
        started("tc-c1", "th-9", Some("tc-h1"), false), // STATE-070: a new thread names no call
        started("tc-c1", "th-1", Some("tc-h1"), true),
        b.call(Some("tc-c1"), "tc-c2", false),
        started("tc-c2", "th-2", Some("tc-h2"), true), // a nested call continues the depth-2 thread
        b.say(Some("tc-c2"), "am-c2", "again"),
        ended("tc-c2", "completed", false),
        complete("tc-c2"),
        ended("tc-c1", "completed", false),
        complete("tc-c1"),
        b.end("completed"),
    ]);
    traces.push(("subagent-depth-two-awaited-and-continued", Vec::new(), f));

    // A cancel closes the transcripts, deepest first: open streams end with their text, open
    // calls are dismissed, the runs end cancelled, then the top level closes.
    let mut f = hosting(&a);
    f.extend([
        a.call(h, "tc-h2", false),
        started("tc-h2", "th-2", None, false),
        a.call(h2, "tc-x1", false),
        a.think(h2, "rs-x1", "half a thought"),
        a.call(h, "tc-x2", true),
        a.delta(h, "am-x2", "partial"),
        ended("tc-h2", "cancelled", false), // STATE-072: its stream is open
        a.thought(h2, "rs-x1", "half a thought"),
        dismiss("tc-x1"),
        ended("tc-h2", "cancelled", false),
        dismiss("tc-h2"),
        a.say(h, "am-x2", "partial"),
        dismiss("tc-x2"),
        ended("tc-h1", "cancelled", false),
        a.delta(h, "am-x4", "after the cancel"), // STATE-071
        dismiss("tc-h1"),
        a.end("cancelled"),
    ]);
    traces.push(("subagent-cancel-closes-transcripts", Vec::new(), f));

    // Depth over MAX_SUBAGENT_DEPTH, and a duplicate id across transcripts.
    let mut f = vec![a.user("um-1"), a.run(), a.call(None, "tc-l1", false)];
    for depth in 1..=4 {
        let (host, call) = (format!("tc-l{depth}"), format!("tc-l{}", depth + 1));
        f.push(started(&host, &format!("th-l{depth}"), None, false));
        f.push(a.call(Some(&host), &call, false));
    }
    f.extend([
        started("tc-l5", "th-l5", None, false), // STATE-069: depth 5
        a.say(Some("tc-l4"), "um-1", "dup"),    // STATE-020 across transcripts
        a.call(Some("tc-l4"), "tc-l1", false),  // STATE-020
        a.say(Some("tc-l4"), "am-l4", "deepest text"),
        a.end("completed"), // STATE-031: calls open
        complete("tc-l5"),
        ended("tc-l4", "completed", false),
        complete("tc-l4"),
        ended("tc-l3", "failed", false),
        complete("tc-l3"),
        ended("tc-l2", "completed", false),
        complete("tc-l2"),
        ended("tc-l1", "completed", false),
        complete("tc-l1"),
        a.end("completed"),
    ]);
    traces.push(("subagent-depth-bound", Vec::new(), f));

    // Retry and rewind cut whole top-level items: a host goes with its transcript.
    let mut f = hosting(&a);
    f.extend([
        a.say(h, "am-r1", "kept inside"),
        ended("tc-h1", "completed", false),
        complete("tc-h1"),
        a.say(None, "am-r2", "after the host"),
        a.end("completed"),
        json!({"type": "chat.retry_accepted", "in_reply_to": "rt-1", "invocation_id": "inv-1", "after_item_id": "am-r1", "removed_item_ids": []}), // STATE-048: a nested item names no cut
        json!({"type": "chat.retry_accepted", "in_reply_to": "rt-2", "invocation_id": "inv-1", "after_item_id": "tc-h1", "removed_item_ids": ["am-r2"]}),
        a.run(),
        a.say(None, "am-r3", "again, the sub-agent kept"),
        a.end("completed"),
        json!({"type": "chat.retry_accepted", "in_reply_to": "rt-3", "invocation_id": "inv-1", "after_item_id": "um-1", "removed_item_ids": ["tc-h1", "am-r3"]}),
        a.run(),
        a.call(None, "tc-h3", false),
        started("tc-h3", "th-1", None, false), // the removed call's thread is free again
        a.say(Some("tc-h3"), "am-r4", "re-run"),
        ended("tc-h3", "completed", false),
        complete("tc-h3"),
        a.end("completed"),
        b.user("um-2"),
        json!({"type": "chat.rewind_complete", "in_reply_to": "rw-1", "before_invocation_id": "inv-1", "removed_invocation_ids": ["inv-1", "inv-2"]}),
    ]);
    traces.push(("subagent-retry-and-rewind", Vec::new(), f));

    // A snapshot taken mid-nested-stream at depth 2: the trace starts from it and streams on.
    let mut snapshot = hosting(&a);
    snapshot.extend([
        a.call(h, "tc-h2", false),
        started("tc-h2", "th-2", None, false),
        a.say(h2, "am-s1", "done before"),
        a.think(h2, "rs-s1", "mid"),
        a.delta(h, "am-s2", "outer"),
    ]);
    let f = vec![
        a.think(h2, "rs-s1", "-stream"),
        a.delta(h, "am-s2", " text"),
        a.delta(h2, "am-s3", "x"), // STATE-060
        a.thought(h2, "rs-s1", "mid-stream"),
        a.say(h, "am-s2", "outer text"),
        ended("tc-h2", "completed", false),
        complete("tc-h2"),
        ended("tc-h1", "completed", true),
        complete("tc-h1"),
        a.end("completed"),
    ];
    traces.push(("subagent-resumed-mid-nested-stream", snapshot, f));
    traces
}

/// Folds `frames` from `initial`, numbering them from `seq`; each step holds the state after it.
fn fold(validator: &FrameValidator, state: &mut UiState, frames: Vec<Value>, seq: &mut u64) -> Vec<Value> {
    frames
        .into_iter()
        .map(|mut frame| {
            frame["seq"] = json!(*seq);
            frame["ts"] = json!(format!("2026-11-29T10:{:02}:{:02}Z", *seq / 60, *seq % 60));
            *seq += 1;
            assert!(validator.check(Direction::ServerToClient, &frame).is_ok(), "schema-invalid: {frame}");
            let before = state.clone();
            let mut step = step(state, frame.clone());
            step["state"] = serde_json::to_value(&*state).expect("a state serializes");
            if step["refused"].is_null() {
                step["patch"] = json!(patch_of(before, &frame));
            }
            step
        })
        .collect()
}

/// The `ui_state_patch` payload of an applied event on the state before it (`STATE-036`).
fn patch_of(mut before: UiState, frame: &Value) -> Vec<chatwire_schema::state_patch::PatchOp> {
    let parsed: ServerFrame = serde_json::from_value(frame.clone()).expect("a schema-valid frame deserializes");
    before.apply_with_patch(parsed.ui_event().expect("an event")).expect("the step applied it")
}

pub(super) fn subagent_traces(validator: &FrameValidator) -> String {
    let mut out = String::new();
    for (name, prefix, frames) in written() {
        let (mut state, mut seq) = (UiState::default(), 3);
        for s in fold(validator, &mut state, prefix, &mut seq) {
            assert!(s["refused"].is_null(), "{name}: the snapshot's prefix applies: {s}");
        }
        let initial = serde_json::to_value(&state).expect("a state serializes");
        let steps = fold(validator, &mut state, frames, &mut seq);
        let trace = json!({"name": name, "initial": initial, "steps": steps, "final": serde_json::to_value(&state).expect("a state serializes")});
        out.push_str(&serde_json::to_string(&trace).expect("a trace serializes"));
        out.push('\n');
    }
    out
}

#[test]
fn subagent_corpus_is_what_the_rust_reducer_says() {
    let generated = subagent_traces(&FrameValidator::new());
    let mut refusals = std::collections::BTreeSet::new();
    let (mut nested_deltas, mut applied) = (0, 0);
    for line in generated.lines() {
        let trace: Value = serde_json::from_str(line).expect("a trace parses");
        for s in trace["steps"].as_array().expect("steps") {
            match s["refused"]["requirement"].as_str() {
                Some(req) => {
                    refusals.insert(req.to_owned());
                }
                None => applied += 1,
            }
            let event = &s["event"];
            let is_delta = event["type"].as_str().is_some_and(|t| t.ends_with("_delta"));
            nested_deltas += usize::from(is_delta && event.get("parent_call_id").is_some());
        }
    }
    // Every sub-agent refusal, and the ones a nested frame meets on its way to its transcript.
    for req in [
        "STATE-020",
        "STATE-022",
        "STATE-025",
        "STATE-031",
        "STATE-032",
        "STATE-045",
        "STATE-046",
        "STATE-048",
        "STATE-060",
        "STATE-068",
        "STATE-069",
        "STATE-070",
        "STATE-071",
        "STATE-072",
        "STATE-073",
        "STATE-074",
        "STATE-075",
    ] {
        assert!(refusals.contains(req), "the sub-agent corpus never meets {req}: {refusals:?}");
    }
    assert!(applied > 120 && nested_deltas > 15, "{applied} applied, {nested_deltas} nested deltas");
    check_or_update(SUBAGENT_TRACES, &generated);
}
