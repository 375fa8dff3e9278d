//! The shared store of a cluster: PostgreSQL through a bounded `deadpool_postgres` pool, the
//! same rows as the SQLite store plus the run leases and the committed changes, and a LISTEN
//! connection turning every replica's commits into [`Notice`]s.
//!
//! Nothing waits forever: connecting has a deadline ([`CONNECT_TIMEOUT`]), waiting for a pooled
//! connection too ([`POOL_WAIT`]), every statement has a server-side `statement_timeout`, and
//! every operation a client-side deadline ([`OP_DEADLINE`]) past which its connection is
//! discarded (a server that stopped answering cannot be trusted to finish it).
//!
//! Reads that take several statements run in one read-only REPEATABLE READ transaction, so they
//! see one snapshot although other replicas commit meanwhile.

mod commit;
mod listen;
mod schema;

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio::sync::broadcast;
use tokio_postgres::NoTls;

use super::{CatchUpLog, Checkpoint, Durability, LoadFrom, Notice, StoreError, StoredSession, StoredWindow};
use crate::store::writer::NewSessionRow;

pub(crate) use commit::CommitArgs;

/// Connections the pool opens at most (per replica).
pub const POOL_SIZE: usize = 16;
/// How long opening a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an operation waits for a free pooled connection.
pub const POOL_WAIT: Duration = Duration::from_secs(10);
/// The server-side bound on one statement (lock waits included).
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);
/// The client-side bound on one whole operation (a transaction of several statements).
pub const OP_DEADLINE: Duration = Duration::from_secs(20);
/// A transaction left idle this long is ended by the server (a replica that froze mid-commit
/// must not keep its session row locked).
const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(30);

/// The PostgreSQL store. Every method runs on the async runtime; nothing blocks a thread.
pub(crate) struct PgStore {
    pool: Pool,
    notices: broadcast::Sender<Notice>,
    listener: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).finish_non_exhaustive()
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.listener.abort();
        self.pool.close();
    }
}

/// Parses `url` (`postgres://…` or `postgresql://…`) and adds this store's deadlines and
/// durability to the connection's options.
pub(crate) fn connection_config(url: &str, durability: Durability) -> Result<tokio_postgres::Config, StoreError> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(|e| StoreError::PostgresUrl(e.to_string()))?;
    let ms = |d: Duration| d.as_millis();
    // Durability::Full: a commit is flushed to the server's disk before it returns (survives a
    // crash of the database machine); Normal: it survives this process being killed (the server
    // has it) but the server may lose its last commits if it crashes.
    let sync = match durability {
        Durability::Full => "on",
        Durability::Normal => "off",
    };
    let ours = format!(
        "-c statement_timeout={} -c idle_in_transaction_session_timeout={} -c synchronous_commit={sync}",
        ms(STATEMENT_TIMEOUT),
        ms(IDLE_IN_TRANSACTION_TIMEOUT)
    );
    let options = match config.get_options() {
        Some(theirs) if !theirs.trim().is_empty() => format!("{theirs} {ours}"),
        _ => ours,
    };
    config.options(options).connect_timeout(CONNECT_TIMEOUT).keepalives(true).keepalives_idle(Duration::from_secs(10));
    if config.get_application_name().is_none() {
        config.application_name("chatwire-reference");
    }
    Ok(config)
}

/// `ms` milliseconds as a bigint parameter.
fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A seq or count for a bigint column.
fn to_db(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A bigint column as a seq or count.
fn from_db(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The error of an operation that ran past [`OP_DEADLINE`]; its connection is dropped, not
/// returned to the pool.
fn timed_out<T>(client: Object, what: &'static str) -> Result<T, StoreError> {
    drop(Object::take(client));
    Err(StoreError::Timeout { what, after: OP_DEADLINE })
}

/// Runs `$body` (an expression using `$client: &mut Object`) with a pooled connection, bounded by
/// [`OP_DEADLINE`].
macro_rules! with_client {
    ($store:expr, $what:expr, |$client:ident| $body:expr) => {{
        let mut conn = $store.pool.get().await?;
        let outcome = {
            let $client = &mut conn;
            tokio::time::timeout($crate::store::postgres::OP_DEADLINE, $body).await
        };
        match outcome {
            Ok(result) => result,
            Err(_) => $crate::store::postgres::timed_out(conn, $what),
        }
    }};
}
pub(crate) use with_client;

impl PgStore {
    /// Connects (bounded), applies the migrations, and starts listening for notices.
    pub async fn open(url: &str, durability: Durability) -> Result<PgStore, StoreError> {
        let config = connection_config(url, durability)?;
        let manager =
            Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::PoolBuild(e.to_string()))?;
        {
            let mut conn = pool.get().await?;
            match tokio::time::timeout(OP_DEADLINE, schema::migrate(&mut conn)).await {
                Ok(result) => result?,
                Err(_) => return timed_out(conn, "migrations"),
            }
        }
        let (notices, _) = broadcast::channel(listen::NOTICE_BUFFER);
        // The listener's connection says what it is (an operator, or a test, can find it).
        let mut listen_config = config.clone();
        let name = format!("{}-listen", config.get_application_name().unwrap_or("chatwire-reference"));
        listen_config.application_name(name);
        let listener = listen::start(listen_config, notices.clone()).await?;
        Ok(PgStore { pool, notices, listener })
    }

    /// A new receiver of the notices.
    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    /// Inserts a new session ([`super::Store::create_session`]).
    pub async fn create_session(&self, row: &NewSessionRow) -> Result<(), StoreError> {
        with_client!(self, "create session", |client| async move {
            let tx = client.transaction().await?;
            tx.execute(
                "INSERT INTO sessions (id, token_hash, next_seq, cursor, created_ms) VALUES ($1, $2, $3, $4, $5)",
                &[&row.id, &row.token_hash, &to_db(row.next_seq), &row.cursor, &crate::util::now_ms()],
            )
            .await?;
            tx.execute("INSERT INTO session_agents (session_id, agent) VALUES ($1, $2)", &[&row.id, &row.agent])
                .await?;
            tx.execute(
                "INSERT INTO state_frames (session_id, seq, streams) VALUES ($1, $2, false) ON CONFLICT DO NOTHING",
                &[&row.id, &to_db(row.snapshot_seq)],
            )
            .await?;
            tx.commit().await?;
            Ok(())
        })
    }

    /// Loads a session as [`LoadFrom`] says ([`super::Store::load`]), from one snapshot.
    pub async fn load_session(&self, id: &str, from: LoadFrom) -> Result<Option<StoredSession>, StoreError> {
        with_client!(self, "load session", |client| async move {
            let tx = snapshot(client).await?;
            let row = tx
                .query_opt(
                    "SELECT s.token_hash, a.agent, s.next_seq, s.cursor, a.turn_plan
                     FROM sessions s JOIN session_agents a ON a.session_id = s.id WHERE s.id = $1",
                    &[&id],
                )
                .await?;
            let Some(row) = row else { return Ok(None) };
            let checkpoint = match from {
                LoadFrom::Checkpoint => tx
                    .query_opt("SELECT seq, state, history FROM checkpoints WHERE session_id = $1", &[&id])
                    .await?
                    .map(|r| Checkpoint { seq: from_db(r.get(0)), state: r.get(1), history: r.get(2), window: None }),
                LoadFrom::Start | LoadFrom::Window { .. } => None,
            };
            let window = match from {
                LoadFrom::Window { newest } => read_window(&tx, id, newest).await?,
                LoadFrom::Start | LoadFrom::Checkpoint => None,
            };
            let from_seq = checkpoint.as_ref().map(|c| c.seq).or(window.as_ref().map(|w| w.seq));
            let events = match from_seq {
                // By the seq index: the rows before the checkpoint are not read.
                Some(seq) => {
                    tx.query(
                        "SELECT frame FROM log WHERE session_id = $1 AND seq >= $2 AND kind = 'event' ORDER BY pos",
                        &[&id, &to_db(seq)],
                    )
                    .await?
                }
                None => {
                    tx.query("SELECT frame FROM log WHERE session_id = $1 AND kind = 'event' ORDER BY pos", &[&id])
                        .await?
                }
            }
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect();
            let pending_responses = tx
                .query("SELECT tool_call_id, frame FROM pending_responses WHERE session_id = $1 ORDER BY pos", &[&id])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let timers = tx
                .query(
                    "SELECT tool_call_id, deadline_ms FROM timers WHERE session_id = $1 ORDER BY tool_call_id",
                    &[&id],
                )
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            tx.commit().await?;
            Ok(Some(StoredSession {
                token_hash: row.get(0),
                agent: row.get(1),
                next_seq: from_db(row.get(2)),
                cursor: row.get(3),
                turn_plan: row.get(4),
                checkpoint,
                window,
                events,
                pending_responses,
                timers,
            }))
        })
    }

    /// Stores a checkpoint unless a later one is there ([`super::Store::save_checkpoint`]).
    pub async fn save_checkpoint(&self, id: &str, c: &Checkpoint) -> Result<(), StoreError> {
        with_client!(self, "save checkpoint", |client| async move {
            let tx = client.transaction().await?;
            tx.execute(
                "INSERT INTO checkpoints (session_id, seq, state, history) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (session_id) DO UPDATE
                 SET seq = excluded.seq, state = excluded.state, history = excluded.history
                 WHERE excluded.seq > checkpoints.seq",
                &[&id, &to_db(c.seq), &c.state, &c.history],
            )
            .await?;
            if let Some(w) = &c.window {
                // Only over an older one: the upsert reports whether it wrote.
                let written = tx
                    .execute(
                        "INSERT INTO window_checkpoints (session_id, seq, total, tail_from, run)
                         VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, total = excluded.total,
                         tail_from = excluded.tail_from, run = excluded.run
                         WHERE excluded.seq > window_checkpoints.seq",
                        &[&id, &to_db(c.seq), &to_db(w.total), &to_db(w.tail_from), &w.run],
                    )
                    .await?;
                if written == 1 {
                    tx.execute("DELETE FROM window_checkpoint_items WHERE session_id = $1", &[&id]).await?;
                    let positions: Vec<i64> = w.items.iter().map(|(pos, _, _)| to_db(*pos)).collect();
                    let held: Vec<bool> = w.items.iter().map(|(_, held, _)| *held).collect();
                    let items: Vec<&str> = w.items.iter().map(|(_, _, item)| item.as_str()).collect();
                    tx.execute(
                        "INSERT INTO window_checkpoint_items (session_id, pos, held, item)
                         SELECT $1, pos, held, item
                         FROM UNNEST($2::BIGINT[], $3::BOOLEAN[], $4::TEXT[]) AS t(pos, held, item)",
                        &[&id, &positions, &held, &items],
                    )
                    .await?;
                }
            }
            tx.commit().await?;
            Ok(())
        })
    }

    /// The stored hash of a session's resume token ([`super::Store::token_hash`]).
    pub async fn token_hash(&self, id: &str) -> Result<Option<String>, StoreError> {
        with_client!(self, "token hash", |client| async move {
            let stmt = client.prepare_cached("SELECT token_hash FROM sessions WHERE id = $1").await?;
            Ok(client.query_opt(&stmt, &[&id]).await?.map(|r| r.get(0)))
        })
    }

    /// The session's stored `next_seq` ([`super::Store::session_next_seq`]).
    pub async fn session_next_seq(&self, id: &str) -> Result<Option<u64>, StoreError> {
        with_client!(self, "next seq", |client| async move {
            let stmt = client.prepare_cached("SELECT next_seq FROM sessions WHERE id = $1").await?;
            Ok(client.query_opt(&stmt, &[&id]).await?.map(|r| from_db(r.get(0))))
        })
    }

    /// Whether `seq` carried a state ([`super::Store::state_frame`]).
    pub async fn state_frame(&self, id: &str, seq: u64) -> Result<Option<bool>, StoreError> {
        with_client!(self, "state frame", |client| async move {
            let stmt =
                client.prepare_cached("SELECT streams FROM state_frames WHERE session_id = $1 AND seq = $2").await?;
            Ok(client.query_opt(&stmt, &[&id, &to_db(seq)]).await?.map(|r| r.get(0)))
        })
    }

    /// The log split for a catch-up resume ([`super::Store::catch_up_log`]), from one snapshot.
    pub async fn catch_up_log(&self, id: &str, last_seq: u64, retention: u64) -> Result<CatchUpLog, StoreError> {
        with_client!(self, "catch-up log", |client| async move {
            let tx = snapshot(client).await?;
            let last = to_db(last_seq);
            let streamed = tx
                .query_opt("SELECT streams FROM state_frames WHERE session_id = $1 AND seq = $2", &[&id, &last])
                .await?;
            let Some(streamed) = streamed.map(|r| r.get::<_, bool>(0)) else { return Ok(CatchUpLog::NotAState) };
            let after: i64 = tx
                .query_one(
                    "SELECT COUNT(*) FROM log WHERE session_id = $1 AND kind = 'event' AND seq > $2",
                    &[&id, &last],
                )
                .await?
                .get(0);
            if from_db(after) > retention {
                return Ok(CatchUpLog::BeyondRetention);
            }
            let (mut before, mut after) = (Vec::new(), Vec::new());
            for row in tx
                .query("SELECT seq, frame FROM log WHERE session_id = $1 AND kind = 'event' ORDER BY pos", &[&id])
                .await?
            {
                // A delta is a state frame itself (STREAM-002): the state of its seq holds it.
                // (An event row always has a seq; a missing one sorts before everything, as in SQLite.)
                let seq: Option<i64> = row.get(0);
                if seq.unwrap_or(i64::MIN) <= last {
                    before.push(row.get(1));
                } else {
                    after.push(row.get(1));
                }
            }
            tx.commit().await?;
            Ok(CatchUpLog::Events { before, after, streamed })
        })
    }

    /// Sessions with work to finish ([`super::Store::sessions_needing_recovery`]).
    pub async fn sessions_needing_recovery(&self) -> Result<Vec<String>, StoreError> {
        with_client!(self, "sessions needing recovery", |client| async move {
            let rows = client
                .query(
                    "SELECT id FROM sessions WHERE run_active
                     UNION SELECT session_id FROM pending_responses
                     UNION SELECT session_id FROM timers
                     ORDER BY 1",
                    &[],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    /// Counts the log rows of a session of one frame type ([`super::Store::count_log`]).
    pub async fn count_log(&self, id: &str, frame_type: &str) -> Result<u64, StoreError> {
        with_client!(self, "count log", |client| async move {
            let n: i64 = client
                .query_one("SELECT COUNT(*) FROM log WHERE session_id = $1 AND type = $2", &[&id, &frame_type])
                .await?
                .get(0);
            Ok(from_db(n))
        })
    }
}

/// A read-only REPEATABLE READ transaction: several reads from one snapshot.
async fn snapshot(client: &mut Object) -> Result<deadpool_postgres::Transaction<'_>, StoreError> {
    Ok(client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?)
}

/// The session's window checkpoint with the rows of its `newest` newest items (no further back
/// than its tail) and the older ones every window holds ([`LoadFrom::Window`]); `None` when it
/// has none.
async fn read_window(
    tx: &deadpool_postgres::Transaction<'_>,
    id: &str,
    newest: u64,
) -> Result<Option<StoredWindow>, StoreError> {
    let head =
        tx.query_opt("SELECT seq, total, tail_from, run FROM window_checkpoints WHERE session_id = $1", &[&id]).await?;
    let Some(head) = head else { return Ok(None) };
    let (seq, total, tail_from): (u64, u64, u64) = (from_db(head.get(0)), from_db(head.get(1)), from_db(head.get(2)));
    let start = total.saturating_sub(newest).max(tail_from);
    let items = tx
        .query(
            "SELECT pos, item FROM window_checkpoint_items
             WHERE session_id = $1 AND (held OR pos >= $2) ORDER BY pos",
            &[&id, &to_db(start)],
        )
        .await?
        .iter()
        .map(|r| (from_db(r.get(0)), r.get(1)))
        .collect();
    Ok(Some(StoredWindow { seq, total, start, run: head.get(3), items }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_the_stores_deadlines_and_keep_their_own_options() {
        let c = connection_config("postgres://u:secret@127.0.0.1:5432/db", Durability::Full).unwrap();
        assert_eq!(c.get_dbname(), Some("db"));
        let options = c.get_options().unwrap();
        assert!(options.contains("statement_timeout=10000"), "{options}");
        assert!(options.contains("synchronous_commit=on"), "{options}");
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(c.get_application_name(), Some("chatwire-reference"));
        let c = connection_config(
            "postgresql://127.0.0.1/db?options=-c%20work_mem%3D8MB&application_name=x",
            Durability::Normal,
        )
        .unwrap();
        let options = c.get_options().unwrap();
        assert!(options.starts_with("-c work_mem=8MB "), "{options}");
        assert!(options.contains("synchronous_commit=off"), "{options}");
        assert_eq!(c.get_application_name(), Some("x"));
        let bad = connection_config("postgres://127.0.0.1:notaport/db", Durability::Full).unwrap_err();
        assert!(matches!(bad, StoreError::PostgresUrl(_)), "{bad:?}");
    }
}
