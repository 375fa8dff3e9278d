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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::script::ScriptTurn;
use chatwire_schema::{ErrorCode, ErrorFrame, Id, ServerFrame, ToolCallStatus, UiState};
use serde::{Deserialize, Serialize};

use super::driver::{start_driver, stop_driver};
use super::emit::{replay_units, Unit};
use super::fanout::Attachment;
use super::recovery::recover;
use super::{EmitError, Inner, Refusal, Session, Shared};
use crate::agent::Cursor;
use crate::store::{Commit, LeaseOp, Notice, StoreError, StoredChange};
use crate::transport::Outgoing;

/// How often a replica renews the leases it holds; a lease lives `LEASE_TTL` (the store's).
const RENEW_EVERY: Duration = Duration::from_millis(1000);
/// How often a replica looks for leases nobody renewed.
const REAP_EVERY: Duration = Duration::from_millis(1000);
/// Expired leases claimed per look.
const CLAIMS_PER_LOOK: usize = 16;
/// Times a request is carried out again after another replica committed first.
pub(crate) const CONFLICT_RETRIES: usize = 8;

/// A change as other replicas replay it: its units, in order, and whether it took the session
/// over from every connection attached elsewhere (`ATTACH-002`).
#[derive(Serialize, Deserialize, Debug, Default)]
pub(super) struct ChangeRecord {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<UnitRecord>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub takeover: bool,
}

/// One unit of a change ([`Unit`]), its frames as committed (seqs are stamped on replay).
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub(super) enum UnitRecord {
    Event { frame: ServerFrame },
    Batch { frames: Vec<ServerFrame> },
    Answer { frame: ServerFrame },
}

impl ChangeRecord {
    /// The record of `units`.
    pub fn of(units: &[Unit]) -> ChangeRecord {
        let units = units
            .iter()
            .map(|u| match u {
                Unit::Event(f) => UnitRecord::Event { frame: f.clone() },
                Unit::Batch(v) => UnitRecord::Batch { frames: v.clone() },
                Unit::Answer(f) => UnitRecord::Answer { frame: f.clone() },
            })
            .collect();
        ChangeRecord { units, takeover: false }
    }

    fn into_units(self) -> Vec<Unit> {
        self.units
            .into_iter()
            .map(|u| match u {
                UnitRecord::Event { frame } => Unit::Event(frame),
                UnitRecord::Batch { frames } => Unit::Batch(frames),
                UnitRecord::Answer { frame } => Unit::Answer(frame),
            })
            .collect()
    }
}

/// Whether a session has work a replica must drive: a run in progress, or calls still open (a
/// pending call's deadline, a response that opens the next slice).
pub(super) fn is_active(state: &UiState) -> bool {
    state.run.status.is_active() || state.open_tool_calls(None).next().is_some()
}

/// The base a commit from `seq` names: none under the planted fault `seq-per-replica`, nor
/// under `ownership-not-fenced` where this replica holds (or believes it holds) the run.
pub(super) fn base_seq(shared: &Shared, lease: Option<u64>, seq: u64) -> Option<u64> {
    let unfenced = lease.is_some() && !shared.hooks.fences_commits();
    (shared.hooks.syncs_before_commit() && !unfenced).then_some(seq)
}

/// What a change from `was_active` to `active` does to the run lease, for a replica holding
/// `held` (`CLUSTER-003`): the change that starts work takes the lease, the one that ends it
/// releases it, every other change of the holder is fenced by its token.
pub(super) fn lease_op(shared: &Shared, held: Option<u64>, was_active: bool, active: bool) -> LeaseOp {
    let fenced = shared.hooks.fences_commits();
    match (was_active, active, held) {
        (false, true, None) => LeaseOp::Acquire,
        (_, false, held) if was_active => LeaseOp::Release(held.filter(|_| fenced)),
        (_, _, Some(token)) if fenced => LeaseOp::Hold(token),
        _ => LeaseOp::Keep,
    }
}

/// The lease after a committed change.
pub(super) fn after_commit(g: &mut Inner, op: LeaseOp, token: Option<u64>) {
    match op {
        LeaseOp::Acquire => g.lease = token,
        LeaseOp::Release(_) => g.lease = None,
        LeaseOp::Hold(_) | LeaseOp::Keep => {}
    }
}

/// The session's lease is gone (claimed by another replica after it expired, or released by a
/// change another replica committed): this replica stops driving and disarms its deadlines.
pub(super) fn lost_lease(g: &mut Inner) {
    g.lease = None;
    if g.driver_active {
        stop_driver(g);
    }
    for (_, timer) in g.timers.drain() {
        timer.abort();
    }
}

/// Whether a store error means another replica committed first or holds the session's lease:
/// the request is carried out again on the newer state.
pub(super) fn is_contention(e: &EmitError) -> bool {
    matches!(e, EmitError::Store(StoreError::Conflict { .. } | StoreError::Fenced | StoreError::LeaseHeld))
}

/// Brings the session up to the store's newest commit, replaying to this replica's connections
/// what other replicas committed. Nothing to do on an embedded store.
pub(crate) async fn sync(session: &Arc<Session>, g: &mut Inner) {
    let sh = &session.shared;
    // The planted fault `ownership-not-fenced`: the replica that drives never reads what others
    // committed, so it goes on from what it had when it lost the run.
    if !sh.store.is_shared() || g.evicted || (g.lease.is_some() && !sh.hooks.fences_commits()) {
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
        if let Err(e) = super::ensure_full(session, g).await {
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
                super::registry::discard(session, g);
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
        if let Some(timer) = g.timers.remove(&id) {
            timer.abort();
        }
    }
    if !is_active(&g.state) {
        if g.lease.is_some() || g.driver_active {
            lost_lease(g);
        }
    } else if g.lease.is_some() && !g.driver_active {
        // A change committed elsewhere (a response, an expiry's new slice) gave the run we
        // drive a step to play.
        start_driver(session, g);
    }
}

/// Why a commit of another replica could not be replayed.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReplayError {
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
    let own_counter = (!session.shared.hooks.syncs_before_commit()).then_some(g.next_seq);
    if own_counter.is_none() && change.first_seq != g.next_seq {
        return Err(ReplayError::Gap { expected: g.next_seq, found: change.first_seq });
    }
    g.next_seq = change.first_seq;
    if let Some(cursor) = &change.cursor {
        g.cursor = serde_json::from_str::<Cursor>(cursor)?;
    }
    if let Some(plan) = &change.turn_plan {
        g.plan = serde_json::from_str::<Option<ScriptTurn>>(plan)?;
    }
    let record = match &change.units {
        Some(text) => serde_json::from_str::<ChangeRecord>(text)?,
        None => ChangeRecord::default(),
    };
    let takeover = record.takeover;
    let units = record.into_units();
    for unit in &units {
        let frames: &[ServerFrame] = match unit {
            Unit::Event(f) | Unit::Answer(f) => std::slice::from_ref(f),
            Unit::Batch(v) => v,
        };
        frames.iter().for_each(|f| g.history.note(f));
    }
    let used = match units.is_empty() {
        true => change.next_seq,
        false => replay_units(session, g, units).await?,
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
pub(super) async fn end_attached(session: &Arc<Session>, g: &mut Inner, conn_id: u64, code: ErrorCode, message: &str) {
    let sh = &session.shared;
    if !sh.store.is_shared() {
        if let Some(seq) = g.take_reserved_seq(session).await {
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
    super::handshake::end_connection(session, g, &old.conn, Refusal::new(code, message)).await;
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
fn detach(g: &mut Inner, conn_id: u64) -> Option<Attachment> {
    let at = g.attached.iter().position(|a| a.conn.id == conn_id)?;
    Some(g.attached.remove(at))
}

/// Follows the store's notices: each commit of a session this replica holds in memory is
/// replayed to its connections (`CLUSTER-006`). A lost or lagging notice stream brings every
/// held session up to date. A `delay` (a test's slow fan-out, zero otherwise) postpones each
/// commit's replay on a task of its own, so the delays do not add up.
pub(crate) async fn follow(
    shared: Arc<Shared>,
    mut notices: tokio::sync::broadcast::Receiver<Notice>,
    delay: std::time::Duration,
) {
    loop {
        let ids: Vec<Id> = match notices.recv().await {
            Ok(Notice::Committed { session_id, next_seq }) => {
                let Ok(id) = Id::parse(session_id) else { continue };
                let session = shared.sessions.lock().await.get(&id).cloned();
                let Some(session) = session else { continue };
                if delay.is_zero() {
                    replay_to(&session, next_seq).await;
                } else {
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        replay_to(&session, next_seq).await;
                    });
                }
                continue;
            }
            Ok(Notice::Lost) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                shared.sessions.lock().await.keys().cloned().collect()
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        for id in ids {
            let session = shared.sessions.lock().await.get(&id).cloned();
            if let Some(session) = session {
                let mut g = session.inner.lock().await;
                sync(&session, &mut g).await;
            }
        }
    }
}

/// Brings `session` up to the commit that numbered its next seq `next_seq`, unless it is there.
async fn replay_to(session: &Arc<Session>, next_seq: u64) {
    let mut g = session.inner.lock().await;
    if g.next_seq < next_seq {
        sync(session, &mut g).await;
    }
}

/// Renews the leases this replica holds; a lease it could not renew was claimed by another
/// replica after it expired, and this replica stops driving that session.
pub(crate) async fn hold_leases(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(RENEW_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The token last seen for each session: a session busy right now (its lock held by a
    // request or a step) is renewed with it, so a renewal never waits behind a session's work.
    let mut known: HashMap<Id, u64> = HashMap::new();
    loop {
        tick.tick().await;
        let sessions: Vec<Arc<Session>> = shared.sessions.lock().await.values().cloned().collect();
        let mut held = Vec::new();
        let mut seen = HashMap::new();
        for s in &sessions {
            let token = match s.inner.try_lock() {
                Ok(mut g) => {
                    if g.lease.is_some() && !is_active(&g.state) {
                        release_if_idle(s, &mut g).await;
                    }
                    g.lease
                }
                Err(_) => known.get(&s.id).copied(),
            };
            if let Some(token) = token {
                held.push((s.id.to_string(), token));
                seen.insert(s.id.clone(), token);
            }
        }
        known = seen;
        if held.is_empty() {
            continue;
        }
        let lost = match shared.store.renew_leases(&held).await {
            Ok(lost) => lost,
            Err(e) => {
                eprintln!("chatwire-reference: cannot renew leases: {e}");
                continue;
            }
        };
        let heeded = shared.hooks.fences_commits();
        for s in sessions.iter().filter(|s| heeded && lost.iter().any(|id| id == s.id.as_str())) {
            let mut g = s.inner.lock().await;
            // Only the token that was tried is lost: one taken since is this replica's own.
            if g.lease.is_some() && g.lease == known.get(&s.id).copied() {
                eprintln!("chatwire-reference: session {}: lease lost to another replica", s.id);
                lost_lease(&mut g);
            }
        }
    }
}

/// Claims the leases nobody renewed and recovers their sessions by resume.md's rules, as a
/// restarted server would (`CLUSTER-004`).
pub(crate) async fn reap(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(REAP_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if !shared.hooks.reaps_expired_leases() {
            continue;
        }
        match shared.store.claim_expired_leases(CLAIMS_PER_LOOK).await {
            Ok(claimed) => take_over(&shared, claimed).await,
            Err(e) => eprintln!("chatwire-reference: cannot claim expired leases: {e}"),
        }
    }
}

/// Recovers the sessions whose leases this replica just claimed, each with its new token.
pub(crate) async fn take_over(shared: &Arc<Shared>, claimed: Vec<(String, u64)>) {
    for (id, token) in claimed {
        let Ok(id) = Id::parse(id) else { continue };
        if let Err(e) = take_over_one(shared, &id, token).await {
            eprintln!("chatwire-reference: session {id}: cannot recover after its replica stopped: {e}");
        }
    }
}

async fn take_over_one(shared: &Arc<Shared>, id: &Id, token: u64) -> Result<(), StoreError> {
    let Some(session) = shared.get_or_load(id).await? else { return Ok(()) };
    let Some(stored) = shared.store.load_session(id.as_str()).await? else { return Ok(()) };
    {
        let mut g = session.inner.lock().await;
        if g.lease.is_some() && !g.evicted {
            // Its own lease, expired while this replica was too busy to renew it: this replica
            // still drives the run, now under the new token, and nothing needs recovering.
            g.lease = Some(token);
            return Ok(());
        }
        // Recovery drives the run on the whole state (`partial.rs`).
        if let Err(e) = super::ensure_full(&session, &mut g).await {
            eprintln!("chatwire-reference: session {id}: cannot load to recover: {e}");
            return Ok(());
        }
        sync(&session, &mut g).await;
        // Where the turn stands is what the replica that lost it committed last.
        match serde_json::from_str::<Cursor>(&stored.cursor) {
            Ok(cursor) => g.cursor = cursor,
            Err(e) => eprintln!("chatwire-reference: session {id}: stored cursor unreadable: {e}"),
        }
        if let Some(plan) = stored.agent.as_ref().and_then(|a| a.turn_plan.as_deref()) {
            match serde_json::from_str::<Option<ScriptTurn>>(plan) {
                Ok(plan) => g.plan = plan,
                Err(e) => eprintln!("chatwire-reference: session {id}: stored plan unreadable: {e}"),
            }
        }
        g.lease = Some(token);
    }
    recover(&session, stored.pending_responses, stored.timers).await;
    let mut g = session.inner.lock().await;
    release_if_idle(&session, &mut g).await;
    Ok(())
}

/// Gives back the lease of a session with nothing left to drive (its work ended while the lease
/// changed hands), so that the next run may take it.
async fn release_if_idle(session: &Arc<Session>, g: &mut Inner) {
    let Some(token) = g.lease.filter(|_| !is_active(&g.state)) else { return };
    let release = Commit {
        next_seq: g.next_seq,
        base_seq: base_seq(&session.shared, g.lease, g.next_seq),
        lease: LeaseOp::Release(Some(token)),
        ..Commit::default()
    };
    match session.shared.store.commit(session.id.as_str(), release).await {
        Ok(_) => g.lease = None,
        Err(StoreError::Fenced) => lost_lease(g),
        Err(e) => eprintln!("chatwire-reference: session {}: cannot release its lease: {e}", session.id),
    }
}
