//! Writes and drift-checks the corpora that let a second implementation prove it agrees with
//! this crate: `fixtures/reducer-traces/traces.jsonl` (the reducer, `spec/ui-state.md`)
//! and `fixtures/agent-scripts/cases.jsonl` (`AgentScript::validate`, `spec/conformance-profile.md`),
//! and checks `fixtures/protocol-facts.json` (`chatwire_schema::protocol_facts`, which
//! `chatwire-schema-tool export` writes), so that another language reads the protocol's facts
//! instead of typing them again.
//!
//! The cases are generated from a fixed seed, then judged by the Rust code; the committed files
//! must equal what this test generates. After a deliberate change of the generator or of the rules:
//! `CHATWIRE_UPDATE_CORPORA=1 cargo test -p chatwire-schema --test shared_corpora`.
//! tools/python/tests replays both corpora against the Python package; tools/npm/test replays
//! `fixtures/state-patches/patches.jsonl` (the patches of the traces) against its RFC 6902 apply.

use std::path::PathBuf;

use chatwire_schema::script::{AgentScript, ScriptError};
use chatwire_schema::{ClientFrame, Direction, DisplayItem, FrameValidator, ServerFrame, ToolCallStatus, UiState};
use serde_json::{json, Map, Value};

#[path = "support/corpus_13.rs"]
mod corpus_13;
use corpus_13::{usage_trace, IDLE_EVENTS_13, RUNNING_EVENTS_13};
#[path = "support/corpus_subagents.rs"]
mod corpus_subagents;

const UPDATE_ENV: &str = "CHATWIRE_UPDATE_CORPORA";
const TRACES: &str = "fixtures/reducer-traces/traces.jsonl";
const SCRIPTS: &str = "fixtures/agent-scripts/cases.jsonl";
const FACTS: &str = chatwire_schema::protocol_facts::FILE;
const PATCHES: &str = "fixtures/state-patches/patches.jsonl";
const TRACE_COUNT: usize = 160;
/// Traces drawing from the 1.3 events too (reasoning, usage), written after the others.
const TRACE_COUNT_13: usize = 60;
const TRACE_LEN: usize = 36;
const SCRIPT_COUNT: usize = 300;
/// Scripts drawing `reason` and `usage` steps too (since 1.3, rules 10 and 11), written after the others.
const SCRIPT_COUNT_13: usize = 120;

fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// xorshift64*: deterministic across platforms and Rust versions, unlike a library's default RNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Sets an optional member: mostly a value, sometimes absent, sometimes `null` (null and absent
/// must mean the same to every implementation).
fn optional(rng: &mut Rng, frame: &mut Map<String, Value>, key: &str, value: Value) {
    match rng.below(5) {
        0 => {}
        1 => {
            frame.insert(key.into(), Value::Null);
        }
        _ => {
            frame.insert(key.into(), value);
        }
    }
}

struct TraceGen<'v> {
    rng: Rng,
    validator: &'v FrameValidator,
    fresh: u64,
    /// Draw the 1.3 events too: `chat.reasoning_delta`, `chat.reasoning`, `chat.run_complete.usage`.
    /// Without it the generator draws exactly what it drew before 1.3, so those traces stay as they were.
    v13: bool,
}

/// The events a running state draws from, each as often as it is listed.
const RUNNING_EVENTS: &[&str] = &[
    "chat.assistant_message",
    "chat.assistant_message_delta",
    "chat.assistant_message_delta",
    "chat.retry_accepted",
    "chat.tool_call",
    "chat.tool_call",
    "chat.tool_progress",
    "chat.tool_output",
    "chat.tool_output",
    "chat.tool_call_complete",
    "chat.tool_call_dismiss",
    "chat.run_complete",
    "chat.run_complete",
    "chat.user_message_accepted",
    "chat.rewind_complete",
    "chat.run_started",
];

/// The events a state without a running run draws from.
const IDLE_EVENTS: &[&str] = &[
    "chat.user_message_accepted",
    "chat.user_message_accepted",
    "chat.run_started",
    "chat.run_started",
    "chat.rewind_complete",
    "chat.tool_call_complete",
    "chat.tool_call_dismiss",
    "chat.tool_output",
    "chat.assistant_message",
    "chat.retry_accepted",
    "chat.retry_accepted",
    "chat.assistant_message_delta",
];

impl TraceGen<'_> {
    fn fresh(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}-{}", self.fresh)
    }

    /// An id already in use (of the wanted kind when there is one), or a fresh one.
    fn some_id(&mut self, state: &UiState, want: fn(&DisplayItem) -> Option<String>, prefix: &str) -> String {
        let known: Vec<String> = state.items.iter().filter_map(want).collect();
        if !known.is_empty() && self.rng.chance(85) {
            self.rng.pick(&known).clone()
        } else if self.rng.chance(5) {
            // 122+ characters: a valid call id whose output id is not (STATE-015, ID-003).
            format!("tc-{}", "x".repeat(119 + self.rng.below(6)))
        } else {
            self.fresh(prefix)
        }
    }

    fn invocation(&mut self, state: &UiState) -> String {
        if let Some(run) = state.run.invocation_id.as_ref().filter(|_| self.rng.chance(70)) {
            return run.to_string();
        }
        self.some_id(state, |i| Some(i.invocation_id().to_string()), "inv")
    }

    fn call(&mut self, state: &UiState) -> String {
        let open: Vec<String> = state
            .items
            .iter()
            .filter_map(|i| match i {
                DisplayItem::ToolCall(c) if !c.status.is_terminal() => Some(c.id.to_string()),
                _ => None,
            })
            .collect();
        if !open.is_empty() && self.rng.chance(75) {
            return self.rng.pick(&open).clone();
        }
        self.some_id(
            state,
            |i| match i {
                DisplayItem::ToolCall(c) => Some(c.id.to_string()),
                _ => None,
            },
            "tc",
        )
    }

    fn event(&mut self, state: &UiState, seq: u64) -> Value {
        let ts = format!("2026-11-22T10:{:02}:{:02}Z", (seq / 60) % 60, seq % 60);
        let mut f = Map::new();
        let (events, events_13) = match state.run.status {
            chatwire_schema::RunStatus::Running => (RUNNING_EVENTS, RUNNING_EVENTS_13),
            _ => (IDLE_EVENTS, IDLE_EVENTS_13),
        };
        let kind = if self.v13 {
            let all: Vec<&str> = events.iter().chain(events_13).copied().collect();
            *self.rng.pick(&all)
        } else {
            *self.rng.pick(events)
        };
        f.insert("type".into(), json!(kind));
        f.insert("seq".into(), json!(seq));
        match kind {
            "chat.user_message_accepted" => {
                let inv = if self.rng.chance(85) { self.fresh("inv") } else { self.invocation(state) };
                let item = if self.rng.chance(90) {
                    self.fresh("um")
                } else {
                    self.some_id(state, |i| Some(i.id().to_string()), "um")
                };
                f.insert("in_reply_to".into(), json!(self.fresh("m")));
                f.insert("invocation_id".into(), json!(inv));
                f.insert("item_id".into(), json!(item));
                f.insert("text".into(), json!(format!("message {seq}")));
            }
            "chat.run_started" => {
                let latest = state.latest_user_invocation().map(ToString::to_string);
                let inv = match latest {
                    Some(l) if self.rng.chance(75) => l,
                    _ => self.invocation(state),
                };
                f.insert("invocation_id".into(), json!(inv));
            }
            "chat.assistant_message" if state.open_stream().is_some() && self.rng.chance(70) => {
                // The end of the open stream (STATE-043): mostly its exact text.
                let open = state.open_stream().expect("checked above");
                let text = if self.rng.chance(85) { open.markdown.clone() } else { format!("{}!", open.markdown) };
                f.insert("invocation_id".into(), json!(self.invocation(state)));
                f.insert("item_id".into(), json!(open.id.to_string()));
                f.insert("markdown".into(), json!(text));
            }
            "chat.assistant_message_delta" => {
                f.insert("invocation_id".into(), json!(self.invocation(state)));
                let item = match state.open_stream() {
                    Some(open) if self.rng.chance(80) => open.id.to_string(),
                    _ if self.rng.chance(80) => self.fresh("am"),
                    _ => self.some_id(state, |i| Some(i.id().to_string()), "am"),
                };
                f.insert("item_id".into(), json!(item));
                f.insert("delta".into(), json!(format!("chunk {seq} ")));
            }
            "chat.retry_accepted" => {
                let latest = state.latest_user_invocation().cloned();
                let in_latest: Vec<String> = state
                    .items
                    .iter()
                    .filter(|i| Some(i.invocation_id()) == latest.as_ref())
                    .map(|i| i.id().to_string())
                    .collect();
                let after = if !in_latest.is_empty() && self.rng.chance(80) {
                    self.rng.pick(&in_latest).clone()
                } else {
                    self.some_id(state, |i| Some(i.id().to_string()), "am")
                };
                let inv = match latest {
                    Some(l) if self.rng.chance(85) => l.to_string(),
                    _ => self.invocation(state),
                };
                // Mostly the cut STATE-044 makes (a call's output item stays with it), sometimes the
                // naive one right after the named item, which the reducer refuses.
                let cut = state.items.iter().rposition(|i| i.id().as_str() == after).map(|k| {
                    match (&state.items[k], state.items.get(k + 1)) {
                        (DisplayItem::ToolCall(c), Some(DisplayItem::ToolOutput(o)))
                            if o.tool_call_id == c.id && !seq.is_multiple_of(7) =>
                        {
                            k + 2
                        }
                        _ => k + 1,
                    }
                });
                let mut removed: Vec<String> =
                    cut.map_or_else(Vec::new, |c| state.items[c..].iter().map(|i| i.id().to_string()).collect());
                if self.rng.chance(10) && removed.len() > 1 {
                    removed.reverse();
                } else if self.rng.chance(8) {
                    removed.pop();
                }
                f.insert("in_reply_to".into(), json!(self.fresh("rt")));
                f.insert("invocation_id".into(), json!(inv));
                f.insert("after_item_id".into(), json!(after));
                f.insert("removed_item_ids".into(), json!(removed));
            }
            "chat.assistant_message" => {
                f.insert("invocation_id".into(), json!(self.invocation(state)));
                let item = if self.rng.chance(90) {
                    self.fresh("am")
                } else {
                    self.some_id(state, |i| Some(i.id().to_string()), "am")
                };
                f.insert("item_id".into(), json!(item));
                f.insert("markdown".into(), json!(format!("**answer** {seq}")));
            }
            "chat.tool_call" => {
                let id = if self.rng.chance(85) { self.fresh("tc") } else { self.call(state) };
                let interaction = *self.rng.pick(&["ui_tool", "ui_surface", "auto_tool", "input_request"]);
                f.insert("invocation_id".into(), json!(self.invocation(state)));
                f.insert("tool_call_id".into(), json!(id));
                if self.rng.chance(30) {
                    let corr = if self.rng.chance(85) { id.clone() } else { self.fresh("tc") };
                    optional(&mut self.rng, &mut f, "corr", json!(corr));
                }
                f.insert("tool_name".into(), json!(format!("tool_{}", self.rng.below(4))));
                let component = self.rng.chance(70) || !matches!(interaction, "ui_tool" | "ui_surface");
                if component {
                    optional(&mut self.rng, &mut f, "component_type", json!("ConfirmDialog"));
                }
                optional(&mut self.rng, &mut f, "workflow_name", json!("Flow"));
                f.insert("interaction_type".into(), json!(interaction));
                f.insert("awaiting_response".into(), json!(self.rng.chance(45)));
                f.insert("display".into(), json!(*self.rng.pick(&["inline", "artifact", "composer", "view"])));
                f.insert("payload".into(), json!({"n": seq, "nested": {"keep": null}}));
                f.insert("call_index".into(), json!(self.rng.below(3)));
            }
            "chat.tool_progress" => {
                f.insert("tool_call_id".into(), json!(self.call(state)));
                optional(&mut self.rng, &mut f, "message", json!(format!("step {seq}")));
                let fraction = self.rng.pick(&[json!(0.0), json!(0.25), json!(1.0), json!(1), json!(0)]).clone();
                optional(&mut self.rng, &mut f, "fraction", fraction);
            }
            "chat.tool_output" => {
                f.insert("tool_call_id".into(), json!(self.call(state)));
                optional(&mut self.rng, &mut f, "command", json!("make test"));
                if self.rng.chance(40) {
                    let approval = *self.rng.pick(&["approve", "deny_continue", "deny_abort"]);
                    optional(&mut self.rng, &mut f, "approval", json!(approval));
                }
                optional(&mut self.rng, &mut f, "stdout", json!(format!("out {seq}\n")));
                if self.rng.chance(40) {
                    optional(&mut self.rng, &mut f, "stderr", json!("warning\n"));
                }
                if self.rng.chance(40) {
                    // INT-001: `2.0` is the integer 2.
                    let code = self.rng.pick(&[json!(0), json!(1), json!(-1), json!(2.0)]).clone();
                    optional(&mut self.rng, &mut f, "exit_code", code);
                }
            }
            "chat.tool_call_complete" => {
                f.insert("tool_call_id".into(), json!(self.call(state)));
                let status = *self.rng.pick(&["completed", "completed", "failed", "expired"]);
                f.insert("status".into(), json!(status));
                let result = self.rng.pick(&[json!({"ok": true}), json!([1, 2]), json!("text"), json!(0)]).clone();
                optional(&mut self.rng, &mut f, "result", result);
                optional(&mut self.rng, &mut f, "error", json!("went wrong"));
                optional(&mut self.rng, &mut f, "summary", json!("done"));
                let reply = self.fresh("r");
                optional(&mut self.rng, &mut f, "in_reply_to", json!(reply));
            }
            "chat.tool_call_dismiss" => {
                f.insert("tool_call_id".into(), json!(self.call(state)));
                let client = self.rng.chance(50);
                f.insert("initiated_by".into(), json!(if client { "client" } else { "server" }));
                optional(&mut self.rng, &mut f, "reason", json!("superseded"));
                if client {
                    let reply = self.fresh("r");
                    optional(&mut self.rng, &mut f, "in_reply_to", json!(reply));
                }
            }
            "chat.run_complete" => {
                f.insert("invocation_id".into(), json!(self.invocation(state)));
                let status = *self.rng.pick(&["awaiting_input", "completed", "completed", "failed", "cancelled"]);
                f.insert("status".into(), json!(status));
                optional(&mut self.rng, &mut f, "reason", json!("because"));
                optional(&mut self.rng, &mut f, "error", json!("boom"));
                if self.v13 && self.rng.chance(85) {
                    let usage = self.usage();
                    optional(&mut self.rng, &mut f, "usage", usage);
                }
            }
            "chat.reasoning_delta" => {
                f.insert("invocation_id".into(), json!(self.invocation(state)));
                let item = match state.open_stream_id() {
                    Some(open) if self.rng.chance(80) => open.to_string(),
                    _ if self.rng.chance(80) => self.fresh("rs"),
                    _ => self.some_id(state, |i| Some(i.id().to_string()), "rs"),
                };
                f.insert("item_id".into(), json!(item));
                f.insert("text".into(), json!(format!("thought {seq} ")));
            }
            "chat.reasoning" => self.reasoning(state, &mut f, seq),
            "chat.rewind_complete" => {
                let invocations: Vec<String> = state.invocations().iter().map(ToString::to_string).collect();
                let before = if !invocations.is_empty() && self.rng.chance(85) {
                    self.rng.below(invocations.len())
                } else {
                    usize::MAX
                };
                let (before_id, mut removed) = if before == usize::MAX {
                    (self.fresh("inv"), Vec::new())
                } else {
                    let cut =
                        state.items.iter().position(|i| i.invocation_id().as_str() == invocations[before]).unwrap_or(0);
                    let mut removed: Vec<String> = Vec::new();
                    for item in &state.items[cut..] {
                        let inv = item.invocation_id().to_string();
                        if !removed.contains(&inv) {
                            removed.push(inv);
                        }
                    }
                    (invocations[before].clone(), removed)
                };
                if self.rng.chance(15) && removed.len() > 1 {
                    removed.reverse();
                } else if self.rng.chance(10) {
                    removed.pop();
                }
                f.insert("in_reply_to".into(), json!(self.fresh("rw")));
                f.insert("before_invocation_id".into(), json!(before_id));
                f.insert("removed_invocation_ids".into(), json!(removed));
            }
            _ => unreachable!("every kind above is an event"),
        }
        f.insert("ts".into(), json!(ts));
        Value::Object(f)
    }

    fn trace(&mut self, name: String) -> Value {
        let mut state = UiState::default();
        let initial = serde_json::to_value(&state).expect("a state serializes");
        let mut steps = Vec::new();
        let mut seq = 3;
        let mut tries = 0;
        while steps.len() < TRACE_LEN {
            tries += 1;
            assert!(tries < TRACE_LEN * 50, "the generator keeps producing schema-invalid frames");
            let frame = self.event(&state, seq);
            // A frame the schema refuses is not an event at all: draw another one.
            if self.validator.check(Direction::ServerToClient, &frame).is_err() {
                continue;
            }
            steps.push(step(&mut state, frame));
            seq += 1;
        }
        let open =
            state.items.iter().any(|i| matches!(i, DisplayItem::ToolCall(c) if c.status == ToolCallStatus::Pending));
        json!({
            "name": name,
            "initial": initial,
            "steps": steps,
            "final": serde_json::to_value(&state).expect("a state serializes"),
            "ends_with_pending_call": open,
        })
    }
}

/// Folds one schema-valid event frame over `state` and returns its step: the frame and `null`, or the
/// refusal (the state then unchanged).
fn step(state: &mut UiState, frame: Value) -> Value {
    let parsed: ServerFrame = serde_json::from_value(frame.clone()).expect("a schema-valid frame deserializes");
    let event = parsed.ui_event().expect("only events are generated");
    let verdict = match chatwire_schema::reduce(state, event) {
        Ok(next) => {
            *state = next;
            Value::Null
        }
        Err(e) => json!({"requirement": e.requirement(), "kind": e.kind()}),
    };
    json!({"event": frame, "refused": verdict})
}

fn traces(validator: &FrameValidator) -> String {
    let mut generator = TraceGen { rng: Rng(0x9E37_79B9_7F4A_7C15), validator, fresh: 0, v13: false };
    let mut out = String::new();
    for n in 0..TRACE_COUNT {
        let trace = generator.trace(format!("random-{n:03}"));
        out.push_str(&serde_json::to_string(&trace).expect("a trace serializes"));
        out.push('\n');
    }
    // Since 1.3: traces that reason and report usage, from a seed of their own.
    let mut generator = TraceGen { rng: Rng(0x2545_F491_4F6C_DD1D), validator, fresh: 0, v13: true };
    for n in 0..TRACE_COUNT_13 {
        let trace = generator.trace(format!("reasoning-usage-{n:03}"));
        out.push_str(&serde_json::to_string(&trace).expect("a trace serializes"));
        out.push('\n');
    }
    out.push_str(&serde_json::to_string(&usage_trace(validator)).expect("a trace serializes"));
    out.push('\n');
    out
}

fn script_call(rng: &mut Rng, index: usize) -> Value {
    let mut c = Map::new();
    c.insert("tool_name".into(), json!(format!("tool_{index}")));
    c.insert("interaction_type".into(), json!(*rng.pick(&["ui_tool", "auto_tool", "input_request", "ui_surface"])));
    c.insert("display".into(), json!(*rng.pick(&["inline", "artifact", "composer", "view"])));
    match rng.below(6) {
        0..=2 => {
            c.insert("component_type".into(), json!("Form"));
        }
        3 => {
            c.insert("component_type".into(), json!(""));
        }
        _ => {}
    }
    c.insert("payload".into(), json!({"i": index}));
    let delays = [json!(0), json!(10), json!(60000), json!(60001), json!(1e3), json!(59999.0)];
    if rng.chance(60) {
        c.insert("run_ms".into(), rng.pick(&delays).clone());
    }
    let outcome = match rng.below(4) {
        0 => json!({"kind": "result", "value": {"ok": index}}),
        1 => json!({"kind": "error", "message": "failed"}),
        2 => json!({"kind": "dismiss"}),
        _ => {
            let mut o = json!({"kind": "await_response", "summary": "answered"});
            if rng.chance(60) {
                let expiry = [json!(1000), json!(600000), json!(600001), json!(6e5)];
                o["expire_after_ms"] = rng.pick(&expiry).clone();
            }
            o
        }
    };
    c.insert("outcome".into(), outcome);
    if rng.chance(15) {
        // Since 1.2: valid on an awaited call only (SCRIPT-022).
        c.insert("response_schema".into(), json!({"type": "object", "required": ["ok"]}));
    }
    Value::Object(c)
}

fn script_step(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => json!({"op": "say", "markdown": "hello"}),
        5 => {
            // Streamed (since 1.1): mostly right, sometimes an empty, missing or extra chunk, too
            // many chunks, or a delay over the limit.
            let mut chunks: Vec<String> = vec!["hel".into(), "lo".into()];
            match rng.below(8) {
                0 => chunks.insert(1, String::new()),
                1 => {
                    chunks.pop();
                }
                2 => chunks.push("!".into()),
                3 => chunks = vec!["x".into(); 1001],
                _ => {}
            }
            let markdown = if chunks.len() > 1000 { "x".repeat(1001) } else { "hello".to_owned() };
            let mut step = json!({"op": "say", "markdown": markdown, "chunks": chunks});
            if rng.chance(50) {
                step["chunk_delay_ms"] = rng.pick(&[json!(0), json!(250), json!(60000), json!(60001)]).clone();
            }
            step
        }
        1 => {
            json!({"op": "wait", "ms": rng.pick(&[json!(0), json!(100), json!(60000), json!(60001), json!(6e4)]).clone()})
        }
        2 => json!({"op": "end", "status": *rng.pick(&["completed", "failed", "cancelled"])}),
        _ => {
            let n = if rng.chance(8) { 0 } else { 1 + rng.below(4) };
            let calls: Vec<Value> = (0..n).map(|i| script_call(rng, i)).collect();
            let mut step = json!({"op": "tool_calls", "calls": calls});
            if rng.chance(60) {
                let selfish: Vec<usize> = (0..n).filter(|&i| calls[i]["outcome"]["kind"] != "await_response").collect();
                let mut order = selfish.clone();
                // Shuffle, then maybe break it: a duplicate, a missing index, an awaited index.
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.below(i + 1));
                }
                match rng.below(6) {
                    0 if !order.is_empty() => order.push(order[0]),
                    1 if !order.is_empty() => {
                        order.pop();
                    }
                    2 => order.push(n.max(1) - 1),
                    _ => {}
                }
                step["settle_order"] = json!(order);
            }
            step
        }
    }
}

/// A step of a 1.3 script: often a `reason` (streamed or not, mostly right, sometimes with a broken
/// chunk, a delay over the limit, or chunks beside `redacted`) or a `usage` (sometimes with a cost
/// in a second currency), else any older step.
fn script_step_13(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0..=2 => {
            let mut chunks: Vec<String> = vec!["thin".into(), "king".into()];
            match rng.below(8) {
                0 => chunks.insert(1, String::new()),
                1 => {
                    chunks.pop();
                }
                2 => chunks.push("!".into()),
                3 => chunks = vec!["x".into(); 1001],
                _ => {}
            }
            let text = if chunks.len() > 1000 { "x".repeat(1001) } else { "thinking".to_owned() };
            let mut step = json!({"op": "reason", "text": text});
            if rng.chance(60) {
                step["chunks"] = json!(chunks);
            }
            if rng.chance(40) {
                step["chunk_delay_ms"] = rng.pick(&[json!(0), json!(250), json!(60000), json!(60001)]).clone();
            }
            if rng.chance(30) {
                step["redacted"] = json!(true);
            }
            if rng.chance(40) {
                step["encrypted"] = json!("EiQKIgoaZ2VtaW5pLTI=");
            }
            step
        }
        3..=5 => {
            let mut step = json!({"op": "usage", "input_tokens": rng.below(2000), "output_tokens": rng.below(500)});
            if rng.chance(40) {
                step["reasoning_tokens"] = json!(rng.below(300));
            }
            if rng.chance(60) {
                step["cost"] = json!({"amount": "0.0123", "currency": *rng.pick(&["USD", "USD", "USD", "EUR"])});
            }
            step
        }
        _ => script_step(rng),
    }
}

/// The language-neutral verdict of a refused script: the variant's name and its location; a refusal
/// inside a turn's retry is the refusal of the retry's steps, with `retry` set.
fn script_verdict(e: &ScriptError) -> Value {
    let (retry, e) = match e {
        ScriptError::InRetry { retry, error, .. } => (Some(*retry), error.as_ref()),
        other => (None, other),
    };
    let (kind, turn, step, ms, call, chunk) = match *e {
        ScriptError::EmptyBatch { turn, step } => ("EmptyBatch", turn, step, None, None, None),
        ScriptError::BadSettleOrder { turn, step } => ("BadSettleOrder", turn, step, None, None, None),
        ScriptError::DelayTooLong { turn, step, ms } => ("DelayTooLong", turn, step, Some(ms), None, None),
        ScriptError::StepAfterEnd { turn, step } => ("StepAfterEnd", turn, step, None, None, None),
        ScriptError::MissingComponentType { turn, step, call } => {
            ("MissingComponentType", turn, step, None, Some(call), None)
        }
        ScriptError::SchemaWithoutResponse { turn, step, call } => {
            ("SchemaWithoutResponse", turn, step, None, Some(call), None)
        }
        ScriptError::TooManyChunks { turn, step, .. } => ("TooManyChunks", turn, step, None, None, None),
        ScriptError::EmptyChunk { turn, step, chunk } => ("EmptyChunk", turn, step, None, None, Some(chunk)),
        ScriptError::ChunksDiffer { turn, step } => ("ChunksDiffer", turn, step, None, None, None),
        ScriptError::ChunksOfRedacted { turn, step } => ("ChunksOfRedacted", turn, step, None, None, None),
        ScriptError::MixedCurrencies { turn, step, .. } => ("MixedCurrencies", turn, step, None, None, None),
        // Sub-agent rules (since 1.3): the corpus's generator writes no `subagent` yet (the Python
        // rules do not know it), so these name the host's call and leave the nested location out.
        ScriptError::NotSubagentHost { turn, step, call } => ("NotSubagentHost", turn, step, None, Some(call), None),
        ScriptError::EndInSubagent { turn, step } => ("EndInSubagent", turn, step, None, None, None),
        ScriptError::SubagentTooDeep { turn, step, call } => ("SubagentTooDeep", turn, step, None, Some(call), None),
        ScriptError::UnknownThread { turn, step, call, .. } => ("UnknownThread", turn, step, None, Some(call), None),
        ScriptError::ThreadReused { turn, step, call, .. } => ("ThreadReused", turn, step, None, Some(call), None),
        ScriptError::ReturnedNotCompleted { turn, step, call } => {
            ("ReturnedNotCompleted", turn, step, None, Some(call), None)
        }
        ScriptError::InSubagent { turn, step, call, .. } => ("InSubagent", turn, step, None, Some(call), None),
        ScriptError::InRetry { .. } => unreachable!("a retry's steps hold no retries"),
    };
    let mut verdict = json!({"valid": false, "kind": kind, "turn": turn, "step": step, "ms": ms, "call": call});
    if let Some(chunk) = chunk {
        verdict["chunk"] = json!(chunk);
    }
    if let Some(retry) = retry {
        verdict["retry"] = json!(retry);
    }
    verdict
}

fn scripts(validator: &FrameValidator) -> String {
    let mut out = scripts_drawn(validator, Rng(0xD1B5_4A32_D192_ED03), SCRIPT_COUNT, script_step);
    // Since 1.3: scripts that reason and report usage, from a seed of their own.
    out.push_str(&scripts_drawn(validator, Rng(0x9E37_79B9_7F4A_7C15), SCRIPT_COUNT_13, script_step_13));
    out
}

/// `count` schema-valid scripts whose steps `step` draws, each with the verdict of `AgentScript::validate`.
fn scripts_drawn(validator: &FrameValidator, mut rng: Rng, count: usize, step: fn(&mut Rng) -> Value) -> String {
    let mut out = String::new();
    let mut written = 0;
    while written < count {
        let turns: Vec<Value> = (0..1 + rng.below(3))
            .map(|_| {
                let mut turn = json!({"steps": (0..rng.below(5)).map(|_| step(&mut rng)).collect::<Vec<_>>()});
                if rng.chance(25) {
                    let retries: Vec<Value> = (0..1 + rng.below(2))
                        .map(|_| json!({"steps": (0..rng.below(3)).map(|_| step(&mut rng)).collect::<Vec<_>>()}))
                        .collect();
                    turn["retries"] = json!(retries);
                }
                turn
            })
            .collect();
        let script = json!({"turns": turns});
        // Only scripts that fit agent-script.json reach AgentScript::validate (SCRIPT-002).
        let hello = json!({"type": "session.hello", "id": "h-1", "versions": ["1.1"], "script": script});
        if validator.check(Direction::ClientToServer, &hello).is_err() {
            continue;
        }
        let ClientFrame::Hello(hello) = serde_json::from_value(hello).expect("a schema-valid hello deserializes")
        else {
            unreachable!("a session.hello")
        };
        let parsed: AgentScript = hello.script.expect("the script is present");
        let verdict = match parsed.validate() {
            Ok(()) => json!({"valid": true}),
            Err(e) => script_verdict(&e),
        };
        out.push_str(&serde_json::to_string(&json!({"script": script, "verdict": verdict})).expect("serializes"));
        out.push('\n');
        written += 1;
    }
    out
}

fn check_or_update(rel: &str, generated: &str) {
    let path = repo_path(rel);
    if std::env::var_os(UPDATE_ENV).is_some() {
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create the corpus directory");
        std::fs::write(&path, generated).expect("write the corpus");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{rel} differs from what this test generates; after a deliberate change run \
         {UPDATE_ENV}=1 cargo test -p chatwire-schema --test shared_corpora and review the diff"
    );
}

#[test]
fn reducer_trace_corpus_is_what_the_rust_reducer_says() {
    let validator = FrameValidator::new();
    let generated = traces(&validator);
    // The corpus must exercise both outcomes and every refusal, or agreeing on it proves little.
    let mut refusals = std::collections::BTreeSet::new();
    let mut applied = 0;
    for line in generated.lines() {
        let trace: Value = serde_json::from_str(line).expect("a trace parses");
        for step in trace["steps"].as_array().expect("steps") {
            match step["refused"]["requirement"].as_str() {
                Some(id) => {
                    refusals.insert(id.to_owned());
                }
                None => applied += 1,
            }
        }
    }
    // The refusal rules of spec/ui-state.md: STATE-015 (the output id), STATE-020 to STATE-035,
    // STATE-045 to STATE-051 and, since 1.3, STATE-058 to STATE-063.
    let every: std::collections::BTreeSet<String> = std::iter::once("STATE-015".to_owned())
        .chain((20..=35).chain(45..=51).chain(58..=63).map(|n| format!("STATE-0{n}")))
        .collect();
    let missing: Vec<_> = every.difference(&refusals).collect();
    assert!(missing.is_empty(), "the trace corpus never exercises {missing:?}");
    assert!(applied > (TRACE_COUNT + TRACE_COUNT_13) * TRACE_LEN / 4, "only {applied} events were applied");
    // The 1.3 traces hold reasoning items and usage sums, or agreeing on them proves little.
    let finals_13: Vec<Value> = generated
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a trace parses"))
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("reasoning-usage-")))
        .map(|t| t["final"].clone())
        .collect();
    let reasoning = finals_13.iter().filter(|f| f["items"].to_string().contains("\"kind\":\"reasoning\"")).count();
    let usage = finals_13.iter().filter(|f| f.get("usage").is_some()).count();
    assert!(
        reasoning > TRACE_COUNT_13 / 4 && usage > TRACE_COUNT_13 / 4,
        "{reasoning} traces reason, {usage} report usage"
    );
    check_or_update(TRACES, &generated);
}

/// The view of a connection without `assistant_stream` (`spec/streaming.md`): on every trace of the
/// corpus, the committed events folded without their deltas give the state without its open
/// stream, after every prefix.
#[test]
fn on_the_trace_corpus_the_fold_without_deltas_is_the_state_without_its_open_stream() {
    let generated = traces(&FrameValidator::new());
    let (mut streams, mut cut_mid_stream) = (0, 0);
    for line in generated.lines() {
        let trace: Value = serde_json::from_str(line).expect("a trace parses");
        let committed: Vec<ServerFrame> = trace["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter(|step| step["refused"].is_null())
            .map(|step| serde_json::from_value(step["event"].clone()).expect("an event"))
            .collect();
        let mut full = UiState::default();
        let mut plain = UiState::default();
        for frame in &committed {
            let event = frame.ui_event().expect("an event");
            full.apply(event).expect("a committed event applies");
            if event.is_stream_delta() {
                streams += 1;
            } else {
                plain.apply(event).expect("the view accepts every event but the deltas");
            }
            assert_eq!(plain, full.without_open_stream(), "{}: after {}", trace["name"], frame.type_name());
            cut_mid_stream += usize::from(full.open_stream().is_some());
        }
    }
    assert!(streams > 100 && cut_mid_stream > 100, "{streams} deltas, {cut_mid_stream} prefixes mid-stream");
}

#[test]
fn agent_script_corpus_is_what_agent_script_validate_says() {
    let validator = FrameValidator::new();
    let generated = scripts(&validator);
    let kinds: std::collections::BTreeSet<String> = generated
        .lines()
        .map(|l| {
            let case: Value = serde_json::from_str(l).expect("a case parses");
            case["verdict"]["kind"].as_str().unwrap_or("valid").to_owned()
        })
        .collect();
    for kind in [
        "valid",
        "EmptyBatch",
        "BadSettleOrder",
        "DelayTooLong",
        "StepAfterEnd",
        "MissingComponentType",
        "SchemaWithoutResponse",
        "TooManyChunks",
        "EmptyChunk",
        "ChunksDiffer",
        "ChunksOfRedacted",
        "MixedCurrencies",
    ] {
        assert!(kinds.contains(kind), "the script corpus has no case of {kind}");
    }
    assert!(generated.contains("\"retry\":"), "the script corpus has no refusal inside a retry");
    check_or_update(SCRIPTS, &generated);
}

/// The state-patch corpus, one line per reducer trace: the `ui_state_patch` payload of each of its
/// committed events (`UiState::apply_with_patch`) from `initial` to `final`; the catch-up patch
/// (`state_patch::catch_up`) from the state after the first half of them; and, where that patch
/// has a guard and its base an item, the op at which json-patch stops it on the base with its first
/// item removed (a wrong base). Another RFC 6902 implementation proves itself on it (tools/npm).
fn patches(traces: &str) -> String {
    use chatwire_schema::state_patch::catch_up;
    let mut out = String::new();
    for line in traces.lines() {
        let trace: Value = serde_json::from_str(line).expect("a trace parses");
        let initial: UiState = serde_json::from_value(trace["initial"].clone()).expect("initial state");
        let committed: Vec<ServerFrame> = trace["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter(|step| step["refused"].is_null())
            .map(|step| serde_json::from_value(step["event"].clone()).expect("an event"))
            .collect();
        let events: Vec<_> = committed.iter().map(|f| f.ui_event().expect("a UI event")).collect();
        let mut state = initial.clone();
        let mut steps = Vec::new();
        let mut base = None;
        let from = events.len() / 2;
        for (n, &event) in events.iter().enumerate() {
            if n == from {
                base = Some(state.clone());
            }
            steps.push(state.apply_with_patch(event).expect("a committed event applies"));
        }
        let base = base.unwrap_or_else(|| state.clone());
        let (caught_up, patch) = catch_up(&base, events[from..].iter().copied()).expect("committed events apply");
        assert_eq!(caught_up, state, "{}: the catch-up reaches the final state", trace["name"]);
        let guarded = patch.iter().any(|op| matches!(op, chatwire_schema::state_patch::PatchOp::Test { .. }));
        let wrong_base = if guarded && !base.items.is_empty() {
            let mut shifted = serde_json::to_value(&base).expect("serializes");
            shifted["items"].as_array_mut().expect("items").remove(0);
            let ops: Vec<json_patch::PatchOperation> =
                serde_json::from_value(serde_json::to_value(&patch).expect("serializes")).expect("RFC 6902");
            let error = json_patch::patch(&mut shifted, &ops).expect_err("a guarded patch fails on a wrong base");
            let kind = match error.kind {
                json_patch::PatchErrorKind::TestFailed => "test_failed",
                _ => "no_target",
            };
            json!({"fails_at": error.operation, "kind": kind})
        } else {
            Value::Null
        };
        let line = json!({
            "name": trace["name"],
            "initial": initial,
            "patches": steps,
            "final": state,
            "catch_up": {"from": from, "patch": patch},
            "wrong_base": wrong_base,
        });
        out.push_str(&serde_json::to_string(&line).expect("serializes"));
        out.push('\n');
    }
    out
}

#[test]
fn state_patch_corpus_is_what_the_patch_builder_says() {
    let generated = patches(&traces(&FrameValidator::new()));
    let wrong_bases = generated.lines().filter(|l| !l.ends_with("\"wrong_base\":null}")).count();
    assert!(wrong_bases > TRACE_COUNT / 2, "only {wrong_bases} traces have a wrong-base case");
    check_or_update(PATCHES, &generated);
}

#[test]
fn protocol_facts_are_the_crates_constants() {
    // Written by `chatwire-schema-tool export` alone (one export path); read here so that this
    // crate's own tests catch a fact changed without an export.
    let generated = chatwire_schema::protocol_facts::document_text();
    let parsed: Value = serde_json::from_str(&generated).expect("facts parse");
    assert_eq!(parsed["close_codes"]["session_taken_over"], json!(4001));
    assert_eq!(parsed["error_codes"].as_array().map(Vec::len), Some(chatwire_schema::ErrorCode::ALL.len()));
    let committed = std::fs::read_to_string(repo_path(FACTS)).unwrap_or_default();
    assert!(
        committed == generated,
        "{FACTS} differs from chatwire_schema::protocol_facts; run `cargo run -p chatwire-schema-tool -- export`"
    );
}
