//! A commit on PostgreSQL, and the run leases.
//!
//! One transaction per commit: lock the session row (`SELECT … FOR UPDATE`), refuse a stale
//! `base_seq` ([`StoreError::Conflict`]), apply the lease operation (fencing:
//! [`StoreError::Fenced`], [`StoreError::LeaseHeld`]), write the rows the SQLite store writes plus
//! one `changes` row, `pg_notify` the other replicas, commit. A refused commit writes nothing.
//!
//! Lock order, so that nothing deadlocks: a commit locks the session row, then its lease row; the
//! heartbeat ([`PgStore::renew_leases`]) and the reaper ([`PgStore::claim_expired_leases`]) lock
//! lease rows only, one statement each. Lease expiry is judged by the database's clock (`now()`).

use std::time::Duration;

use super::{from_db, millis, to_db, with_client, PgStore};
use crate::store::{Commit, LeaseOp, StoreError, StoredChange};

/// The notification channel every replica LISTENs on; the payload is `<session id>:<next_seq>`.
pub(crate) const CHANNEL: &str = "chatwire";

/// Who commits, for the lease checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CommitArgs<'a> {
    /// This replica's id (the lease owner).
    pub replica: &'a str,
    /// How long a lease taken or renewed lives.
    pub ttl: Duration,
}

impl PgStore {
    /// Applies one state change in one transaction; see the module docs. Returns the new lease
    /// token after [`LeaseOp::Acquire`].
    pub async fn commit(&self, id: &str, c: &Commit, who: CommitArgs<'_>) -> Result<Option<u64>, StoreError> {
        with_client!(self, "commit", |client| async move {
            let tx = client.transaction().await?;
            let lock = tx.prepare_cached("SELECT next_seq, lease_token FROM sessions WHERE id = $1 FOR UPDATE").await?;
            let Some(row) = tx.query_opt(&lock, &[&id]).await? else {
                return Err(StoreError::UnknownSession(id.to_owned()));
            };
            let stored = from_db(row.get(0));
            let lease_token: i64 = row.get(1);
            if let Some(base) = c.base_seq.filter(|b| *b != stored) {
                return Err(StoreError::Conflict { expected: base, found: stored });
            }
            let (token, released) = apply_lease(&tx, id, c.lease, lease_token, who).await?;
            apply_rows(&tx, id, c, released).await?;
            // A change that takes no seq and carries nothing to replay (a response recorded for
            // execution, a lease released) is no change for other replicas: none is recorded, so
            // a replica never reads back a change it made itself.
            if c.next_seq != stored || c.units.is_some() {
                let record = tx
                    .prepare_cached(
                        "INSERT INTO changes (session_id, first_seq, next_seq, units, cursor, turn_plan)
                         VALUES ($1, $2, $3, $4, $5, $6)",
                    )
                    .await?;
                tx.execute(&record, &[&id, &to_db(stored), &to_db(c.next_seq), &c.units, &c.cursor, &c.turn_plan])
                    .await?;
            }
            if c.notify {
                let payload = format!("{id}:{}", c.next_seq);
                tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload]).await?;
            }
            tx.commit().await?;
            Ok(token)
        })
    }

    /// The changes committed from `next_seq` on, ascending ([`crate::store::StoreWriter::changes_since`]).
    pub async fn changes_since(&self, id: &str, next_seq: u64) -> Result<Vec<StoredChange>, StoreError> {
        with_client!(self, "changes since", |client| async move {
            let stmt = client
                .prepare_cached(
                    "SELECT first_seq, next_seq, units, cursor, turn_plan FROM changes
                     WHERE session_id = $1 AND first_seq >= $2 ORDER BY first_seq, pos",
                )
                .await?;
            let rows = client.query(&stmt, &[&id, &to_db(next_seq)]).await?;
            Ok(rows
                .iter()
                .map(|r| StoredChange {
                    first_seq: from_db(r.get(0)),
                    next_seq: from_db(r.get(1)),
                    units: r.get(2),
                    cursor: r.get(3),
                    turn_plan: r.get(4),
                })
                .collect())
        })
    }

    /// The committed, not yet executed response to one call ([`crate::store::StoreWriter::pending_response`]).
    pub async fn pending_response(&self, id: &str, tool_call_id: &str) -> Result<Option<String>, StoreError> {
        with_client!(self, "pending response", |client| async move {
            let stmt = client
                .prepare_cached("SELECT frame FROM pending_responses WHERE session_id = $1 AND tool_call_id = $2")
                .await?;
            Ok(client.query_opt(&stmt, &[&id, &tool_call_id]).await?.map(|r| r.get(0)))
        })
    }

    /// Renews the live leases this replica holds with these tokens; returns the ids not renewed.
    pub async fn renew_leases(&self, held: &[(String, u64)], who: CommitArgs<'_>) -> Result<Vec<String>, StoreError> {
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<&str> = held.iter().map(|(id, _)| id.as_str()).collect();
        let tokens: Vec<i64> = held.iter().map(|(_, t)| to_db(*t)).collect();
        let renewed: Vec<String> = with_client!(self, "renew leases", |client| async move {
            let stmt = client
                .prepare_cached(
                    "UPDATE leases l SET expires_at = now() + $4::bigint * interval '1 millisecond'
                     FROM unnest($1::text[], $2::bigint[]) AS h(id, token)
                     WHERE l.session_id = h.id AND l.token = h.token AND l.owner = $3 AND l.expires_at > now()
                     RETURNING l.session_id",
                )
                .await?;
            let rows = client.query(&stmt, &[&ids, &tokens, &who.replica, &millis(who.ttl)]).await?;
            Ok::<_, StoreError>(rows.iter().map(|r| r.get(0)).collect())
        })?;
        Ok(held.iter().map(|(id, _)| id).filter(|id| !renewed.contains(id)).cloned().collect())
    }

    /// Claims at most `limit` expired leases for this replica (token + 1); returns them.
    pub async fn claim_expired_leases(
        &self,
        limit: usize,
        who: CommitArgs<'_>,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        with_client!(self, "claim expired leases", |client| async move {
            // SKIP LOCKED: a lease a commit or another reaper is busy with is not waited for; a
            // commit holding it will have renewed or released it.
            let stmt = client
                .prepare_cached(
                    "UPDATE leases SET owner = $1, token = token + 1, expires_at = now() + $2::bigint * interval '1 millisecond'
                     WHERE session_id IN (
                         SELECT session_id FROM leases WHERE expires_at < now()
                         ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
                     AND expires_at < now()
                     RETURNING session_id, token",
                )
                .await?;
            let rows = client.query(&stmt, &[&who.replica, &millis(who.ttl), &limit]).await?;
            Ok(rows.iter().map(|r| (r.get(0), from_db(r.get(1)))).collect())
        })
    }

    /// Records that these state frames of the session also went to a connection that does not
    /// see streams (`STREAM-006`): a catch-up may not start from them with the open stream.
    pub async fn mark_unstreamed(&self, id: &str, seqs: &[u64]) -> Result<(), StoreError> {
        let seqs: Vec<i64> = seqs.iter().map(|s| to_db(*s)).collect();
        with_client!(self, "mark state frames unstreamed", |client| async move {
            let stmt = client
                .prepare_cached("UPDATE state_frames SET streams = false WHERE session_id = $1 AND seq = ANY($2)")
                .await?;
            client.execute(&stmt, &[&id, &seqs]).await?;
            Ok(())
        })
    }

    /// Claims (token + 1) every lease owned under this replica's name, expired or not: at start,
    /// whatever held them under this name has stopped, and waiting for them to expire would
    /// serve resumes before their sessions are recovered (`RESUME-014`).
    pub async fn claim_own_leases(&self, who: CommitArgs<'_>) -> Result<Vec<(String, u64)>, StoreError> {
        with_client!(self, "claim own leases", |client| async move {
            let stmt = client
                .prepare_cached(
                    "UPDATE leases SET token = token + 1, expires_at = now() + $2::bigint * interval '1 millisecond'
                     WHERE owner = $1
                     RETURNING session_id, token",
                )
                .await?;
            let rows = client.query(&stmt, &[&who.replica, &millis(who.ttl)]).await?;
            Ok(rows.iter().map(|r| (r.get(0), from_db(r.get(1)))).collect())
        })
    }
}

/// Applies the lease operation inside the commit's transaction (the session row is locked).
/// Returns the new token after an acquire, and the token a release deleted.
async fn apply_lease(
    tx: &deadpool_postgres::Transaction<'_>,
    id: &str,
    op: LeaseOp,
    lease_token: i64,
    who: CommitArgs<'_>,
) -> Result<(Option<u64>, Option<i64>), StoreError> {
    let ttl = millis(who.ttl);
    match op {
        LeaseOp::Keep => Ok((None, None)),
        LeaseOp::Acquire => {
            let current = tx
                .query_opt(
                    "SELECT owner, token, expires_at > now() FROM leases WHERE session_id = $1 FOR UPDATE",
                    &[&id],
                )
                .await?;
            let mut last = lease_token;
            if let Some(row) = current {
                let (owner, token, live): (String, i64, bool) = (row.get(0), row.get(1), row.get(2));
                if live && owner != who.replica {
                    return Err(StoreError::LeaseHeld);
                }
                last = last.max(token);
            }
            let token = last.saturating_add(1);
            let stmt = tx
                .prepare_cached(
                    "INSERT INTO leases (session_id, owner, token, expires_at)
                     VALUES ($1, $2, $3, now() + $4::bigint * interval '1 millisecond')
                     ON CONFLICT (session_id) DO UPDATE
                     SET owner = EXCLUDED.owner, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at",
                )
                .await?;
            tx.execute(&stmt, &[&id, &who.replica, &token, &ttl]).await?;
            // The counter in the session row never goes back, whatever happens to the lease row.
            tx.execute("UPDATE sessions SET lease_token = $2 WHERE id = $1", &[&id, &token]).await?;
            Ok((Some(from_db(token)), None))
        }
        LeaseOp::Hold(token) => {
            let stmt = tx
                .prepare_cached(
                    "UPDATE leases SET expires_at = now() + $4::bigint * interval '1 millisecond'
                     WHERE session_id = $1 AND owner = $2 AND token = $3 AND expires_at > now()",
                )
                .await?;
            match tx.execute(&stmt, &[&id, &who.replica, &to_db(token), &ttl]).await? {
                0 => Err(StoreError::Fenced),
                _ => Ok((None, None)),
            }
        }
        LeaseOp::Release(None) => {
            let gone = tx.query_opt("DELETE FROM leases WHERE session_id = $1 RETURNING token", &[&id]).await?;
            Ok((None, gone.map(|r| r.get(0))))
        }
        LeaseOp::Release(Some(token)) => {
            let stmt = tx
                .prepare_cached(
                    "DELETE FROM leases
                     WHERE session_id = $1 AND owner = $2 AND token = $3 AND expires_at > now() RETURNING token",
                )
                .await?;
            match tx.query_opt(&stmt, &[&id, &who.replica, &to_db(token)]).await? {
                None => Err(StoreError::Fenced),
                Some(r) => Ok((None, Some(r.get(0)))),
            }
        }
    }
}

/// Writes the rows of one state change (as the SQLite store's `apply_commit` does). `released`:
/// the token of a lease the commit deleted, kept in the session's counter.
async fn apply_rows(
    tx: &deadpool_postgres::Transaction<'_>,
    id: &str,
    c: &Commit,
    released: Option<i64>,
) -> Result<(), StoreError> {
    if !c.log.is_empty() {
        let seqs: Vec<Option<i64>> = c.log.iter().map(|r| r.seq.map(to_db)).collect();
        let kinds: Vec<&str> = c.log.iter().map(|r| r.kind.as_str()).collect();
        let types: Vec<&str> = c.log.iter().map(|r| r.frame_type.as_str()).collect();
        let frames: Vec<&str> = c.log.iter().map(|r| r.frame.as_str()).collect();
        let stmt = tx
            .prepare_cached(
                "INSERT INTO log (session_id, seq, kind, type, frame)
                 SELECT $1, r.seq, r.kind, r.type, r.frame
                 FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS r(seq, kind, type, frame, n)
                 ORDER BY r.n",
            )
            .await?;
        tx.execute(&stmt, &[&id, &seqs, &kinds, &types, &frames]).await?;
    }
    let update = tx
        .prepare_cached(
            "UPDATE sessions SET next_seq = $2, cursor = COALESCE($3, cursor), run_active = COALESCE($4, run_active),
             lease_token = GREATEST(lease_token, COALESCE($5::bigint, 0)) WHERE id = $1",
        )
        .await?;
    tx.execute(&update, &[&id, &to_db(c.next_seq), &c.cursor, &c.run_active, &released]).await?;
    if let Some(plan) = &c.turn_plan {
        tx.execute("UPDATE session_agents SET turn_plan = $2 WHERE session_id = $1", &[&id, plan]).await?;
    }
    if c.clear_timers {
        tx.execute("DELETE FROM timers WHERE session_id = $1", &[&id]).await?;
    }
    if !c.remove_timers.is_empty() {
        tx.execute("DELETE FROM timers WHERE session_id = $1 AND tool_call_id = ANY($2)", &[&id, &c.remove_timers])
            .await?;
    }
    for (call, deadline) in &c.add_timers {
        let stmt = tx
            .prepare_cached(
                "INSERT INTO timers (session_id, tool_call_id, deadline_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (session_id, tool_call_id) DO UPDATE SET deadline_ms = EXCLUDED.deadline_ms",
            )
            .await?;
        tx.execute(&stmt, &[&id, call, deadline]).await?;
    }
    if !c.remove_pending.is_empty() {
        tx.execute(
            "DELETE FROM pending_responses WHERE session_id = $1 AND tool_call_id = ANY($2)",
            &[&id, &c.remove_pending],
        )
        .await?;
    }
    for (call, frame) in &c.add_pending {
        let stmt = tx
            .prepare_cached("INSERT INTO pending_responses (session_id, tool_call_id, frame) VALUES ($1, $2, $3)")
            .await?;
        match tx.execute(&stmt, &[&id, call, frame]).await {
            Ok(_) => {}
            // Another replica committed a response to this call first: that one stays the one
            // executed (`RESUME-012`). The request path looks for it before committing, so only
            // two responses racing on two replicas land here; the loser reads on and retries.
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
                return Err(StoreError::Conflict { expected: c.base_seq.unwrap_or(c.next_seq), found: c.next_seq });
            }
            Err(e) => return Err(e.into()),
        }
    }
    for seq in &c.state_seqs {
        let stmt = tx
            .prepare_cached(
                "INSERT INTO state_frames (session_id, seq, streams) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .await?;
        tx.execute(&stmt, &[&id, &to_db(*seq), &c.streamed_state_seqs.contains(seq)]).await?;
    }
    Ok(())
}

/// Parses a notification payload, `<session id>:<next_seq>`.
pub(crate) fn parse_payload(payload: &str) -> Option<(String, u64)> {
    let (id, seq) = payload.rsplit_once(':')?;
    Some((id.to_owned(), seq.parse().ok()?))
}
