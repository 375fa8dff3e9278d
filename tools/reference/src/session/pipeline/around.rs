//! What surrounds a commit, whether of one change (`commit.rs`) or of a batch (`batch.rs`): the
//! commit seam right before it, the planted fan-out wait after it, and the state going back to
//! the log after a failure.

use std::sync::Arc;

use crate::session::attachment::{Attachment, Group};
use crate::session::fold::fold_log;
use crate::session::lifecycle::discard;
use crate::session::state::{Inner, Session};
use crate::store::{LogKind, LogRow};

/// The commit seam sees what the change announces: a connection's frames, or with none attached
/// (a recovery) the events it commits.
pub(super) fn before_commit(session: &Session, g: &Inner, groups: &[Group], log: &[LogRow]) {
    let faults = &session.shared.faults;
    match groups.first() {
        Some(first) => {
            let wire: Vec<String> = first.wire.iter().map(|p| p.text.clone()).collect();
            let conn = first.members.first().and_then(|i| g.attached.get(*i)).map(|a| &a.conn);
            faults.commit.before_commit(&wire, conn);
        }
        None => {
            let events = log.iter().filter(|row| matches!(row.kind, LogKind::Event));
            faults.commit.before_commit(&events.map(|row| row.frame.clone()).collect::<Vec<_>>(), None);
        }
    }
}

/// The planted fault `stalled-tab-slows-others`: the fan-out waits until every attached
/// connection has taken its frames, as a server writing to each socket in turn would.
pub(super) async fn wait_for_slowest(attached: &[Attachment]) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while attached.iter().any(|a| a.conn.queue.bytes() > 64 * 1024 && !a.conn.queue.has_overflowed()) {
        if tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// After a failed change: the state goes back to the fold of the log, which holds exactly what
/// was committed. If even the log cannot be read, the session is dropped from memory (its
/// connection closed) so that the next resume loads it afresh.
pub(super) async fn restore_state(session: &Arc<Session>, g: &mut Inner) {
    match session.shared.store.load_session_from_start(session.id.as_str()).await {
        // Only what this replica had reached: later commits (another replica's, on a shared
        // store) reach its connections by replay, in order.
        Ok(Some(stored)) => g.state = fold_log(&session.id, &stored.events, Some(g.next_seq)).0,
        failed => {
            eprintln!("chatwire-reference: session {}: cannot restore the state from the log ({failed:?})", session.id);
            discard(session, g);
        }
    }
}
