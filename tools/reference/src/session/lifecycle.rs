//! When a session leaves memory: evicted once nothing refers to it, discarded when its memory
//! can no longer be trusted, cleared at shutdown.

use std::sync::Arc;

use super::state::{Inner, Session, Shared};

impl Shared {
    /// Drops a session from memory when nothing refers to it: no connection, no run, no timer.
    pub async fn evict_if_quiescent(&self, session: &Arc<Session>) {
        let mut sessions = self.sessions.lock().await;
        let mut g = session.inner.lock().await;
        // The replica holding the run lease keeps the session: it renews the lease (`CLUSTER-003`).
        if g.attached.is_empty() && !g.driver_active && g.timers.is_empty() && g.lease.is_none() && !g.evicted {
            g.evicted = true;
            // Seqs reserved and not used go back, so that the next load does not skip them.
            if g.seq_reserved > g.next_seq {
                self.store.release_seqs_later(session.id.as_str(), g.next_seq);
            }
            sessions.remove(&session.id);
        }
    }

    /// Forgets every loaded session (server shutdown), ending their timers and giving back the
    /// seqs they reserved and did not use.
    pub async fn clear(&self) {
        let sessions: Vec<_> = self.sessions.lock().await.drain().map(|(_, s)| s).collect();
        for s in sessions {
            let mut g = s.inner.lock().await;
            for (_, armed) in g.timers.drain() {
                armed.task.abort();
            }
            g.evicted = true;
            if g.seq_reserved > g.next_seq {
                if let Err(e) = self.store.reserve_seqs(s.id.as_str(), g.next_seq).await {
                    eprintln!("chatwire-reference: session {}: cannot give back its reserved seqs: {e}", s.id);
                }
            }
        }
    }
}

/// Takes a session whose memory can no longer be trusted out of service: its connection is
/// closed, its timers end, and it leaves the registry (on a task: the caller holds its lock), so
/// that the next resume loads it from the log.
pub(crate) fn discard(session: &Arc<Session>, g: &mut Inner) {
    g.evicted = true;
    for a in g.attached.drain(..) {
        a.conn.kill.notify_one();
    }
    for (_, armed) in g.timers.drain() {
        armed.task.abort();
    }
    let session = session.clone();
    tokio::spawn(async move {
        let mut sessions = session.shared.sessions.lock().await;
        if sessions.get(&session.id).is_some_and(|s| Arc::ptr_eq(s, &session)) {
            sessions.remove(&session.id);
        }
    });
}
