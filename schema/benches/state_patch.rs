//! What one event costs a server with `ui_state_patch` (1.1) against `ui_state_updated` (1.0),
//! at 100 and at 10,000 display items: bytes on the wire and time per event.
//!
//! Goals (issue #10): at 10,000 items a patch frame is at most 1/1000 of the full update's bytes,
//! and the server's time per event at 10,000 items is at most twice that at 100 items.
//! Two events: `say` (an assistant message appended) and `settle` (a running tool call completed).
//! The time covers what a server does per event: reduce, build the frame, serialize it (the
//! session's copy is made and dropped outside the timing, `iter_batched_ref`).
//!
//! Run: `cargo bench -p chatwire-schema --bench state_patch -- --warm-up-time 1 --measurement-time 3`.
//! The byte figures are printed first; the times are criterion's.

use std::hint::black_box;

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{ServerFrame, UiState};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::{json, Value};

const TS: &str = "2026-11-22T10:00:00Z";
const SIZES: [usize; 2] = [100, 10_000];

fn frame(v: Value) -> ServerFrame {
    serde_json::from_value(v).expect("a bench frame is valid")
}

/// A session of `n` display items: finished turns of a question and a two-paragraph answer, then
/// a running turn whose last item is a running tool call.
fn session(n: usize) -> UiState {
    let mut state = UiState::default();
    let mut apply =
        |f: ServerFrame| state.apply(f.ui_event().expect("a UI event")).expect("the bench session is valid");
    let answer = "Here is what I found in the logs: the build fails at the link step because the \
                  target directory filled the disk.\n\nDelete old test executables and retry.";
    for t in 0..(n - 3) / 2 {
        let inv = format!("inv-{t:05}");
        apply(frame(json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": format!("m-{t}"),
            "invocation_id": inv, "item_id": format!("u-{t:05}"), "text": format!("question {t}: why does the build fail?"), "ts": TS})));
        apply(frame(json!({"type": "chat.run_started", "seq": 1, "invocation_id": inv, "ts": TS})));
        apply(frame(json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv,
            "item_id": format!("a-{t:05}"), "markdown": answer, "ts": TS})));
        apply(frame(
            json!({"type": "chat.run_complete", "seq": 1, "invocation_id": inv, "status": "completed", "ts": TS}),
        ));
    }
    apply(frame(json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": "m-last",
        "invocation_id": "inv-last", "item_id": "u-last", "text": "run the tests", "ts": TS})));
    apply(frame(json!({"type": "chat.run_started", "seq": 1, "invocation_id": "inv-last", "ts": TS})));
    apply(frame(json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": "inv-last",
        "item_id": "a-last", "markdown": "Running them now.", "ts": TS})));
    apply(frame(json!({"type": "chat.tool_call", "seq": 1, "invocation_id": "inv-last", "tool_call_id": "tc-last",
        "tool_name": "run_shell_command", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline",
        "payload": {"command": "cargo test", "timeout_ms": 120000}, "call_index": 0, "ts": TS})));
    state
}

fn events() -> [(&'static str, ServerFrame); 2] {
    [
        (
            "say",
            frame(json!({"type": "chat.assistant_message", "seq": 9, "invocation_id": "inv-last", "item_id": "a-new",
                "markdown": "All 216 tests pass; the flaky one was a timeout in the resume sweep.", "ts": TS})),
        ),
        (
            "settle",
            frame(
                json!({"type": "chat.tool_call_complete", "seq": 9, "tool_call_id": "tc-last", "status": "completed",
                "result": {"exit_code": 0, "passed": 216}, "summary": "216 passed", "ts": TS}),
            ),
        ),
    ]
}

/// What a 1.1 server sends for the event: the patch frame, serialized.
fn patch_frame(state: &mut UiState, event: &ServerFrame) -> String {
    let ops: Vec<PatchOp> = state.apply_with_patch(event.ui_event().expect("a UI event")).expect("valid");
    serde_json::to_string(
        &json!({"type": "ui_state_patch", "seq": 10, "base_seq": 9, "v": "ui_state_v1", "patch": ops}),
    )
    .expect("serializes")
}

/// What a 1.0 server sends for the event: the whole state, serialized.
fn full_frame(state: &mut UiState, event: &ServerFrame) -> String {
    state.apply(event.ui_event().expect("a UI event")).expect("valid");
    serde_json::to_string(&json!({"type": "ui_state_updated", "seq": 10, "v": "ui_state_v1", "state": state}))
        .expect("serializes")
}

fn bytes_report(sessions: &[(usize, UiState)]) {
    println!("bytes on the wire per event (patch frame / full ui_state_updated):");
    for (n, base) in sessions {
        for (name, event) in events() {
            let patch = patch_frame(&mut base.clone(), &event).len();
            let full = full_frame(&mut base.clone(), &event).len();
            println!(
                "  {n:>6} items  {name:<6}  patch {patch:>5} B  full {full:>9} B  patch/full = 1/{:.0}",
                full as f64 / patch as f64
            );
        }
    }
}

fn per_event(c: &mut Criterion) {
    let sessions: Vec<(usize, UiState)> = SIZES.iter().map(|&n| (n, session(n))).collect();
    for (n, s) in &sessions {
        assert!(s.items.len().abs_diff(*n) <= 2, "session of {} items for {n}", s.items.len());
    }
    bytes_report(&sessions);
    let mut group = c.benchmark_group("per_event");
    group.sample_size(30);
    for (n, base) in &sessions {
        for (name, event) in events() {
            group.bench_function(format!("patch/{name}/{n}"), |b| {
                b.iter_batched_ref(|| base.clone(), |s| black_box(patch_frame(s, &event)), BatchSize::LargeInput)
            });
            group.bench_function(format!("full/{name}/{n}"), |b| {
                b.iter_batched_ref(|| base.clone(), |s| black_box(full_frame(s, &event)), BatchSize::LargeInput)
            });
        }
    }
    group.finish();
}

criterion_group!(benches, per_event);
criterion_main!(benches);
