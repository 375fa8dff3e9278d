//! The WebSocket transport of one connection: the HTTP upgrade, bounded reads with idle pings
//! that tell a slow reader from a dead one ([`crate::keepalive`]), the writer task draining the
//! connection's outbox, and the close handshake. Frames are handed
//! to [`crate::conn::Conn`], which knows the protocol.

use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::{CloseCode, HARD_CAP_FACTOR, SUBPROTOCOL};
use futures_util::StreamExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::config::Timeouts;
use crate::conn::Conn;
use crate::keepalive::{KeepAlive, Metered, Silence};
use crate::outbox::{
    write_loop, ConnHandle, Ending, Outgoing, WriteDeadlines, OVERFLOW_CLOSE_REPLY, UNRESPONSIVE_CLOSE,
};
use crate::session::Shared;

/// Read buffer of the WebSocket layer per connection.
const READ_BUFFER_BYTES: usize = 8 * 1024;
/// Write buffer of the WebSocket layer per connection (each frame is flushed anyway).
const WRITE_BUFFER_BYTES: usize = 8 * 1024;
/// How long a connection waits for the peer's close reply when the server shuts down.
pub(crate) const SHUTDOWN_CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Serves one accepted TCP connection until it closes.
///
/// When `going_away` turns true the server is shutting down: the connection is closed with 1001.
/// With `ui`, a connection asking for the chat page instead of `/ws` is answered by [`crate::ui`].
pub(crate) async fn serve_connection(
    shared: Arc<Shared>,
    timeouts: Timeouts,
    mut tcp: TcpStream,
    conn_id: u64,
    mut going_away: tokio::sync::watch::Receiver<bool>,
    ui: bool,
) {
    // `serve --ui`: a plain GET for any path but /ws is the chat page's (src/ui.rs).
    if ui && crate::ui::serve_if_page(&mut tcp, timeouts.handshake).await {
        return;
    }
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
    let require_subprotocol = shared.faults.wire.requires_subprotocol();
    #[allow(clippy::result_large_err)] // the callback signature is tungstenite's
    let callback =
        move |request: &Request, response: Response| negotiate_subprotocol(request, response, require_subprotocol);
    // Every byte the socket takes is counted: the peer's progress, which keeps a slow reader
    // alive (TRANSPORT-019).
    let (tcp, progress) = Metered::tcp(tcp);
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
    let (sink, mut stream) = ws.split();
    let bound = usize::try_from(shared.send_queue_bytes).unwrap_or(usize::MAX);
    let (handle, rx) = ConnHandle::new(conn_id, shared.faults.wire.send_queue_bound(bound));
    let writer_queue = handle.queue.clone();
    // The peer has until the liveness deadline (two idle periods, TRANSPORT-011) to take the
    // frame in flight when its queue overflows, then the 4008 close goes out.
    let overflow_deadline = timeouts.idle.saturating_mul(2);
    let deadlines = WriteDeadlines {
        write: shared.faults.wire.write_timeout(timeouts.write, overflow_deadline),
        overflow: overflow_deadline,
        progress: progress.clone(),
    };
    let mut writer = tokio::spawn(async move {
        write_loop(sink, rx, &writer_queue, deadlines).await;
    });
    let mut conn = Conn::new(shared, handle.clone());
    let mut keepalive = KeepAlive::default();
    let mut writer_done = false;
    let mut shutting_down = false;
    // Dropped on purpose (a planted fault): no close handshake, the TCP connection just ends.
    let mut killed = false;
    // Bounded: each iteration consumes one message or one idle period; idle periods end it once
    // the peer answers no ping and the socket takes nothing for one of them, which a peer that
    // reads nothing reaches once the socket's buffers are full.
    loop {
        tokio::select! {
            _ = &mut writer => {
                writer_done = true;
                break;
            }
            _ = handle.kill.notified() => {
                killed = true;
                break;
            }
            _ = going_away.changed() => {
                handle.send(Outgoing::Close(CloseCode::GoingAway));
                shutting_down = true;
                break;
            }
            read = tokio::time::timeout(timeouts.idle, stream.next()) => match read {
                Err(_) => match keepalive.silent_period(progress.taken()) {
                    Silence::Ping => {
                        handle.send(Outgoing::Ping);
                    }
                    Silence::Reading => {}
                    Silence::Unresponsive => {
                        eprintln!(
                            "chatwire-reference: connection {conn_id}: peer unresponsive (no pong, nothing read for {:?}); closing with 1001",
                            timeouts.idle
                        );
                        handle.queue.end(Ending::Unresponsive);
                        break;
                    }
                },
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    // The stream is finished after an error; the sink can still send the close.
                    if let Some(code) = violation_close_code(&e) {
                        eprintln!("chatwire-reference: connection {conn_id}: closing with {code}: {e}");
                        handle.send(Outgoing::Close(code));
                    }
                    break;
                }
                Ok(Some(Ok(message))) => {
                    keepalive.heard();
                    match message {
                        Message::Text(text) => conn.on_text(text.as_str()).await,
                        Message::Binary(_) => conn.on_binary().await,
                        Message::Close(_) => break,
                        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
                    }
                }
            }
        }
    }
    conn.close().await;
    if killed {
        writer.abort();
        return;
    }
    let handle_queue = handle.queue.clone();
    drop(handle);
    // Let the writer finish the close handshake (bounded), then drain the peer's reply. A server
    // going away waits less: a peer that does not answer must not hold up the shutdown.
    let close_wait = match handle_queue.ending() {
        _ if shutting_down => timeouts.write.min(SHUTDOWN_CLOSE_WAIT),
        Some(Ending::Overflow) => OVERFLOW_CLOSE_REPLY,
        // The writer's own deadline for the close, then as long again for the reply.
        Some(Ending::Unresponsive) => UNRESPONSIVE_CLOSE.saturating_mul(2),
        None => timeouts.write,
    };
    let _ = tokio::time::timeout(close_wait, async {
        if !writer_done {
            let _ = (&mut writer).await;
        }
        while let Some(Ok(_)) = stream.next().await {}
    })
    .await;
    writer.abort();
}

/// The close code for a read error that is the peer's fault (TRANSPORT-007, TRANSPORT-014,
/// TRANSPORT-015), or `None` when the connection is simply gone (reset, I/O error).
fn violation_close_code(error: &WsError) -> Option<CloseCode> {
    use tokio_tungstenite::tungstenite::error::ProtocolError as P;
    match error {
        WsError::Capacity(_) => Some(CloseCode::MessageTooBig),
        WsError::Utf8(_) => Some(CloseCode::InvalidPayload),
        WsError::Protocol(
            P::NonZeroReservedBits
            | P::UnmaskedFrameFromClient
            | P::UnknownDataFrameType(_)
            | P::UnknownControlFrameType(_)
            | P::UnexpectedContinueFrame
            | P::ExpectedFragment(_)
            | P::FragmentedControlFrame
            | P::ControlFrameTooBig
            | P::InvalidCloseSequence
            | P::InvalidOpcode(_),
        ) => Some(CloseCode::ProtocolError),
        _ => None,
    }
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
