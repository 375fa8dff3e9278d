//! Keep-alive that tells a slow reader from a dead peer (TRANSPORT-011, TRANSPORT-019,
//! TRANSPORT-020): a client reading a large turn slowly gets its ping late, behind the turn, and is
//! kept as long as it reads; a peer that reads nothing and answers no ping is closed with 1001
//! within two idle periods, its close frame on the wire where the socket has room for it.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use chatwire_reference::{DbLocation, ServeConfig, Timeouts};
use common::TestServer;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{Instant, Sleep};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// The slow reader's pace: 40 KB/s.
const READ_RATE: u64 = 40_000;
/// The most it reads at once.
const READ_BURST: usize = 4 * 1024;
/// Its kernel receive buffer: small, so that what it has not read yet stays with the server, and
/// the client reads what its own kernel holds in well under an idle period (the kernel doubles
/// it: 16 KiB, 0.4 s at 40 KB/s). A peer's receive buffer is the one thing the server cannot see
/// into: what reached it counts as taken (TRANSPORT-019).
const RECV_BUFFER: u32 = 8 * 1024;
/// The frames of a turn may be this large (a hello carries its script, half the turn's bytes).
const MAX_FRAME: u64 = 4 * 1024 * 1024;

/// A TCP stream whose reads take at most `READ_RATE` bytes a second when `throttled`: a client
/// on a slow link.
struct Throttled {
    inner: TcpStream,
    throttled: bool,
    budget: f64,
    refilled: Instant,
    wait: Option<Pin<Box<Sleep>>>,
}

impl AsyncRead for Throttled {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if !self.throttled {
            return Pin::new(&mut self.inner).poll_read(cx, buf);
        }
        let now = Instant::now();
        let earned = now.duration_since(self.refilled).as_secs_f64() * READ_RATE as f64;
        self.budget = (self.budget + earned).min(READ_BURST as f64);
        self.refilled = now;
        if self.budget < 1.0 {
            let short = Duration::from_secs_f64((1.0 - self.budget) / READ_RATE as f64);
            let wait = self.wait.get_or_insert_with(|| Box::pin(tokio::time::sleep(short)));
            if wait.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.wait = None;
            return self.poll_read(cx, buf);
        }
        let room = (self.budget as usize).min(buf.remaining()).max(1);
        let mut chunk = vec![0u8; room];
        let mut part = ReadBuf::new(&mut chunk);
        let polled = Pin::new(&mut self.inner).poll_read(cx, &mut part);
        if let Poll::Ready(Ok(())) = &polled {
            let n = part.filled().len();
            buf.put_slice(part.filled());
            self.budget -= n as f64;
        }
        polled
    }
}

impl AsyncWrite for Throttled {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A server whose keep-alive pings after `idle` of silence; frames up to [`MAX_FRAME`].
async fn server(idle: Duration) -> TestServer {
    let timeouts = Timeouts { idle, ..Timeouts::default() };
    TestServer::start(ServeConfig { timeouts, max_frame_bytes: MAX_FRAME, ..common::config(DbLocation::Memory) }).await
}

/// A WebSocket client with a small receive buffer, reading at [`READ_RATE`] when `throttled`.
async fn connect(server: &TestServer, throttled: bool) -> WebSocketStream<Throttled> {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(RECV_BUFFER).unwrap();
    let tcp = socket.connect(server.addr).await.unwrap();
    let stream = Throttled { inner: tcp, throttled, budget: 0.0, refilled: Instant::now(), wait: None };
    let mut request = server.url.as_str().into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "chatwire.v1".parse().unwrap());
    let connected = tokio::time::timeout(common::FRAME_DEADLINE, tokio_tungstenite::client_async(request, stream));
    connected.await.expect("handshake deadline").expect("handshake").0
}

/// Opens a 1.2 session whose one turn says `says` messages of `chars` characters (each reaches
/// the client twice: the event and the state patch), and sends the message that starts it.
async fn start_turn(ws: &mut WebSocketStream<Throttled>, says: usize, chars: usize) {
    let steps: Vec<Value> =
        (0..says).map(|k| json!({"op": "say", "markdown": format!("{k:04} {}", "x".repeat(chars))})).collect();
    let hello =
        json!({"type": "session.hello", "id": "h1", "versions": ["1.2"], "script": {"turns": [{"steps": steps}]}});
    ws.send(Message::text(hello.to_string())).await.unwrap();
    ws.send(Message::text(json!({"type": "chat.user_message", "id": "m1", "text": "go"}).to_string())).await.unwrap();
}

/// What a reader saw: text bytes, the pings and when the first came, and how it ended.
#[derive(Debug, Default)]
struct Read {
    bytes: usize,
    pings: usize,
    first_ping: Option<Duration>,
    run_complete: bool,
    close: Option<(u16, String)>,
    /// The connection ended (a close frame, or the TCP connection), rather than going quiet.
    ended: bool,
}

/// Reads (answering pings, as tungstenite does) until the run completes and its state frame
/// follows, the connection ends, or `quiet` passes without a message; with `to_end`, until the
/// connection ends or `quiet` has passed.
async fn read_turn(ws: &mut WebSocketStream<Throttled>, quiet: Duration, to_end: bool) -> Read {
    let started = Instant::now();
    let mut read = Read::default();
    loop {
        let until = if to_end { started + quiet } else { Instant::now() + quiet };
        let message = match tokio::time::timeout_at(until, ws.next()).await {
            Ok(Some(Ok(message))) => message,
            Ok(_) => {
                read.ended = true;
                return read;
            }
            Err(_) => return read,
        };
        match message {
            Message::Text(text) => {
                read.bytes += text.len();
                let frame: Value = serde_json::from_str(text.as_str()).expect("a json frame");
                match frame["type"].as_str() {
                    Some("chat.run_complete") => read.run_complete = true,
                    Some("ui_state_patch") if read.run_complete && !to_end => return read,
                    Some("error") => panic!("the server refused: {frame}"),
                    _ => {}
                }
            }
            Message::Ping(_) => {
                read.pings += 1;
                read.first_ping.get_or_insert(started.elapsed());
            }
            Message::Close(close) => {
                read.close = close.map(|c| (u16::from(c.code), c.reason.to_string()));
                read.ended = true;
                return read;
            }
            _ => {}
        }
    }
}

/// A reader at 40 KB/s takes a turn of `says` × `chars` × 2 bytes through a keep-alive of `idle`:
/// the whole turn arrives, the ping came late (behind the turn) and the connection was not cut.
async fn slow_reader_completes(idle: Duration, says: usize, chars: usize) {
    let server = server(idle).await;
    let mut ws = connect(&server, true).await;
    let started = Instant::now();
    start_turn(&mut ws, says, chars).await;
    let read = read_turn(&mut ws, common::FRAME_DEADLINE, false).await;
    let took = started.elapsed();
    eprintln!("{} bytes in {took:?} at 40 KB/s with a keep-alive of {idle:?}: {read:?}", read.bytes);
    assert!(read.run_complete, "the turn completed: {read:?} after {took:?}");
    assert_eq!(read.close, None, "no close");
    assert!(read.bytes >= says * chars * 2, "every byte of the turn: {read:?}");
    assert!(took > idle.saturating_mul(2), "the turn outlasted the old cut (two idle periods): {took:?}");
    // The connection lives on: the ping queued behind the turn comes (it answers it), and nothing
    // closes it.
    let after = read_turn(&mut ws, idle.saturating_mul(2) + Duration::from_secs(1), true).await;
    assert!(read.pings + after.pings >= 1, "the keep-alive pinged while the turn was read: {after:?}");
    assert!(!after.ended, "a reader that answers pings stays: {after:?}");
    server.stop().await;
}

/// Scaled down: a keep-alive of 1 s and a 300 KB turn, 7.5 s at 40 KB/s; before `TRANSPORT-019`
/// the reader was cut after two seconds, its ping still behind most of the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_is_kept_while_it_reads_however_late_its_pong() {
    slow_reader_completes(Duration::from_secs(1), 3, 50_000).await;
}

/// The figures with the default keep-alive (30 s): a 2.6 MB turn at 40 KB/s, ~65 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow (~2 min): .ci/run runs it (cargo test -p chatwire-reference --test keepalive -- --ignored)"]
async fn a_reader_at_40_kb_per_second_completes_a_2_6_mb_turn_with_the_default_keep_alive() {
    slow_reader_completes(Timeouts::default().idle, 13, 100_000).await;
}

/// A peer that reads nothing more after its welcome and answers no ping (its process hung): the
/// server pings after one idle period and closes with 1001 after the second. Nothing else was
/// owed, so the ping and the close frame both fit in the socket, and the peer finds them there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_peer_that_answers_no_ping_is_closed_with_1001_within_two_periods() {
    let idle = Duration::from_secs(1);
    let server = server(idle).await;
    let mut ws = connect(&server, false).await;
    ws.send(Message::text(json!({"type": "session.hello", "id": "h1", "versions": ["1.2"]}).to_string()))
        .await
        .unwrap();
    for expected in ["session.welcome", "ui_state_snapshot"] {
        let Some(Ok(Message::Text(text))) = ws.next().await else { panic!("expected {expected}") };
        assert!(text.contains(expected), "{text}");
    }
    // Not polling the stream: no pong goes out, nothing is read. The cut is due at two periods.
    tokio::time::sleep(idle.saturating_mul(2) + Duration::from_millis(1500)).await;
    // The ping and the close were written by now; reading them takes no time.
    let read = read_turn(&mut ws, Duration::from_millis(500), true).await;
    assert_eq!(read.pings, 1, "{read:?}");
    assert_eq!(read.close, Some((1001, "peer unresponsive".to_owned())), "{read:?}");
    server.stop().await;
}

/// A peer that stopped reading in the middle of a large turn, its buffers full: nothing more
/// reaches it, its ping waits behind the turn, and it is cut within two idle periods and the
/// close's own short deadlines although it is owed more. The close frame cannot reach a socket
/// that is full; the TCP connection ends. A reader then finds the end of the stream after what the
/// kernels still held, where a connection kept alive would go on (and answer the ping).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stopped_reading_is_cut_although_it_is_owed_more() {
    let idle = Duration::from_secs(1);
    let server = server(idle).await;
    let mut ws = connect(&server, false).await;
    start_turn(&mut ws, 8, 100_000).await;
    // Two idle periods, then the close's deadline (2 s) and its reply's (2 s more), and a margin.
    tokio::time::sleep(idle.saturating_mul(2) + Duration::from_secs(5)).await;
    let read = read_turn(&mut ws, Duration::from_secs(2), true).await;
    assert!(read.ended, "the server ended the connection: {read:?}");
    assert!(matches!(read.close, None | Some((1001, _))), "no close but 1001: {read:?}");
    server.stop().await;
}
