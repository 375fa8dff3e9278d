//! The store's logic, written once for both databases ([`Db`]): a session's rows, one commit
//! (one statement per table it touches), loads, catch-up reads, seq reservations.
//!
//! What only a shared store does inside a commit (the optimistic check, the run lease, the
//! change other replicas replay, the notice) is `cluster.rs`'s; checkpoints are
//! `checkpoint.rs`'s.

use super::checkpoint::{events_from, read_checkpoint, read_window};
use super::cluster::{self, Who};
use super::db::{from_db, placeholders, values, Db, Param, ROWS_PER_STATEMENT};
use super::error::StoreError;
use super::types::{CatchUpLog, Commit, LoadFrom, NewSessionRow, StoredAgent, StoredSession};

/// Inserts a new session: its row, its agent, and the seq of its first snapshot.
pub(crate) async fn create_session(db: &Db<'_>, row: &NewSessionRow) -> Result<(), StoreError> {
    db.exec(
        "INSERT INTO sessions (id, token_hash, next_seq, cursor, created_ms) VALUES ($1, $2, $3, $4, $5)",
        &[
            (&row.id).into(),
            (&row.token_hash).into(),
            row.next_seq.into(),
            (&row.cursor).into(),
            crate::util::now_ms().into(),
        ],
    )
    .await?;
    db.exec("INSERT INTO session_agents (session_id, agent) VALUES ($1, $2)", &[(&row.id).into(), (&row.agent).into()])
        .await?;
    insert_state_seqs(db, &row.id, &[row.snapshot_seq], &[]).await
}

/// Applies one state change (inside the caller's transaction). On a shared store the change is
/// checked and recorded first (`cluster.rs`); returns the run lease's new token after an acquire.
pub(crate) async fn commit(db: &Db<'_>, id: &str, c: &Commit, who: &Who<'_>) -> Result<Option<u64>, StoreError> {
    let (token, released, stored) = match db.shared() {
        true => {
            let checked = cluster::check(db, id, c, who).await?;
            (checked.token, checked.released, Some(checked.stored))
        }
        false => (None, None, None),
    };
    write_rows(db, id, c, released).await?;
    if let Some(stored) = stored {
        cluster::record(db, id, c, stored).await?;
    }
    Ok(token)
}

/// The rows of one change: one statement per table it touches. `released`: the token of a lease
/// the commit deleted, kept in the session's counter.
async fn write_rows(db: &Db<'_>, id: &str, c: &Commit, released: Option<i64>) -> Result<(), StoreError> {
    let updated = db
        .exec(
            "UPDATE sessions SET next_seq = $1, cursor = COALESCE($2, cursor), run_active = COALESCE($3, run_active),
             lease_token = CASE WHEN $4 > lease_token THEN $4 ELSE lease_token END WHERE id = $5",
            &[c.next_seq.into(), c.cursor.as_deref().into(), c.run_active.into(), released.into(), id.into()],
        )
        .await?;
    if updated == 0 {
        return Err(StoreError::UnknownSession(id.to_owned()));
    }
    for rows in c.log.chunks(ROWS_PER_STATEMENT) {
        let sql =
            format!("INSERT INTO log (session_id, seq, kind, type, frame) VALUES {}", values(&[1], 2, 4, rows.len()));
        let mut params: Vec<Param<'_>> = vec![id.into()];
        for row in rows {
            params.extend([
                Param::from(row.seq),
                row.kind.as_str().into(),
                (&row.frame_type).into(),
                (&row.frame).into(),
            ]);
        }
        db.exec(&sql, &params).await?;
    }
    if let Some(plan) = &c.turn_plan {
        db.exec("UPDATE session_agents SET turn_plan = $1 WHERE session_id = $2", &[plan.into(), id.into()]).await?;
    }
    write_timers(db, id, c).await?;
    write_pending(db, id, c).await?;
    insert_state_seqs(db, id, &c.state_seqs, &c.streamed_state_seqs).await
}

/// `DELETE FROM table WHERE session_id = $1 AND tool_call_id IN (…)`, for `ids`.
async fn delete_calls(db: &Db<'_>, table: &str, id: &str, ids: &[String]) -> Result<(), StoreError> {
    for ids in ids.chunks(ROWS_PER_STATEMENT) {
        let sql =
            format!("DELETE FROM {table} WHERE session_id = $1 AND tool_call_id IN ({})", placeholders(2, ids.len()));
        let params: Vec<Param<'_>> = std::iter::once(id.into()).chain(ids.iter().map(Into::into)).collect();
        db.exec(&sql, &params).await?;
    }
    Ok(())
}

async fn write_timers(db: &Db<'_>, id: &str, c: &Commit) -> Result<(), StoreError> {
    if c.clear_timers {
        db.exec("DELETE FROM timers WHERE session_id = $1", &[id.into()]).await?;
    }
    delete_calls(db, "timers", id, &c.remove_timers).await?;
    for timers in c.add_timers.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO timers (session_id, tool_call_id, deadline_ms) VALUES {}
             ON CONFLICT (session_id, tool_call_id) DO UPDATE SET deadline_ms = excluded.deadline_ms",
            values(&[1], 2, 2, timers.len())
        );
        let mut params: Vec<Param<'_>> = vec![id.into()];
        for (call, deadline) in timers {
            params.extend([Param::from(call), (*deadline).into()]);
        }
        db.exec(&sql, &params).await?;
    }
    Ok(())
}

async fn write_pending(db: &Db<'_>, id: &str, c: &Commit) -> Result<(), StoreError> {
    delete_calls(db, "pending_responses", id, &c.remove_pending).await?;
    for pending in c.add_pending.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO pending_responses (session_id, tool_call_id, frame) VALUES {}",
            values(&[1], 2, 2, pending.len())
        );
        let mut params: Vec<Param<'_>> = vec![id.into()];
        for (call, frame) in pending {
            params.extend([Param::from(call), frame.into()]);
        }
        match db.exec(&sql, &params).await {
            Ok(_) => {}
            // Another replica committed a response to this call first: that one stays the one
            // executed (`RESUME-012`). The request path looks for it before committing, so only
            // two responses racing on two replicas land here; the loser reads on and retries.
            Err(e) if db.shared() && e.is_unique_violation() => {
                return Err(StoreError::Conflict { expected: c.base_seq.unwrap_or(c.next_seq), found: c.next_seq });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Records the seqs of frames that carried a state, and which of them only streaming connections got.
async fn insert_state_seqs(db: &Db<'_>, id: &str, seqs: &[u64], streamed: &[u64]) -> Result<(), StoreError> {
    for seqs in seqs.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO state_frames (session_id, seq, streams) VALUES {} ON CONFLICT DO NOTHING",
            values(&[1], 2, 2, seqs.len())
        );
        let mut params: Vec<Param<'_>> = vec![id.into()];
        for seq in seqs {
            params.extend([Param::from(*seq), streamed.contains(seq).into()]);
        }
        db.exec(&sql, &params).await?;
    }
    Ok(())
}

/// Reserves the session's seqs below `upto` for frames that change no state: a restart resumes
/// at `upto` or above even though those frames were never committed one by one.
pub(crate) async fn reserve_seqs(db: &Db<'_>, id: &str, upto: u64) -> Result<(), StoreError> {
    let updated = db.exec("UPDATE sessions SET seq_reserved = $1 WHERE id = $2", &[upto.into(), id.into()]).await?;
    match updated {
        0 => Err(StoreError::UnknownSession(id.to_owned())),
        _ => Ok(()),
    }
}

/// Loads a session as `from` says, or `None` if there is none with this id.
pub(crate) async fn load(db: &Db<'_>, id: &str, from: LoadFrom) -> Result<Option<StoredSession>, StoreError> {
    let row = db
        .query_opt("SELECT token_hash, next_seq, seq_reserved, cursor FROM sessions WHERE id = $1", &[id.into()])
        .await?;
    let Some(mut row) = row else { return Ok(None) };
    let agent = match from {
        LoadFrom::Window { .. } => None,
        LoadFrom::Start | LoadFrom::Checkpoint => match load_agent(db, id).await? {
            Some(agent) => Some(agent),
            None => return Ok(None),
        },
    };
    let (checkpoint, window) = match from {
        LoadFrom::Start => (None, None),
        LoadFrom::Checkpoint => (read_checkpoint(db, id).await?, None),
        LoadFrom::Window { newest } => (None, read_window(db, id, newest).await?),
    };
    let from_seq = checkpoint.as_ref().map(|c| c.seq).or(window.as_ref().map(|w| w.seq)).unwrap_or(0);
    let events = events_from(db, id, from_seq).await?;
    let order = db.insertion_order();
    let pending_responses = db
        .query(
            &format!("SELECT tool_call_id, frame FROM pending_responses WHERE session_id = $1 ORDER BY {order}"),
            &[id.into()],
        )
        .await?
        .into_iter()
        .map(|mut r| (r.text(0), r.text(1)))
        .collect();
    let timers = db
        .query("SELECT tool_call_id, deadline_ms FROM timers WHERE session_id = $1 ORDER BY tool_call_id", &[id.into()])
        .await?
        .into_iter()
        .map(|mut r| (r.text(0), r.int(1)))
        .collect();
    Ok(Some(StoredSession {
        token_hash: row.text(0),
        agent,
        next_seq: row.seq(1).max(row.seq(2)),
        cursor: row.text(3),
        checkpoint,
        window,
        events,
        pending_responses,
        timers,
    }))
}

/// A session's agent and the plan of its turn, or `None` if there is no such session.
pub(crate) async fn load_agent(db: &Db<'_>, id: &str) -> Result<Option<StoredAgent>, StoreError> {
    let row = db.query_opt("SELECT agent, turn_plan FROM session_agents WHERE session_id = $1", &[id.into()]).await?;
    Ok(row.map(|mut r| StoredAgent { agent: r.text(0), turn_plan: r.opt_text(1) }))
}

/// Whether the frame of `seq` carried a state (`None`: it did not), and if so whether every
/// connection it went to saw streams (`STREAM-006`). One primary-key read.
pub(crate) async fn state_frame(db: &Db<'_>, id: &str, seq: u64) -> Result<Option<bool>, StoreError> {
    let row = db
        .query_opt("SELECT streams FROM state_frames WHERE session_id = $1 AND seq = $2", &[id.into(), seq.into()])
        .await?;
    Ok(row.map(|r| r.bool(0)))
}

/// The log split at `last_seq` for a catch-up resume, when `last_seq` carried a state and at
/// most `retention` events came after it.
pub(crate) async fn catch_up_log(
    db: &Db<'_>,
    id: &str,
    last_seq: u64,
    retention: u64,
) -> Result<CatchUpLog, StoreError> {
    let Some(streamed) = state_frame(db, id, last_seq).await? else { return Ok(CatchUpLog::NotAState) };
    let after = db
        .query_opt(
            "SELECT COUNT(*) FROM log WHERE session_id = $1 AND kind = 'event' AND seq > $2",
            &[id.into(), last_seq.into()],
        )
        .await?
        .map_or(0, |r| r.seq(0));
    if after > retention {
        return Ok(CatchUpLog::BeyondRetention);
    }
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let rows = db
        .query("SELECT seq, frame FROM log WHERE session_id = $1 AND kind = 'event' ORDER BY pos", &[id.into()])
        .await?;
    for mut row in rows {
        // A delta is a state frame itself (STREAM-002): the state of its seq holds it. (An event
        // row always has a seq; a missing one sorts before everything.)
        match row.opt_int(0).map(from_db) {
            Some(seq) if seq > last_seq => after.push(row.text(1)),
            _ => before.push(row.text(1)),
        }
    }
    Ok(CatchUpLog::Events { before, after, streamed })
}

/// The stored SHA-256 of a session's resume token, or `None` if there is no such session:
/// one primary-key read, the same work whether or not the session exists.
pub(crate) async fn token_hash(db: &Db<'_>, id: &str) -> Result<Option<String>, StoreError> {
    let row = db.query_opt("SELECT token_hash FROM sessions WHERE id = $1", &[id.into()]).await?;
    Ok(row.map(|mut r| r.text(0)))
}

/// Sessions with work to finish after a restart: a run in progress, a response to execute, or a deadline.
pub(crate) async fn sessions_needing_recovery(db: &Db<'_>) -> Result<Vec<String>, StoreError> {
    let rows = db
        .query(
            "SELECT id FROM sessions WHERE run_active = $1
             UNION SELECT session_id FROM pending_responses
             UNION SELECT session_id FROM timers
             ORDER BY 1",
            &[true.into()],
        )
        .await?;
    Ok(rows.into_iter().map(|mut r| r.text(0)).collect())
}

/// The session's first unused seq (reserved ones counted), or `None` if there is no such session.
pub(crate) async fn session_next_seq(db: &Db<'_>, id: &str) -> Result<Option<u64>, StoreError> {
    let row = db.query_opt("SELECT next_seq, seq_reserved FROM sessions WHERE id = $1", &[id.into()]).await?;
    Ok(row.map(|r| r.seq(0).max(r.seq(1))))
}

/// Counts the log rows of a session of one frame type (diagnostics and tests).
pub(crate) async fn count_log(db: &Db<'_>, id: &str, frame_type: &str) -> Result<u64, StoreError> {
    let row = db
        .query_opt("SELECT COUNT(*) FROM log WHERE session_id = $1 AND type = $2", &[id.into(), frame_type.into()])
        .await?;
    Ok(row.map_or(0, |r| r.seq(0)))
}
