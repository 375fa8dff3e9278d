//! A client that stops reading while its session produces large states (TRANSPORT-016).

use std::time::Duration;

use chatwire_reference::{DbLocation, ServeConfig};
use serde_json::{json, Value};

use super::{Client, TestServer};

/// Steps of the turn, each saying this many characters: the state grows to ~300 KB, and on a
/// 1.0 connection every step is followed by the whole state, ~30 MB in all, more than loopback
/// socket buffers hold.
pub const SAYS: usize = 200;
pub const SAY_CHARS: usize = 1500;
/// Every frame of the turn on a 1.0 connection: accepted, run_started, the says, run_complete,
/// each followed by its `ui_state_updated`.
pub const EVERY_FRAME: usize = 2 * (SAYS + 3);

/// A conformance server with a 64 KiB send queue, so a stalled client overflows it fast.
pub fn small_bound() -> ServeConfig {
    ServeConfig { send_queue_bytes: 64 * 1024, ..super::config(DbLocation::Memory) }
}

/// One turn of `SAYS` long messages, each starting with its number (`0000 …`).
pub fn large_state_script(says: usize, chars: usize) -> Value {
    let steps: Vec<Value> =
        (0..says).map(|k| json!({"op": "say", "markdown": format!("{k:04} {}", "x".repeat(chars))})).collect();
    json!({"turns": [{"steps": steps}]})
}

/// A 1.0 client (whole-state updates) that opened a session with the large script and sent the
/// message that starts it, and now does not read.
pub async fn stalled_client(server: &TestServer) -> Client {
    let mut c = Client::connect(&server.url).await;
    c.keep_states = false;
    c.hello(Some(large_state_script(SAYS, SAY_CHARS))).await;
    c.user_message("m1", "go").await;
    c
}

/// Reads until the server closes or `quiet` passes without a frame; returns the frames read.
pub async fn drain(c: &mut Client, quiet: Duration) -> usize {
    let mut frames = 0;
    while c.try_recv(quiet).await.is_some() {
        frames += 1;
    }
    frames
}
