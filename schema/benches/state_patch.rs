//! What one event costs a server with `ui_state_patch` (1.1) against `ui_state_updated` (1.0),
//! at 100 and at 10,000 display items: bytes on the wire and time per event; and what a resume
//! after 10 missed events costs with a catch-up patch (`resume_catch_up`) against a snapshot.
//!
//! Goals (issue #10): at 10,000 items a patch frame is at most 1/1000 of the full update's bytes,
//! the server's time per event at 10,000 items is at most twice that at 100 items, and the
//! catch-up after 10 missed events is at most 1/100 of the snapshot's bytes.
//! Two events: `say` (an assistant message appended) and `settle` (a running tool call completed);
//! the times also cover `ask` (a user message, a new turn: its checks look for open tool calls).
//! The time covers what a server does per event on the state it holds (an [`IndexedUiState`]):
//! reduce, build the frame, serialize it. Each event is timed alone, ten in a row on a fresh copy
//! of the session (ten distinct messages appended; ten running calls settled), the copy made,
//! warmed up by one event of the same kind and dropped outside the timing ([`time_per_event`]).
//! The copy has room for the new items, as a live session's vector has on average (a fresh clone
//! has none, and its one reallocation would be timed as if every push copied the whole vector).
//! `patch_unindexed` times the same patches on a plain `UiState`, whose id checks (`STATE-020`)
//! scan every item: what the index saves.
//!
//! Run: `cargo bench -p chatwire-schema --bench state_patch -- --warm-up-time 1 --measurement-time 3`.
//! The byte figures are printed first, then criterion's times; a time ratio is the quotient of two
//! mean estimates of the same run, `target/criterion/per_event/patch_say_10000/new/estimates.json`
//! over `.../patch_say_100/...` (`mean.point_estimate`).

use chatwire_schema::state_patch::{self, PatchOp};
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::ui_state_snapshot::UiStateSnapshot;
use chatwire_schema::{IndexedUiState, ServerFrame, UiEvent, UiState, UiStateVersion};
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

const TS: &str = "2026-11-22T10:00:00Z";
const SIZES: [usize; 2] = [100, 10_000];

fn frame(v: Value) -> ServerFrame {
    serde_json::from_value(v).expect("a bench frame is valid")
}

/// A session of about `n` display items: finished turns of a question and a two-paragraph answer,
/// then a running turn whose last items are `running` running tool calls, the last one `tc-last`
/// (the others `tc-run-0`, …).
fn session(n: usize, running: usize) -> UiState {
    let mut state = UiState::default();
    let mut apply =
        |f: ServerFrame| state.apply(f.ui_event().expect("a UI event")).expect("the bench session is valid");
    let answer = "Here is what I found in the logs: the build fails at the link step because the \
                  target directory filled the disk.\n\nDelete old test executables and retry.";
    for t in 0..(n - 2 - running) / 2 {
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
    for call in 0..running {
        let id = if call + 1 == running { "tc-last".to_owned() } else { format!("tc-run-{call}") };
        apply(frame(json!({"type": "chat.tool_call", "seq": 1, "invocation_id": "inv-last", "tool_call_id": id,
            "tool_name": "run_shell_command", "interaction_type": "auto_tool", "awaiting_response": false,
            "display": "inline", "payload": {"command": "cargo test", "timeout_ms": 120000}, "call_index": call,
            "ts": TS})));
    }
    state
}

/// [`session`] with its last turn completed and no tool call: a new turn may start.
fn finished_session(n: usize) -> UiState {
    let mut state = session(n, 0);
    let end = frame(
        json!({"type": "chat.run_complete", "seq": 1, "invocation_id": "inv-last", "status": "completed", "ts": TS}),
    );
    state.apply(end.ui_event().expect("a UI event")).expect("the last turn ends");
    state
}

/// Events in a row for the time per event: `say` appends distinct messages, `settle` completes
/// the running calls of `session(n, BURST + 1)` one after the other, `ask` appends user messages
/// (new turns) to [`finished_session`]. The first one warms the copy
/// up and is not timed (see [`time_per_event`]).
const BURST: usize = 10;

fn burst(name: &str) -> Vec<ServerFrame> {
    (0..=BURST)
        .map(|k| match name {
            "say" => frame(json!({"type": "chat.assistant_message", "seq": 9, "invocation_id": "inv-last",
                "item_id": format!("a-new-{k}"), "markdown": "All 216 tests pass; the flaky one was a timeout.", "ts": TS})),
            "ask" => frame(json!({"type": "chat.user_message_accepted", "seq": 9, "in_reply_to": format!("m-new-{k}"),
                "invocation_id": format!("inv-new-{k}"), "item_id": format!("u-new-{k}"), "text": "and now?", "ts": TS})),
            _ => {
                let id = if k == BURST { "tc-last".to_owned() } else { format!("tc-run-{k}") };
                frame(json!({"type": "chat.tool_call_complete", "seq": 9, "tool_call_id": id, "status": "completed",
                    "result": {"exit_code": 0, "passed": 216}, "summary": "216 passed", "ts": TS}))
            }
        })
        .collect()
}

/// The time `iters` events take a server, each timed alone: bursts of [`BURST`] events in a row on
/// a fresh copy of `base`, made, warmed up and dropped outside the timing. The warm-up is the
/// burst's first event: the first writes into a fresh copy of a 10,000-item state fault in the
/// memory the copy just took from the system (microseconds, a cost of the copy that a live
/// session, which is never copied per event, does not pay).
fn time_per_event<S>(
    held: impl Fn() -> S,
    events: &[ServerFrame],
    iters: u64,
    send: fn(&mut S, &ServerFrame) -> String,
) -> Duration {
    let (warm_up, timed) = events.split_first().expect("a burst has events");
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let mut state = held();
        black_box(send(&mut state, warm_up));
        for event in timed.iter().take(usize::try_from(iters - done).unwrap_or(usize::MAX)) {
            let start = Instant::now();
            black_box(send(&mut state, event));
            total += start.elapsed();
            done += 1;
        }
    }
    total
}

/// One event of each kind, for the bytes on the wire.
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
fn patch_frame(state: &mut IndexedUiState, event: &ServerFrame) -> String {
    serialized_patch(state.apply_with_patch(event.ui_event().expect("a UI event")).expect("valid"))
}

/// [`patch_frame`] on a plain [`UiState`], without the id index.
fn patch_frame_unindexed(state: &mut UiState, event: &ServerFrame) -> String {
    serialized_patch(state.apply_with_patch(event.ui_event().expect("a UI event")).expect("valid"))
}

fn serialized_patch(patch: Vec<PatchOp>) -> String {
    let frame = UiStatePatch { seq: 10, base_seq: 9, v: UiStateVersion::V1, patch };
    serde_json::to_string(&ServerFrame::UiStatePatch(frame)).expect("serializes")
}

/// What a 1.0 server sends for the event: the whole state, serialized.
fn full_frame(state: &mut IndexedUiState, event: &ServerFrame) -> String {
    state.apply(event.ui_event().expect("a UI event")).expect("valid");
    serde_json::to_string(&json!({"type": "ui_state_updated", "seq": 10, "v": "ui_state_v1", "state": state.state()}))
        .expect("serializes")
}

/// [`held`] without the index.
fn unindexed(base: &UiState) -> UiState {
    let mut state = base.clone();
    state.items.reserve(BURST + 1);
    state
}

/// The state a server holds for the session: indexed, with room for appended items (see above).
fn held(base: &UiState) -> IndexedUiState {
    IndexedUiState::new(unindexed(base))
}

fn bytes_report(sessions: &[(usize, UiState)]) {
    println!("bytes on the wire per event (patch frame / full ui_state_updated):");
    for (n, base) in sessions {
        for (name, event) in events() {
            let patch = patch_frame(&mut held(base), &event).len();
            let full = full_frame(&mut held(base), &event).len();
            println!(
                "  {n:>6} items  {name:<6}  patch {patch:>5} B  full {full:>9} B  patch/full = 1/{:.0}",
                full as f64 / patch as f64
            );
        }
    }
}

/// The 10 events a client misses while away from a running turn whose last item is a running
/// call (`tc-last`): its output and progress, its settlement, a second call run to completion,
/// an answer, and the run's end.
fn missed_events() -> Vec<ServerFrame> {
    [
        json!({"type": "chat.tool_output", "seq": 20, "tool_call_id": "tc-last", "command": "cargo test",
            "stdout": "running 216 tests\n", "ts": TS}),
        json!({"type": "chat.tool_progress", "seq": 21, "tool_call_id": "tc-last", "message": "108/216",
            "fraction": 0.5, "ts": TS}),
        json!({"type": "chat.tool_output", "seq": 22, "tool_call_id": "tc-last",
            "stdout": "test result: ok. 216 passed\n", "exit_code": 0, "ts": TS}),
        json!({"type": "chat.tool_call_complete", "seq": 23, "tool_call_id": "tc-last", "status": "completed",
            "result": {"exit_code": 0, "passed": 216}, "summary": "216 passed", "ts": TS}),
        json!({"type": "chat.assistant_message", "seq": 24, "invocation_id": "inv-last", "item_id": "a-mid",
            "markdown": "All tests pass. Checking formatting.", "ts": TS}),
        json!({"type": "chat.tool_call", "seq": 25, "invocation_id": "inv-last", "tool_call_id": "tc-fmt",
            "tool_name": "run_shell_command", "interaction_type": "auto_tool", "awaiting_response": false,
            "display": "inline", "payload": {"command": "cargo fmt --check"}, "call_index": 1, "ts": TS}),
        json!({"type": "chat.tool_output", "seq": 26, "tool_call_id": "tc-fmt", "command": "cargo fmt --check",
            "exit_code": 0, "ts": TS}),
        json!({"type": "chat.tool_call_complete", "seq": 27, "tool_call_id": "tc-fmt", "status": "completed",
            "result": {"exit_code": 0}, "summary": "formatted", "ts": TS}),
        json!({"type": "chat.assistant_message", "seq": 28, "invocation_id": "inv-last", "item_id": "a-end",
            "markdown": "Tests pass and the code is formatted.", "ts": TS}),
        json!({"type": "chat.run_complete", "seq": 29, "invocation_id": "inv-last", "status": "completed", "ts": TS}),
    ]
    .into_iter()
    .map(frame)
    .collect()
}

/// What a 1.1 server sends right after the welcome of a catch-up resume: one patch from the
/// state of `last_seq` (19) to now.
fn catch_up_frame(base: &UiState, missed: &[ServerFrame]) -> String {
    let (_, patch) = state_patch::catch_up(base, missed.iter().map(ui_event)).expect("the missed events apply");
    let frame = UiStatePatch { seq: 30, base_seq: 19, v: UiStateVersion::V1, patch };
    serde_json::to_string(&ServerFrame::UiStatePatch(frame)).expect("serializes")
}

/// What it sends in its place without the feature, or past the retention: the snapshot.
fn snapshot_frame(base: &UiState, missed: &[ServerFrame]) -> String {
    let state = chatwire_schema::reduce_all(base, missed.iter().map(ui_event)).expect("the missed events apply");
    let frame = UiStateSnapshot { seq: 30, v: UiStateVersion::V1, state, window: None };
    serde_json::to_string(&ServerFrame::UiStateSnapshot(frame)).expect("serializes")
}

fn ui_event(frame: &ServerFrame) -> UiEvent<'_> {
    frame.ui_event().expect("a UI event")
}

fn catch_up_report(sessions: &[(usize, UiState)], missed: &[ServerFrame]) {
    println!("bytes on the wire for a resume after {} missed events (catch-up patch / snapshot):", missed.len());
    for (n, base) in sessions {
        let patch = catch_up_frame(base, missed).len();
        let snapshot = snapshot_frame(base, missed).len();
        println!(
            "  {n:>6} items  catch-up {patch:>5} B  snapshot {snapshot:>9} B  catch-up/snapshot = 1/{:.0}",
            snapshot as f64 / patch as f64
        );
    }
}

fn per_event(c: &mut Criterion) {
    let sessions: Vec<(usize, UiState)> = SIZES.iter().map(|&n| (n, session(n, 1))).collect();
    for (n, s) in &sessions {
        assert!(s.items.len().abs_diff(*n) <= 2, "session of {} items for {n}", s.items.len());
    }
    bytes_report(&sessions);
    let missed = missed_events();
    catch_up_report(&sessions, &missed);
    let mut group = c.benchmark_group("per_event");
    group.sample_size(30);
    for &n in &SIZES {
        let running = session(n, BURST + 1);
        let finished = finished_session(n);
        for name in ["say", "settle", "ask"] {
            let base = if name == "ask" { &finished } else { &running };
            let events = burst(name);
            group.bench_function(format!("patch/{name}/{n}"), |b| {
                b.iter_custom(|iters| time_per_event(|| held(base), &events, iters, patch_frame))
            });
            group.bench_function(format!("full/{name}/{n}"), |b| {
                b.iter_custom(|iters| time_per_event(|| held(base), &events, iters, full_frame))
            });
            // The same patch built on the plain state, whose id checks (STATE-020) scan every item:
            // what the index saves.
            group.bench_function(format!("patch_unindexed/{name}/{n}"), |b| {
                b.iter_custom(|iters| time_per_event(|| unindexed(base), &events, iters, patch_frame_unindexed))
            });
        }
    }
    group.finish();
    let mut group = c.benchmark_group("resume");
    group.sample_size(30);
    for (n, base) in &sessions {
        group.bench_function(format!("catch_up/{}_missed/{n}", missed.len()), |b| {
            b.iter(|| black_box(catch_up_frame(base, &missed)))
        });
        group.bench_function(format!("snapshot/{}_missed/{n}", missed.len()), |b| {
            b.iter(|| black_box(snapshot_frame(base, &missed)))
        });
    }
    group.finish();
}

criterion_group!(benches, per_event);
criterion_main!(benches);
