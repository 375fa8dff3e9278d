//! The replica's own tasks on a shared store (`spec/cluster.md`): following other replicas'
//! commits, renewing this replica's run leases, and claiming those nobody renews to recover their
//! sessions (`CLUSTER-004`, `CLUSTER-006`). The core's part (replaying one commit, ending the
//! connections a replay took over) is `replica.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::Id;

use super::partial::ensure_full;
use super::pipeline::{base_seq, is_active, lost_lease};
use super::recovery::recover;
use super::replica::sync;
use super::state::{Inner, Session, Shared};
use crate::agent::Cursor;
use crate::plan::TurnPlan;
use crate::store::{Commit, LeaseOp, Notice, StoreError};

/// How often a replica renews the leases it holds; a lease lives `LEASE_TTL` (the store's).
const RENEW_EVERY: Duration = Duration::from_millis(1000);
/// How often a replica looks for leases nobody renewed.
const REAP_EVERY: Duration = Duration::from_millis(1000);
/// Expired leases claimed per look.
const CLAIMS_PER_LOOK: usize = 16;

/// Recovers, at start, the sessions whose run lease this replica held under its name before it
/// stopped, before it serves anyone (`RESUME-014`); the rest expire and are claimed as they do
/// (`CLUSTER-004`). Returns how many.
pub(crate) async fn recover_own(shared: &Arc<Shared>) -> Result<usize, StoreError> {
    let own = shared.store.claim_own_leases().await?;
    let n = own.len();
    take_over(shared, own).await;
    Ok(n)
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
        // Sessions whose work ended give their lease back, after the renewal: a release is a
        // commit, and commits must not make the renewal of the other leases late.
        let mut idle = Vec::new();
        for s in &sessions {
            let token = match s.inner.try_lock() {
                Ok(g) => {
                    if g.lease.is_some() && !is_active(&g.state) {
                        idle.push(s.clone());
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
        let lost = match shared.store.renew_leases(&held).await {
            Ok(lost) => lost,
            Err(e) => {
                eprintln!("chatwire-reference: cannot renew leases: {e}");
                Vec::new()
            }
        };
        for s in &idle {
            if let Ok(mut g) = s.inner.try_lock() {
                if g.lease.is_some() && g.lease == known.get(&s.id).copied() && !is_active(&g.state) {
                    release_if_idle(s, &mut g).await;
                }
            }
        }
        let heeded = shared.faults.cluster.fences_commits();
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
        if !shared.faults.cluster.reaps_expired_leases() {
            continue;
        }
        match shared.store.claim_expired_leases(CLAIMS_PER_LOOK).await {
            Ok(claimed) => take_over(&shared, claimed).await,
            Err(e) => eprintln!("chatwire-reference: cannot claim expired leases: {e}"),
        }
    }
}

/// Recovers the sessions whose leases this replica just claimed, each with its new token.
async fn take_over(shared: &Arc<Shared>, claimed: Vec<(String, u64)>) {
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
        if let Err(e) = ensure_full(&session, &mut g).await {
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
            match serde_json::from_str::<Option<TurnPlan>>(plan) {
                Ok(plan) => g.plan = plan.map(Arc::new),
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
