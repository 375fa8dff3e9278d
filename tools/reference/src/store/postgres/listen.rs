//! The notices: one dedicated connection (not from the pool) LISTENs on the `chatwire` channel,
//! and a task turns each notification into a [`Notice::Committed`] on a bounded broadcast
//! channel.
//!
//! The connection is checked every [`PING`] (a query with a deadline): a server that went away
//! or stopped answering is noticed even when no notification is due. On loss the task
//! reconnects with a growing backoff (up to [`MAX_BACKOFF`]) and, once it LISTENs again, sends
//! [`Notice::Lost`]: notifications sent meanwhile were missed, so every session held in memory
//! must be synced from the store (a sync after the LISTEN is in place misses nothing).
//!
//! A receiver that falls more than [`NOTICE_BUFFER`] notices behind gets `RecvError::Lagged`
//! from the broadcast channel: notices were dropped for it, and it must treat that exactly like
//! [`Notice::Lost`].

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, NoTls};

use super::config::{CONNECT_TIMEOUT, OP_DEADLINE};
use crate::store::cluster::{parse_payload, CHANNEL};
use crate::store::error::StoreError;
use crate::store::types::Notice;

/// Notices a receiver may fall behind before it lags (and must sync everything).
pub const NOTICE_BUFFER: usize = 4096;
/// Notifications read off the connection and not yet forwarded, at most.
const FORWARD_BUFFER: usize = 1024;
/// How often the LISTEN connection is checked.
pub const PING: Duration = Duration::from_secs(5);
/// The first wait before reconnecting; doubled after each failure.
const MIN_BACKOFF: Duration = Duration::from_millis(50);
/// The longest wait before reconnecting.
pub const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Starts the listener; returns once it LISTENs (or with why it could not, the first time).
pub(super) async fn start(
    config: tokio_postgres::Config,
    notices: broadcast::Sender<Notice>,
) -> Result<JoinHandle<()>, StoreError> {
    let (ready, first) = oneshot::channel();
    let task = tokio::spawn(run(config, notices, ready));
    match tokio::time::timeout(CONNECT_TIMEOUT + OP_DEADLINE, first).await {
        Ok(Ok(Ok(()))) => Ok(task),
        Ok(Ok(Err(e))) => {
            task.abort();
            Err(e)
        }
        Ok(Err(_)) => {
            task.abort();
            Err(StoreError::Timeout { what: "listen for notices", after: CONNECT_TIMEOUT + OP_DEADLINE })
        }
        Err(_) => {
            task.abort();
            Err(StoreError::Timeout { what: "listen for notices", after: CONNECT_TIMEOUT + OP_DEADLINE })
        }
    }
}

/// The task: listen, and after every loss reconnect, listen again and say [`Notice::Lost`].
async fn run(
    config: tokio_postgres::Config,
    notices: broadcast::Sender<Notice>,
    ready: oneshot::Sender<Result<(), StoreError>>,
) {
    let mut ready = Some(ready);
    let mut backoff = MIN_BACKOFF;
    loop {
        let listening = |()| {
            if let Some(ready) = ready.take() {
                let _ = ready.send(Ok(()));
            } else {
                // Sent errors only mean nobody listens right now.
                let _ = notices.send(Notice::Lost);
            }
        };
        let outcome = listen_once(&config, &notices, listening).await;
        if let Some(ready) = ready.take() {
            // The first connection failed: the store does not open.
            let _ = ready.send(outcome);
            return;
        }
        match outcome {
            // It listened a while: start the backoff over.
            Ok(()) => backoff = MIN_BACKOFF,
            Err(e) => {
                eprintln!("chatwire-reference: the postgres notification connection failed: {e}; reconnecting");
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
        tokio::time::sleep(backoff).await;
    }
}

/// Connects, LISTENs, calls `listening`, and forwards notifications until the connection is
/// lost (`Ok`); `Err`: connecting or listening failed.
async fn listen_once(
    config: &tokio_postgres::Config,
    notices: &broadcast::Sender<Notice>,
    listening: impl FnOnce(()),
) -> Result<(), StoreError> {
    let (client, mut connection) = match tokio::time::timeout(CONNECT_TIMEOUT, config.connect(NoTls)).await {
        Ok(connected) => connected?,
        Err(_) => return Err(StoreError::Timeout { what: "connect for notices", after: CONNECT_TIMEOUT }),
    };
    // The connection is driven on its own task, which forwards notifications here.
    let (forward, mut forwarded) = mpsc::channel(FORWARD_BUFFER);
    let driver = AbortOnDrop(tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message {
                if forward.send(n).await.is_err() {
                    return;
                }
            }
        }
    }));
    match tokio::time::timeout(OP_DEADLINE, client.batch_execute(&format!("LISTEN {CHANNEL}"))).await {
        Ok(listened) => listened?,
        Err(_) => return Err(StoreError::Timeout { what: "listen for notices", after: OP_DEADLINE }),
    }
    listening(());
    let mut ping = tokio::time::interval(PING);
    ping.tick().await;
    loop {
        tokio::select! {
            n = forwarded.recv() => match n {
                Some(n) => {
                    if let Some((session_id, next_seq)) = parse_payload(n.payload()) {
                        let _ = notices.send(Notice::Committed { session_id, next_seq });
                    }
                }
                None => break,
            },
            _ = ping.tick() => {
                match tokio::time::timeout(OP_DEADLINE, client.simple_query("SELECT 1")).await {
                    Ok(Ok(_)) => {}
                    _ => break,
                }
            }
        }
    }
    drop(driver);
    Ok(())
}

/// Aborts a task when dropped.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
