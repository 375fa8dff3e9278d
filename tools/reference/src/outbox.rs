//! The outbox of one connection, below the session: what the session hands a connection
//! ([`ConnHandle`], [`Outgoing`]), the send queue that bounds what the server holds for a client
//! that has not taken it yet (`TRANSPORT-016`), and the writer task that drains it.
//!
//! A text frame counts from the moment it is queued until the WebSocket layer has handed all of
//! it to the socket, so the frames in flight count too. A frame that would take the queue over
//! its bound is not queued (unless the queue is empty: one frame larger than the bound still goes
//! out); the queue then overflows: nothing queued is sent any more, and the connection is closed
//! with 4008 right after the frames in flight. The session detaches the connection at the refused
//! frame, exactly as if it had dropped (`TRANSPORT-017`).
//!
//! The writer hands the frames queued together (up to [`FLUSH_AT`] bytes) to the WebSocket layer
//! before it flushes, so the frames of one change reach the socket in one write.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::CloseCode;
use futures_util::{Sink, SinkExt};
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as WsCloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::protocol::Negotiated;

/// The reference's default bound on a connection's unsent bytes: 4 MiB, a quarter of the most
/// the spec allows (`chatwire_schema::SEND_QUEUE_MAX_BYTES`), so that several stalled clients
/// cost the server little. A patch is a few hundred bytes and a 1.0 update the size of the state,
/// so a client that reads at all never comes near it; one larger frame still goes out alone.
pub const DEFAULT_SEND_QUEUE_BYTES: u64 = 4 * 1024 * 1024;

/// How long the peer has to answer the 4008 close once it is on the wire before the TCP
/// connection is dropped (`TRANSPORT-016`).
pub(crate) const OVERFLOW_CLOSE_REPLY: Duration = Duration::from_secs(5);

/// The bytes of text the writer hands the WebSocket layer before it flushes, however much more is
/// queued: a frame counts in the send queue until flushed, so this is how far the count may run
/// ahead of the socket.
const FLUSH_AT: usize = 64 * 1024;

/// Frames queued for one connection before it counts as too slow and is dropped.
pub(crate) const OUTBOX_CAPACITY: usize = 4096;

/// What the connection's writer task sends.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A text frame.
    Text(String),
    /// A close frame with this code (and its reason phrase); the writer stops after it.
    Close(CloseCode),
    /// A ping (idle check).
    Ping,
    /// Flush, then acknowledge.
    Flush(oneshot::Sender<()>),
}

/// A connection as the session sees it: where to send, and how to end it.
#[derive(Clone, Debug)]
pub(crate) struct ConnHandle {
    pub id: u64,
    /// What the connection negotiated (set by its `session.hello`; 1.0 before).
    pub negotiated: Negotiated,
    pub out: mpsc::Sender<Outgoing>,
    pub kill: Arc<Notify>,
    /// The bytes of its frames not yet taken (`TRANSPORT-016`).
    pub queue: Arc<SendQueue>,
}

impl ConnHandle {
    /// A connection whose writer drains `out`, its unsent bytes bounded by `bound` (`None`:
    /// unbounded, only under a planted fault).
    pub fn new(id: u64, bound: Option<usize>) -> (ConnHandle, mpsc::Receiver<Outgoing>) {
        let (out, rx) = mpsc::channel(OUTBOX_CAPACITY);
        let queue = Arc::new(SendQueue::new(bound));
        (ConnHandle { id, negotiated: Negotiated::none(), out, kill: Arc::new(Notify::new()), queue }, rx)
    }

    /// Queues a frame. A text frame that would take the send queue over its bound is refused and
    /// the connection closes with 4008 ([`SendQueue`]); `false` says the frame was not queued.
    pub fn send(&self, item: Outgoing) -> bool {
        if self.queue.has_overflowed() {
            // Closing with 4008: nothing but that close goes out any more (not even a ping).
            return false;
        }
        let text_len = match &item {
            Outgoing::Text(text) => Some(text.len()),
            _ => None,
        };
        if let Some(len) = text_len {
            if !self.queue.reserve(len) {
                return false;
            }
        }
        if self.out.try_send(item).is_ok() {
            return true;
        }
        match text_len {
            // More frames than the outbox holds: too slow, like too many bytes.
            Some(len) => {
                self.queue.release(len);
                self.queue.overflow();
            }
            None => self.kill.notify_one(),
        }
        false
    }

    /// Queues the frames of one change (or a welcome and its state) as one unit: the bound is
    /// checked once for all of them, so that on an empty queue a state larger than the bound still
    /// goes out with the event before it (`TRANSPORT-016`'s single-frame exception, taken per
    /// unit). `false`: not all were queued, and the connection is closing with 4008.
    pub fn send_all(&self, texts: Vec<String>) -> bool {
        if self.queue.has_overflowed() || !self.queue.reserve(texts.iter().map(String::len).sum()) {
            return false;
        }
        let mut texts = texts.into_iter();
        while let Some(text) = texts.next() {
            let len = text.len();
            if self.out.try_send(Outgoing::Text(text)).is_err() {
                // Counted in above but not queued: out again, with the rest.
                self.queue.release(len + texts.map(|t| t.len()).sum::<usize>());
                self.queue.overflow();
                return false;
            }
        }
        true
    }
}

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

    /// Frames of `len` bytes left the queue (written, or dropped with it).
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

/// How a step of the writer ended.
enum Step {
    /// Done; go on.
    Done,
    /// The queue overflowed meanwhile: only the 4008 close goes out now.
    Overflowed,
    /// The socket failed or the write took too long: the writer stops.
    Failed,
}

/// Runs one write to the WebSocket layer within `write_timeout`, unless the queue overflows first
/// (the frame in flight then stays in the layer's buffer, ahead of the close).
async fn step<F>(queue: &SendQueue, write_timeout: Duration, write: F) -> Step
where
    F: std::future::Future<Output = Result<(), WsError>>,
{
    tokio::select! {
        biased;
        written = tokio::time::timeout(write_timeout, write) => match written {
            Ok(Ok(())) => Step::Done,
            _ => Step::Failed,
        },
        () = queue.overflowed() => Step::Overflowed,
    }
}

/// The writer task of a connection: hands what is queued to the WebSocket layer and flushes
/// whenever the queue is empty, each write within `write_timeout`, until a close is sent or the
/// queue is gone; on overflow, the frames in flight are finished and the 4008 close follows them,
/// both within `overflow_deadline` (the peer has stopped reading, so this waits for it to read
/// again).
pub(crate) async fn write_loop<S>(
    mut sink: S,
    mut rx: mpsc::Receiver<Outgoing>,
    queue: &SendQueue,
    write_timeout: Duration,
    overflow_deadline: Duration,
) where
    S: Sink<Message, Error = WsError> + Unpin,
{
    // Whether frames were handed to the layer and not flushed yet, and the bytes of their texts.
    let mut dirty = false;
    let mut unflushed = 0;
    // Bounded: every iteration takes one item from the queue, and the loop ends with it.
    let overflowed = loop {
        let item = match rx.try_recv() {
            Ok(item) => item,
            Err(TryRecvError::Empty) => {
                if std::mem::take(&mut dirty) {
                    match step(queue, write_timeout, sink.flush()).await {
                        Step::Done => queue.release(std::mem::take(&mut unflushed)),
                        Step::Overflowed => break true,
                        Step::Failed => break false,
                    }
                }
                tokio::select! {
                    biased;
                    () = queue.overflowed() => break true,
                    item = rx.recv() => match item {
                        Some(item) => item,
                        None => break false,
                    },
                }
            }
            Err(TryRecvError::Disconnected) => {
                let _ = step(queue, write_timeout, sink.flush()).await;
                break false;
            }
        };
        dirty = true;
        let done = match item {
            Outgoing::Text(text) => {
                unflushed += text.len();
                match step(queue, write_timeout, sink.feed(Message::text(text))).await {
                    Step::Done if unflushed >= FLUSH_AT => {
                        dirty = false;
                        let done = step(queue, write_timeout, sink.flush()).await;
                        if matches!(done, Step::Done) {
                            queue.release(std::mem::take(&mut unflushed));
                        }
                        done
                    }
                    done => done,
                }
            }
            Outgoing::Ping => step(queue, write_timeout, sink.feed(Message::Ping(Vec::new().into()))).await,
            Outgoing::Close(code) => {
                let _ = step(queue, write_timeout, sink.send(close_message(code))).await;
                break false;
            }
            Outgoing::Flush(ack) => {
                dirty = false;
                let done = step(queue, write_timeout, sink.flush()).await;
                if matches!(done, Step::Done) {
                    queue.release(std::mem::take(&mut unflushed));
                }
                let _ = ack.send(());
                done
            }
        };
        match done {
            Step::Done => {}
            Step::Overflowed => break true,
            Step::Failed => break false,
        }
    };
    queue.release(unflushed);
    if !overflowed {
        return;
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
