//! Hostile clients that break RFC 6455 itself, written as raw TCP bytes: each connection must get
//! a close frame with the code of its violation (TRANSPORT-014: 1007, TRANSPORT-015: 1002), then
//! lose its TCP connection, and the server must keep serving others.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use chatwire_schema::CloseCode;
use common::{say_script, Client, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const DEADLINE: Duration = Duration::from_secs(10);

/// Opens a TCP connection and completes the WebSocket upgrade by hand.
async fn upgraded(addr: SocketAddr) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let request = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                   Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
                   Sec-WebSocket-Protocol: chatwire.v1\r\n\r\n";
    tcp.write_all(request.as_bytes()).await.expect("write upgrade");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // Bounded: the response head of a handshake is short.
    while !head.ends_with(b"\r\n\r\n") {
        assert!(head.len() < 4096, "response head too long");
        tokio::time::timeout(DEADLINE, tcp.read_exact(&mut byte)).await.expect("deadline").expect("read head");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
    tcp
}

/// One frame as a client writes it: `first` is the FIN/RSV/opcode byte.
fn frame(first: u8, masked: bool, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut out = vec![first, payload.len() as u8 | if masked { 0x80 } else { 0 }];
    let key = [0x37, 0xfa, 0x21, 0x3d];
    if masked {
        out.extend_from_slice(&key);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

const FIN: u8 = 0x80;
const RSV1: u8 = 0x40;
const TEXT: u8 = 0x1;
const CONTINUATION: u8 = 0x0;

/// Reads server frames until a close frame, returning its code; `None` if the TCP connection ends
/// without one.
async fn close_code(tcp: &mut TcpStream) -> Option<u16> {
    // Bounded: each iteration consumes one frame, and the deadline ends a silent server.
    loop {
        let mut head = [0u8; 2];
        match tokio::time::timeout(DEADLINE, tcp.read_exact(&mut head)).await.expect("deadline") {
            Ok(_) => {}
            Err(_) => return None,
        }
        assert_eq!(head[1] & 0x80, 0, "server frames are never masked");
        let len = match head[1] & 0x7f {
            126 => {
                let mut ext = [0u8; 2];
                tcp.read_exact(&mut ext).await.ok()?;
                u64::from(u16::from_be_bytes(ext))
            }
            127 => {
                let mut ext = [0u8; 8];
                tcp.read_exact(&mut ext).await.ok()?;
                u64::from_be_bytes(ext)
            }
            n => u64::from(n),
        };
        let mut payload = vec![0u8; usize::try_from(len).expect("small frame")];
        tcp.read_exact(&mut payload).await.ok()?;
        if head[0] & 0x0f == 0x8 {
            return payload.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
        }
    }
}

/// Sends `bytes` on a fresh upgraded connection and checks the close code and that the TCP
/// connection ends; then a well-behaved client still gets served.
async fn expect_closed_with(bytes: &[u8], want: CloseCode) {
    let server = TestServer::memory().await;
    let mut tcp = upgraded(server.addr).await;
    tcp.write_all(bytes).await.expect("write frames");
    assert_eq!(close_code(&mut tcp).await, Some(want.code()), "for frames {bytes:02x?}");
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(DEADLINE, tcp.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the server closes the TCP connection after the close frame");
    let mut c = Client::connect(&server.url).await;
    c.hello(Some(say_script(1))).await;
    c.user_message("m1", "still serving").await;
    c.until_run_complete().await;
    server.stop().await;
}

/// TRANSPORT-014
#[tokio::test]
async fn invalid_utf8_in_a_text_frame_closes_with_1007() {
    expect_closed_with(&frame(FIN | TEXT, true, &[b'{', 0xff, 0xfe, b'}']), CloseCode::InvalidPayload).await;
}

/// TRANSPORT-014: the check is on the reassembled message, so a code point split across
/// fragments is fine and an invalid one is caught.
#[tokio::test]
async fn invalid_utf8_across_fragments_closes_with_1007() {
    let mut bytes = frame(TEXT, true, &[b'"', 0xc3]);
    bytes.extend(frame(FIN | CONTINUATION, true, &[0x28, b'"']));
    expect_closed_with(&bytes, CloseCode::InvalidPayload).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn unknown_data_opcode_closes_with_1002() {
    expect_closed_with(&frame(FIN | 0x3, true, b"x"), CloseCode::ProtocolError).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn unknown_control_opcode_closes_with_1002() {
    expect_closed_with(&frame(FIN | 0xb, true, b""), CloseCode::ProtocolError).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn rsv_bit_set_closes_with_1002() {
    expect_closed_with(&frame(FIN | RSV1 | TEXT, true, b"{}"), CloseCode::ProtocolError).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn unmasked_client_frame_closes_with_1002() {
    expect_closed_with(&frame(FIN | TEXT, false, b"{}"), CloseCode::ProtocolError).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn continuation_without_a_start_closes_with_1002() {
    expect_closed_with(&frame(FIN | CONTINUATION, true, b"{}"), CloseCode::ProtocolError).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn new_message_inside_a_fragmented_one_closes_with_1002() {
    let mut bytes = frame(TEXT, true, b"{\"a\":");
    bytes.extend(frame(FIN | TEXT, true, b"{}"));
    expect_closed_with(&bytes, CloseCode::ProtocolError).await;
}

/// TRANSPORT-015
#[tokio::test]
async fn fragmented_control_frame_closes_with_1002() {
    expect_closed_with(&frame(0x9, true, b"ping"), CloseCode::ProtocolError).await;
}
