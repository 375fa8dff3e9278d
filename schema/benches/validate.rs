//! Cost of frame validation relative to JSON parsing, on a typical `chat.tool_call` frame.
//!
//! Goal: `FrameValidator::check` costs at most twice a plain `serde_json` parse of the same frame.
//! Run: `cargo bench -p chatwire-schema --bench validate -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use chatwire_schema::{Direction, FrameValidator, ServerFrame};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;
use serde_json::Value;

/// A `chat.tool_call` as a backend sends it: an auto tool with a nested, realistic payload (about 620 bytes).
const TOOL_CALL_FRAME: &str = r#"{"type":"chat.tool_call","seq":4711,"invocation_id":"inv-01JD3X9T7K5QZ8M2N4P6R8S0VW","tool_call_id":"toolu_01A9xKq3R7mZpT2vBn8LcD4e","corr":"toolu_01A9xKq3R7mZpT2vBn8LcD4e","tool_name":"run_shell_command","interaction_type":"auto_tool","awaiting_response":false,"display":"inline","payload":{"command":"cargo test -p chatwire-schema --test reducer_props","cwd":"/work/main","env":{"RUST_BACKTRACE":"1","CARGO_TERM_COLOR":"never"},"timeout_ms":120000,"shell":"bash","args":["-lc","cargo test"],"sandbox":{"network":false,"writable_paths":["/work/targets/reducer","/tmp"]}},"call_index":0,"ts":"2026-11-22T10:15:42.123Z"}"#;

fn tool_call_frame(c: &mut Criterion) {
    // Compiling the schemas is a one-off cost paid at startup, so it stays out of the timing loops.
    let validator = FrameValidator::new();
    let parsed: Value = serde_json::from_str(TOOL_CALL_FRAME).expect("the bench frame is JSON");
    assert_eq!(validator.check(Direction::ServerToClient, &parsed), Ok("chat.tool_call"), "bench frame must be valid");
    assert!(matches!(validator.parse_server(TOOL_CALL_FRAME), Ok(ServerFrame::ToolCall(_))));
    // Guard against timing a validator that accepts anything.
    let mut broken = parsed.clone();
    broken["display"] = Value::from("nowhere");
    assert!(validator.check(Direction::ServerToClient, &broken).is_err(), "a bad display mode must be rejected");

    let mut group = c.benchmark_group("tool_call_frame");
    group.throughput(Throughput::Bytes(TOOL_CALL_FRAME.len() as u64));
    group.bench_function("parse_value", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(TOOL_CALL_FRAME)).expect("valid JSON"))
    });
    group.bench_function("check", |b| {
        b.iter(|| validator.check(Direction::ServerToClient, black_box(&parsed)).expect("valid frame"))
    });
    group.bench_function("parse_server", |b| {
        b.iter(|| validator.parse_server(black_box(TOOL_CALL_FRAME)).expect("valid frame"))
    });
    // Attribution only: the deserialize step of `parse_server`, from the parsed Value, without cloning it.
    group.bench_function("deserialize_from_value", |b| {
        b.iter(|| ServerFrame::deserialize(black_box(&parsed)).expect("valid frame"))
    });
    group.bench_function("typed_parse", |b| {
        b.iter(|| serde_json::from_str::<ServerFrame>(black_box(TOOL_CALL_FRAME)).expect("valid frame"))
    });
    group.finish();
}

criterion_group!(benches, tool_call_frame);
criterion_main!(benches);
