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

/// Items a window checkpoint keeps beyond the largest window, so that a windowed open still
/// finds a full window after the events since the checkpoint cut a few items.
pub const WINDOW_SLACK: u64 = 64;

/// The newest items a window checkpoint keeps: the largest window and [`WINDOW_SLACK`].
pub const WINDOW_TAIL: u64 = chatwire_schema::window::MAX_WINDOW_ITEMS as u64 + WINDOW_SLACK;

/// The SQLite migration that adds window checkpoints: what a windowed open reads instead of the
/// whole state (`spec/window.md`, issue #22).
pub(super) const SQLITE_WINDOW_MIGRATION: &str = "CREATE TABLE window_checkpoints (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        total INTEGER NOT NULL,
        tail_from INTEGER NOT NULL,
        run TEXT NOT NULL
    );
    CREATE TABLE window_checkpoint_items (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        pos INTEGER NOT NULL,
        held INTEGER NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (session_id, pos)
    );";

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
    /// The same state as a windowed open reads it, by item position.
    pub window: Option<WindowCheckpoint>,
}

/// A checkpoint's state as rows by position (issue #22): the newest [`WINDOW_TAIL`] items and the
/// older items every window holds (`WINDOW-003`), so a windowed open reads the window it sends
/// and not the thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowCheckpoint {
    /// How many items the state holds.
    pub total: u64,
    /// The position of the oldest item of the tail: every item from here on has a row, and
    /// below it only those every window holds.
    pub tail_from: u64,
    /// The state's `run`, JSON.
    pub run: String,
    /// (position, whether every window holds it, item JSON), ascending.
    pub items: Vec<(u64, bool, String)>,
}

/// What a windowed load read of a [`WindowCheckpoint`]: every item from `start` on and the older
/// ones every window holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredWindow {
    /// Every event below this seq is folded in, none from it on.
    pub seq: u64,
    /// How many items the state holds.
    pub total: u64,
    /// The position from which every item was read.
    pub start: u64,
    /// The state's `run`, JSON.
    pub run: String,
    /// (position, item JSON), ascending.
    pub items: Vec<(u64, String)>,
}

/// Where a load starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadFrom {
    /// Every event of the log, no checkpoint.
    Start,
    /// The latest checkpoint and the events after it.
    Checkpoint,
    /// The latest window checkpoint's rows for the newest `newest` items (and those every
    /// window holds) and the events after it; no whole state.
    Window {
        /// How many of the newest items to read.
        newest: u64,
    },
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
    .execute(params![id, db_int(c.seq), c.state, c.history])?;
    if let Some(w) = &c.window {
        save_window(conn, id, c.seq, w)?;
    }
    Ok(())
}

fn db_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Stores `w` as the session's window checkpoint at `seq` unless one of a later seq is there.
fn save_window(conn: &Connection, id: &str, seq: u64, w: &WindowCheckpoint) -> Result<(), StoreError> {
    let newer: Option<i64> = conn
        .prepare_cached("SELECT seq FROM window_checkpoints WHERE session_id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?;
    if newer.is_some_and(|newer| newer >= db_int(seq)) {
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO window_checkpoints (session_id, seq, total, tail_from, run) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, total = excluded.total,
         tail_from = excluded.tail_from, run = excluded.run",
    )?
    .execute(params![id, db_int(seq), db_int(w.total), db_int(w.tail_from), w.run])?;
    conn.prepare_cached("DELETE FROM window_checkpoint_items WHERE session_id = ?1")?.execute([id])?;
    let mut insert = conn
        .prepare_cached("INSERT INTO window_checkpoint_items (session_id, pos, held, item) VALUES (?1, ?2, ?3, ?4)")?;
    for (pos, held, item) in &w.items {
        insert.execute(params![id, db_int(*pos), held, item])?;
    }
    Ok(())
}

/// The session's window checkpoint, reading the rows of its `newest` newest items (no further back
/// than its tail) and the older ones every window holds; `None` when it has none.
pub(super) fn read_window(conn: &Connection, id: &str, newest: u64) -> Result<Option<StoredWindow>, StoreError> {
    let head = conn
        .prepare_cached("SELECT seq, total, tail_from, run FROM window_checkpoints WHERE session_id = ?1")?
        .query_row([id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, String>(3)?))
        })
        .optional()?;
    let Some((seq, total, tail_from, run)) = head else { return Ok(None) };
    let (seq, total, tail_from) =
        (u64::try_from(seq).unwrap_or(0), u64::try_from(total).unwrap_or(0), u64::try_from(tail_from).unwrap_or(0));
    let start = total.saturating_sub(newest).max(tail_from);
    let items = conn
        .prepare_cached(
            "SELECT pos, item FROM window_checkpoint_items
             WHERE session_id = ?1 AND (held <> 0 OR pos >= ?2) ORDER BY pos",
        )?
        .query_map(params![id, db_int(start)], |r| {
            Ok((u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0), r.get::<_, String>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(StoredWindow { seq, total, start, run, items }))
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
                window: None,
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
        let checkpoint =
            |seq: u64| Checkpoint { seq, state: format!("state {seq}"), history: "{}".into(), window: None };
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
