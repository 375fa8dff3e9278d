//! The SQLite side of the store: opening the file (WAL, the durability's `synchronous`, an
//! exclusive lock), its migrations, and its thread.
//!
//! Every store call is a job sent to the database's own thread, so no SQLite work (and no fsync)
//! runs on the async runtime's threads. Reads are answered in queue order; writes queued
//! together are committed as one transaction, one sync for all (group commit), each in its own
//! savepoint so that one failing write fails alone. A read queued after a write sees it.

use std::sync::Mutex;
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::mpsc;

use super::db::Db;
use super::error::StoreError;
use super::location::DbLocation;
use super::lock::{lock_database, LOCK_WAIT};
use super::types::Durability;

/// Jobs queued before senders wait: backpressure instead of unbounded memory.
const QUEUE: usize = 1024;
/// Writes in one group transaction at most, so that one group's latency stays bounded.
const MAX_GROUP: usize = 256;
/// Prepared statements kept per connection: the store's statements and their multi-row forms.
const STATEMENT_CACHE: usize = 256;

/// Schema migrations; `PRAGMA user_version` says how many have run.
pub(crate) const MIGRATIONS: &[&str] = &[
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
    "CREATE TABLE checkpoints (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        history TEXT NOT NULL
    );
    CREATE INDEX log_by_seq ON log(session_id, seq);",
    // 6: window checkpoints, so a windowed open reads its window, not the whole state (issue #22).
    "CREATE TABLE window_checkpoints (
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
    );",
    // 7: the seqs reserved for frames that change no state (errors, pages), so that those need
    // no commit of their own and a restart still resumes above them; and the run lease counter
    // PostgreSQL keeps, so that both databases hold the same session row (one commit statement).
    "ALTER TABLE sessions ADD COLUMN seq_reserved INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;",
];

/// Opens (creating if needed) the database at `location` and brings its schema up to date. A
/// database file is locked for this process alone: while another store (in this process or
/// another) has it open, opening waits a moment for it to let go, then fails with
/// [`StoreError::InUse`]. Returns the connection and the lock, held as long as the store lives.
pub(crate) fn open(
    location: &DbLocation,
    durability: Durability,
) -> Result<(Connection, Option<std::fs::File>), StoreError> {
    let (conn, lock) = match location {
        DbLocation::Postgres(_) => unreachable!("PostgreSQL is opened by the postgres module"),
        DbLocation::Memory => (Connection::open_in_memory()?, None),
        DbLocation::File(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), source })?;
            }
            let lock = lock_database(path, LOCK_WAIT)?;
            (Connection::open(path)?, Some(lock))
        }
    };
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    let synchronous = match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    };
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {synchronous}; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
    ))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    migrate(&conn)?;
    Ok((conn, lock))
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

/// What a write job reports to its group: whether it failed (its savepoint is rolled back), and
/// how to answer once the group's commit is known.
pub(crate) struct Written {
    pub failed: bool,
    pub answer: Box<dyn FnOnce(Result<(), String>) + Send>,
}

/// A write: run (`true`) inside the group transaction, or not run at all (`false`: the group
/// could not start), then answered after the commit.
pub(crate) type WriteJob = Box<dyn FnOnce(&Db<'_>, bool) -> Written + Send>;

/// A job for the store's thread.
pub(crate) enum Job {
    /// Runs and answers at once.
    Read(Box<dyn FnOnce(&Db<'_>) + Send>),
    /// Runs inside the group transaction; answered after its commit.
    Write(WriteJob),
}

/// The store's thread: its queue, and the thread itself.
#[derive(Debug)]
pub(crate) struct Thread {
    jobs: mpsc::Sender<Job>,
    // Held, never joined: dropping the handle closes the queue and the thread ends by itself, so
    // dropping never blocks an async runtime thread.
    _thread: JoinHandle<()>,
    /// The exclusive lock of a database file, held while the store lives (`lock.rs`).
    _lock: Option<std::fs::File>,
}

impl Thread {
    /// Moves the connection onto a thread of its own.
    pub fn spawn(conn: Connection, lock: Option<std::fs::File>) -> Result<Thread, StoreError> {
        let (jobs, rx) = mpsc::channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("chatwire-store".into())
            .spawn(move || run(Mutex::new(conn), rx))
            .map_err(StoreError::Thread)?;
        Ok(Thread { jobs, _thread: thread, _lock: lock })
    }

    /// Queues a job.
    pub async fn send(&self, job: Job) -> Result<(), StoreError> {
        self.jobs.send(job).await.map_err(|_| StoreError::WriterGone)
    }

    /// Queues a job if the queue has room, without waiting.
    pub fn try_send(&self, job: Job) -> bool {
        self.jobs.try_send(job).is_ok()
    }
}

/// The thread: answers reads in queue order, and commits each run of consecutive writes as one
/// group (a read queued after a write sees it).
fn run(conn: Mutex<Connection>, mut rx: mpsc::Receiver<Job>) {
    let db = Db::Sqlite(&conn);
    let mut next: Option<Job> = None;
    // Bounded: every iteration answers at least one job; the loop ends when every sender is gone.
    loop {
        let Some(job) = next.take().or_else(|| rx.blocking_recv()) else { return };
        let first = match job {
            Job::Write(write) => write,
            Job::Read(read) => {
                read(&db);
                continue;
            }
        };
        let mut writes = vec![first];
        while writes.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(Job::Write(write)) => writes.push(write),
                Ok(read) => {
                    next = Some(read);
                    break;
                }
                Err(_) => break,
            }
        }
        group(&conn, &db, writes);
    }
}

/// Runs `writes` in one transaction and commits it (one sync for all of them). With more than
/// one, each is its own savepoint: a failing one is rolled back alone.
fn group(conn: &Mutex<Connection>, db: &Db<'_>, writes: Vec<WriteJob>) {
    let statement = |sql: &str| -> Result<(), String> {
        let conn = conn.lock().map_err(|_| StoreError::Poisoned.to_string())?;
        let mut stmt = conn.prepare_cached(sql).map_err(|e| e.to_string())?;
        stmt.execute([]).map(|_| ()).map_err(|e| e.to_string())
    };
    if let Err(e) = statement("BEGIN IMMEDIATE") {
        for write in writes {
            (write(db, false).answer)(Err(e.clone()));
        }
        return;
    }
    let alone = writes.len() == 1;
    let mut answers = Vec::with_capacity(writes.len());
    let mut broken = None;
    for write in writes {
        if alone {
            let written = write(db, true);
            if written.failed {
                // The one write failed: nothing of the transaction is kept.
                broken = Some(String::new());
            }
            answers.push(written.answer);
            continue;
        }
        let written = match statement("SAVEPOINT w") {
            Ok(()) => write(db, true),
            Err(e) => {
                broken = Some(e);
                write(db, false)
            }
        };
        let undone = match written.failed {
            true => statement("ROLLBACK TO w"),
            false => Ok(()),
        };
        if let Err(e) = undone.and_then(|()| statement("RELEASE w")) {
            broken = Some(e);
        }
        answers.push(written.answer);
    }
    let outcome = match broken {
        // A lone write that failed: rolled back, and it answers with its own error.
        Some(e) if e.is_empty() => statement("ROLLBACK"),
        // A savepoint that could not be taken or undone: nothing of the group can be trusted.
        Some(e) => statement("ROLLBACK").and(Err(e)),
        None => statement("COMMIT").inspect_err(|_| {
            let _ = statement("ROLLBACK");
        }),
    };
    for answer in answers {
        answer(outcome.clone());
    }
}
