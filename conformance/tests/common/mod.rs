//! A tiny backend written for the tests: it speaks just enough Chatwire to run a one-turn `say`
//! scenario, and can misbehave in one chosen way, so every verdict path of the runner is exercised
//! without the reference backend.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::scenario::{Scenario, ScenarioLoader};
use chatwire_schema::{ServerFrame, UiState};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// How the mock behaves (on every connection after the first `healthy` ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Speaks correctly.
    Good,
    /// Accepts TCP, never answers the WebSocket handshake.
    HangBeforeHandshake,
    /// Completes the handshake, never sends a frame.
    HangAfterHandshake,
    /// Answers the hello with text that is not JSON.
    MalformedJson,
    /// Answers the hello with a binary frame.
    Binary,
    /// Answers the hello with a text frame of this many bytes.
    Oversize(usize),
    /// Resets the TCP connection after the hello.
    Reset,
    /// Floods ui_state_updated frames after the hello (bounded by the mock too: 200 000).
    Flood,
    /// Closes with this code after the hello.
    CloseWith(u16),
    /// Answers every hello with fatal unsupported_version, then closes with this code.
    FatalThenClose(u16),
    /// Sends a ui_state_updated that differs from the reducer's fold.
    DivergentState,
    /// Reuses a seq.
    RepeatSeq,
    /// Sends a ts that is not RFC 3339.
    BadTimestamp,
    /// Does not select the chatwire.v1 subprotocol.
    NoSubprotocol,
    /// Adds a member the schema does not define to the welcome.
    ExtraMember,
    /// Sends an assistant message outside a run (the reducer refuses it: STATE-022).
    EventOutsideRun,
    /// Stops reading after the hello, so pings are never answered (tungstenite answers on read).
    DeafAfterHello,
    /// Stops reading after the hello and sends pongs with a payload of its own every 50 ms.
    WrongPongs,
    /// Selects chatwire.v1 even when the client offered no subprotocol.
    SubprotocolUnrequested,
    /// Refuses a handshake that offers no subprotocol with HTTP 400.
    SubprotocolRequired,
    /// Announces the smallest frame limit allowed instead of the default (a SHOULD, not a MUST).
    SmallFrameLimit,
    /// Bounds its send queue: a turn streams large progress reports, and when a frame cannot be
    /// handed to the socket within 300 ms (the client stopped reading) it closes with 4008.
    SendQueueBound,
}

/// A running mock backend.
pub struct Mock {
    /// Its ws:// URL.
    pub url: String,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
}

/// Starts a mock on 127.0.0.1:0 that behaves well on its first `healthy` connections (the runner's
/// reachability probe uses one) and then as `mode`.
pub async fn start(mode: Mode, healthy: usize) -> Mock {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let mode = if n < healthy { Mode::Good } else { mode };
            tokio::spawn(serve(stream, mode));
        }
    });
    Mock { url: format!("ws://{addr}/ws"), connections }
}

async fn serve(stream: TcpStream, mode: Mode) {
    if mode == Mode::HangBeforeHandshake {
        let _held = stream;
        tokio::time::sleep(Duration::from_secs(30)).await;
        return;
    }
    let select = mode != Mode::NoSubprotocol;
    #[allow(clippy::result_large_err)] // the Err type is tungstenite's, fixed by accept_hdr_async
    let callback = move |req: &Request, mut resp: Response| {
        let offered = req.headers().get("Sec-WebSocket-Protocol").and_then(|v| v.to_str().ok()).unwrap_or("");
        let offered = offered.split(',').any(|p| p.trim() == "chatwire.v1");
        if !offered && mode == Mode::SubprotocolRequired {
            let mut refused = ErrorResponse::new(Some("offer chatwire.v1".into()));
            *refused.status_mut() = StatusCode::BAD_REQUEST;
            return Err(refused);
        }
        if select && (offered || mode == Mode::SubprotocolUnrequested) {
            resp.headers_mut().insert("Sec-WebSocket-Protocol", HeaderValue::from_static("chatwire.v1"));
        }
        Ok(resp)
    };
    let Ok(Ok(mut ws)) =
        tokio::time::timeout(Duration::from_secs(5), tokio_tungstenite::accept_hdr_async(stream, callback)).await
    else {
        return;
    };
    if mode == Mode::HangAfterHandshake {
        tokio::time::sleep(Duration::from_secs(30)).await;
        return;
    }
    let mut session = Session { seq: 0, state: UiState::default(), turns: 0 };
    while let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
        let Message::Text(text) = message else {
            if matches!(message, Message::Close(_)) {
                return;
            }
            continue;
        };
        let Ok(frame) = serde_json::from_str::<Value>(text.as_str()) else { continue };
        let id = frame.get("id").and_then(Value::as_str).unwrap_or("x").to_owned();
        match frame.get("type").and_then(Value::as_str) {
            Some("session.hello") if !hello(&mut ws, &mut session, &id, mode).await => return,
            Some("session.hello") if mode == Mode::DeafAfterHello => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return;
            }
            Some("session.hello") if mode == Mode::WrongPongs => {
                for _ in 0..600 {
                    if ws.send(Message::Pong(b"not yours".to_vec().into())).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                return;
            }
            Some("chat.user_message") if mode == Mode::SendQueueBound => {
                streaming_turn(&mut ws, &mut session, &id).await;
                return;
            }
            Some("chat.user_message") => {
                let text = frame.get("text").and_then(Value::as_str).unwrap_or("").to_owned();
                turn(&mut ws, &mut session, &id, &text, mode).await;
            }
            _ => {}
        }
    }
}

struct Session {
    seq: u64,
    state: UiState,
    turns: usize,
}

impl Session {
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
}

async fn send(ws: &mut WebSocketStream<TcpStream>, v: Value) {
    let _ = ws.send(Message::text(v.to_string())).await;
}

/// Answers the hello; false when the connection should end.
async fn hello(ws: &mut WebSocketStream<TcpStream>, s: &mut Session, id: &str, mode: Mode) -> bool {
    match mode {
        Mode::MalformedJson => {
            let _ = ws.send(Message::text("{\"type\": \"session.welcome\", oops")).await;
            return true;
        }
        Mode::Binary => {
            let _ = ws.send(Message::binary(vec![1u8, 2, 3])).await;
            return true;
        }
        Mode::Oversize(n) => {
            let big = json!({"type": "session.welcome", "padding": "x".repeat(n)});
            send(ws, big).await;
            return true;
        }
        Mode::Reset => {
            #[allow(deprecated)] // SO_LINGER 0 makes the drop a TCP reset; it does not block.
            let _ = ws.get_ref().set_linger(Some(Duration::ZERO));
            return false;
        }
        Mode::CloseWith(code) => {
            let _ = ws.close(Some(CloseFrame { code: CloseCode::from(code), reason: "bye".into() })).await;
            return false;
        }
        Mode::FatalThenClose(code) => {
            send(ws, json!({"type": "error", "code": "unsupported_version", "message": "no", "in_reply_to": id, "fatal": true, "supported_versions": ["1.0"]})).await;
            let _ = ws.close(Some(CloseFrame { code: CloseCode::from(code), reason: "".into() })).await;
            return false;
        }
        _ => {}
    }
    let seq = s.next_seq();
    let mut welcome = json!({"type": "session.welcome", "seq": seq, "in_reply_to": id, "version": "1.0", "session_id": "s-mock-1", "resume_token": "t-mock-1", "resumed": false, "capabilities": ["conformance_script"], "limits": {"max_frame_bytes": 1048576}});
    if mode == Mode::ExtraMember {
        welcome["colour"] = json!("red");
    }
    if mode == Mode::SmallFrameLimit {
        welcome["limits"]["max_frame_bytes"] = json!(65_536);
    }
    send(ws, welcome).await;
    let seq = s.next_seq();
    send(ws, json!({"type": "ui_state_snapshot", "seq": seq, "v": "ui_state_v1", "state": s.state})).await;
    if mode == Mode::Flood {
        for _ in 0..200_000 {
            let seq = s.next_seq();
            if ws
                .send(Message::text(
                    json!({"type": "ui_state_updated", "seq": seq, "v": "ui_state_v1", "state": s.state}).to_string(),
                ))
                .await
                .is_err()
            {
                return false;
            }
        }
    }
    true
}

/// Plays one `say` turn, sending each event followed by its ui_state_updated.
async fn turn(ws: &mut WebSocketStream<TcpStream>, s: &mut Session, id: &str, text: &str, mode: Mode) {
    s.turns += 1;
    let inv = format!("inv-{}", s.turns);
    let ts = if mode == Mode::BadTimestamp { "yesterday" } else { "2026-01-15T10:00:00Z" };
    let mut events = vec![
        json!({"type": "chat.user_message_accepted", "in_reply_to": id, "invocation_id": inv, "item_id": format!("item-{}-u", s.turns), "text": text, "ts": ts}),
        json!({"type": "chat.run_started", "invocation_id": inv, "ts": ts}),
        json!({"type": "chat.assistant_message", "invocation_id": inv, "item_id": format!("item-{}-a", s.turns), "markdown": "Hello from the mock.", "ts": ts}),
        json!({"type": "chat.run_complete", "invocation_id": inv, "status": "completed", "ts": ts}),
    ];
    if mode == Mode::EventOutsideRun {
        events.swap(1, 2);
    }
    for (i, mut event) in events.into_iter().enumerate() {
        let seq = if mode == Mode::RepeatSeq && i == 2 { s.seq } else { s.next_seq() };
        event["seq"] = json!(seq);
        if let Ok(frame) = serde_json::from_value::<ServerFrame>(event.clone()) {
            if let Some(e) = frame.ui_event() {
                let _ = s.state.apply(e);
            }
        }
        send(ws, event).await;
        let mut state = serde_json::to_value(&s.state).unwrap_or(Value::Null);
        if mode == Mode::DivergentState && i == 2 {
            state["items"][1]["markdown"] = json!("something else");
        }
        let seq = s.next_seq();
        send(ws, json!({"type": "ui_state_updated", "seq": seq, "v": "ui_state_v1", "state": state})).await;
    }
}

/// Sends `event` and its ui_state_updated, each within 300 ms; false when the client does not take them.
async fn event_and_update(ws: &mut WebSocketStream<TcpStream>, s: &mut Session, mut event: Value) -> bool {
    event["seq"] = json!(s.next_seq());
    if let Ok(frame) = serde_json::from_value::<ServerFrame>(event.clone()) {
        if let Some(e) = frame.ui_event() {
            let _ = s.state.apply(e);
        }
    }
    let update = json!({"type": "ui_state_updated", "seq": s.next_seq(), "v": "ui_state_v1", "state": s.state});
    for frame in [event, update] {
        let sent = tokio::time::timeout(Duration::from_millis(300), ws.send(Message::text(frame.to_string()))).await;
        if !matches!(sent, Ok(Ok(()))) {
            return false;
        }
    }
    true
}

/// A turn of one tool call streaming 4 KB progress reports; a client that stops reading gets the
/// 4008 close of a bounded send queue (the close goes out after what is already buffered).
async fn streaming_turn(ws: &mut WebSocketStream<TcpStream>, s: &mut Session, id: &str) {
    let ts = "2026-01-15T10:00:00Z";
    let opening = [
        json!({"type": "chat.user_message_accepted", "in_reply_to": id, "invocation_id": "inv-1", "item_id": "item-u", "text": "stream", "ts": ts}),
        json!({"type": "chat.run_started", "invocation_id": "inv-1", "ts": ts}),
        json!({"type": "chat.tool_call", "invocation_id": "inv-1", "tool_call_id": "tc-1", "call_index": 0, "tool_name": "t", "interaction_type": "auto_tool", "awaiting_response": false, "display": "inline", "payload": {}, "ts": ts}),
    ];
    for event in opening {
        if !event_and_update(ws, s, event).await {
            return;
        }
    }
    let message = "p".repeat(4096);
    for i in 1..20_000u32 {
        let progress = json!({"type": "chat.tool_progress", "tool_call_id": "tc-1", "message": message, "fraction": f64::from(i) / 20_000.0, "ts": ts});
        if !event_and_update(ws, s, progress).await {
            let close = ws.close(Some(CloseFrame { code: CloseCode::from(4008), reason: "send queue full".into() }));
            let _ = tokio::time::timeout(Duration::from_secs(10), close).await;
            return;
        }
    }
}

/// A scenario from its JSON text (panics when invalid: test data).
pub fn scenario(text: Value) -> Scenario {
    let id = text["id"].as_str().expect("an id").to_owned();
    ScenarioLoader::new().parse(&format!("{id}.json"), &text.to_string()).expect("the test scenario is valid")
}

/// A one-turn scenario the mock can play.
pub fn say_scenario(id: &str) -> Scenario {
    let text = json!({
        "id": id,
        "title": "mock turn",
        "level": "must",
        "requirements": ["TURN-001"],
        "script": {"turns": [{"steps": [{"op": "say", "markdown": "Hello from the mock."}]}]},
        "steps": [
            {"do": "connect"},
            {"do": "user_message", "text": "Hi"},
            {"do": "expect", "frame": {"type": "chat.user_message_accepted", "in_reply_to": "u1", "invocation_id": "{{invocation:1}}"}},
            {"do": "expect", "frame": {"type": "chat.run_started", "invocation_id": "{{invocation:1}}"}},
            {"do": "expect", "frame": {"type": "chat.assistant_message", "markdown": "Hello from the mock."}},
            {"do": "expect", "frame": {"type": "chat.run_complete", "status": "completed"}},
            {"do": "wait_idle", "quiet_ms": 50}
        ]
    });
    ScenarioLoader::new().parse(&format!("{id}.json"), &text.to_string()).expect("the mock scenario is valid")
}
