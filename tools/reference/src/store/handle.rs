//! [`Store`], the store as the server sees it: every operation of the store's logic (`ops.rs`,
//! `checkpoint.rs`, `cluster.rs`) run on SQLite's thread or on a PostgreSQL pool.
//!
//! Each operation is written once, against [`Db`]; this file only says how each runs: a read or
//! a write, and on PostgreSQL whether it needs a transaction.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::checkpoint;
use super::cluster::{self, Who};
use super::db::{run_ready, Db, DbFuture};
use super::error::StoreError;
use super::location::DbLocation;
use super::ops;
use super::postgres::{Access, PgStore};
use super::sqlite::{self, Job, Thread, Written};
use super::types::{
    CatchUpLog, Checkpoint, Commit, CrashPoint, Durability, LoadFrom, NewSessionRow, Notice, StoredAgent, StoredChange,
    StoredSession, LEASE_TTL,
};

/// The sessions' database: SQLite on its own thread (one process), or a PostgreSQL pool that
/// several replicas share.
#[derive(Debug)]
pub struct Store {
    backend: Backend,
    /// This replica's id (random unless named).
    replica: Arc<str>,
    /// How long a run lease taken or renewed lives ([`LEASE_TTL`]; shorter in tests).
    lease_ttl: Duration,
    /// Test-only: abort the process around the commit of a tool response.
    crash_at: Option<CrashPoint>,
}

#[derive(Debug)]
enum Backend {
    Sqlite(Thread),
    Postgres(PgStore),
}

/// An operation of the store's logic, run on either database.
trait Op<T>: for<'a> FnOnce(&'a Db<'a>) -> DbFuture<'a, T> + Send + 'static {}
impl<T, F: for<'a> FnOnce(&'a Db<'a>) -> DbFuture<'a, T> + Send + 'static> Op<T> for F {}

impl Store {
    /// Opens the store at `location`: SQLite on its own thread, or a PostgreSQL pool (connected,
    /// migrated and listening for notices before this returns). On PostgreSQL `durability` sets
    /// `synchronous_commit` (`Full`: on, `Normal`: off, which survives this process being killed
    /// but not a crash of the database server).
    pub async fn open(location: &DbLocation, durability: Durability) -> Result<Store, StoreError> {
        let backend = match location {
            DbLocation::Postgres(url) => Backend::Postgres(PgStore::open(url, durability).await?),
            sqlite => {
                // Opening may wait (bounded) for the file's lock: not on a runtime thread.
                let sqlite = sqlite.clone();
                let (conn, lock) = tokio::task::spawn_blocking(move || sqlite::open(&sqlite, durability))
                    .await
                    .map_err(|e| StoreError::Thread(std::io::Error::other(e.to_string())))??;
                Backend::Sqlite(Thread::spawn(conn, lock)?)
            }
        };
        let replica = crate::util::random_id("r", 8).as_str().into();
        Ok(Store { backend, replica, lease_ttl: LEASE_TTL, crash_at: None })
    }

    /// Names this replica (`serve --replica NAME`); a random id otherwise.
    pub fn set_replica(&mut self, name: impl Into<String>) {
        self.replica = name.into().into();
    }

    /// This replica's id: the owner of the run leases it takes on a shared store.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// Test-only: the life of the run leases this replica takes and renews, instead of
    /// [`LEASE_TTL`], so that expiry can be tested without waiting seconds.
    #[doc(hidden)]
    pub fn set_lease_ttl(&mut self, ttl: Duration) {
        self.lease_ttl = ttl;
    }

    /// Whether the store is shared by several replicas (PostgreSQL). The embedded SQLite store
    /// is not: it ignores [`Commit::base_seq`], [`Commit::lease`] and [`Commit::notify`], and
    /// the cluster-only calls answer [`StoreError::NotShared`].
    pub fn is_shared(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Test-only: makes the process abort right before or right after a commit that records a
    /// tool response for execution (see `CHATWIRE_REFERENCE_CRASH_AT`), so crash durability is tested
    /// at the one place where a response becomes durable, with no call site in the handlers.
    pub(crate) fn set_crash_point(&mut self, point: Option<CrashPoint>) {
        self.crash_at = point;
    }

    fn crash_if(&self, point: CrashPoint, records_response: bool) {
        if records_response && self.crash_at == Some(point) {
            eprintln!("chatwire-reference: crash point {point:?} reached, aborting");
            std::process::abort();
        }
    }

    /// Runs a read: on SQLite's thread in queue order, on PostgreSQL as `access` says.
    async fn read<T: Send + 'static>(
        &self,
        what: &'static str,
        access: Access,
        op: impl Op<T>,
    ) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.run(what, access, op).await,
            Backend::Sqlite(thread) => {
                let (tx, rx) = oneshot::channel();
                let job = Job::Read(Box::new(move |db: &Db<'_>| {
                    let _ = tx.send(run_ready(op(db)));
                }));
                thread.send(job).await?;
                rx.await.map_err(|_| StoreError::WriterGone)?
            }
        }
    }

    /// Runs a write: on SQLite's thread in a group transaction (answered once it commits), on
    /// PostgreSQL in a transaction of its own.
    async fn write<T: Send + 'static>(&self, what: &'static str, op: impl Op<T>) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.run(what, Access::Write, op).await,
            Backend::Sqlite(thread) => {
                let (tx, rx) = oneshot::channel();
                thread.send(Job::Write(write_job(op, tx))).await?;
                rx.await.map_err(|_| StoreError::WriterGone)?
            }
        }
    }

    /// Applies one state change atomically and durably; returns once it is committed.
    ///
    /// On a shared store the commit is checked first ([`Commit::base_seq`], [`Commit::lease`]):
    /// [`StoreError::Conflict`], [`StoreError::Fenced`] or [`StoreError::LeaseHeld`] mean nothing
    /// was written. Returns the lease's new token after a
    /// [`LeaseOp::Acquire`](super::LeaseOp::Acquire) on a shared store, `None` otherwise (SQLite
    /// has no leases).
    pub async fn commit(&self, id: &str, commit: Commit) -> Result<Option<u64>, StoreError> {
        let records_response = !commit.add_pending.is_empty();
        self.crash_if(CrashPoint::ResponseReceived, records_response);
        let (id, replica, ttl) = (id.to_owned(), self.replica.clone(), self.lease_ttl);
        let token = self
            .write("commit", move |db| {
                Box::pin(async move {
                    let who = Who { replica: &replica, ttl };
                    ops::commit(db, &id, &commit, &who).await
                })
            })
            .await?;
        self.crash_if(CrashPoint::ResponseCommitted, records_response);
        Ok(token)
    }

    /// Inserts a new session.
    pub async fn create_session(&self, row: NewSessionRow) -> Result<(), StoreError> {
        self.write("create session", move |db| Box::pin(async move { ops::create_session(db, &row).await })).await
    }

    /// Loads a session, or `None` if there is none with this id: its latest checkpoint and the
    /// events after it, so the work follows the events since the checkpoint, not the thread.
    pub async fn load_session(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.load(id, LoadFrom::Checkpoint).await
    }

    /// Loads a session with every event of its log and no checkpoint.
    pub async fn load_session_from_start(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.load(id, LoadFrom::Start).await
    }

    /// Loads a session as [`LoadFrom`] says, from one snapshot.
    pub async fn load(&self, id: &str, from: LoadFrom) -> Result<Option<StoredSession>, StoreError> {
        let id = id.to_owned();
        self.read("load session", Access::Snapshot, move |db| Box::pin(async move { ops::load(db, &id, from).await }))
            .await
    }

    /// A session's agent and the plan of its turn (what a windowed load leaves out), or `None`
    /// if there is no such session.
    pub async fn load_agent(&self, id: &str) -> Result<Option<StoredAgent>, StoreError> {
        let id = id.to_owned();
        self.read("load agent", Access::Statement, move |db| Box::pin(async move { ops::load_agent(db, &id).await }))
            .await
    }

    /// Stores a session's state checkpoint unless a later one is there.
    pub async fn save_checkpoint(&self, id: &str, c: Checkpoint) -> Result<(), StoreError> {
        let id = id.to_owned();
        self.write("save checkpoint", move |db| Box::pin(async move { checkpoint::save_checkpoint(db, &id, &c).await }))
            .await
    }

    /// Reserves the session's seqs below `upto` for frames that change no state (errors, pages):
    /// a restart resumes at `upto` or above ([`StoredSession::next_seq`]). Durable once this
    /// returns.
    pub async fn reserve_seqs(&self, id: &str, upto: u64) -> Result<(), StoreError> {
        let id = id.to_owned();
        self.write("reserve seqs", move |db| Box::pin(async move { ops::reserve_seqs(db, &id, upto).await })).await
    }

    /// [`Store::reserve_seqs`] without waiting, and only if SQLite's queue has room (then it is
    /// written before anything queued after it is read): a session leaving memory gives back the
    /// seqs it reserved and did not use, so that its next load does not skip them. Where it is
    /// not queued, the reservation stands: a gap in the seqs, no more (`SEQ-003`).
    pub fn release_seqs_later(&self, id: &str, next_seq: u64) {
        if let Backend::Sqlite(thread) = &self.backend {
            let id = id.to_owned();
            let (tx, _) = oneshot::channel();
            let job = write_job(move |db| Box::pin(async move { ops::reserve_seqs(db, &id, next_seq).await }), tx);
            let _ = thread.try_send(Job::Write(job));
        }
    }

    /// The stored hash of a session's resume token, or `None` if there is no such session: one
    /// primary-key read, the same work whether or not the session exists.
    pub async fn token_hash(&self, id: &str) -> Result<Option<String>, StoreError> {
        let id = id.to_owned();
        self.read("token hash", Access::Statement, move |db| Box::pin(async move { ops::token_hash(db, &id).await }))
            .await
    }

    /// Sessions with work to finish after a restart: a run in progress, a response to execute,
    /// or a deadline.
    pub async fn sessions_needing_recovery(&self) -> Result<Vec<String>, StoreError> {
        self.read("sessions needing recovery", Access::Statement, |db| {
            Box::pin(async move { ops::sessions_needing_recovery(db).await })
        })
        .await
    }

    /// The log split at `last_seq` for a catch-up resume, when `last_seq` carried a state and at
    /// most `retention` events came after it.
    pub async fn catch_up_log(&self, id: &str, last_seq: u64, retention: u64) -> Result<CatchUpLog, StoreError> {
        let id = id.to_owned();
        self.read("catch-up log", Access::Snapshot, move |db| {
            Box::pin(async move { ops::catch_up_log(db, &id, last_seq, retention).await })
        })
        .await
    }

    /// Whether `seq` carried a state (`None`: it did not), and if so whether only streaming
    /// connections got it (`STREAM-006`).
    pub async fn state_frame(&self, id: &str, seq: u64) -> Result<Option<bool>, StoreError> {
        let id = id.to_owned();
        self.read("state frame", Access::Statement, move |db| {
            Box::pin(async move { ops::state_frame(db, &id, seq).await })
        })
        .await
    }

    /// The session's stored `next_seq` (reserved seqs counted), or `None` if there is no such
    /// session.
    pub async fn session_next_seq(&self, id: &str) -> Result<Option<u64>, StoreError> {
        let id = id.to_owned();
        self.read("next seq", Access::Statement, move |db| {
            Box::pin(async move { ops::session_next_seq(db, &id).await })
        })
        .await
    }

    /// Counts the log rows of a session of one frame type (diagnostics and tests).
    pub async fn count_log(&self, id: &str, frame_type: &str) -> Result<u64, StoreError> {
        let (id, frame_type) = (id.to_owned(), frame_type.to_owned());
        self.read("count log", Access::Statement, move |db| {
            Box::pin(async move { ops::count_log(db, &id, &frame_type).await })
        })
        .await
    }

    /// The shared store, or [`StoreError::NotShared`].
    fn shared(&self) -> Result<&PgStore, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => Ok(pg),
            Backend::Sqlite(_) => Err(StoreError::NotShared),
        }
    }

    /// The changes committed to a session from `next_seq` on (`first_seq >= next_seq`), in
    /// ascending order (commit order among changes with the same `first_seq`): what another
    /// replica committed, to replay. Commits that consumed no seq (a tool response recorded)
    /// have `first_seq == next_seq`, so a reader at that `next_seq` gets them again: replaying
    /// must be idempotent for them. Shared store only.
    pub async fn changes_since(&self, id: &str, next_seq: u64) -> Result<Vec<StoredChange>, StoreError> {
        let id = id.to_owned();
        self.shared()?
            .run("changes since", Access::Statement, move |db| {
                Box::pin(async move { cluster::changes_since(db, &id, next_seq).await })
            })
            .await
    }

    /// The response to `tool_call_id` committed for execution and not executed yet, if any: on a
    /// shared store, one another replica committed and did not execute (it stopped in between).
    /// Shared store only.
    pub async fn pending_response(&self, id: &str, tool_call_id: &str) -> Result<Option<String>, StoreError> {
        let (id, call) = (id.to_owned(), tool_call_id.to_owned());
        self.shared()?
            .run("pending response", Access::Statement, move |db| {
                Box::pin(async move { cluster::pending_response(db, &id, &call).await })
            })
            .await
    }

    /// The notices of commits by any replica (this one's included), `None` where the store is
    /// not shared.
    ///
    /// The channel is bounded: a receiver that gets `RecvError::Lagged` missed notices and must
    /// treat it like [`Notice::Lost`]. [`Notice::Lost`] itself comes after the notification
    /// connection was lost and is listening again.
    pub fn notices(&self) -> Option<tokio::sync::broadcast::Receiver<Notice>> {
        self.shared().ok().map(PgStore::subscribe)
    }

    /// Renews the live run leases this replica holds, `(session id, token)`; returns the ids
    /// whose lease was NOT renewed (expired, claimed by another replica, or released): lost.
    /// Shared store only.
    pub async fn renew_leases(&self, held: &[(String, u64)]) -> Result<Vec<String>, StoreError> {
        let pg = self.shared()?;
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let (owned, replica, ttl) = (held.to_vec(), self.replica.clone(), self.lease_ttl);
        // On the heartbeat's own connection: never behind commits waiting for a pooled one.
        let renewed = pg
            .run_heartbeat("renew leases", move |db| {
                Box::pin(async move { cluster::renew_leases(db, &owned, &Who { replica: &replica, ttl }).await })
            })
            .await?;
        Ok(held.iter().map(|(id, _)| id).filter(|id| !renewed.contains(id)).cloned().collect())
    }

    /// Claims at most `limit` expired run leases for this replica (token + 1) and returns
    /// `(session id, new token)` for each: the sessions this replica must now recover. Shared
    /// store only.
    pub async fn claim_expired_leases(&self, limit: usize) -> Result<Vec<(String, u64)>, StoreError> {
        let (replica, ttl) = (self.replica.clone(), self.lease_ttl);
        self.shared()?
            .run("claim expired leases", Access::Statement, move |db| {
                Box::pin(async move { cluster::claim_expired_leases(db, limit, &Who { replica: &replica, ttl }).await })
            })
            .await
    }

    /// Records that these state frames of `id` went to a connection on this replica that does
    /// not see streams (`STREAM-006`): another replica committed them believing otherwise.
    /// Shared store only.
    pub async fn mark_unstreamed(&self, id: &str, seqs: &[u64]) -> Result<(), StoreError> {
        let (id, seqs) = (id.to_owned(), seqs.to_vec());
        self.shared()?
            .run("mark state frames unstreamed", Access::Statement, move |db| {
                Box::pin(async move { cluster::mark_unstreamed(db, &id, &seqs).await })
            })
            .await
    }

    /// Claims (token + 1) every run lease whose owner is this replica's name, expired or not:
    /// called at start, when whatever held them under this name has stopped. Returns
    /// `(session id, new token)` for each. Shared store only.
    pub async fn claim_own_leases(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let (replica, ttl) = (self.replica.clone(), self.lease_ttl);
        self.shared()?
            .run("claim own leases", Access::Statement, move |db| {
                Box::pin(async move { cluster::claim_own_leases(db, &Who { replica: &replica, ttl }).await })
            })
            .await
    }
}

/// A write for SQLite's thread: runs `op` (when the group started) and answers on `tx` once the
/// group's commit is known.
fn write_job<T: Send + 'static>(op: impl Op<T>, tx: oneshot::Sender<Result<T, StoreError>>) -> sqlite::WriteJob {
    Box::new(move |db: &Db<'_>, attempt: bool| {
        if !attempt {
            return Written {
                failed: true,
                answer: Box::new(move |group| {
                    let why = group.err().unwrap_or_else(|| "the write was not attempted".into());
                    let _ = tx.send(Err(StoreError::GroupFailed(why)));
                }),
            };
        }
        let result = run_ready(op(db));
        Written {
            failed: result.is_err(),
            answer: Box::new(move |group| {
                let _ = tx.send(match group {
                    Ok(()) => result,
                    Err(e) => Err(StoreError::GroupFailed(e)),
                });
            }),
        }
    })
}
