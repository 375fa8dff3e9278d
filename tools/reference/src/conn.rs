//! One WebSocket connection: handshake, bounded reads with idle pings, frame validation, and
//! dispatch to its session.

use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::hello::SessionHello;
use chatwire_schema::{
    ClientFrame, CloseCode, Direction, ErrorCode, ErrorFrame, FrameError, Id, ProtocolVersion, ServerFrame,
    HARD_CAP_FACTOR, SUBPROTOCOL, SUPPORTED_VERSIONS,
};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as WsCloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::agent::AgentSpec;
use crate::fault::Fault;
use crate::session::{self, ConnHandle, Outgoing, Refusal, Session, Shared};
use crate::Timeouts;

/// Frames queued for one connection before it counts as too slow and is dropped.
const OUTBOX_CAPACITY: usize = 4096;
/// Read buffer of the WebSocket layer per connection.
const READ_BUFFER_BYTES: usize = 8 * 1024;
/// Write buffer of the WebSocket layer per connection (each frame is flushed anyway).
const WRITE_BUFFER_BYTES: usize = 8 * 1024;
/// How long a connection waits for the peer's close reply when the server shuts down.
pub(crate) const SHUTDOWN_CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Serves one accepted TCP connection until it closes.
///
/// When `going_away` turns true the server is shutting down: the connection is closed with 1001.
pub(crate) async fn serve_connection(
    shared: Arc<Shared>,
    timeouts: Timeouts,
    tcp: TcpStream,
    conn_id: u64,
    mut going_away: tokio::sync::watch::Receiver<bool>,
) {
    let hard_cap = usize::try_from(shared.max_frame_bytes.saturating_mul(HARD_CAP_FACTOR)).unwrap_or(usize::MAX);
    // Small eager buffers: an idle connection should cost little (the defaults are 128 KiB each).
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_message_size(Some(hard_cap))
        .max_frame_size(Some(hard_cap));
    // Frames are small and latency matters more than segment count.
    if let Err(e) = tcp.set_nodelay(true) {
        eprintln!("chatwire-reference: connection {conn_id}: cannot set TCP_NODELAY: {e}");
    }
    let require_subprotocol = shared.faults.is(Fault::SubprotocolRequired);
    #[allow(clippy::result_large_err)] // the callback signature is tungstenite's
    let callback =
        move |request: &Request, response: Response| negotiate_subprotocol(request, response, require_subprotocol);
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(tcp, callback, Some(config));
    let ws = match tokio::time::timeout(timeouts.handshake, handshake).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            eprintln!("chatwire-reference: connection {conn_id}: handshake failed: {e}");
            return;
        }
        Err(_) => {
            eprintln!("chatwire-reference: connection {conn_id}: handshake timed out");
            return;
        }
    };
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::channel::<Outgoing>(OUTBOX_CAPACITY);
    let handle = ConnHandle { id: conn_id, out: tx, kill: Arc::new(Notify::new()) };
    let write_timeout = timeouts.write;
    let mut writer = tokio::spawn(async move {
        while let Some(item) = rx.recv().await {
            let (message, last) = match item {
                Outgoing::Text(text) => (Message::text(text), false),
                Outgoing::Ping => (Message::Ping(Vec::new().into()), false),
                Outgoing::Close(code) => {
                    let frame = CloseFrame { code: WsCloseCode::from(code.code()), reason: code.reason().into() };
                    (Message::Close(Some(frame)), true)
                }
                Outgoing::Flush(ack) => {
                    let _ = tokio::time::timeout(write_timeout, sink.flush()).await;
                    let _ = ack.send(());
                    continue;
                }
            };
            match tokio::time::timeout(write_timeout, sink.send(message)).await {
                Ok(Ok(())) if !last => {}
                _ => break,
            }
        }
    });
    let mut conn = Conn { shared, handle: handle.clone(), session: None };
    let mut awaiting_pong = false;
    let mut writer_done = false;
    let mut shutting_down = false;
    // Bounded: each iteration consumes one message or one idle period, and two idle periods end it.
    loop {
        tokio::select! {
            _ = &mut writer => {
                writer_done = true;
                break;
            }
            _ = handle.kill.notified() => break,
            _ = going_away.changed() => {
                handle.send(Outgoing::Close(CloseCode::GoingAway));
                shutting_down = true;
                break;
            }
            read = tokio::time::timeout(timeouts.idle, stream.next()) => match read {
                Err(_) if awaiting_pong => {
                    eprintln!("chatwire-reference: connection {conn_id}: peer unresponsive, dropped");
                    break;
                }
                Err(_) => {
                    awaiting_pong = true;
                    handle.send(Outgoing::Ping);
                }
                Ok(None) => break,
                Ok(Some(Err(WsError::Capacity(e)))) => {
                    eprintln!("chatwire-reference: connection {conn_id}: message over the hard cap: {e}");
                    handle.send(Outgoing::Close(CloseCode::MessageTooBig));
                    break;
                }
                Ok(Some(Err(_))) => break,
                Ok(Some(Ok(message))) => {
                    awaiting_pong = false;
                    match message {
                        Message::Text(text) => conn.on_text(text.as_str()).await,
                        Message::Binary(_) => {
                            conn.refuse(Refusal::new(ErrorCode::BinaryFrame, "binary frames are not supported; send text"), None).await;
                        }
                        Message::Close(_) => break,
                        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
                    }
                }
            }
        }
    }
    if let Some(session) = conn.session.take() {
        session::detach(&session, &handle).await;
    }
    drop(conn);
    drop(handle);
    // Let the writer finish the close handshake (bounded), then drain the peer's reply. A server
    // going away waits less: a peer that does not answer must not hold up the shutdown.
    let close_wait = if shutting_down { timeouts.write.min(SHUTDOWN_CLOSE_WAIT) } else { timeouts.write };
    let _ = tokio::time::timeout(close_wait, async {
        if !writer_done {
            let _ = (&mut writer).await;
        }
        while let Some(Ok(_)) = stream.next().await {}
    })
    .await;
    writer.abort();
}

/// Selects `chatwire.v1` when the client offers it and nothing when it offers none (TRANSPORT-004;
/// `require` is the planted fault that refuses such handshakes); only `/ws` is served.
#[allow(clippy::result_large_err)] // the callback signature is tungstenite's
fn negotiate_subprotocol(request: &Request, mut response: Response, require: bool) -> Result<Response, ErrorResponse> {
    if request.uri().path() != "/ws" {
        let mut not_found = ErrorResponse::new(Some("chatwire is served at /ws".into()));
        *not_found.status_mut() = StatusCode::NOT_FOUND;
        return Err(not_found);
    }
    let offered = request
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == SUBPROTOCOL);
    if offered {
        response.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static(SUBPROTOCOL));
    } else if require {
        let mut refused = ErrorResponse::new(Some("offer the chatwire.v1 subprotocol".into()));
        *refused.status_mut() = StatusCode::BAD_REQUEST;
        return Err(refused);
    }
    Ok(response)
}

struct Conn {
    shared: Arc<Shared>,
    handle: ConnHandle,
    session: Option<Arc<Session>>,
}

impl Conn {
    /// Answers a refused frame with its typed error (through the session when bound, for its seq).
    async fn refuse(&mut self, refusal: Refusal, in_reply_to: Option<Id>) {
        if self.shared.faults.is(Fault::DropConnectionOnError) {
            self.handle.kill.notify_one();
            return;
        }
        let fatal = refusal.code.is_fatal();
        let code = refusal.code;
        match &self.session {
            Some(session) => {
                let mut g = session.inner.lock().await;
                g.send_error(session, &self.handle, refusal, in_reply_to);
            }
            None => {
                let frame = ErrorFrame {
                    seq: None,
                    code: refusal.code,
                    message: refusal.message,
                    in_reply_to,
                    fatal,
                    supported_versions: (refusal.code == ErrorCode::UnsupportedVersion)
                        .then(|| SUPPORTED_VERSIONS.to_vec()),
                };
                if let Ok(text) = serde_json::to_string(&ServerFrame::Error(frame)) {
                    self.handle.send(Outgoing::Text(text));
                }
            }
        }
        if let Some(close) = code.close_code() {
            self.handle.send(Outgoing::Close(close));
        }
    }

    async fn on_text(&mut self, text: &str) {
        if text.len() as u64 > self.shared.max_frame_bytes {
            let message =
                format!("frame of {} bytes is over the limit of {} bytes", text.len(), self.shared.max_frame_bytes);
            return self.refuse(Refusal::new(ErrorCode::FrameTooLarge, message), None).await;
        }
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let message = format!("frame is not valid json: {e}");
                return self.refuse(Refusal::new(ErrorCode::MalformedFrame, message), None).await;
            }
        };
        if !value.is_object() {
            return self.refuse(Refusal::new(ErrorCode::MalformedFrame, "frame is not a json object"), None).await;
        }
        let in_reply_to = value.get("id").and_then(|v| v.as_str()).and_then(|s| Id::parse(s).ok());
        let frame: ClientFrame = match self.shared.validator.from_value(Direction::ClientToServer, value) {
            Ok(frame) => frame,
            Err(FrameError::UnknownType(_)) if self.shared.faults.is(Fault::UnknownTypeIgnored) => return,
            Err(e @ (FrameError::UnknownType(_) | FrameError::MissingType)) => {
                return self.refuse(Refusal::new(ErrorCode::UnknownType, e.to_string()), in_reply_to).await;
            }
            Err(e @ (FrameError::NotJson(_) | FrameError::NotObject)) => {
                return self.refuse(Refusal::new(ErrorCode::MalformedFrame, e.to_string()), in_reply_to).await;
            }
            Err(e) => {
                let message = format!("frame breaks its schema: {e}");
                return self.refuse(Refusal::new(ErrorCode::InvalidFrame, message), in_reply_to).await;
            }
        };
        let reply_to = Some(frame.id().clone());
        let result = match frame {
            ClientFrame::Hello(hello) => self.on_hello(hello).await,
            other => self.on_session_frame(other).await,
        };
        if let Err(refusal) = result {
            self.refuse(refusal, reply_to).await;
        }
    }

    async fn on_hello(&mut self, hello: SessionHello) -> Result<(), Refusal> {
        if self.session.is_some() {
            return Err(Refusal::new(ErrorCode::AlreadyOpen, "this connection already has an open session"));
        }
        let Some(version) = ProtocolVersion::negotiate(&hello.versions, SUPPORTED_VERSIONS) else {
            let offered: Vec<String> = hello.versions.iter().map(ToString::to_string).collect();
            let message = format!("none of the offered versions {offered:?} is supported");
            return Err(Refusal::new(ErrorCode::UnsupportedVersion, message));
        };
        let session = match &hello.resume {
            Some(resume) => {
                if hello.script.is_some() {
                    return Err(Refusal::new(
                        ErrorCode::ScriptNotAllowed,
                        "a script is only accepted when opening a session",
                    ));
                }
                session::resume_session(&self.shared, &self.handle, hello.id.clone(), version, resume).await?
            }
            None => {
                let agent = match hello.script {
                    Some(_)
                        if !self.shared.conformance
                            && !self.shared.faults.is(Fault::ScriptAcceptedOutsideConformance) =>
                    {
                        return Err(Refusal::new(
                            ErrorCode::ScriptNotAllowed,
                            "scripts are only accepted by a server in conformance mode",
                        ));
                    }
                    Some(script) => {
                        script.validate().map_err(|e| Refusal::new(ErrorCode::InvalidScript, e.to_string()))?;
                        AgentSpec::Script { script }
                    }
                    None if self.shared.conformance => {
                        AgentSpec::Script { script: chatwire_schema::script::AgentScript { turns: Vec::new() } }
                    }
                    None => AgentSpec::Echo,
                };
                session::open_session(&self.shared, &self.handle, hello.id.clone(), version, agent).await?
            }
        };
        self.session = Some(session);
        Ok(())
    }

    async fn on_session_frame(&mut self, frame: ClientFrame) -> Result<(), Refusal> {
        let Some(session) = self.session.clone() else {
            return Err(Refusal::new(ErrorCode::HelloRequired, "send session.hello first"));
        };
        let mut g = session.inner.lock().await;
        if !g.is_attached(&self.handle) {
            // Taken over: this connection is closing and may no longer act on the session.
            return Ok(());
        }
        match frame {
            ClientFrame::UserMessage(m) => session::user_message(&session, &mut g, m),
            ClientFrame::ToolCallResponse(r) => session::tool_call_response(&session, &mut g, &self.handle, r),
            ClientFrame::Rewind(r) => session::rewind(&session, &mut g, r),
            other => Err(Refusal::new(ErrorCode::UnknownType, format!("unexpected frame type {}", other.type_name()))),
        }
    }
}
