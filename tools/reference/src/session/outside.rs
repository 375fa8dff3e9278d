//! Frames that change no state (an error, a history page, what a planted fault sends instead):
//! each takes the session's next seq (`SEQ-001`, `SEQ-002`) and goes to one connection.
//!
//! On the embedded store a seq for such a frame costs no commit of its own: it comes from a
//! durable reservation, one commit per [`SEQ_RESERVATION`] of them, and a restart resumes above
//! every reserved seq. On a shared store the seq is committed (the replicas share the counter,
//! `CLUSTER-002`).

use std::sync::Arc;

use chatwire_schema::{ErrorFrame, Id, ServerFrame};

use super::state::{Inner, Session};
use crate::outbox::{ConnHandle, Outgoing};
use crate::protocol::{Refusal, CONFLICT_RETRIES};
use crate::store::{Commit, StoreError};

/// Seqs one reservation sets aside for frames that change no state ([`take_reserved_seq`]): a
/// refusal costs a commit (an fsync under `Durability::Full`) once per this many. A crash leaves
/// the reserved seqs never sent as a gap (`SEQ-003`).
pub(crate) const SEQ_RESERVATION: u64 = 4096;

/// The seq of a frame that changes no state on the embedded store: the next one, durable without
/// a commit of its own wherever a reservation covers it. `None`: the reservation could not be
/// written, and no seq is taken.
pub(crate) async fn take_reserved_seq(session: &Session, g: &mut Inner) -> Option<u64> {
    let seq = g.next_seq;
    if seq >= g.seq_reserved {
        let upto = seq + SEQ_RESERVATION;
        if let Err(e) = session.shared.store.reserve_seqs(session.id.as_str(), upto).await {
            eprintln!("chatwire-reference: session {}: cannot reserve seqs: {e}", session.id);
            return None;
        }
        g.seq_reserved = upto;
    }
    g.next_seq = seq + 1;
    Some(seq)
}

/// Sends a typed error to `conn`, consuming a seq of the session.
pub(crate) async fn send_error(
    session: &Arc<Session>,
    g: &mut Inner,
    conn: &ConnHandle,
    refusal: Refusal,
    in_reply_to: Option<Id>,
) {
    let frame = ErrorFrame {
        seq: None,
        code: refusal.code,
        message: refusal.message,
        in_reply_to,
        fatal: refusal.code.is_fatal(),
        supported_versions: None,
    };
    send_outside_state(session, g, conn, ServerFrame::Error(frame)).await;
}

/// Sends a frame that changes no state to `conn` with the next seq, which is made durable first;
/// if it cannot be, an error goes out without a seq and anything else is not sent. On a shared
/// store, where another replica committed first, what it committed is read (and sent on) before
/// the seq is taken again (`CLUSTER-002`).
pub(crate) async fn send_outside_state(
    session: &Arc<Session>,
    g: &mut Inner,
    conn: &ConnHandle,
    mut frame: ServerFrame,
) {
    let seq = match session.shared.store.is_shared() {
        false => take_reserved_seq(session, g).await,
        true => take_committed_seq(session, g).await,
    };
    match seq {
        Some(seq) => frame.set_seq(seq),
        None if matches!(frame, ServerFrame::Error(_)) => {}
        None => return,
    }
    if let Ok(text) = serde_json::to_string(&frame) {
        conn.send(Outgoing::Text(text));
    }
}

/// The next seq on a shared store, committed (the replicas' counter); `None` where it could not be.
async fn take_committed_seq(session: &Arc<Session>, g: &mut Inner) -> Option<u64> {
    for _ in 0..CONFLICT_RETRIES {
        let seq = g.next_seq;
        let reserve = Commit {
            next_seq: seq + 1,
            base_seq: super::pipeline::base_seq(&session.shared, g.lease, seq),
            ..Commit::default()
        };
        match session.shared.store.commit(session.id.as_str(), reserve).await {
            Ok(_) => {
                g.next_seq = seq + 1;
                return Some(seq);
            }
            // What another replica committed first reaches this one (`replica.rs`).
            Err(StoreError::Conflict { .. }) => (session.shared.tasks.sync)(session, g).await,
            Err(e) => {
                eprintln!("chatwire-reference: cannot persist seq for an error: {e}");
                return None;
            }
        }
    }
    None
}

/// Sends `conn` a fatal error of the session and closes it with the error's close code.
pub(crate) async fn end_connection(session: &Arc<Session>, g: &mut Inner, conn: &ConnHandle, refusal: Refusal) {
    let close = refusal.code.close_code();
    send_error(session, g, conn, refusal, None).await;
    if let Some(close) = close {
        conn.send(Outgoing::Close(close));
    }
}
