//! What both benches share: one scripted turn of N `say` items, driven by the runner or by a bare
//! tokio-tungstenite client that reads the same frames unchecked, and the clocks that time them.
#![allow(dead_code)] // each bench uses a different part

use std::time::Duration;

use chatwire_conformance::driver::default_versions;
use chatwire_conformance::scenario::{Scenario, ScenarioLoader};
use chatwire_schema::schema_gen::Direction;
use chatwire_schema::{FrameValidator, ServerFrame};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

/// A script of one turn that says `items` messages (each an event and its state frame).
pub fn script(items: usize) -> Value {
    let steps: Vec<Value> = (0..items).map(|i| json!({"op": "say", "markdown": format!("item {i}")})).collect();
    json!({"turns": [{"steps": steps}]})
}

/// The runner's side: connect, send the turn, read until the session is idle.
pub fn scenario(items: usize) -> Scenario {
    let text = json!({
        "id": format!("bench-{items}-items"),
        "title": "bench",
        "level": "must",
        "requirements": ["STATE-038"],
        "script": script(items),
        "steps": [
            {"do": "connect"},
            {"do": "user_message", "text": "go"},
            {"do": "expect", "frame": {"type": "chat.user_message_accepted"}},
            {"do": "expect", "frame": {"type": "ui_state_patch"}},
            {"do": "expect", "frame": {"type": "chat.run_started"}},
            {"do": "wait_idle", "quiet_ms": 0, "timeout_ms": 3600000}
        ]
    });
    ScenarioLoader::new().parse(&format!("bench-{items}-items.json"), &text.to_string()).expect("valid bench scenario")
}

/// The same exchange with no checks: every frame read and parsed as JSON, nothing else. Returns
/// the server frames read.
pub async fn bare(url: &str, items: usize) -> usize {
    client(url, items, None).await
}

/// The same exchange, every server frame also validated against its schema and read as a typed
/// frame: the least any observer that judges frames does, before any check.
pub async fn validating(url: &str, items: usize, validator: &FrameValidator) -> usize {
    client(url, items, Some(validator)).await
}

/// Reads a server frame as JSON and, with a validator, validates and types it.
fn read(text: &str, validator: Option<&FrameValidator>) -> Value {
    let v: Value = serde_json::from_str(text).expect("json");
    if let Some(validator) = validator {
        validator.check(Direction::ServerToClient, &v).expect("a valid frame");
        let _: ServerFrame = ServerFrame::deserialize(&v).expect("a typed frame");
    }
    v
}

async fn client(url: &str, items: usize, validator: Option<&FrameValidator>) -> usize {
    let mut request = url.into_client_request().expect("url");
    request.headers_mut().insert("Sec-WebSocket-Protocol", HeaderValue::from_static("chatwire.v1"));
    // The runner's transport settings: TCP_NODELAY on.
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(request, None, true).await.expect("connect");
    let hello = json!({"type": "session.hello", "id": "h1", "versions": default_versions(), "script": script(items)});
    ws.send(Message::text(hello.to_string())).await.expect("send");
    let mut frames = 0;
    // welcome, snapshot
    while frames < 2 {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => {
                read(t.as_str(), validator);
                frames += 1;
            }
            Some(Ok(_)) => continue,
            other => panic!("connection ended: {other:?}"),
        }
    }
    ws.send(Message::text(json!({"type": "chat.user_message", "id": "u1", "text": "go"}).to_string()))
        .await
        .expect("send");
    loop {
        let t = match ws.next().await {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(_)) => continue,
            other => panic!("connection ended: {other:?}"),
        };
        frames += 1;
        let v = read(t.as_str(), validator);
        if v["type"] == "chat.run_complete" {
            if let Some(Ok(Message::Text(t))) = ws.next().await {
                read(t.as_str(), validator);
            }
            frames += 1;
            break;
        }
    }
    // Complete the closing handshake, as the runner does.
    let _ = ws.close(None).await;
    while let Some(Ok(message)) = ws.next().await {
        if matches!(message, Message::Close(_)) {
            break;
        }
    }
    frames
}

fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill; both clocks exist on every Linux.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time of this process, every thread (the backend under test is a child process: not counted).
pub fn process_cpu() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
