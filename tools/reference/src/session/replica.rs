//! One replica among several on a shared store ([spec/cluster.md](../../../../spec/cluster.md)).
//!
//! Every replica may load any session and serve connections for it. A replica commits a change
//! only from the session's newest committed seq (the store refuses a stale base with a conflict,
//! and the request is carried out again on the newer state), so seq grows per session whichever
//! replica commits (`CLUSTER-002`). The replica holding the session's run lease drives its run
//! and arms its deadlines; its commits are fenced by the lease's token, so a replica that lost
//! the lease can never commit a step (`CLUSTER-003`). Others learn of each commit through the
//! store's notices and replay it to their own connections (`CLUSTER-006`). A lease nobody
//! renews expires and another replica recovers the session (`CLUSTER-004`).
//!
//! On the embedded store (one process) none of this runs: the store is not shared.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chatwire_schema::{ErrorCode, ErrorFrame, Id, ServerFrame, ToolCallStatus};

use super::attachment::Attachment;
use super::change::ChangeRecord;
use super::launch;
use super::lifecycle::discard;
use super::outside::{end_connection, take_reserved_seq};
use super::partial::ensure_full;
use super::pipeline::{self, base_seq, is_active, lost_lease};
use super::state::{Inner, Session};
use crate::agent::Cursor;
use crate::outbox::Outgoing;
use crate::plan::TurnPlan;
use crate::protocol::{EmitError, Refusal, CONFLICT_RETRIES};
use crate::store::{Commit, StoreError, StoredChange};

/// [`sync`] as the core's tasks name it (`state::Tasks`).
pub(crate) fn sync_task<'a>(
    session: &'a Arc<Session>,
    g: &'a mut Inner,
) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
    Box::pin(sync(session, g))
}

/// Brings the session up to the store's newest commit, replaying to this replica's connections
/// what other replicas committed. Nothing to do on an embedded store.
pub(crate) async fn sync(session: &Arc<Session>, g: &mut Inner) {
    let sh = &session.shared;
    // The planted fault `ownership-not-fenced`: the replica that drives never reads what others
    // committed, so it goes on from what it had when it lost the run.
    if !sh.store.is_shared() || g.evicted || (g.lease.is_some() && !sh.faults.cluster.fences_commits()) {
        return;
    }
    let changes = match sh.store.changes_since(session.id.as_str(), g.next_seq.max(g.replayed_to)).await {
        Ok(changes) => changes,
        Err(e) => {
            eprintln!("chatwire-reference: session {}: cannot read newer commits: {e}", session.id);
            return;
        }
    };
    // Replaying changes the state: a partial one is made whole first (`partial.rs`).
    if !changes.is_empty() {
        if let Err(e) = ensure_full(session, g).await {
            eprintln!("chatwire-reference: session {}: cannot replay newer commits: {e}", session.id);
            return;
        }
    }
    // Connections a replayed resume took over are ended once every change read is replayed:
    // ending one commits a seq, and a commit in the middle of the list would read on past the
    // changes still to replay here and then find them behind its own seq. Until its error is
    // committed such a connection stays attached and gets what was committed before it, so the
    // error's seq comes after every event it was not sent (`ATTACH-004`, `SESSION-010`).
    let mut taken_over = Vec::new();
    for change in changes {
        match replay(session, g, change).await {
            Ok(ended) => taken_over.extend(ended),
            Err(e) => {
                // Memory no longer matches the log: take the session out of service; its clients
                // resume and get it afresh from the log.
                eprintln!("chatwire-reference: session {}: cannot replay a commit: {e}", session.id);
                discard(session, g);
                return;
            }
        }
    }
    for conn_id in taken_over {
        // A nested read (a conflict while ending another) may have ended it already.
        if g.attached.iter().any(|a| a.conn.id == conn_id) {
            end_taken_over(session, g, conn_id).await;
        }
    }
    // Deadlines of calls that settled elsewhere (a response, a superseding message) are over.
    let settled: Vec<Id> = g
        .timers
        .keys()
        .filter(|id| g.state.tool_call(id).is_none_or(|c| c.status != ToolCallStatus::Pending))
        .cloned()
        .collect();
    for id in settled {
        launch::disarm(g, &id);
    }
    if !is_active(&g.state) {
        if g.lease.is_some() || g.driver_active {
            lost_lease(g);
        }
    } else if g.lease.is_some() && !g.driver_active {
        // A change committed elsewhere (a response, an expiry's new slice) gave the run we
        // drive a step to play.
        launch::start_driver(session, g);
    }
}

/// Why a commit of another replica could not be replayed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplayError {
    #[error("commit starts at seq {found}, this replica is at {expected}")]
    Gap { expected: u64, found: u64 },
    #[error("replaying the commit used seqs up to {got}, the commit up to {want}")]
    Seqs { got: u64, want: u64 },
    #[error("stored change unreadable: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Emit(#[from] EmitError),
}

/// Replays one change another replica committed: the same frames, with the same seqs, go to
/// this replica's connections, each in its own view. Returns the connections the change took
/// over (a resume without `multi_attach` elsewhere), still attached, for the caller to end.
///
/// The planted fault `seq-per-replica` numbers this replica's own commits from a counter only
/// they advance: what others committed is replayed with their seqs, and the counter stays.
async fn replay(session: &Arc<Session>, g: &mut Inner, change: StoredChange) -> Result<Vec<u64>, ReplayError> {
    let own_counter = (!session.shared.faults.cluster.syncs_before_commit()).then_some(g.next_seq);
    if own_counter.is_none() && change.first_seq != g.next_seq {
        return Err(ReplayError::Gap { expected: g.next_seq, found: change.first_seq });
    }
    g.next_seq = change.first_seq;
    if let Some(cursor) = &change.cursor {
        g.cursor = serde_json::from_str::<Cursor>(cursor)?;
    }
    if let Some(plan) = &change.turn_plan {
        g.plan = serde_json::from_str::<Option<TurnPlan>>(plan)?.map(Arc::new);
    }
    let record = match &change.units {
        Some(text) => serde_json::from_str::<ChangeRecord>(text)?,
        None => ChangeRecord::default(),
    };
    let takeover = record.takeover;
    let units = record.into_units();
    for unit in &units {
        unit.frames().iter().for_each(|f| g.history.note(f));
    }
    let used = match units.is_empty() {
        true => change.next_seq,
        false => pipeline::replay(session, g, units).await?,
    };
    if used != change.next_seq {
        return Err(ReplayError::Seqs { got: used, want: change.next_seq });
    }
    g.replayed_to = change.next_seq;
    g.next_seq = own_counter.unwrap_or(change.next_seq);
    // ATTACH-002: a resume without multi_attach took the session over from every connection,
    // those on other replicas too; each error takes a seq after the resume's.
    Ok(match takeover {
        true => g.attached.iter().map(|a| a.conn.id).collect(),
        false => Vec::new(),
    })
}

/// Ends a connection another replica's resume took over: `session_taken_over`, then close code
/// 4001 ([`end_attached`]).
async fn end_taken_over(session: &Arc<Session>, g: &mut Inner, conn_id: u64) {
    end_attached(session, g, conn_id, ErrorCode::SessionTakenOver, "another connection resumed this session").await;
}

/// Ends an attached connection with a fatal error of `code` (a takeover, a detach past the bound)
/// and its close code. The error takes the next seq (`SEQ-002`); where other replicas committed
/// first, what they committed is read and the connection, still attached, gets it, so the error
/// comes after every event it was not sent (`ATTACH-004`).
pub(crate) async fn end_attached(session: &Arc<Session>, g: &mut Inner, conn_id: u64, code: ErrorCode, message: &str) {
    let sh = &session.shared;
    if !sh.store.is_shared() {
        if let Some(seq) = take_reserved_seq(session, g).await {
            let Some(old) = detach(g, conn_id) else { return };
            send_fatal(&old, seq, code, message);
            return;
        }
    }
    for _ in 0..CONFLICT_RETRIES {
        if !sh.store.is_shared() {
            break;
        }
        let seq = g.next_seq;
        let reserve = Commit { next_seq: seq + 1, base_seq: base_seq(sh, g.lease, seq), ..Commit::default() };
        match sh.store.commit(session.id.as_str(), reserve).await {
            Ok(_) => {
                g.next_seq = seq + 1;
                g.replayed_to = g.replayed_to.max(g.next_seq);
                let Some(old) = detach(g, conn_id) else { return };
                send_fatal(&old, seq, code, message);
                return;
            }
            Err(StoreError::Conflict { .. }) => {
                Box::pin(sync(session, g)).await;
                if !g.attached.iter().any(|a| a.conn.id == conn_id) {
                    // Ended meanwhile by the read (or the session was discarded).
                    return;
                }
            }
            Err(_) => break,
        }
    }
    let Some(old) = detach(g, conn_id) else { return };
    end_connection(session, g, &old.conn, Refusal::new(code, message)).await;
}

/// Sends an ended connection its fatal error of `seq`, then its close code.
fn send_fatal(old: &Attachment, seq: u64, code: ErrorCode, message: &str) {
    let frame = ServerFrame::Error(ErrorFrame {
        seq: Some(seq),
        code,
        message: message.into(),
        in_reply_to: None,
        fatal: code.is_fatal(),
        supported_versions: None,
    });
    if let Ok(text) = serde_json::to_string(&frame) {
        old.conn.send(Outgoing::Text(text));
    }
    if let Some(close) = code.close_code() {
        old.conn.send(Outgoing::Close(close));
    }
}

/// Takes a connection out of the session's attached ones.
pub(crate) fn detach(g: &mut Inner, conn_id: u64) -> Option<Attachment> {
    let at = g.attached.iter().position(|a| a.conn.id == conn_id)?;
    Some(g.attached.remove(at))
}
