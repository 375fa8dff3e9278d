//! A streamed say for the tests: its chunks, and a session that has just received its first delta.

use chatwire_schema::{DisplayItem, ServerFrame, UiState};
use serde_json::{json, Value};

use super::v11::open;
use super::{Client, TestServer};

/// The pause between two chunks of the mid-stream tests' say.
pub const STREAM_GAP_MS: u64 = 1500;

pub const CHUNKS: [&str; 3] = ["Hello, ", "streamed ", "world."];

/// One turn streaming [`CHUNKS`] with `gap_ms` between them, then saying "after".
pub fn stream_script(gap_ms: u64) -> Value {
    json!({"turns": [{"steps": [
        {"op": "say", "markdown": CHUNKS.concat(), "chunks": CHUNKS, "chunk_delay_ms": gap_ms},
        {"op": "say", "markdown": "after"}
    ]}]})
}

/// The texts of the assistant items of `state`, with whether each still streams.
pub fn assistant_texts(state: &UiState) -> Vec<(String, bool)> {
    state
        .items
        .iter()
        .filter_map(|i| match i {
            DisplayItem::AssistantMarkdown(m) => Some((m.markdown.clone(), m.streaming)),
            _ => None,
        })
        .collect()
}

/// The `delta` texts among `frames`.
pub fn deltas(frames: &[ServerFrame]) -> Vec<String> {
    frames
        .iter()
        .filter_map(|f| match f {
            ServerFrame::AssistantMessageDelta(d) => Some(d.delta.clone()),
            _ => None,
        })
        .collect()
}

/// Opens a streaming session, starts the turn and returns once the first delta is in.
pub async fn first_delta_in(server: &TestServer, strict: bool) -> Client {
    let mut a = Client::connect(&server.url).await;
    a.strict = strict;
    open(&mut a, &["1.1"], None, stream_script(STREAM_GAP_MS)).await;
    a.user_message("m1", "go").await;
    a.recv_until(|f| matches!(f, ServerFrame::AssistantMessageDelta(_))).await;
    assert_eq!(assistant_texts(&a.fold), [(CHUNKS[0].to_owned(), true)]);
    a
}
