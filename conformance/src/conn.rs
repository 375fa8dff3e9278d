//! One WebSocket connection to the backend, where every operation has a deadline and nothing the
//! server sends can panic the runner.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::scenario::WsViolation;

/// Largest message the runner accepts from a server unless told otherwise (a whole UiState per
/// `ui_state_updated` can be large, but not this large).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// Bytes tungstenite reads from the socket at a time. Each read first zero-fills that much of its
/// buffer, also a read that finds nothing: at tungstenite's default (128 KiB) that fill cost more
/// than reading a frame of a scripted turn (a few hundred bytes). A larger message takes more reads.
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Frames and signals read from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A text frame.
    Text(String),
    /// A binary frame of this many bytes (v1 is text only).
    Binary(usize),
    /// A pong, with its payload (answers to the runner's pings, or unsolicited heartbeats).
    Pong(Vec<u8>),
    /// The server closed the connection (with its close frame, if any).
    Closed {
        /// The close code, if the server sent a close frame with one.
        code: Option<u16>,
        /// The close reason.
        reason: String,
    },
    /// The transport failed: reset, protocol violation, a message over the runner's limit.
    Broken(String),
}

/// Why a connection could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The URL is not a ws:// URL the client can use.
    #[error("bad url {url}: {message}")]
    BadUrl {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
    /// TCP connect or the WebSocket handshake failed.
    #[error("cannot connect to {url}: {message}")]
    Failed {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// The server accepted the handshake but did not select the `chatwire.v1` subprotocol it was
    /// offered, or selected one although none was offered.
    #[error("the server's websocket subprotocol answer is wrong ({offered}): {message}")]
    Subprotocol {
        /// What the runner offered: `chatwire.v1` or `no subprotocol`.
        offered: &'static str,
        /// What the handshake check found.
        message: String,
    },
    /// The server refused the handshake with an HTTP status.
    #[error("the server refused the websocket handshake to {url} ({offered} offered) with HTTP {status}")]
    Refused {
        /// The URL.
        url: String,
        /// What the runner offered: `chatwire.v1` or `no subprotocol`.
        offered: &'static str,
        /// The HTTP status of the refusal.
        status: u16,
    },
    /// Nothing happened before the deadline (a server that accepts TCP but never answers).
    #[error("no websocket handshake from {url} before the deadline")]
    Timeout {
        /// The URL.
        url: String,
    },
}

/// A connection with deadline-bounded reads and writes.
pub struct WsConn {
    stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    closed: bool,
}

impl std::fmt::Debug for WsConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsConn").field("closed", &self.closed).finish()
    }
}

impl WsConn {
    /// Connects offering the `chatwire.v1` subprotocol, which the server must select (TRANSPORT-003).
    pub async fn open(url: &str, max_message_bytes: usize, deadline: Instant) -> Result<WsConn, ConnectError> {
        Self::open_with(url, max_message_bytes, deadline, true).await
    }

    /// Connects offering `chatwire.v1` or, when `offer_subprotocol` is false, no subprotocol at all;
    /// then the server must select none (TRANSPORT-004; tungstenite refuses an unrequested one).
    pub async fn open_with(
        url: &str,
        max_message_bytes: usize,
        deadline: Instant,
        offer_subprotocol: bool,
    ) -> Result<WsConn, ConnectError> {
        let bad_url = |message: String| ConnectError::BadUrl { url: url.to_owned(), message };
        let offered = if offer_subprotocol { chatwire_schema::SUBPROTOCOL } else { "no subprotocol" };
        let mut request = url.into_client_request().map_err(|e| bad_url(e.to_string()))?;
        if offer_subprotocol {
            request
                .headers_mut()
                .insert("Sec-WebSocket-Protocol", HeaderValue::from_static(chatwire_schema::SUBPROTOCOL));
        }
        let config = WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER_BYTES)
            .max_message_size(Some(max_message_bytes))
            .max_frame_size(Some(max_message_bytes));
        let connect = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
        match tokio::time::timeout_at(deadline, connect).await {
            Err(_) => Err(ConnectError::Timeout { url: url.to_owned() }),
            Ok(Ok((stream, _response))) => Ok(WsConn { stream, closed: false }),
            Ok(Err(WsError::Protocol(p))) if p.to_string().to_lowercase().contains("subprotocol") => {
                Err(ConnectError::Subprotocol { offered, message: p.to_string() })
            }
            Ok(Err(WsError::Http(response))) => {
                Err(ConnectError::Refused { url: url.to_owned(), offered, status: response.status().as_u16() })
            }
            Ok(Err(e)) => Err(ConnectError::Failed { url: url.to_owned(), message: e.to_string() }),
        }
    }

    /// Whether the connection has ended (closed by either side or broken).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Sends a text frame. Errors describe the transport failure.
    pub async fn send_text(&mut self, text: String, deadline: Instant) -> Result<(), String> {
        self.send(Message::text(text), deadline).await
    }

    /// Sends a binary frame.
    pub async fn send_binary(&mut self, bytes: Vec<u8>, deadline: Instant) -> Result<(), String> {
        self.send(Message::binary(bytes), deadline).await
    }

    /// Sends one frame that breaks RFC 6455 as `violation` says. tungstenite masks it as a client
    /// must, and otherwise writes it as built.
    pub async fn send_violation(&mut self, violation: WsViolation, deadline: Instant) -> Result<(), String> {
        use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
        use tokio_tungstenite::tungstenite::protocol::frame::Frame;
        let text = OpCode::Data(Data::Text);
        let frame = match violation {
            // 0xC3 starts a two-byte sequence that 0x28 cannot continue.
            WsViolation::InvalidUtf8 => Frame::message(vec![0xC3, 0x28], text, true),
            WsViolation::ReservedOpcode => Frame::message(b"{}".to_vec(), OpCode::Data(Data::Reserved(3)), true),
            WsViolation::RsvBitSet => {
                let mut f = Frame::message(b"{}".to_vec(), text, true);
                f.header_mut().rsv1 = true;
                f
            }
            WsViolation::ContinuationWithoutStart => Frame::message(b"{}".to_vec(), OpCode::Data(Data::Continue), true),
        };
        self.send(Message::Frame(frame), deadline).await
    }

    /// Sends a ping (control frames carry at most 125 bytes, which the caller ensures).
    pub async fn send_ping(&mut self, payload: Vec<u8>, deadline: Instant) -> Result<(), String> {
        self.send(Message::Ping(payload.into()), deadline).await
    }

    async fn send(&mut self, message: Message, deadline: Instant) -> Result<(), String> {
        if self.closed {
            return Err("the connection is closed".into());
        }
        match tokio::time::timeout_at(deadline, self.stream.send(message)).await {
            Err(_) => Err("sending blocked until the deadline (the server does not read)".into()),
            Ok(Err(e)) => {
                self.closed = true;
                Err(e.to_string())
            }
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Reads the next frame; `None` when the deadline passes first. Pings are answered here
    /// (tungstenite queues the pong) and never returned; pongs are returned for the ping step.
    pub async fn recv(&mut self, deadline: Instant) -> Option<Incoming> {
        if self.closed {
            return Some(Incoming::Closed { code: None, reason: "already closed".into() });
        }
        loop {
            let next = tokio::time::timeout_at(deadline, self.stream.next()).await.ok()?;
            let incoming = match next {
                None => Incoming::Closed { code: None, reason: "connection ended without a close frame".into() },
                Some(Ok(Message::Text(t))) => return Some(Incoming::Text(t.as_str().to_owned())),
                Some(Ok(Message::Binary(b))) => return Some(Incoming::Binary(b.len())),
                Some(Ok(Message::Pong(p))) => return Some(Incoming::Pong(p.to_vec())),
                Some(Ok(Message::Ping(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(frame))) => {
                    // Flush the close reply tungstenite queued, completing the closing handshake.
                    let _ = tokio::time::timeout(Duration::from_millis(50), self.stream.flush()).await;
                    match frame {
                        Some(f) => Incoming::Closed { code: Some(u16::from(f.code)), reason: f.reason.to_string() },
                        None => Incoming::Closed { code: None, reason: "close frame without a code".into() },
                    }
                }
                Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => {
                    Incoming::Closed { code: None, reason: "connection closed".into() }
                }
                Some(Err(e)) => Incoming::Broken(describe(&e)),
            };
            self.closed = true;
            return Some(incoming);
        }
    }

    /// Closes with 1000 and waits (bounded) for the server's close; frames read meanwhile are returned.
    pub async fn close(&mut self, deadline: Instant) -> Vec<Incoming> {
        let mut late = Vec::new();
        if self.closed {
            return late;
        }
        let frame = CloseFrame { code: CloseCode::Normal, reason: "".into() };
        if tokio::time::timeout_at(deadline, self.stream.close(Some(frame))).await.is_err() {
            self.closed = true;
            return late;
        }
        // Bounded: a flooding server cannot keep us here past the deadline or the frame cap.
        for _ in 0..10_000 {
            match self.recv(deadline).await {
                None => break,
                Some(Incoming::Closed { .. }) | Some(Incoming::Broken(_)) => break,
                Some(Incoming::Pong(_)) => {}
                Some(frame) => late.push(frame),
            }
        }
        self.closed = true;
        late
    }

    /// Drops the connection without a closing handshake.
    pub fn abandon(&mut self) {
        self.closed = true;
    }
}

fn describe(e: &WsError) -> String {
    match e {
        WsError::Capacity(c) => format!("frame over the runner's size limit: {c}"),
        WsError::Io(io) => format!("transport error: {io}"),
        WsError::Protocol(p) => format!("websocket protocol violation: {p}"),
        WsError::Utf8(_) => "the server sent a text frame that is not valid UTF-8".to_owned(),
        other => other.to_string(),
    }
}
