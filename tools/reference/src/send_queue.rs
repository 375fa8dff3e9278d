//! The send queue of one connection: what the server holds for a client that has not taken it
//! yet, bounded in bytes (`TRANSPORT-016`), and the writer task that drains it.
//!
//! A text frame counts from the moment it is queued until the WebSocket layer has handed all of
//! it to the socket, so the frame in flight counts too. A frame that would take the queue over its
//! bound is not queued (unless the queue is empty: one frame larger than the bound still goes
//! out); the queue then overflows: nothing queued is sent any more, and the connection is closed
//! with 4008 right after the frame in flight. The session was detached at the refused frame
//! (`Inner::send`), exactly as if the connection had dropped (`TRANSPORT-017`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use chatwire_schema::CloseCode;
use futures_util::{Sink, SinkExt};
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as WsCloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::transport::Outgoing;

/// The reference's default bound on a connection's unsent bytes: 4 MiB, a quarter of the most
/// the spec allows (`chatwire_schema::SEND_QUEUE_MAX_BYTES`), so that several stalled clients
/// cost the server little. A patch is a few hundred bytes and a 1.0 update the size of the state,
/// so a client that reads at all never comes near it; one larger frame still goes out alone.
pub const DEFAULT_SEND_QUEUE_BYTES: u64 = 4 * 1024 * 1024;

/// How long the peer has to answer the 4008 close once it is on the wire before the TCP
/// connection is dropped (`TRANSPORT-016`).
pub(crate) const OVERFLOW_CLOSE_REPLY: Duration = Duration::from_secs(5);

/// The byte count of one connection's unsent frames.
#[derive(Debug)]
pub(crate) struct SendQueue {
    bytes: AtomicUsize,
    /// `None`: unbounded (only the planted fault `unbounded-send-queue`).
    bound: Option<usize>,
    overflowed: AtomicBool,
    overflow: Notify,
}

impl SendQueue {
    pub fn new(bound: Option<usize>) -> Self {
        SendQueue { bytes: AtomicUsize::new(0), bound, overflowed: AtomicBool::new(false), overflow: Notify::new() }
    }

    /// Counts a text frame of `len` bytes in, or refuses it and overflows the queue when it would
    /// take a non-empty queue over the bound (or the queue already overflowed).
    pub fn reserve(&self, len: usize) -> bool {
        if self.has_overflowed() {
            return false;
        }
        let before = self.bytes.fetch_add(len, Ordering::AcqRel);
        match self.bound {
            Some(bound) if before > 0 && before.saturating_add(len) > bound => {
                self.bytes.fetch_sub(len, Ordering::AcqRel);
                self.overflow();
                false
            }
            _ => true,
        }
    }

    /// The bytes of frames queued and not yet taken.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// A frame of `len` bytes left the queue (written, or dropped with it).
    pub fn release(&self, len: usize) {
        self.bytes.fetch_sub(len, Ordering::AcqRel);
    }

    /// Overflows the queue: the writer sends nothing more but the 4008 close.
    pub fn overflow(&self) {
        if !self.overflowed.swap(true, Ordering::AcqRel) {
            eprintln!("chatwire-reference: a client took its frames too slowly; closing with 4008");
            self.overflow.notify_one();
        }
    }

    /// Whether the queue overflowed.
    pub fn has_overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Acquire)
    }

    /// Resolves once the queue has overflowed (one waiter: the writer).
    async fn overflowed(&self) {
        if !self.has_overflowed() {
            self.overflow.notified().await;
        }
    }
}

/// The writer task of a connection: sends what is queued, each write within `write_timeout`,
/// until a close is sent or the queue is gone; on overflow, the frame in flight is finished and the
/// 4008 close follows it, both within `overflow_deadline` (the peer has stopped reading, so this
/// waits for it to read again).
pub(crate) async fn write_loop<S>(
    mut sink: S,
    mut rx: mpsc::Receiver<Outgoing>,
    queue: &SendQueue,
    write_timeout: Duration,
    overflow_deadline: Duration,
) where
    S: Sink<Message, Error = WsError> + Unpin,
{
    // Bounded: every iteration takes one item from the queue, and the loop ends with it.
    loop {
        let item = tokio::select! {
            biased;
            () = queue.overflowed() => break,
            item = rx.recv() => match item {
                Some(item) => item,
                None => return,
            },
        };
        let (message, text_len, last) = match item {
            Outgoing::Text(text) => {
                let len = text.len();
                (Message::text(text), Some(len), false)
            }
            Outgoing::Ping => (Message::Ping(Vec::new().into()), None, false),
            Outgoing::Close(code) => (close_message(code), None, true),
            Outgoing::Flush(ack) => {
                let _ = tokio::time::timeout(write_timeout, sink.flush()).await;
                let _ = ack.send(());
                continue;
            }
        };
        let sent = tokio::select! {
            biased;
            sent = tokio::time::timeout(write_timeout, sink.send(message)) => sent,
            // The frame in flight stays in the WebSocket layer's buffer, ahead of the close.
            () = queue.overflowed() => break,
        };
        if let Some(len) = text_len {
            queue.release(len);
        }
        match sent {
            Ok(Ok(())) if !last => {}
            _ => return,
        }
    }
    // Overflowed: nothing queued goes out any more (TRANSPORT-016).
    rx.close();
    while rx.try_recv().is_ok() {}
    let close = close_message(CloseCode::SendQueueOverflow);
    if tokio::time::timeout(overflow_deadline, sink.send(close)).await.is_err() {
        eprintln!("chatwire-reference: the 4008 close could not be sent in {overflow_deadline:?}; dropped");
    }
}

/// A close frame with `code` and its reason phrase.
pub(crate) fn close_message(code: CloseCode) -> Message {
    Message::Close(Some(CloseFrame { code: WsCloseCode::from(code.code()), reason: code.reason().into() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_over_the_bound_overflows_a_non_empty_queue_only() {
        let q = SendQueue::new(Some(100));
        assert!(q.reserve(250), "one frame larger than the bound goes out on an empty queue");
        assert!(!q.reserve(1), "nothing more while it is queued");
        assert!(q.has_overflowed());
        assert!(!q.reserve(0) && !q.reserve(1), "an overflowed queue takes nothing");

        let q = SendQueue::new(Some(100));
        assert!(q.reserve(60) && q.reserve(40), "up to the bound");
        assert!(!q.reserve(1), "one byte over");
        let q = SendQueue::new(Some(100));
        assert!(q.reserve(60));
        q.release(60);
        assert!(q.reserve(100), "released bytes are free again");

        let unbounded = SendQueue::new(None);
        assert!(unbounded.reserve(usize::MAX / 2) && unbounded.reserve(1000));
        assert!(!unbounded.has_overflowed());
    }
}
