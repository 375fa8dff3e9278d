//! [`StoreWriter`], the store as the server sees it: SQLite on its own thread, or PostgreSQL.
//!
//! SQLite: every store call of the server is a job sent to the database's thread, so no SQLite
//! work (and no fsync) runs on the async runtime's threads. Writes queued together are committed
//! as one transaction, one sync for all (group commit), each in its own savepoint so that one
//! failing write fails alone.
//!
//! PostgreSQL: every call runs on the runtime through the pool (the `postgres` module).

use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::postgres::{CommitArgs, PgStore};
use super::{
    apply_commit, checkpoint, insert_session, CatchUpLog, Checkpoint, Commit, DbLocation, Durability, LoadFrom,
    NewSession, Notice, Store, StoreError, StoredChange, StoredSession, LEASE_TTL,
};
use crate::CrashPoint;

/// Jobs queued before senders wait: backpressure instead of unbounded memory.
const QUEUE: usize = 1024;
/// Writes in one group transaction at most, so that one group's latency stays bounded.
const MAX_GROUP: usize = 256;

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// A new session's row, owned so that it can cross to the writer thread.
#[derive(Debug, Clone)]
pub struct NewSessionRow {
    /// Session id.
    pub id: String,
    /// SHA-256 of the resume token.
    pub token_hash: String,
    /// The agent spec, JSON.
    pub agent: String,
    /// The agent cursor, JSON.
    pub cursor: String,
    /// The first seq not yet used.
    pub next_seq: u64,
    /// The seq of the first snapshot.
    pub snapshot_seq: u64,
}

/// One write of a group. The commit is boxed: it is the largest job by far, and jobs queue.
enum Write {
    Commit { session_id: String, commit: Box<Commit> },
    Create(NewSessionRow),
    Checkpoint { session_id: String, checkpoint: Checkpoint },
}

enum Job {
    Write(Write, Reply<()>),
    Load { id: String, from: LoadFrom, reply: Reply<Option<StoredSession>> },
    TokenHash { id: String, reply: Reply<Option<String>> },
    NeedingRecovery { reply: Reply<Vec<String>> },
    CatchUp { id: String, last_seq: u64, retention: u64, reply: Reply<CatchUpLog> },
    StateFrame { id: String, seq: u64, reply: Reply<Option<bool>> },
    NextSeq { id: String, reply: Reply<Option<u64>> },
    CountLog { id: String, frame_type: String, reply: Reply<u64> },
}

/// The async face of the store: a handle to the SQLite thread ([`StoreWriter::spawn`]) or a
/// PostgreSQL pool ([`StoreWriter::open`] with [`DbLocation::Postgres`]).
#[derive(Debug)]
pub struct StoreWriter {
    backend: Backend,
    /// This replica's id (random unless named).
    replica: String,
    /// How long a run lease taken or renewed lives ([`LEASE_TTL`]; shorter in tests).
    lease_ttl: Duration,
    /// Test-only: abort the process around the commit of a tool response.
    crash_at: Option<CrashPoint>,
}

#[derive(Debug)]
enum Backend {
    Sqlite {
        jobs: mpsc::Sender<Job>,
        // Held, never joined: dropping the handle closes the queue and the thread ends by
        // itself, so dropping never blocks an async runtime thread.
        _thread: JoinHandle<()>,
    },
    Postgres(PgStore),
}

impl StoreWriter {
    /// Opens the store at `location`: SQLite on its own thread, or a PostgreSQL pool (connected,
    /// migrated and listening for notices before this returns). On PostgreSQL `durability` sets
    /// `synchronous_commit` (`Full`: on, `Normal`: off, which survives this process being killed
    /// but not a crash of the database server).
    pub async fn open(location: &DbLocation, durability: Durability) -> Result<StoreWriter, StoreError> {
        match location {
            DbLocation::Postgres(url) => {
                let store = PgStore::open(url, durability).await?;
                Ok(StoreWriter::with_backend(Backend::Postgres(store)))
            }
            sqlite => {
                // Opening may wait (bounded) for the file's lock: not on a runtime thread.
                let sqlite = sqlite.clone();
                let store = tokio::task::spawn_blocking(move || Store::open(&sqlite, durability))
                    .await
                    .map_err(|e| StoreError::Thread(std::io::Error::other(e.to_string())))??;
                StoreWriter::spawn(store)
            }
        }
    }

    /// Moves the SQLite `store` onto its own thread.
    pub fn spawn(store: Store) -> Result<StoreWriter, StoreError> {
        let (jobs, rx) = mpsc::channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("chatwire-store".into())
            .spawn(move || run(store, rx))
            .map_err(StoreError::Thread)?;
        Ok(StoreWriter::with_backend(Backend::Sqlite { jobs, _thread: thread }))
    }

    fn with_backend(backend: Backend) -> StoreWriter {
        StoreWriter { backend, replica: random_replica(), lease_ttl: LEASE_TTL, crash_at: None }
    }

    /// Names this replica (`serve --replica NAME`); a random id otherwise.
    pub fn set_replica(&mut self, name: impl Into<String>) {
        self.replica = name.into();
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
    /// tool response for execution (see [`crate::CRASH_AT_ENV`]), so crash durability is tested
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

    fn who(&self) -> CommitArgs<'_> {
        CommitArgs { replica: &self.replica, ttl: self.lease_ttl }
    }

    /// Runs a job on the SQLite thread; `None` on PostgreSQL.
    async fn ask<T>(&self, job: impl FnOnce(Reply<T>) -> Job) -> Result<T, StoreError> {
        let Backend::Sqlite { jobs, .. } = &self.backend else { return Err(StoreError::NotSqlite) };
        let (reply, answer) = oneshot::channel();
        jobs.send(job(reply)).await.map_err(|_| StoreError::WriterGone)?;
        answer.await.map_err(|_| StoreError::WriterGone)?
    }

    /// Applies one state change atomically and durably; returns once it is committed.
    ///
    /// On a shared store the commit is checked first ([`Commit::base_seq`], [`Commit::lease`]):
    /// [`StoreError::Conflict`], [`StoreError::Fenced`] or [`StoreError::LeaseHeld`] mean nothing
    /// was written. Returns the lease's new token after a [`LeaseOp::Acquire`](super::LeaseOp::Acquire)
    /// on a shared store, `None` otherwise (SQLite has no leases).
    pub async fn commit(&self, session_id: &str, commit: Commit) -> Result<Option<u64>, StoreError> {
        let records_response = !commit.add_pending.is_empty();
        self.crash_if(CrashPoint::ResponseReceived, records_response);
        let token = match &self.backend {
            Backend::Postgres(pg) => pg.commit(session_id, &commit, self.who()).await?,
            Backend::Sqlite { .. } => {
                let session_id = session_id.to_owned();
                self.ask(|reply| Job::Write(Write::Commit { session_id, commit: Box::new(commit) }, reply)).await?;
                None
            }
        };
        self.crash_if(CrashPoint::ResponseCommitted, records_response);
        Ok(token)
    }

    /// Inserts a new session.
    pub async fn create_session(&self, row: NewSessionRow) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.create_session(&row).await,
            Backend::Sqlite { .. } => self.ask(|reply| Job::Write(Write::Create(row), reply)).await,
        }
    }

    /// Loads a session, or `None` if there is none with this id: its latest checkpoint and the
    /// events after it ([`Store::load_session`]).
    pub async fn load_session(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.load(id, LoadFrom::Checkpoint).await
    }

    /// Loads a session with every event of its log and no checkpoint
    /// ([`Store::load_session_from_start`]).
    pub async fn load_session_from_start(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.load(id, LoadFrom::Start).await
    }

    /// Loads a session as [`LoadFrom`] says ([`Store::load`]).
    pub async fn load(&self, id: &str, from: LoadFrom) -> Result<Option<StoredSession>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.load_session(id, from).await,
            Backend::Sqlite { .. } => {
                let id = id.to_owned();
                self.ask(|reply| Job::Load { id, from, reply }).await
            }
        }
    }

    /// Stores a session's state checkpoint unless a later one is there ([`Store::save_checkpoint`]).
    pub async fn save_checkpoint(&self, id: &str, checkpoint: Checkpoint) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.save_checkpoint(id, &checkpoint).await,
            Backend::Sqlite { .. } => {
                let session_id = id.to_owned();
                self.ask(|reply| Job::Write(Write::Checkpoint { session_id, checkpoint }, reply)).await
            }
        }
    }

    /// The stored hash of a session's resume token ([`Store::token_hash`]).
    pub async fn token_hash(&self, id: &str) -> Result<Option<String>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.token_hash(id).await,
            Backend::Sqlite { .. } => {
                let id = id.to_owned();
                self.ask(|reply| Job::TokenHash { id, reply }).await
            }
        }
    }

    /// Sessions with work to finish after a restart.
    pub async fn sessions_needing_recovery(&self) -> Result<Vec<String>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.sessions_needing_recovery().await,
            Backend::Sqlite { .. } => self.ask(|reply| Job::NeedingRecovery { reply }).await,
        }
    }

    /// The log split for a catch-up resume ([`Store::catch_up_log`]).
    pub async fn catch_up_log(&self, id: &str, last_seq: u64, retention: u64) -> Result<CatchUpLog, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.catch_up_log(id, last_seq, retention).await,
            Backend::Sqlite { .. } => {
                let id = id.to_owned();
                self.ask(|reply| Job::CatchUp { id, last_seq, retention, reply }).await
            }
        }
    }

    /// Whether `seq` carried a state, and if so whether only streaming connections got it
    /// ([`Store::state_frame`]).
    pub async fn state_frame(&self, id: &str, seq: u64) -> Result<Option<bool>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.state_frame(id, seq).await,
            Backend::Sqlite { .. } => {
                let id = id.to_owned();
                self.ask(|reply| Job::StateFrame { id, seq, reply }).await
            }
        }
    }

    /// The session's stored `next_seq`, or `None` if there is no such session.
    pub async fn session_next_seq(&self, id: &str) -> Result<Option<u64>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.session_next_seq(id).await,
            Backend::Sqlite { .. } => {
                let id = id.to_owned();
                self.ask(|reply| Job::NextSeq { id, reply }).await
            }
        }
    }

    /// Counts the log rows of a session of one frame type (diagnostics and tests).
    pub async fn count_log(&self, id: &str, frame_type: &str) -> Result<u64, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.count_log(id, frame_type).await,
            Backend::Sqlite { .. } => {
                let (id, frame_type) = (id.to_owned(), frame_type.to_owned());
                self.ask(|reply| Job::CountLog { id, frame_type, reply }).await
            }
        }
    }

    /// The changes committed to a session from `next_seq` on (`first_seq >= next_seq`), in
    /// ascending order (commit order among changes with the same `first_seq`): what another
    /// replica committed, to replay. Commits that consumed no seq (a tool response recorded)
    /// have `first_seq == next_seq`, so a reader at that `next_seq` gets them again: replaying
    /// must be idempotent for them. Shared store only.
    pub async fn changes_since(&self, id: &str, next_seq: u64) -> Result<Vec<StoredChange>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.changes_since(id, next_seq).await,
            Backend::Sqlite { .. } => Err(StoreError::NotShared),
        }
    }

    /// The response to `tool_call_id` committed for execution and not executed yet, if any: on a
    /// shared store, one another replica committed and did not execute (it stopped in between).
    /// Shared store only.
    pub async fn pending_response(&self, id: &str, tool_call_id: &str) -> Result<Option<String>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.pending_response(id, tool_call_id).await,
            Backend::Sqlite { .. } => Err(StoreError::NotShared),
        }
    }

    /// The notices of commits by any replica (this one's included), `None` where the store is
    /// not shared.
    ///
    /// The channel is bounded: a receiver that gets `RecvError::Lagged` missed notices and must
    /// treat it like [`Notice::Lost`]. [`Notice::Lost`] itself comes after the notification
    /// connection was lost and is listening again.
    pub fn notices(&self) -> Option<tokio::sync::broadcast::Receiver<Notice>> {
        match &self.backend {
            Backend::Postgres(pg) => Some(pg.subscribe()),
            Backend::Sqlite { .. } => None,
        }
    }

    /// Renews the live run leases this replica holds, `(session id, token)`; returns the ids
    /// whose lease was NOT renewed (expired, claimed by another replica, or released): lost.
    /// Shared store only.
    pub async fn renew_leases(&self, held: &[(String, u64)]) -> Result<Vec<String>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.renew_leases(held, self.who()).await,
            Backend::Sqlite { .. } => Err(StoreError::NotShared),
        }
    }

    /// Claims at most `limit` expired run leases for this replica (token + 1) and returns
    /// `(session id, new token)` for each: the sessions this replica must now recover. Shared
    /// store only.
    pub async fn claim_expired_leases(&self, limit: usize) -> Result<Vec<(String, u64)>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.claim_expired_leases(limit, self.who()).await,
            Backend::Sqlite { .. } => Err(StoreError::NotShared),
        }
    }

    /// Records that these state frames of `id` went to a connection on this replica that does
    /// not see streams (`STREAM-006`): another replica committed them believing otherwise.
    /// Shared store only.
    pub async fn mark_unstreamed(&self, id: &str, seqs: &[u64]) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.mark_unstreamed(id, seqs).await,
            Backend::Sqlite { .. } => Err(StoreError::NotShared),
        }
    }

    /// Claims (token + 1) every run lease whose owner is this replica's name, expired or not:
    /// called at start, when whatever held them under this name has stopped. Returns
    /// `(session id, new token)` for each. Shared store only.
    pub async fn claim_own_leases(&self) -> Result<Vec<(String, u64)>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => pg.claim_own_leases(self.who()).await,
            Backend::Sqlite { .. } => Err(StoreError::NotShared),
        }
    }
}

/// The thread: answers reads in queue order, and commits each run of consecutive writes as one
/// group (a read queued after a write sees it).
fn run(store: Store, mut rx: mpsc::Receiver<Job>) {
    let mut next: Option<Job> = None;
    // Bounded: every iteration answers at least one job; the loop ends when every sender is gone.
    loop {
        let Some(job) = next.take().or_else(|| rx.blocking_recv()) else { return };
        let first = match job {
            Job::Write(write, reply) => (write, reply),
            Job::Load { id, from, reply } => {
                let loaded = store.load(&id, from);
                let _ = reply.send(loaded);
                continue;
            }
            Job::TokenHash { id, reply } => {
                let _ = reply.send(store.token_hash(&id));
                continue;
            }
            Job::NeedingRecovery { reply } => {
                let _ = reply.send(store.sessions_needing_recovery());
                continue;
            }
            Job::CatchUp { id, last_seq, retention, reply } => {
                let _ = reply.send(store.catch_up_log(&id, last_seq, retention));
                continue;
            }
            Job::StateFrame { id, seq, reply } => {
                let _ = reply.send(store.state_frame(&id, seq));
                continue;
            }
            Job::NextSeq { id, reply } => {
                let _ = reply.send(store.session_next_seq(&id));
                continue;
            }
            Job::CountLog { id, frame_type, reply } => {
                let _ = reply.send(store.count_log(&id, &frame_type));
                continue;
            }
        };
        let mut writes = vec![first.0];
        let mut replies = vec![first.1];
        while writes.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(Job::Write(write, reply)) => {
                    writes.push(write);
                    replies.push(reply);
                }
                Ok(read) => {
                    next = Some(read);
                    break;
                }
                Err(_) => break,
            }
        }
        let (outcomes, committed) = store.group(writes, apply_write);
        let failed = committed.err().map(|e| e.to_string());
        for (reply, outcome) in
            replies.into_iter().zip(outcomes.into_iter().map(Some).chain(std::iter::repeat_with(|| None)))
        {
            let result = match (&failed, outcome) {
                (Some(e), _) => Err(StoreError::GroupFailed(e.clone())),
                (None, Some(outcome)) => outcome,
                (None, None) => Err(StoreError::GroupFailed("the write was not attempted".into())),
            };
            let _ = reply.send(result);
        }
    }
}

/// A fresh replica id: `r` and random characters.
fn random_replica() -> String {
    crate::util::random_id("r", 8).as_str().to_owned()
}

fn apply_write(conn: &Connection, write: &Write) -> Result<(), StoreError> {
    match write {
        Write::Commit { session_id, commit } => apply_commit(conn, session_id, commit),
        Write::Create(row) => insert_session(
            conn,
            &NewSession {
                id: &row.id,
                token_hash: &row.token_hash,
                agent: &row.agent,
                cursor: &row.cursor,
                next_seq: row.next_seq,
                snapshot_seq: row.snapshot_seq,
            },
        ),
        Write::Checkpoint { session_id, checkpoint } => checkpoint::save(conn, session_id, checkpoint),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{LogKind, LogRow};

    fn row(id: &str) -> NewSessionRow {
        NewSessionRow {
            id: id.into(),
            token_hash: "h".into(),
            agent: "{}".into(),
            cursor: "{}".into(),
            next_seq: 3,
            snapshot_seq: 2,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_commit_alone_or_fail_alone_and_reads_see_them() {
        let dir = tempfile::tempdir().unwrap();
        let loc = DbLocation::File(dir.path().join("w.db"));
        let writer = std::sync::Arc::new(StoreWriter::spawn(Store::open(&loc, Durability::Full).unwrap()).unwrap());
        writer.create_session(row("s1")).await.unwrap();
        let mut tasks = Vec::new();
        for i in 0..64u64 {
            let w = writer.clone();
            tasks.push(tokio::spawn(async move {
                // Every 8th write names a session that does not exist: a foreign-key failure.
                let session = if i % 8 == 7 { "nope" } else { "s1" };
                let log =
                    vec![LogRow { seq: Some(i), kind: LogKind::Event, frame_type: "x".into(), frame: "{}".into() }];
                w.commit(session, Commit { next_seq: i, log, ..Commit::default() }).await
            }));
        }
        let mut ok = 0;
        for (i, t) in tasks.into_iter().enumerate() {
            let result = t.await.unwrap();
            assert_eq!(result.is_ok(), i % 8 != 7, "write {i}: {result:?}");
            ok += usize::from(result.is_ok());
        }
        let stored = writer.load_session("s1").await.unwrap().unwrap();
        assert_eq!(stored.events.len(), ok, "exactly the successful writes are in the log");
        assert_eq!(writer.token_hash("s1").await.unwrap().as_deref(), Some("h"));
        assert_eq!(writer.token_hash("nope").await.unwrap(), None);
        drop(writer);
        let reopened = Store::open(&loc, Durability::Full).unwrap();
        assert_eq!(reopened.load_session("s1").unwrap().unwrap().events.len(), ok);
    }

    #[tokio::test]
    async fn sqlite_ignores_the_cluster_fields_and_refuses_the_cluster_calls() {
        let mut writer = StoreWriter::spawn(Store::open(&DbLocation::Memory, Durability::Full).unwrap()).unwrap();
        assert!(!writer.is_shared());
        assert!(writer.replica().starts_with('r'), "{}", writer.replica());
        writer.set_replica("alpha");
        assert_eq!(writer.replica(), "alpha");
        assert!(Commit::default().notify, "commits notify by default");
        assert_eq!(Commit::default().lease, crate::store::LeaseOp::Keep);
        writer.create_session(row("s1")).await.unwrap();
        assert_eq!(writer.session_next_seq("s1").await.unwrap(), Some(3));
        assert_eq!(writer.session_next_seq("nope").await.unwrap(), None);
        // A stale base, a lease nobody holds, no notice: all ignored, the commit lands.
        let commit = Commit {
            next_seq: 7,
            base_seq: Some(1),
            lease: crate::store::LeaseOp::Hold(99),
            units: Some("[]".into()),
            notify: false,
            ..Commit::default()
        };
        assert_eq!(writer.commit("s1", commit).await.unwrap(), None);
        let acquire = Commit { next_seq: 8, lease: crate::store::LeaseOp::Acquire, ..Commit::default() };
        assert_eq!(writer.commit("s1", acquire).await.unwrap(), None, "no lease, no token");
        assert_eq!(writer.session_next_seq("s1").await.unwrap(), Some(8));
        assert!(writer.notices().is_none());
        assert!(matches!(writer.changes_since("s1", 0).await, Err(StoreError::NotShared)));
        assert!(matches!(writer.renew_leases(&[("s1".into(), 1)]).await, Err(StoreError::NotShared)));
        assert!(matches!(writer.claim_expired_leases(10).await, Err(StoreError::NotShared)));
    }
}
