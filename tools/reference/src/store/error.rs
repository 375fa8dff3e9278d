//! What can go wrong in the store.

use std::path::PathBuf;

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
    /// A step of the store's logic waited on SQLite, whose every step is synchronous (a bug).
    #[error("a database step did not complete at once")]
    Pending,
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

impl StoreError {
    /// Whether the database refused a row that breaks a unique key (a session id, or a second
    /// response to one call).
    pub(crate) fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Postgres(e) => e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION),
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            }
            _ => false,
        }
    }
}
