//! Durable sessions: the append-only log, the agent's cursor, timers and responses committed but
//! not yet executed, and a checkpoint of each session's state (`checkpoint`); in SQLite (WAL, one
//! process) or PostgreSQL (shared by a cluster of replicas).
//!
//! [`Store`] is the SQLite database itself, synchronous. The server never calls it from its async
//! runtime: it owns it through a [`StoreWriter`], a thread that runs every query and commits
//! whatever writes are queued together as one transaction (group commit). On PostgreSQL
//! ([`DbLocation::Postgres`]) the [`StoreWriter`] holds a connection pool instead, and adds what a
//! cluster needs (the `cluster` module's docs: optimistic commits, run leases, notices). Either
//! way every write a client can observe is committed, durably by default ([`Durability::Full`]),
//! before the frames announcing it are sent.

mod checkpoint;
mod cluster;
mod location;
mod lock;
mod postgres;
mod writer;

pub use checkpoint::{
    Checkpoint, LoadFrom, StoredWindow, WindowCheckpoint, CHECKPOINT_EVERY, WINDOW_SLACK, WINDOW_TAIL,
};
pub use cluster::{LeaseOp, Notice, StoredChange, LEASE_TTL};
pub use location::DbLocation;
pub use lock::lock_path;
pub use writer::{NewSessionRow, StoreWriter};

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database directory could not be created.
    #[error("cannot create database directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The database was written by a newer version of this program.
    #[error("database schema version {found} is newer than this program's {supported}")]
    TooNew {
        /// The version in the file.
        found: i64,
        /// The newest this program knows.
        supported: i64,
    },
    /// Another thread panicked while holding the database.
    #[error("database lock poisoned")]
    Poisoned,
    /// The store thread could not be started.
    #[error("cannot start the database thread: {0}")]
    Thread(std::io::Error),
    /// The store thread is gone (the server is stopping).
    #[error("the database thread has stopped")]
    WriterGone,
    /// The group transaction this write was part of failed to commit.
    #[error("database commit failed: {0}")]
    GroupFailed(String),
    /// Another process (or another store in this one) holds the SQLite database's lock.
    #[error(
        "another chatwire-reference process serves this database: {}; replicas need --store postgres://…",
        path.display()
    )]
    InUse {
        /// The database file.
        path: PathBuf,
    },
    /// The lock file beside the SQLite database could not be opened or locked.
    #[error("cannot lock the database with {}: {source}", path.display())]
    LockFile {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A shared store refused the commit: the session's `next_seq` is no longer the one the
    /// change was staged from (another replica committed first). Nothing was written.
    #[error("the session moved on: the change was staged at next_seq {expected}, the store is at {found}")]
    Conflict {
        /// The `base_seq` of the commit.
        expected: u64,
        /// The stored `next_seq`.
        found: u64,
    },
    /// A shared store refused the commit: this replica does not hold the run lease with that
    /// token (it expired and was claimed, or was released). Nothing was written.
    #[error("the run lease is not held by this replica with this token")]
    Fenced,
    /// A shared store refused to start a run: another replica holds a live run lease.
    #[error("another replica holds the run lease of this session")]
    LeaseHeld,
    /// A call only a shared store answers was made on the embedded SQLite store.
    #[error("this call needs a shared store (postgres), the store is sqlite")]
    NotShared,
    /// PostgreSQL refused or the connection failed.
    #[error("postgres error: {}", with_causes(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// No pooled PostgreSQL connection could be had in time.
    #[error("postgres connection pool: {}", with_causes(.0))]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The PostgreSQL connection pool could not be built.
    #[error("cannot build the postgres connection pool: {0}")]
    PoolBuild(String),
    /// The `postgres://` URL does not parse.
    #[error("invalid postgres url: {0}")]
    PostgresUrl(String),
    /// The database did not answer in time.
    #[error("the database did not answer within {after:?} ({what})")]
    Timeout {
        /// The operation.
        what: &'static str,
        /// Its deadline.
        after: std::time::Duration,
    },
    /// [`Store::open`] was given a PostgreSQL URL.
    #[error("the synchronous store is sqlite only: open postgres with StoreWriter::open")]
    NotSqlite,
    /// A commit named a session the shared store does not have.
    #[error("no session {0} in the store")]
    UnknownSession(String),
}

/// An error and its causes, `a: b: c` (tokio-postgres says only "db error" and keeps the
/// server's message in the cause).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    // Bounded: error chains are short, but never trust one to end.
    for _ in 0..8 {
        let Some(c) = cause else { break };
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

/// How hard a commit tries to survive a crash (`PRAGMA synchronous` in WAL mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// `FULL`: the WAL is synced on every commit, so a commit survives a power loss or an OS
    /// crash (RESUME-011 "commit durably"). The default; group commit shares each sync among the
    /// commits queued together.
    #[default]
    Full,
    /// `NORMAL`: a commit survives the process being killed, but the last commits may be lost
    /// with a power loss or OS crash. Only for tests and benchmarks that say so.
    Normal,
}

impl Durability {
    fn pragma(self) -> &'static str {
        match self {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        }
    }

    /// Parses `full` or `normal` (the `--durability` flag).
    pub fn parse(s: &str) -> Option<Durability> {
        match s {
            "full" => Some(Durability::Full),
            "normal" => Some(Durability::Normal),
            _ => None,
        }
    }
}

/// Schema migrations; `PRAGMA user_version` says how many have run.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, the append-only log, timers, responses awaiting execution.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL,
        agent TEXT NOT NULL,
        next_seq INTEGER NOT NULL,
        cursor TEXT NOT NULL,
        turn_plan TEXT,
        run_active INTEGER NOT NULL DEFAULT 0,
        created_ms INTEGER NOT NULL
    );
    CREATE TABLE log (
        pos INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER,
        kind TEXT NOT NULL CHECK (kind IN ('event', 'request')),
        type TEXT NOT NULL,
        frame TEXT NOT NULL
    );
    CREATE INDEX log_by_session ON log(session_id, pos);
    CREATE TABLE pending_responses (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        tool_call_id TEXT NOT NULL,
        frame TEXT NOT NULL,
        PRIMARY KEY (session_id, tool_call_id)
    );
    CREATE TABLE timers (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        tool_call_id TEXT NOT NULL,
        deadline_ms INTEGER NOT NULL,
        PRIMARY KEY (session_id, tool_call_id)
    );",
    // 2: the seqs of the frames that carried a state (snapshots, updates, patches): the only
    // seqs a catch-up resume may start from (RESUME-017), known across restarts.
    "CREATE TABLE state_frames (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;",
    // 3: whether every connection a state frame went to saw streams: a frame sent while a stream
    // was open is a catch-up base only then (STREAM-006). Older rows say no: a snapshot, as before.
    "ALTER TABLE state_frames ADD COLUMN streams INTEGER NOT NULL DEFAULT 0;",
    // 4: the agent (with its script) and the turn's plan move out of the session row. A commit
    // updates that row (next_seq, cursor) every time, and SQLite rewrites a whole row, overflow
    // pages included, so a large script made every event cost its size (issue #22).
    "CREATE TABLE session_agents (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        agent TEXT NOT NULL,
        turn_plan TEXT
    );
    INSERT INTO session_agents (session_id, agent, turn_plan) SELECT id, agent, turn_plan FROM sessions;
    ALTER TABLE sessions DROP COLUMN agent;
    ALTER TABLE sessions DROP COLUMN turn_plan;",
    // 5: each session's latest state checkpoint, so a load folds only the events after it, and
    // the log by seq, so those are found without reading the ones before (issue #22).
    checkpoint::SQLITE_MIGRATION,
    // 6: window checkpoints, so a windowed open reads its window, not the whole state (issue #22).
    checkpoint::SQLITE_WINDOW_MIGRATION,
];

/// A new session's row.
#[derive(Debug)]
pub struct NewSession<'a> {
    /// Session id.
    pub id: &'a str,
    /// SHA-256 of the resume token.
    pub token_hash: &'a str,
    /// The agent spec, JSON.
    pub agent: &'a str,
    /// The agent cursor, JSON.
    pub cursor: &'a str,
    /// The first seq not yet used (after the welcome and snapshot).
    pub next_seq: u64,
    /// The seq of the first snapshot (a frame that carries a state).
    pub snapshot_seq: u64,
}

/// One row of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRow {
    /// The frame's seq (server events only).
    pub seq: Option<u64>,
    /// `event` (a server frame the state was folded from) or `request` (a client frame).
    pub kind: LogKind,
    /// The frame's wire type.
    pub frame_type: String,
    /// The frame, JSON.
    pub frame: String,
}

/// What a log row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// A server event the effective state is folded from.
    Event,
    /// A client request that was accepted.
    Request,
}

impl LogKind {
    fn as_str(self) -> &'static str {
        match self {
            LogKind::Event => "event",
            LogKind::Request => "request",
        }
    }
}

/// A stored session with everything needed to rebuild it.
#[derive(Debug, PartialEq, Eq)]
pub struct StoredSession {
    /// SHA-256 of the resume token.
    pub token_hash: String,
    /// The agent spec, JSON.
    pub agent: String,
    /// The first seq not yet used.
    pub next_seq: u64,
    /// The agent cursor, JSON.
    pub cursor: String,
    /// The plan of the current turn, JSON.
    pub turn_plan: Option<String>,
    /// The latest checkpoint, where [`Store::load_session`] read one: `events` start after it.
    pub checkpoint: Option<Checkpoint>,
    /// Where a windowed load ([`LoadFrom::Window`]) read one: `events` start after it.
    pub window: Option<StoredWindow>,
    /// Server events in log order (frames, JSON): every one, or those after `checkpoint` (or
    /// `window`).
    pub events: Vec<String>,
    /// Responses committed but not yet executed: (tool call id, frame JSON), in commit order.
    pub pending_responses: Vec<(String, String)>,
    /// Expiry deadlines: (tool call id, deadline in ms since the epoch).
    pub timers: Vec<(String, i64)>,
}

/// Everything one state change writes, applied in one transaction.
#[derive(Debug)]
pub struct Commit {
    /// The session's first unused seq after this change.
    pub next_seq: u64,
    /// Rows to append to the log.
    pub log: Vec<LogRow>,
    /// The new agent cursor, JSON.
    pub cursor: Option<String>,
    /// The new plan of the current turn.
    pub turn_plan: Option<String>,
    /// Whether a run slice is in progress after this change.
    pub run_active: Option<bool>,
    /// Expiry deadlines to add.
    pub add_timers: Vec<(String, i64)>,
    /// Expiry deadlines to remove.
    pub remove_timers: Vec<String>,
    /// Remove every expiry deadline of the session.
    pub clear_timers: bool,
    /// Responses committed for later execution.
    pub add_pending: Vec<(String, String)>,
    /// Responses that have now been executed.
    pub remove_pending: Vec<String>,
    /// Seqs of frames this change sends that carry a state (snapshot, update or patch).
    pub state_seqs: Vec<u64>,
    /// Those of `state_seqs` that went only to connections that see streams (STREAM-006).
    pub streamed_state_seqs: Vec<u64>,
    /// The session's `next_seq` this change was staged from; a shared store refuses the commit
    /// with [`StoreError::Conflict`] when the stored `next_seq` differs. `None`: no check
    /// (planted fault). Ignored by SQLite.
    pub base_seq: Option<u64>,
    /// What the change does to the session's run lease. Ignored by SQLite.
    pub lease: LeaseOp,
    /// The change's units as JSON, replayed by other replicas (shared store only; opaque to the
    /// store). Ignored by SQLite.
    pub units: Option<String>,
    /// Whether other replicas are told (`pg_notify`). True by default; false only for a planted
    /// fault. Ignored by SQLite.
    pub notify: bool,
}

impl Default for Commit {
    /// An empty change (`next_seq` 0) that notifies other replicas.
    fn default() -> Self {
        Commit {
            next_seq: 0,
            log: Vec::new(),
            cursor: None,
            turn_plan: None,
            run_active: None,
            add_timers: Vec::new(),
            remove_timers: Vec::new(),
            clear_timers: false,
            add_pending: Vec::new(),
            remove_pending: Vec::new(),
            state_seqs: Vec::new(),
            streamed_state_seqs: Vec::new(),
            base_seq: None,
            lease: LeaseOp::Keep,
            units: None,
            notify: true,
        }
    }
}

/// What the log holds for a catch-up resume from `last_seq` ([`Store::catch_up_log`]).
#[derive(Debug, PartialEq, Eq)]
pub enum CatchUpLog {
    /// `last_seq` is not the seq of a frame that carried a state: a snapshot it is (RESUME-018).
    NotAState,
    /// More events than the retention were committed after `last_seq` (RESUME-018).
    BeyondRetention,
    /// The events, JSON, in log order: those the state of `last_seq` folds, and those after it.
    Events {
        /// Committed up to `last_seq` (a delta's own seq included).
        before: Vec<String>,
        /// Committed after `last_seq`, at most the retention.
        after: Vec<String>,
        /// Whether every connection the frame of `last_seq` went to saw streams (STREAM-006).
        streamed: bool,
    },
}

/// The SQLite database.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
    /// The exclusive lock of a database file, held while the store lives (see [`lock_path`]).
    _lock: Option<std::fs::File>,
}

impl Store {
    /// Opens (creating if needed) the database and brings its schema up to date. A database
    /// file is locked for this store alone: while another store (in this process or another)
    /// has it open, opening waits a moment for it to let go, then fails with
    /// [`StoreError::InUse`]. SQLite only: a PostgreSQL store is opened by [`StoreWriter::open`]
    /// ([`StoreError::NotSqlite`] here).
    pub fn open(location: &DbLocation, durability: Durability) -> Result<Store, StoreError> {
        let (conn, lock) = match location {
            DbLocation::Postgres(_) => return Err(StoreError::NotSqlite),
            DbLocation::Memory => (Connection::open_in_memory()?, None),
            DbLocation::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), source })?;
                }
                let lock = lock::lock_database(path, lock::LOCK_WAIT)?;
                (Connection::open(path)?, Some(lock))
            }
        };
        let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.execute_batch(&format!(
            "PRAGMA synchronous = {}; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
            durability.pragma()
        ))?;
        migrate(&conn)?;
        Ok(Store { conn: Mutex::new(conn), _lock: lock })
    }

    fn conn(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned)
    }

    /// Inserts a new session.
    pub fn create_session(&self, s: &NewSession<'_>) -> Result<(), StoreError> {
        insert_session(&*self.conn()?, s)
    }

    /// Loads a session, or `None` if there is none with this id: its latest checkpoint and the
    /// events after it, so the work follows the events since the checkpoint, not the thread.
    pub fn load_session(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.load(id, LoadFrom::Checkpoint)
    }

    /// Loads a session with every event of its log and no checkpoint.
    pub fn load_session_from_start(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.load(id, LoadFrom::Start)
    }

    /// Loads a session as [`LoadFrom`] says.
    pub fn load(&self, id: &str, from: LoadFrom) -> Result<Option<StoredSession>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .query_row(
                "SELECT s.token_hash, a.agent, s.next_seq, s.cursor, a.turn_plan
                 FROM sessions s JOIN session_agents a ON a.session_id = s.id WHERE s.id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, Option<String>>(4)?,
                    ))
                },
            )
            .optional()?;
        let Some((token_hash, agent, next_seq, cursor, turn_plan)) = row else { return Ok(None) };
        let (checkpoint, window) = match from {
            LoadFrom::Start => (None, None),
            LoadFrom::Checkpoint => (checkpoint::read(&conn, id)?, None),
            LoadFrom::Window { newest } => (None, checkpoint::read_window(&conn, id, newest)?),
        };
        let from_seq = checkpoint.as_ref().map(|c| c.seq).or(window.as_ref().map(|w| w.seq)).unwrap_or(0);
        let events = checkpoint::events_from(&conn, id, from_seq)?;
        let mut stmt = conn
            .prepare_cached("SELECT tool_call_id, frame FROM pending_responses WHERE session_id = ?1 ORDER BY rowid")?;
        let pending_responses = stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<Vec<_>, _>>()?;
        let mut stmt = conn.prepare_cached("SELECT tool_call_id, deadline_ms FROM timers WHERE session_id = ?1")?;
        let timers = stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<Vec<_>, _>>()?;
        Ok(Some(StoredSession {
            token_hash,
            agent,
            next_seq: u64::try_from(next_seq).unwrap_or(0),
            cursor,
            turn_plan,
            checkpoint,
            window,
            events,
            pending_responses,
            timers,
        }))
    }

    /// Whether the frame of `seq` carried a state (`None`: it did not), and if so whether every
    /// connection it went to saw streams (`STREAM-006`). One primary-key read.
    pub fn state_frame(&self, id: &str, seq: u64) -> Result<Option<bool>, StoreError> {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        Ok(self
            .conn()?
            .prepare_cached("SELECT streams FROM state_frames WHERE session_id = ?1 AND seq = ?2")?
            .query_row(params![id, seq], |r| r.get::<_, bool>(0))
            .optional()?)
    }

    /// The log split at `last_seq` for a catch-up resume, when `last_seq` carried a state and at
    /// most `retention` events came after it.
    pub fn catch_up_log(&self, id: &str, last_seq: u64, retention: u64) -> Result<CatchUpLog, StoreError> {
        let conn = self.conn()?;
        let last = i64::try_from(last_seq).unwrap_or(i64::MAX);
        let streamed = conn
            .prepare_cached("SELECT streams FROM state_frames WHERE session_id = ?1 AND seq = ?2")?
            .query_row(params![id, last], |r| r.get::<_, bool>(0))
            .optional()?;
        let Some(streamed) = streamed else { return Ok(CatchUpLog::NotAState) };
        let after: i64 = conn
            .prepare_cached("SELECT COUNT(*) FROM log WHERE session_id = ?1 AND kind = 'event' AND seq > ?2")?
            .query_row(params![id, last], |r| r.get(0))?;
        if u64::try_from(after).unwrap_or(u64::MAX) > retention {
            return Ok(CatchUpLog::BeyondRetention);
        }
        let mut stmt =
            conn.prepare_cached("SELECT seq, frame FROM log WHERE session_id = ?1 AND kind = 'event' ORDER BY pos")?;
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for row in stmt.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
            let (seq, frame) = row?;
            // A delta is a state frame itself (STREAM-002): the state of its seq holds it.
            if seq <= last {
                before.push(frame);
            } else {
                after.push(frame);
            }
        }
        Ok(CatchUpLog::Events { before, after, streamed })
    }

    /// The stored SHA-256 of a session's resume token, or `None` if there is no such session:
    /// one primary-key read, the same work whether or not the session exists.
    pub fn token_hash(&self, id: &str) -> Result<Option<String>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached("SELECT token_hash FROM sessions WHERE id = ?1")?;
        Ok(stmt.query_row([id], |r| r.get::<_, String>(0)).optional()?)
    }

    /// Sessions with work to finish after a restart: a run in progress, a response to execute, or a deadline.
    pub fn sessions_needing_recovery(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(
            "SELECT id FROM sessions WHERE run_active = 1
             UNION SELECT session_id FROM pending_responses
             UNION SELECT session_id FROM timers",
        )?;
        let ids = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        Ok(ids)
    }

    /// The session's first unused seq, or `None` if there is no such session.
    pub fn session_next_seq(&self, id: &str) -> Result<Option<u64>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached("SELECT next_seq FROM sessions WHERE id = ?1")?;
        let seq = stmt.query_row([id], |r| r.get::<_, i64>(0)).optional()?;
        Ok(seq.map(|s| u64::try_from(s).unwrap_or(0)))
    }

    /// Applies one state change atomically.
    pub fn commit(&self, session_id: &str, c: &Commit) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        apply_commit(&tx, session_id, c)?;
        tx.commit()?;
        Ok(())
    }

    /// Runs `writes` in one transaction and commits it (one sync for all of them). Each write
    /// is its own savepoint: a failing one is rolled back alone and reported in the outcomes.
    pub fn group<T>(
        &self,
        writes: Vec<T>,
        mut write: impl FnMut(&Connection, &T) -> Result<(), StoreError>,
    ) -> (Vec<Result<(), StoreError>>, Result<(), StoreError>) {
        let mut outcomes = Vec::with_capacity(writes.len());
        let committed = (|| {
            let mut conn = self.conn()?;
            let mut tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            for item in &writes {
                let sp = tx.savepoint()?;
                let outcome = write(&sp, item);
                if outcome.is_ok() {
                    sp.commit()?;
                }
                outcomes.push(outcome);
            }
            tx.commit()?;
            Ok(())
        })();
        (outcomes, committed)
    }

    /// Counts the log rows of a session of one frame type (diagnostics and tests).
    pub fn count_log(&self, session_id: &str, frame_type: &str) -> Result<u64, StoreError> {
        let conn = self.conn()?;
        let n: i64 = conn.query_row(
            "SELECT COUNT(*) FROM log WHERE session_id = ?1 AND type = ?2",
            params![session_id, frame_type],
            |r| r.get(0),
        )?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// Inserts a new session's row.
fn insert_session(conn: &Connection, s: &NewSession<'_>) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO sessions (id, token_hash, next_seq, cursor, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![s.id, s.token_hash, s.next_seq as i64, s.cursor, crate::util::now_ms()])?;
    conn.prepare_cached("INSERT INTO session_agents (session_id, agent) VALUES (?1, ?2)")?
        .execute(params![s.id, s.agent])?;
    insert_state_seqs(conn, s.id, &[s.snapshot_seq], &[])
}

/// Records the seqs of frames that carried a state, and which of them only streaming connections got.
fn insert_state_seqs(conn: &Connection, session_id: &str, seqs: &[u64], streamed: &[u64]) -> Result<(), StoreError> {
    let mut insert =
        conn.prepare_cached("INSERT OR IGNORE INTO state_frames (session_id, seq, streams) VALUES (?1, ?2, ?3)")?;
    for seq in seqs {
        insert.execute(params![session_id, *seq as i64, streamed.contains(seq)])?;
    }
    Ok(())
}

/// Writes one state change inside the caller's transaction.
fn apply_commit(tx: &Connection, session_id: &str, c: &Commit) -> Result<(), StoreError> {
    let mut insert =
        tx.prepare_cached("INSERT INTO log (session_id, seq, kind, type, frame) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    for row in &c.log {
        insert.execute(params![session_id, row.seq.map(|s| s as i64), row.kind.as_str(), row.frame_type, row.frame])?;
    }
    tx.prepare_cached("UPDATE sessions SET next_seq = ?2 WHERE id = ?1")?
        .execute(params![session_id, c.next_seq as i64])?;
    if let Some(cursor) = &c.cursor {
        tx.prepare_cached("UPDATE sessions SET cursor = ?2 WHERE id = ?1")?.execute(params![session_id, cursor])?;
    }
    if let Some(plan) = &c.turn_plan {
        tx.prepare_cached("UPDATE session_agents SET turn_plan = ?2 WHERE session_id = ?1")?
            .execute(params![session_id, plan])?;
    }
    if let Some(active) = c.run_active {
        tx.prepare_cached("UPDATE sessions SET run_active = ?2 WHERE id = ?1")?.execute(params![session_id, active])?;
    }
    if c.clear_timers {
        tx.prepare_cached("DELETE FROM timers WHERE session_id = ?1")?.execute([session_id])?;
    }
    for id in &c.remove_timers {
        tx.prepare_cached("DELETE FROM timers WHERE session_id = ?1 AND tool_call_id = ?2")?
            .execute(params![session_id, id])?;
    }
    for (id, deadline) in &c.add_timers {
        tx.prepare_cached("INSERT OR REPLACE INTO timers (session_id, tool_call_id, deadline_ms) VALUES (?1, ?2, ?3)")?
            .execute(params![session_id, id, deadline])?;
    }
    for id in &c.remove_pending {
        tx.prepare_cached("DELETE FROM pending_responses WHERE session_id = ?1 AND tool_call_id = ?2")?
            .execute(params![session_id, id])?;
    }
    for (id, frame) in &c.add_pending {
        tx.prepare_cached("INSERT INTO pending_responses (session_id, tool_call_id, frame) VALUES (?1, ?2, ?3)")?
            .execute(params![session_id, id, frame])?;
    }
    insert_state_seqs(tx, session_id, &c.state_seqs, &c.streamed_state_seqs)
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let supported = MIGRATIONS.len() as i64;
    if current > supported {
        return Err(StoreError::TooNew { found: current, supported });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(current).unwrap_or(0)) {
        conn.execute_batch(&format!("BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;", index + 1))?;
    }
    Ok(())
}

/// The default database file: `$XDG_DATA_HOME/chatwire/reference.db`, else `~/.local/share/chatwire/reference.db`.
pub fn default_db_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| Path::new(&h).join(".local/share")))?;
    Some(base.join("chatwire").join("reference.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_sets_synchronous_and_defaults_to_full() {
        let dir = tempfile::tempdir().unwrap();
        // PRAGMA synchronous: 1 = NORMAL, 2 = FULL.
        for (durability, want) in [(Durability::Full, 2), (Durability::Normal, 1)] {
            let store = Store::open(&DbLocation::File(dir.path().join(format!("{want}.db"))), durability).unwrap();
            let got: i64 = store.conn().unwrap().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
            assert_eq!(got, want, "{durability:?}");
        }
        assert_eq!(Durability::default(), Durability::Full);
        assert_eq!(Durability::parse("full"), Some(Durability::Full));
        assert_eq!(Durability::parse("normal"), Some(Durability::Normal));
        assert_eq!(Durability::parse("off"), None);
    }

    #[test]
    fn migrations_are_idempotent_and_commit_is_atomic() {
        let dir = tempfile::tempdir().unwrap();
        let loc = DbLocation::File(dir.path().join("sub/db.sqlite"));
        let store = Store::open(&loc, Durability::Full).unwrap();
        store
            .create_session(&NewSession {
                id: "s1",
                token_hash: "h",
                agent: "{}",
                cursor: "{}",
                next_seq: 3,
                snapshot_seq: 2,
            })
            .unwrap();
        let commit = Commit {
            next_seq: 5,
            log: vec![LogRow { seq: Some(3), kind: LogKind::Event, frame_type: "x".into(), frame: "{}".into() }],
            add_timers: vec![("tc".into(), 42)],
            ..Commit::default()
        };
        store.commit("s1", &commit).unwrap();
        // A failing commit (unknown session violates the foreign key) leaves nothing behind.
        assert!(store.commit("nope", &commit).is_err());
        drop(store);
        let store = Store::open(&loc, Durability::Full).unwrap();
        let s = store.load_session("s1").unwrap().unwrap();
        assert_eq!(s.next_seq, 5);
        assert_eq!(s.events, vec!["{}".to_string()]);
        assert_eq!(s.timers, vec![("tc".to_string(), 42)]);
        assert_eq!(store.sessions_needing_recovery().unwrap(), vec!["s1".to_string()]);
        assert!(store.load_session("nope").unwrap().is_none());
        assert_eq!(store.count_log("nope", "x").unwrap(), 0);
    }

    #[test]
    fn a_database_of_migration_3_keeps_its_agents_and_plans() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            for (index, sql) in MIGRATIONS[..3].iter().enumerate() {
                conn.execute_batch(&format!("BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;", index + 1)).unwrap();
            }
            conn.execute(
                "INSERT INTO sessions (id, token_hash, agent, next_seq, cursor, turn_plan, created_ms)
                 VALUES ('s1', 'h', '{\"kind\":\"script\"}', 7, '{}', '{\"steps\":[]}', 0)",
                [],
            )
            .unwrap();
        }
        let store = Store::open(&DbLocation::File(path), Durability::Full).unwrap();
        let s = store.load_session("s1").unwrap().unwrap();
        assert_eq!(
            (s.agent.as_str(), s.turn_plan.as_deref(), s.next_seq),
            ("{\"kind\":\"script\"}", Some("{\"steps\":[]}"), 7)
        );
        // The session row no longer holds them: a commit's update of it stays small.
        let columns: Vec<String> = store
            .conn()
            .unwrap()
            .prepare("SELECT name FROM pragma_table_info('sessions')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!columns.iter().any(|c| c == "agent" || c == "turn_plan"), "{columns:?}");
        store.commit("s1", &Commit { next_seq: 9, turn_plan: Some("{}".into()), ..Commit::default() }).unwrap();
        assert_eq!(store.load_session("s1").unwrap().unwrap().turn_plan.as_deref(), Some("{}"));
    }
}
