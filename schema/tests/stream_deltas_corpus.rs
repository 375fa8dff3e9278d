//! Writes and drift-checks `fixtures/stream-deltas/cases.jsonl`: what `STATE-042`
//! (`spec/ui-state.md#chatassistant_message_delta`) makes of a `chat.assistant_message_delta` in
//! a state, and (since 1.3) `STATE-054` of a `chat.reasoning_delta`, as this crate's reducer says. A
//! client applies deltas itself (`STREAM-007`); the npm package's copy of the rules
//! (`tools/npm/src/stream.ts`) replays the corpus in `tools/npm/test/stream-deltas.test.mjs`.
//!
//! The cases are systematic, not random: every state of a small set reached by folding the reducer
//! over a few sessions (no stream, an open stream, a finished one, another turn, a pending call, an
//! open or finished reasoning stream), crossed with every item id of the state and a fresh one, and
//! with the running invocation and others; first with text deltas, then (the 1.3 cases, after them)
//! with reasoning deltas. Then whole streams folded delta by delta. After a deliberate change of the rule:
//! `CHATWIRE_UPDATE_CORPORA=1 cargo test -p chatwire-schema --test stream_deltas_corpus`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use chatwire_schema::{reduce, ServerFrame, UiState};
use serde_json::{json, Value};

const UPDATE_ENV: &str = "CHATWIRE_UPDATE_CORPORA";
const CORPUS: &str = "fixtures/stream-deltas/cases.jsonl";
const TS: &str = "2026-11-23T10:00:00Z";

/// Texts a delta carries: plain, multi-byte and astral characters, Markdown, whitespace only.
const TEXTS: &[&str] = &["Hello", ", wörld 🌍", "\n\n- **bold** `code`", " "];

fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn frame(value: Value) -> ServerFrame {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("not a server frame ({e}): {value}"))
}

fn delta(seq: u64, invocation_id: &str, item_id: &str, text: &str) -> Value {
    json!({"type": "chat.assistant_message_delta", "seq": seq, "invocation_id": invocation_id, "item_id": item_id, "delta": text, "ts": TS})
}

/// A `chat.reasoning_delta` (since 1.3, `STATE-054`).
fn reasoning_delta(seq: u64, invocation_id: &str, item_id: &str, text: &str) -> Value {
    json!({"type": "chat.reasoning_delta", "seq": seq, "invocation_id": invocation_id, "item_id": item_id, "text": text, "ts": TS})
}

/// A session folded event by event; every event must be accepted.
struct Session {
    state: UiState,
    seq: u64,
}

impl Session {
    fn new() -> Self {
        Session { state: UiState::default(), seq: 2 }
    }

    fn apply(&mut self, mut event: Value) -> &mut Self {
        self.seq += 1;
        event["seq"] = json!(self.seq);
        if event.get("ts").is_none() {
            event["ts"] = json!(TS);
        }
        let parsed = frame(event.clone());
        let ui_event = parsed.ui_event().unwrap_or_else(|| panic!("not an event: {event}"));
        self.state = reduce(&self.state, ui_event).unwrap_or_else(|e| panic!("the reducer refuses {event}: {e}"));
        self
    }

    fn user(&mut self, n: u32) -> &mut Self {
        self.apply(json!({"type": "chat.user_message_accepted", "in_reply_to": format!("m-{n}"), "invocation_id": format!("inv-{n}"), "item_id": format!("u-{n}"), "text": format!("question {n}")}))
    }

    fn run(&mut self, n: u32) -> &mut Self {
        self.apply(json!({"type": "chat.run_started", "invocation_id": format!("inv-{n}")}))
    }

    fn end_run(&mut self, n: u32, status: &str) -> &mut Self {
        self.apply(json!({"type": "chat.run_complete", "invocation_id": format!("inv-{n}"), "status": status}))
    }

    fn say(&mut self, n: u32, id: &str, text: &str) -> &mut Self {
        self.apply(json!({"type": "chat.assistant_message", "invocation_id": format!("inv-{n}"), "item_id": id, "markdown": text}))
    }

    fn chunk(&mut self, n: u32, id: &str, text: &str) -> &mut Self {
        self.apply(delta(0, &format!("inv-{n}"), id, text))
    }

    fn call(&mut self, n: u32, id: &str, awaiting: bool) -> &mut Self {
        self.apply(json!({"type": "chat.tool_call", "invocation_id": format!("inv-{n}"), "tool_call_id": id, "tool_name": "fetch", "interaction_type": if awaiting { "ui_tool" } else { "auto_tool" }, "component_type": "Form", "awaiting_response": awaiting, "display": "inline", "payload": {}, "call_index": 0}))
    }

    fn output(&mut self, id: &str) -> &mut Self {
        self.apply(json!({"type": "chat.tool_output", "tool_call_id": id, "stdout": "ok\n"}))
    }

    fn complete(&mut self, id: &str) -> &mut Self {
        self.apply(json!({"type": "chat.tool_call_complete", "tool_call_id": id, "status": "completed", "result": {"bytes": 3}}))
    }

    fn think(&mut self, n: u32, id: &str, text: &str) -> &mut Self {
        self.apply(reasoning_delta(0, &format!("inv-{n}"), id, text))
    }

    fn reason(&mut self, n: u32, id: &str, text: &str, redacted: bool) -> &mut Self {
        self.apply(json!({"type": "chat.reasoning", "invocation_id": format!("inv-{n}"), "item_id": id, "text": text, "redacted": redacted, "encrypted": "RW5jcnlwdGVk"}))
    }
}

/// The states of the 1.3 cases (reasoning, `spec/reasoning.md`), after those of [`states`].
fn reasoning_states() -> Vec<(&'static str, UiState)> {
    let mut out = Vec::new();
    let mut s = Session::new();
    s.user(1).run(1).think(1, "r-1", "The user wants");
    out.push(("a reasoning stream open", s.state.clone()));
    s.think(1, "r-1", " the cheapest fare.").reason(1, "r-1", "The user wants the cheapest fare.", false);
    out.push(("running after a finished reasoning stream", s.state.clone()));
    s.reason(1, "r-2", "", true).chunk(1, "a-1", "Cheapest");
    out.push(("a text stream open after a redacted reasoning item", s.state.clone()));
    s.say(1, "a-1", "Cheapest").end_run(1, "completed").user(2).run(2).think(2, "r-3", "Again");
    out.push(("second turn, a reasoning stream open", s.state.clone()));
    out
}

/// The states the single-delta cases start from, by name.
fn states() -> Vec<(&'static str, UiState)> {
    let mut out = Vec::new();
    let mut s = Session::new();
    out.push(("empty", s.state.clone()));
    s.user(1);
    out.push(("turn accepted, no run", s.state.clone()));
    s.run(1);
    out.push(("running, nothing said", s.state.clone()));
    s.say(1, "a-0", "A whole message.");
    out.push(("running after a whole message", s.state.clone()));
    s.call(1, "tc-1", false).output("tc-1").complete("tc-1");
    out.push(("running after a completed call with output", s.state.clone()));
    s.chunk(1, "a-1", "Hel");
    out.push(("a stream open after one delta", s.state.clone()));
    s.chunk(1, "a-1", "lo ").chunk(1, "a-1", "wörld");
    out.push(("a stream open after three deltas", s.state.clone()));
    s.say(1, "a-1", "Hello wörld");
    out.push(("running after a finished stream", s.state.clone()));
    s.end_run(1, "completed");
    out.push(("completed after a finished stream", s.state.clone()));
    s.user(2).run(2);
    out.push(("second turn running, earlier stream finished", s.state.clone()));
    s.chunk(2, "a-2", "Second");
    out.push(("second turn streaming", s.state.clone()));
    s.say(2, "a-2", "Second").call(2, "tc-2", true).end_run(2, "awaiting_input");
    out.push(("awaiting input after a stream", s.state.clone()));
    out
}

/// One delta applied to one state: `{"kind": "step", …, "result": {"state"} | {"refused"}}`: text
/// deltas on every state, then reasoning deltas on every state (since 1.3).
fn step_cases() -> Vec<Value> {
    let mut out = Vec::new();
    let mut seq = 1000;
    let all: Vec<_> = states().into_iter().chain(reasoning_states()).collect();
    let text_cases =
        all.iter().map(|(name, state)| (*name, state, "delta", delta as fn(u64, &str, &str, &str) -> Value));
    let reasoning_cases = all
        .iter()
        .map(|(name, state)| (*name, state, "reasoning delta", reasoning_delta as fn(u64, &str, &str, &str) -> Value));
    for (name, state, what, make) in text_cases.chain(reasoning_cases) {
        let mut ids: Vec<String> = state.items.iter().map(|i| i.id().to_string()).collect();
        ids.push("a-new".into());
        let mut invocations = vec!["inv-1".to_owned(), "inv-2".to_owned(), "inv-9".to_owned()];
        if let Some(run) = &state.run.invocation_id {
            invocations.retain(|i| i != run.as_str());
            invocations.insert(0, run.to_string());
        }
        for (i, id) in ids.iter().enumerate() {
            for (j, invocation) in invocations.iter().enumerate() {
                seq += 1;
                let text = TEXTS[(i + j) % TEXTS.len()];
                let event = make(seq, invocation, id, text);
                let parsed = frame(event.clone());
                let result = match reduce(state, parsed.ui_event().expect("a delta is an event")) {
                    Ok(next) => json!({"state": next}),
                    Err(e) => json!({"refused": e.requirement()}),
                };
                out.push(json!({"kind": "step", "name": format!("{name}: {what} for {id} of {invocation}"), "state": state, "delta": event, "result": result}));
            }
        }
    }
    out
}

/// Whole streams folded delta by delta: `{"kind": "fold", "state", "deltas", "final"}`.
fn fold_cases() -> Vec<Value> {
    let mut out = Vec::new();
    let strings = |chunks: &[&str]| chunks.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    for (name, chunks) in [
        ("one chunk", strings(&["Done."])),
        (
            "ten-character chunks",
            strings(&["Rotating t", "he API key", " now; the ", "old one st", "ays valid ", "for 24 h."]),
        ),
        ("one character at a time, astral and combining", "e\u{301}🌍 ok\n\n- x".chars().map(String::from).collect()),
    ] {
        let mut s = Session::new();
        s.user(1).run(1).say(1, "a-0", "First.");
        let start = s.state.clone();
        let mut seq = 100;
        let deltas: Vec<Value> = chunks
            .iter()
            .map(|c| {
                seq += 1;
                delta(seq, "inv-1", "a-1", c)
            })
            .collect();
        let mut state = start.clone();
        for d in &deltas {
            state = reduce(&state, frame(d.clone()).ui_event().expect("an event"))
                .expect("every delta of a stream applies");
        }
        out.push(json!({"kind": "fold", "name": name, "state": start, "deltas": deltas, "final": state}));
    }
    // Since 1.3: a reasoning stream, then the answer's text stream after it.
    let mut s = Session::new();
    s.user(1).run(1);
    let start = s.state.clone();
    let deltas = vec![
        reasoning_delta(201, "inv-1", "r-1", "The user wants "),
        reasoning_delta(202, "inv-1", "r-1", "the cheapest fare 🌍."),
    ];
    let mut state = start.clone();
    for d in &deltas {
        state =
            reduce(&state, frame(d.clone()).ui_event().expect("an event")).expect("every delta of a stream applies");
    }
    out.push(json!({"kind": "fold", "name": "a reasoning stream", "state": start, "deltas": deltas, "final": state}));
    out
}

fn generate() -> String {
    let mut out = String::new();
    for case in step_cases().into_iter().chain(fold_cases()) {
        out.push_str(&serde_json::to_string(&case).expect("serializes"));
        out.push('\n');
    }
    out
}

#[test]
fn stream_delta_corpus_is_what_the_rust_reducer_says() {
    let generated = generate();
    // Agreeing on the corpus proves little unless it opens and grows streams and hits every
    // refusal a delta can meet.
    let mut outcomes = BTreeSet::new();
    for line in generated.lines() {
        let case: Value = serde_json::from_str(line).expect("a case parses");
        if case["kind"] != "step" {
            continue;
        }
        match case["result"]["refused"].as_str() {
            Some(id) => outcomes.insert(id.to_owned()),
            None => {
                let before = case["state"]["items"].as_array().expect("items").len();
                let after = case["result"]["state"]["items"].as_array().expect("items").len();
                outcomes.insert(if after > before { "opens".to_owned() } else { "appends".to_owned() })
            }
        };
    }
    let expected: BTreeSet<String> =
        ["opens", "appends", "STATE-022", "STATE-045", "STATE-046", "STATE-058", "STATE-060"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert_eq!(outcomes, expected);

    let path = repo_path(CORPUS);
    if std::env::var_os(UPDATE_ENV).is_some() {
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create the corpus directory");
        std::fs::write(&path, &generated).expect("write the corpus");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{CORPUS} differs from what this test generates; after a deliberate change run \
         {UPDATE_ENV}=1 cargo test -p chatwire-schema --test stream_deltas_corpus and review the diff"
    );
}
