//! Durable sessions: the append-only log, the agent's cursor, timers and responses committed but
//! not yet executed, and checkpoints of each session's state; in SQLite (WAL, one process) or
//! PostgreSQL (shared by a cluster of replicas).
//!
//! The store's logic is written once, against one interface (`db`: a statement with `$N`
//! parameters, rows back): a session's rows and one commit (`ops`), checkpoints
//! (`checkpoint`), and what a cluster adds (`cluster`: optimistic commits, run leases, the changes
//! other replicas replay, notices). SQLite and PostgreSQL differ only in how a statement runs and a
//! row is read (`db`), their migrations, and how the server reaches them: [`Store`] runs every
//! operation on SQLite's own thread, which commits whatever writes are queued together as one
//! transaction (group commit, `sqlite`), or on a PostgreSQL pool (`postgres`). Either way every
//! write a client can observe is committed, durably by default ([`Durability::Full`]), before the
//! frames announcing it are sent; the seqs of frames that change no state are reserved ahead
//! instead ([`Store::reserve_seqs`]).

mod checkpoint;
mod cluster;
mod db;
mod error;
mod handle;
mod location;
mod lock;
mod ops;
mod postgres;
mod sqlite;
mod types;

pub use error::StoreError;
pub use handle::Store;
pub use location::{default_db_path, DbLocation};
pub use lock::lock_path;
pub use types::{
    CatchUpLog, Checkpoint, Commit, CrashPoint, Durability, LeaseOp, LoadFrom, LogKind, LogRow, NewSessionRow, Notice,
    StoredAgent, StoredChange, StoredSession, StoredWindow, WindowCheckpoint, CHECKPOINT_EVERY, LEASE_TTL,
    WINDOW_SLACK, WINDOW_TAIL,
};

#[cfg(test)]
mod tests;
