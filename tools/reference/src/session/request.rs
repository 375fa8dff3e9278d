//! A bound connection's request, carried out on its session: on the whole state (`partial.rs`),
//! after what other replicas committed (`replica.rs`), with the connection as the requester (its
//! answers go to it alone, `ATTACH-005`), and again on the newer state where another replica
//! committed first.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::expiry::expire_due;
use super::partial::ensure_full;
use super::replica::sync;
use super::state::{Inner, Session};
use crate::outbox::ConnHandle;
use crate::protocol::{contention_pause, Refusal, CONFLICT_RETRIES};

/// One attempt at a request: the session core's decision for it, and its commit.
pub(crate) type Attempt<'a> = Pin<Box<dyn Future<Output = Result<(), Refusal>> + Send + 'a>>;

/// Carries out a request of `conn` on `session`, each attempt by `attempt`; a connection no
/// longer attached (taken over meanwhile) gets nothing.
pub(crate) async fn carry_out<F>(session: &Arc<Session>, conn: &ConnHandle, mut attempt: F) -> Result<(), Refusal>
where
    F: for<'a> FnMut(&'a Arc<Session>, &'a mut Inner, &'a ConnHandle) -> Attempt<'a>,
{
    let mut g = session.inner.lock().await;
    // A request reads and changes the whole state, not a window of it.
    ensure_full(session, &mut g).await?;
    let mut tries = 0;
    loop {
        // What other replicas committed reaches this one before the request is judged.
        sync(session, &mut g).await;
        if !g.is_attached(conn) {
            return Ok(());
        }
        // A deadline whose task is late still comes before the request (`TOOL-018`).
        if let Err(e) = expire_due(session, &mut g).await {
            if e.is_contention() && tries < CONFLICT_RETRIES {
                tries += 1;
                contention_pause(tries).await;
                continue;
            }
            return Err(e.into());
        }
        g.requester = Some(conn.id);
        let result = attempt(session, &mut g, conn).await;
        g.requester = None;
        match result {
            // Another replica committed first: nothing changed; carry it out on the newer state.
            Err(r) if r.contention && tries < CONFLICT_RETRIES => {
                tries += 1;
                contention_pause(tries).await;
            }
            result => return result,
        }
    }
}
