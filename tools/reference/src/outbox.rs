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
//! before it flushes, so the frames of one change reach the socket in one write. A write fails
//! only when the socket took no byte for a whole write deadline: a peer that reads slowly is
//! slow, not gone (`TRANSPORT-019`).
//!
//! A connection ends early in one of two ways ([`Ending`]): its queue overflowed (4008), or it
//! answered no ping and read nothing (1001, `TRANSPORT-020`). Either way what is still queued is
//! dropped and the close goes out right after the frame in flight, within a deadline of its own.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::CloseCode;
use futures_util::{Sink, SinkExt};
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as WsCloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::keepalive::Progress;
use crate::protocol::Negotiated;

/// The reference's default bound on a connection's unsent bytes: 4 MiB, a quarter of the most
/// the spec allows (`chatwire_schema::SEND_QUEUE_MAX_BYTES`), so that several stalled clients
/// cost the server little. A patch is a few hundred bytes and a 1.0 update the size of the state,
/// so a client that reads at all never comes near it; one larger frame still goes out alone.
pub const DEFAULT_SEND_QUEUE_BYTES: u64 = 4 * 1024 * 1024;

/// How long the peer has to answer the 4008 close once it is on the wire before the TCP
/// connection is dropped (`TRANSPORT-016`).
pub(crate) const OVERFLOW_CLOSE_REPLY: Duration = Duration::from_secs(5);

/// How long the 1001 close of a connection found unresponsive may take to reach the socket, and
/// then the peer's close reply to arrive, before the TCP connection is dropped (`TRANSPORT-020`):
/// short, because the peer has read nothing for a whole idle period already.
pub(crate) const UNRESPONSIVE_CLOSE: Duration = Duration::from_secs(2);

/// The reason phrase of the 1001 close of a connection found unresponsive (`TRANSPORT-020`);
/// informative, as every reason phrase.
pub(crate) const UNRESPONSIVE_REASON: &str = "peer unresponsive";

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
        if self.queue.ending().is_some() {
            // Closing (4008 or 1001): nothing but that close goes out any more (not even a ping).
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
        if self.queue.ending().is_some() || !self.queue.reserve(texts.iter().map(String::len).sum()) {
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

/// Why a connection's writer stops sending what is queued, and which close goes out instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The send queue overflowed: close 4008 (`TRANSPORT-016`).
    Overflow = 1,
    /// No pong and no byte taken for a whole idle period: close 1001 (`TRANSPORT-020`).
    Unresponsive = 2,
}

impl Ending {
    fn from_u8(n: u8) -> Option<Ending> {
        match n {
            1 => Some(Ending::Overflow),
            2 => Some(Ending::Unresponsive),
            _ => None,
        }
    }

    /// The close frame that replaces what was queued.
    fn close(self) -> Message {
        match self {
            Ending::Overflow => close_message(CloseCode::SendQueueOverflow),
            Ending::Unresponsive => Message::Close(Some(CloseFrame {
                code: WsCloseCode::from(CloseCode::GoingAway.code()),
                reason: UNRESPONSIVE_REASON.into(),
            })),
        }
    }
}

/// The byte count of one connection's unsent frames.
#[derive(Debug)]
pub(crate) struct SendQueue {
    bytes: AtomicUsize,
    /// `None`: unbounded (only the planted fault `unbounded-send-queue`).
    bound: Option<usize>,
    /// The connection's [`Ending`] (0 while it has none).
    ending: AtomicU8,
    ended: Notify,
}

impl SendQueue {
    pub fn new(bound: Option<usize>) -> Self {
        SendQueue { bytes: AtomicUsize::new(0), bound, ending: AtomicU8::new(0), ended: Notify::new() }
    }

    /// Counts a text frame of `len` bytes in, or refuses it and overflows the queue when it would
    /// take a non-empty queue over the bound (or the queue already overflowed).
    pub fn reserve(&self, len: usize) -> bool {
        if self.ending().is_some() {
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
        if self.end(Ending::Overflow) {
            eprintln!("chatwire-reference: a client took its frames too slowly; closing with 4008");
        }
    }

    /// Ends the connection for `why`, unless it is ending already: the writer drops what is
    /// queued and sends `why`'s close. `false`: it was ending already.
    pub fn end(&self, why: Ending) -> bool {
        let ended = self.ending.compare_exchange(0, why as u8, Ordering::AcqRel, Ordering::Acquire).is_ok();
        if ended {
            self.ended.notify_one();
        }
        ended
    }

    /// Why the connection is ending, once it is.
    pub fn ending(&self) -> Option<Ending> {
        Ending::from_u8(self.ending.load(Ordering::Acquire))
    }

    /// Whether the queue overflowed.
    pub fn has_overflowed(&self) -> bool {
        self.ending() == Some(Ending::Overflow)
    }

    /// Resolves once the connection is ending (one waiter: the writer).
    async fn ended(&self) -> Ending {
        loop {
            if let Some(why) = self.ending() {
                return why;
            }
            self.ended.notified().await;
        }
    }
}

/// How a step of the writer ended.
enum Step {
    /// Done; go on.
    Done,
    /// The connection is ending meanwhile: only its close goes out now.
    Ended(Ending),
    /// The socket failed or took nothing for a whole write deadline: the writer stops.
    Failed,
}

/// The writer's deadlines and what it measures them by.
#[derive(Clone, Debug)]
pub(crate) struct WriteDeadlines {
    /// A write fails once the socket took no byte for this long.
    pub write: Duration,
    /// How long the frames in flight and the 4008 close may take after an overflow.
    pub overflow: Duration,
    /// The bytes the socket has taken (the peer's progress).
    pub progress: Progress,
}

/// Runs one write to the WebSocket layer, unless the connection starts ending first (the frame
/// in flight then stays in the layer's buffer, ahead of the close). The write fails when the
/// socket took no byte for a whole write deadline; a peer that keeps reading, however slowly,
/// keeps it going (`TRANSPORT-019`).
async fn step<F>(queue: &SendQueue, deadlines: &WriteDeadlines, write: F) -> Step
where
    F: std::future::Future<Output = Result<(), WsError>>,
{
    tokio::pin!(write);
    let mut seen = deadlines.progress.taken();
    // Bounded: each round either ends or saw the socket take bytes, which only a reading peer
    // makes it do for long.
    loop {
        tokio::select! {
            biased;
            written = &mut write => return if written.is_ok() { Step::Done } else { Step::Failed },
            why = queue.ended() => return Step::Ended(why),
            () = tokio::time::sleep(deadlines.write) => {
                let now = deadlines.progress.taken();
                if now == seen {
                    return Step::Failed;
                }
                seen = now;
            }
        }
    }
}

/// The writer task of a connection: hands what is queued to the WebSocket layer and flushes
/// whenever the queue is empty, each write within its deadline, until a close is sent or the
/// queue is gone. When the connection ends early ([`Ending`]) what is still queued is dropped and
/// its close follows the frames in flight: after an overflow within `deadlines.overflow` (the peer
/// has stopped reading, so this waits for it to read again), for an unresponsive peer within
/// [`UNRESPONSIVE_CLOSE`].
pub(crate) async fn write_loop<S>(
    mut sink: S,
    mut rx: mpsc::Receiver<Outgoing>,
    queue: &SendQueue,
    deadlines: WriteDeadlines,
) where
    S: Sink<Message, Error = WsError> + Unpin,
{
    // Whether frames were handed to the layer and not flushed yet, and the bytes of their texts.
    let mut dirty = false;
    let mut unflushed = 0;
    // Bounded: every iteration takes one item from the queue, and the loop ends with it.
    let ended = loop {
        let item = match rx.try_recv() {
            Ok(item) => item,
            Err(TryRecvError::Empty) => {
                if std::mem::take(&mut dirty) {
                    match step(queue, &deadlines, sink.flush()).await {
                        Step::Done => queue.release(std::mem::take(&mut unflushed)),
                        Step::Ended(why) => break Some(why),
                        Step::Failed => break None,
                    }
                }
                tokio::select! {
                    biased;
                    why = queue.ended() => break Some(why),
                    item = rx.recv() => match item {
                        Some(item) => item,
                        None => break None,
                    },
                }
            }
            Err(TryRecvError::Disconnected) => {
                let _ = step(queue, &deadlines, sink.flush()).await;
                break None;
            }
        };
        dirty = true;
        let done = match item {
            Outgoing::Text(text) => {
                unflushed += text.len();
                match step(queue, &deadlines, sink.feed(Message::text(text))).await {
                    Step::Done if unflushed >= FLUSH_AT => {
                        dirty = false;
                        let done = step(queue, &deadlines, sink.flush()).await;
                        if matches!(done, Step::Done) {
                            queue.release(std::mem::take(&mut unflushed));
                        }
                        done
                    }
                    done => done,
                }
            }
            Outgoing::Ping => step(queue, &deadlines, sink.feed(Message::Ping(Vec::new().into()))).await,
            Outgoing::Close(code) => {
                let _ = step(queue, &deadlines, sink.send(close_message(code))).await;
                break None;
            }
            Outgoing::Flush(ack) => {
                dirty = false;
                let done = step(queue, &deadlines, sink.flush()).await;
                if matches!(done, Step::Done) {
                    queue.release(std::mem::take(&mut unflushed));
                }
                let _ = ack.send(());
                done
            }
        };
        match done {
            Step::Done => {}
            Step::Ended(why) => break Some(why),
            Step::Failed => break None,
        }
    };
    queue.release(unflushed);
    let Some(why) = ended else { return };
    // Ending early: nothing queued goes out any more (TRANSPORT-016, TRANSPORT-020).
    rx.close();
    while rx.try_recv().is_ok() {}
    let deadline = match why {
        Ending::Overflow => deadlines.overflow,
        Ending::Unresponsive => UNRESPONSIVE_CLOSE,
    };
    if tokio::time::timeout(deadline, sink.send(why.close())).await.is_err() {
        eprintln!("chatwire-reference: the close for {why:?} could not be sent in {deadline:?}; dropped");
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
