//! State checkpoints (issue #22): a session's state and turn history as they stood before a
//! given seq, kept beside its log so that loading the session after a restart reads the latest
//! checkpoint and folds only the events after it, not the whole thread.
//!
//! A checkpoint is a cache of the log's fold and nothing else: the log stays the truth, a
//! checkpoint that cannot be read is ignored (the whole log is folded instead), and a newer one
//! replaces an older one only.

use rusqlite::{params, Connection, OptionalExtension};

use super::{Store, StoreError};

/// The events a session commits between two checkpoints, at most: a load folds no more than
/// these (plus those committed by a change in flight), and the state is written once per this
/// many events, so the checkpoint's cost per event is its size over this.
pub const CHECKPOINT_EVERY: u64 = 500;

/// The SQLite migration that adds checkpoints and the log's index by seq.
pub(super) const SQLITE_MIGRATION: &str = "CREATE TABLE checkpoints (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        history TEXT NOT NULL
    );
    CREATE INDEX log_by_seq ON log(session_id, seq);";

/// A session's state as it stood before `seq`: the fold of every event of a lower seq.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Every event below this seq is folded in, none from it on.
    pub seq: u64,
    /// The `UiState`, JSON.
    pub state: String,
    /// What the folded events say about the session's turns, JSON (opaque to the store).
    pub history: String,
}

impl Store {
    /// Stores `checkpoint` as the session's latest unless one of a later seq is already there.
    pub fn save_checkpoint(&self, id: &str, checkpoint: &Checkpoint) -> Result<(), StoreError> {
        save(&*self.conn()?, id, checkpoint)
    }
}

/// [`Store::save_checkpoint`] on a connection (the writer thread's group transaction).
pub(super) fn save(conn: &Connection, id: &str, c: &Checkpoint) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO checkpoints (session_id, seq, state, history) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, state = excluded.state, history = excluded.history
         WHERE excluded.seq > checkpoints.seq",
    )?
    .execute(params![id, i64::try_from(c.seq).unwrap_or(i64::MAX), c.state, c.history])?;
    Ok(())
}

/// The session's latest checkpoint, if it has one.
pub(super) fn read(conn: &Connection, id: &str) -> Result<Option<Checkpoint>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT seq, state, history FROM checkpoints WHERE session_id = ?1")?
        .query_row([id], |r| {
            Ok(Checkpoint {
                seq: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                state: r.get(1)?,
                history: r.get(2)?,
            })
        })
        .optional()?)
}

/// The session's events of seq `from` on, in log order (`from` 0: every event).
pub(super) fn events_from(conn: &Connection, id: &str, from: u64) -> Result<Vec<String>, StoreError> {
    if from == 0 {
        let mut stmt =
            conn.prepare_cached("SELECT frame FROM log WHERE session_id = ?1 AND kind = 'event' ORDER BY pos")?;
        let events = stmt.query_map([id], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        return Ok(events);
    }
    // By the seq index: the rows before the checkpoint are not read.
    let mut stmt = conn.prepare_cached(
        "SELECT frame FROM log INDEXED BY log_by_seq
         WHERE session_id = ?1 AND seq >= ?2 AND kind = 'event' ORDER BY pos",
    )?;
    let from = i64::try_from(from).unwrap_or(i64::MAX);
    let events = stmt.query_map(params![id, from], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Commit, DbLocation, Durability, LogKind, LogRow, NewSession};

    #[test]
    fn a_load_reads_the_latest_checkpoint_and_the_events_from_its_seq() {
        let store = Store::open(&DbLocation::Memory, Durability::Normal).unwrap();
        let session = NewSession { id: "s1", token_hash: "h", agent: "{}", cursor: "{}", next_seq: 3, snapshot_seq: 2 };
        store.create_session(&session).unwrap();
        let event = |seq: u64| LogRow {
            seq: Some(seq),
            kind: LogKind::Event,
            frame_type: "x".into(),
            frame: format!("{{\"seq\":{seq}}}"),
        };
        let request = LogRow { seq: None, kind: LogKind::Request, frame_type: "r".into(), frame: "{}".into() };
        let log = vec![event(3), event(4), request, event(6), event(7)];
        store.commit("s1", &Commit { next_seq: 9, log, ..Commit::default() }).unwrap();
        let checkpoint = |seq: u64| Checkpoint { seq, state: format!("state {seq}"), history: "{}".into() };
        store.save_checkpoint("s1", &checkpoint(6)).unwrap();
        // An older one (a slower writer) does not replace it.
        store.save_checkpoint("s1", &checkpoint(5)).unwrap();
        let loaded = store.load_session("s1").unwrap().unwrap();
        assert_eq!(loaded.checkpoint, Some(checkpoint(6)));
        assert_eq!(loaded.events, vec!["{\"seq\":6}".to_string(), "{\"seq\":7}".to_string()]);
        let whole = store.load_session_from_start("s1").unwrap().unwrap();
        assert_eq!((whole.checkpoint, whole.events.len()), (None, 4));
        store.save_checkpoint("s1", &checkpoint(9)).unwrap();
        let loaded = store.load_session("s1").unwrap().unwrap();
        assert_eq!((loaded.checkpoint, loaded.events.len()), (Some(checkpoint(9)), 0));
    }
}
