//! What a shared store (PostgreSQL) adds for a cluster of replicas: optimistic commits checked
//! against the session's `next_seq`, the run lease with its fencing token, the committed changes
//! other replicas replay, and the notices that tell them to.
//!
//! A commit on a shared store, in one transaction: lock the session row (`SELECT … FOR UPDATE`),
//! refuse a stale `base_seq` (`StoreError::Conflict`), apply the lease operation (fencing:
//! `StoreError::Fenced`, `StoreError::LeaseHeld`), write the rows every store writes
//! (`ops.rs`), record one `changes` row, `pg_notify` the other replicas. A refused commit writes
//! nothing.
//!
//! Lock order, so that nothing deadlocks: a commit locks the session row, then its lease row; the
//! heartbeat ([`renew_leases`]) and the reaper ([`claim_expired_leases`]) lock lease rows only,
//! one statement each. Lease expiry is judged by the database's clock (`now()`).
//!
//! The embedded SQLite store has none of this: it serves one process (an exclusive lock on the
//! database file refuses a second), ignores a commit's `base_seq`, `lease` and `notify`, and
//! answers the cluster-only calls with `StoreError::NotShared`.

use std::time::Duration;

use super::db::{from_db, placeholders, to_db, Db, Param, ROWS_PER_STATEMENT};
use super::error::StoreError;
use super::types::{Commit, LeaseOp, StoredChange};

/// The notification channel every replica LISTENs on; the payload is `<session id>:<next_seq>`.
pub(crate) const CHANNEL: &str = "chatwire";

/// Who commits, for the lease checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Who<'a> {
    /// This replica's id (the lease owner).
    pub replica: &'a str,
    /// How long a lease taken or renewed lives.
    pub ttl: Duration,
}

impl Who<'_> {
    fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }
}

/// What [`check`] found and did.
pub(crate) struct Checked {
    /// The session's stored `next_seq` before the commit.
    pub stored: u64,
    /// The new lease token after an acquire.
    pub token: Option<u64>,
    /// The token of a lease the commit deleted.
    pub released: Option<i64>,
}

/// Locks the session row, refuses a stale base, applies the lease operation.
pub(crate) async fn check(db: &Db<'_>, id: &str, c: &Commit, who: &Who<'_>) -> Result<Checked, StoreError> {
    let row = db.query_opt("SELECT next_seq, lease_token FROM sessions WHERE id = $1 FOR UPDATE", &[id.into()]).await?;
    let Some(row) = row else { return Err(StoreError::UnknownSession(id.to_owned())) };
    let stored = row.seq(0);
    if let Some(base) = c.base_seq.filter(|b| *b != stored) {
        return Err(StoreError::Conflict { expected: base, found: stored });
    }
    let (token, released) = apply_lease(db, id, c.lease, row.int(1), who).await?;
    Ok(Checked { stored, token, released })
}

/// Applies the lease operation (the session row is locked). Returns the new token after an
/// acquire, and the token a release deleted.
async fn apply_lease(
    db: &Db<'_>,
    id: &str,
    op: LeaseOp,
    lease_token: i64,
    who: &Who<'_>,
) -> Result<(Option<u64>, Option<i64>), StoreError> {
    match op {
        LeaseOp::Keep => Ok((None, None)),
        LeaseOp::Acquire => {
            let current = db
                .query_opt(
                    "SELECT owner, token, expires_at > now() FROM leases WHERE session_id = $1 FOR UPDATE",
                    &[id.into()],
                )
                .await?;
            let mut last = lease_token;
            if let Some(mut row) = current {
                let (token, live) = (row.int(1), row.bool(2));
                if live && row.text(0) != who.replica {
                    return Err(StoreError::LeaseHeld);
                }
                last = last.max(token);
            }
            let token = last.saturating_add(1);
            db.exec(
                "INSERT INTO leases (session_id, owner, token, expires_at)
                 VALUES ($1, $2, $3, now() + $4::bigint * interval '1 millisecond')
                 ON CONFLICT (session_id) DO UPDATE
                 SET owner = EXCLUDED.owner, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at",
                &[id.into(), who.replica.into(), token.into(), who.ttl_ms().into()],
            )
            .await?;
            // The counter in the session row never goes back, whatever happens to the lease row.
            db.exec("UPDATE sessions SET lease_token = $1 WHERE id = $2", &[token.into(), id.into()]).await?;
            Ok((Some(from_db(token)), None))
        }
        LeaseOp::Hold(token) => {
            let renewed = db
                .exec(
                    "UPDATE leases SET expires_at = now() + $1::bigint * interval '1 millisecond'
                     WHERE session_id = $2 AND owner = $3 AND token = $4 AND expires_at > now()",
                    &[who.ttl_ms().into(), id.into(), who.replica.into(), token.into()],
                )
                .await?;
            match renewed {
                0 => Err(StoreError::Fenced),
                _ => Ok((None, None)),
            }
        }
        LeaseOp::Release(None) => {
            let gone = db.query_opt("DELETE FROM leases WHERE session_id = $1 RETURNING token", &[id.into()]).await?;
            Ok((None, gone.map(|r| r.int(0))))
        }
        LeaseOp::Release(Some(token)) => {
            let gone = db
                .query_opt(
                    "DELETE FROM leases
                     WHERE session_id = $1 AND owner = $2 AND token = $3 AND expires_at > now() RETURNING token",
                    &[id.into(), who.replica.into(), token.into()],
                )
                .await?;
            match gone {
                None => Err(StoreError::Fenced),
                Some(r) => Ok((None, Some(r.int(0)))),
            }
        }
    }
}

/// Records the change for other replicas to replay, and tells them. A change that takes no seq
/// and carries nothing to replay (a response recorded for execution, a lease released) is no
/// change for other replicas: none is recorded, so a replica never reads back a change it made
/// itself.
pub(crate) async fn record(db: &Db<'_>, id: &str, c: &Commit, stored: u64) -> Result<(), StoreError> {
    if c.next_seq != stored || c.units.is_some() {
        db.exec(
            "INSERT INTO changes (session_id, first_seq, next_seq, units, cursor, turn_plan)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                id.into(),
                stored.into(),
                c.next_seq.into(),
                c.units.as_deref().into(),
                c.cursor.as_deref().into(),
                c.turn_plan.as_deref().into(),
            ],
        )
        .await?;
    }
    if c.notify {
        let payload = format!("{id}:{}", c.next_seq);
        db.exec("SELECT pg_notify($1, $2)", &[CHANNEL.into(), payload.as_str().into()]).await?;
    }
    Ok(())
}

/// Parses a notification payload, `<session id>:<next_seq>`.
pub(crate) fn parse_payload(payload: &str) -> Option<(String, u64)> {
    let (id, seq) = payload.rsplit_once(':')?;
    Some((id.to_owned(), seq.parse().ok()?))
}

/// The changes committed from `next_seq` on, ascending (commit order among those of one first seq).
pub(crate) async fn changes_since(db: &Db<'_>, id: &str, next_seq: u64) -> Result<Vec<StoredChange>, StoreError> {
    let rows = db
        .query(
            "SELECT first_seq, next_seq, units, cursor, turn_plan FROM changes
             WHERE session_id = $1 AND first_seq >= $2 ORDER BY first_seq, pos",
            &[id.into(), next_seq.into()],
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|mut r| StoredChange {
            first_seq: r.seq(0),
            next_seq: r.seq(1),
            units: r.opt_text(2),
            cursor: r.opt_text(3),
            turn_plan: r.opt_text(4),
        })
        .collect())
}

/// The committed, not yet executed response to one call.
pub(crate) async fn pending_response(db: &Db<'_>, id: &str, tool_call_id: &str) -> Result<Option<String>, StoreError> {
    let row = db
        .query_opt(
            "SELECT frame FROM pending_responses WHERE session_id = $1 AND tool_call_id = $2",
            &[id.into(), tool_call_id.into()],
        )
        .await?;
    Ok(row.map(|mut r| r.text(0)))
}

/// Renews the live leases this replica holds with these tokens; returns the ids renewed.
pub(crate) async fn renew_leases(
    db: &Db<'_>,
    held: &[(String, u64)],
    who: &Who<'_>,
) -> Result<Vec<String>, StoreError> {
    let mut renewed = Vec::new();
    for held in held.chunks(ROWS_PER_STATEMENT) {
        // Typed in the list: PostgreSQL takes an untyped parameter in VALUES for text.
        let rows: Vec<String> =
            (0..held.len()).map(|i| format!("(${}::text, ${}::bigint)", 2 + 2 * i, 3 + 2 * i)).collect();
        let sql = format!(
            "UPDATE leases l SET expires_at = now() + $1::bigint * interval '1 millisecond'
             FROM (VALUES {}) AS h(id, token)
             WHERE l.session_id = h.id AND l.token = h.token AND l.owner = ${} AND l.expires_at > now()
             RETURNING l.session_id",
            rows.join(", "),
            2 + 2 * held.len()
        );
        let mut params: Vec<Param<'_>> = vec![who.ttl_ms().into()];
        for (id, token) in held {
            params.extend([Param::from(id), Param::Int(to_db(*token))]);
        }
        params.push(who.replica.into());
        renewed.extend(db.query(&sql, &params).await?.into_iter().map(|mut r| r.text(0)));
    }
    Ok(renewed)
}

/// Claims at most `limit` expired leases for this replica (token + 1); returns them. SKIP
/// LOCKED: a lease a commit or another reaper is busy with is not waited for; a commit holding it
/// will have renewed or released it.
pub(crate) async fn claim_expired_leases(
    db: &Db<'_>,
    limit: usize,
    who: &Who<'_>,
) -> Result<Vec<(String, u64)>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = db
        .query(
            "UPDATE leases SET owner = $1, token = token + 1, expires_at = now() + $2::bigint * interval '1 millisecond'
             WHERE session_id IN (
                 SELECT session_id FROM leases WHERE expires_at < now()
                 ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
             AND expires_at < now()
             RETURNING session_id, token",
            &[who.replica.into(), who.ttl_ms().into(), limit.into()],
        )
        .await?;
    Ok(rows.into_iter().map(|mut r| (r.text(0), r.seq(1))).collect())
}

/// Records that these state frames of the session also went to a connection that does not
/// see streams (`STREAM-006`): a catch-up may not start from them with the open stream.
pub(crate) async fn mark_unstreamed(db: &Db<'_>, id: &str, seqs: &[u64]) -> Result<(), StoreError> {
    for seqs in seqs.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "UPDATE state_frames SET streams = $1 WHERE session_id = $2 AND seq IN ({})",
            placeholders(3, seqs.len())
        );
        let params: Vec<Param<'_>> =
            [false.into(), id.into()].into_iter().chain(seqs.iter().map(|s| (*s).into())).collect();
        db.exec(&sql, &params).await?;
    }
    Ok(())
}

/// Claims (token + 1) every lease owned under this replica's name, expired or not: at start,
/// whatever held them under this name has stopped, and waiting for them to expire would serve
/// resumes before their sessions are recovered (`RESUME-014`).
pub(crate) async fn claim_own_leases(db: &Db<'_>, who: &Who<'_>) -> Result<Vec<(String, u64)>, StoreError> {
    let rows = db
        .query(
            "UPDATE leases SET token = token + 1, expires_at = now() + $1::bigint * interval '1 millisecond'
             WHERE owner = $2
             RETURNING session_id, token",
            &[who.ttl_ms().into(), who.replica.into()],
        )
        .await?;
    Ok(rows.into_iter().map(|mut r| (r.text(0), r.seq(1))).collect())
}
