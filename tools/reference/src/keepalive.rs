//! Keep-alive that tells a slow peer from a dead one (`TRANSPORT-011`, `TRANSPORT-019`,
//! `TRANSPORT-020`).
//!
//! A ping goes out behind every byte the connection is already owed, so a client reading a large
//! turn slowly cannot answer it before it has read them all: an unanswered ping alone proves
//! nothing. The socket's progress does: [`Metered`] counts the bytes written to the socket, and
//! [`Progress::taken`] subtracts those the peer has not acknowledged yet (the kernel's send
//! queue), which leaves what reached the peer. Its receive buffer is bounded, so once that is full
//! the count only grows as the peer reads. Counting bytes written alone would not do: a kernel may
//! take megabytes into its send buffer at once and hold them while the peer reads them slowly.
//! A connection is unresponsive only when it answered no ping *and* took nothing for a whole idle
//! period ([`KeepAlive`]).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

#[cfg(unix)]
use std::os::fd::{AsRawFd, RawFd};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The bytes of the server's own ping frame (FIN and opcode, then a zero length: its payload is
/// empty and a server does not mask): writing it is not progress of the peer's.
const PING_FRAME_BYTES: u64 = 2;

/// How many bytes of one connection have reached the peer so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    written: Arc<AtomicU64>,
    /// The socket whose unacknowledged bytes are subtracted (`None`: not a TCP socket, every byte
    /// written counts).
    #[cfg(unix)]
    socket: Option<RawFd>,
}

impl Progress {
    /// The bytes written to the socket and acknowledged by the peer so far: what reached it.
    /// It only grows while the peer reads, once its receive buffer is full.
    pub fn taken(&self) -> u64 {
        let written = self.written.load(Ordering::Relaxed);
        #[cfg(target_os = "linux")]
        if let Some(unacknowledged) = self.socket.and_then(unacknowledged) {
            return written.saturating_sub(unacknowledged);
        }
        written
    }

    fn add(&self, n: usize) {
        self.written.fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// The bytes of `socket`'s send queue the peer has not acknowledged (sent or not), or `None` when
/// the call fails (the descriptor is no TCP socket).
#[cfg(target_os = "linux")]
fn unacknowledged(socket: RawFd) -> Option<u64> {
    let mut queued: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one c_int through the pointer, which points at `queued`,
    // alive for the call; on a descriptor that is no TCP socket the call only fails.
    let done = unsafe { libc::ioctl(socket, libc::TIOCOUTQ, &mut queued as *mut libc::c_int) };
    (done == 0).then(|| u64::try_from(queued).unwrap_or(0))
}

/// A stream that counts the bytes its writes hand the operating system into a [`Progress`].
#[derive(Debug)]
pub(crate) struct Metered<S> {
    inner: S,
    progress: Progress,
}

impl<S> Metered<S> {
    /// `inner`, its writes counted; the count is read through the returned [`Progress`]. Every
    /// byte written counts as taken: only [`Metered::tcp`] knows what the peer acknowledged.
    #[cfg(test)]
    pub fn new(inner: S) -> (Metered<S>, Progress) {
        let progress = Progress::default();
        (Metered { inner, progress: progress.clone() }, progress)
    }
}

impl Metered<tokio::net::TcpStream> {
    /// A TCP connection, its writes counted and its acknowledgements read from the socket; the
    /// descriptor is read only while the stream is open (the [`Progress`] is used by the
    /// connection's own tasks).
    pub fn tcp(inner: tokio::net::TcpStream) -> (Self, Progress) {
        let progress = Progress {
            written: Arc::default(),
            #[cfg(unix)]
            socket: Some(inner.as_raw_fd()),
        };
        (Metered { inner, progress: progress.clone() }, progress)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &polled {
            self.progress.add(*n);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = &polled {
            self.progress.add(*n);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// What to do about a connection that sent nothing for a whole idle period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Silence {
    /// Ping it (`TRANSPORT-011`).
    Ping,
    /// Its ping is unanswered, but it took bytes since: it is reading what it is owed, and the
    /// ping waits behind them (`TRANSPORT-019`). Wait another period.
    Reading,
    /// No pong and no byte taken for a whole period: close it with 1001 (`TRANSPORT-020`).
    Unresponsive,
}

/// The keep-alive of one connection: whether a ping is unanswered, and the socket's count when
/// it was last looked at.
#[derive(Debug, Default)]
pub(crate) struct KeepAlive {
    awaiting_pong: bool,
    /// [`Progress::taken`] at the last ping or the last period spent reading.
    mark: u64,
}

impl KeepAlive {
    /// Something arrived from the peer (a pong, or any frame): it is alive.
    pub fn heard(&mut self) {
        self.awaiting_pong = false;
    }

    /// A whole idle period passed without a frame from the peer; `written` is the socket's
    /// [`Progress::taken`] now.
    pub fn silent_period(&mut self, written: u64) -> Silence {
        if !self.awaiting_pong {
            self.awaiting_pong = true;
            self.mark = written.saturating_add(PING_FRAME_BYTES);
            return Silence::Ping;
        }
        if written > self.mark {
            self.mark = written;
            return Silence::Reading;
        }
        Silence::Unresponsive
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn an_idle_peer_that_answers_no_ping_is_unresponsive_after_two_periods() {
        let mut k = KeepAlive::default();
        assert_eq!(k.silent_period(100), Silence::Ping);
        // The ping's own two bytes are not the peer's progress.
        assert_eq!(k.silent_period(100 + PING_FRAME_BYTES), Silence::Unresponsive);
    }

    #[test]
    fn a_peer_that_takes_bytes_is_reading_however_long_its_pong_takes() {
        let mut k = KeepAlive::default();
        assert_eq!(k.silent_period(0), Silence::Ping);
        for period in 1..=10u64 {
            assert_eq!(k.silent_period(period * 40_000), Silence::Reading, "period {period}");
        }
        // It stopped reading: one period without a byte taken and without a pong.
        assert_eq!(k.silent_period(400_000), Silence::Unresponsive);
    }

    #[test]
    fn a_pong_ends_the_wait_and_the_next_silence_pings_again() {
        let mut k = KeepAlive::default();
        assert_eq!(k.silent_period(0), Silence::Ping);
        k.heard();
        assert_eq!(k.silent_period(2), Silence::Ping);
        assert_eq!(k.silent_period(4), Silence::Unresponsive);
    }

    #[tokio::test]
    async fn metered_counts_the_bytes_the_other_end_can_read() {
        let (a, mut b) = tokio::io::duplex(64);
        let (mut a, progress) = Metered::new(a);
        let writer = tokio::spawn(async move {
            a.write_all(&[7u8; 1000]).await.unwrap();
            a.flush().await.unwrap();
        });
        let mut seen = Vec::new();
        // The duplex holds 64 bytes: the count only grows as the other end reads.
        let mut chunk = [0u8; 100];
        let n = b.read(&mut chunk).await.unwrap();
        assert!(n > 0 && progress.taken() <= 64 + n as u64, "{} written, {n} read", progress.taken());
        seen.extend_from_slice(&chunk[..n]);
        b.read_to_end(&mut seen).await.unwrap();
        writer.await.unwrap();
        assert_eq!((seen.len(), progress.taken()), (1000, 1000));
    }

    /// On a real socket only what the peer acknowledged counts: a peer that stops reading stops
    /// the count once its receive buffer is full, however much the sender's kernel still holds.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn on_tcp_only_what_the_peer_acknowledged_counts_and_it_grows_as_the_peer_reads() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(16 * 1024).unwrap();
        let mut peer = socket.connect(listener.local_addr().unwrap()).await.unwrap();
        let (tcp, _) = listener.accept().await.unwrap();
        let (mut tcp, progress) = Metered::tcp(tcp);
        // Write until the socket takes no more (both buffers full).
        let chunk = vec![1u8; 64 * 1024];
        let filled = tokio::time::timeout(std::time::Duration::from_millis(500), async {
            loop {
                tcp.write_all(&chunk).await.unwrap();
            }
        })
        .await;
        assert!(filled.is_err(), "the socket stopped taking bytes");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let stalled = progress.taken();
        assert!(stalled > 0, "the peer's receive buffer took some");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(progress.taken(), stalled, "nothing more reaches a peer that does not read");
        // Reading what reached the peer makes room, and the kernel sends what it still holds (a
        // blocked write means its send buffer is full).
        let mut buf = vec![0u8; 64 * 1024];
        let mut read = 0u64;
        while read < stalled {
            read += peer.read(&mut buf).await.unwrap() as u64;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(progress.taken() > stalled, "reading made room, and the kernel sent more");
        drop(tcp);
    }
}
