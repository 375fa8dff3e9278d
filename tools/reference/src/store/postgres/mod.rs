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

mod config;
mod listen;
mod schema;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio::sync::broadcast;
use tokio_postgres::NoTls;

use super::db::{Db, DbFuture};
use super::error::StoreError;
use super::types::{Durability, Notice};
use config::{connection_config, CONNECT_TIMEOUT, OP_DEADLINE, POOL_SIZE, POOL_WAIT};

/// The PostgreSQL store. Every method runs on the async runtime; nothing blocks a thread.
pub(crate) struct PgStore {
    pool: Pool,
    /// One connection of its own for renewing the run leases ([`PgStore::run_heartbeat`]): a
    /// renewal never waits for a pooled connection behind commits, which on a loaded machine can
    /// take longer than a lease lives (`CLUSTER-003`, `CLUSTER-004`).
    heartbeat: Pool,
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
        self.heartbeat.close();
    }
}

/// The error of an operation that ran past [`OP_DEADLINE`]; its connection is dropped, not
/// returned to the pool.
fn timed_out<T>(client: Object, what: &'static str) -> Result<T, StoreError> {
    drop(Object::take(client));
    Err(StoreError::Timeout { what, after: OP_DEADLINE })
}

/// How an operation uses its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// One statement, no transaction.
    Statement,
    /// Several reads from one snapshot: a read-only REPEATABLE READ transaction, so they agree
    /// although other replicas commit meanwhile.
    Snapshot,
    /// Writes: one transaction.
    Write,
}

impl PgStore {
    /// Connects (bounded), applies the migrations, and starts listening for notices.
    pub async fn open(url: &str, durability: Durability) -> Result<PgStore, StoreError> {
        let config = connection_config(url, durability)?;
        let pool = build_pool(&config, POOL_SIZE)?;
        let mut heartbeat_config = config.clone();
        let name = format!("{}-heartbeat", config.get_application_name().unwrap_or("chatwire-reference"));
        heartbeat_config.application_name(name);
        let heartbeat = build_pool(&heartbeat_config, 1)?;
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
        Ok(PgStore { pool, heartbeat, notices, listener })
    }

    /// A new receiver of the notices.
    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    /// Runs `op` on a pooled connection as `access` says, bounded by [`OP_DEADLINE`] (past it the
    /// connection is discarded: a server that stopped answering cannot be trusted to finish it).
    pub async fn run<T, F>(&self, what: &'static str, access: Access, op: F) -> Result<T, StoreError>
    where
        F: for<'a> FnOnce(&'a Db<'a>) -> DbFuture<'a, T>,
    {
        run_on(&self.pool, what, access, op).await
    }

    /// [`PgStore::run`] on the heartbeat's own connection (the run leases' renewals, one at a time).
    pub async fn run_heartbeat<T, F>(&self, what: &'static str, op: F) -> Result<T, StoreError>
    where
        F: for<'a> FnOnce(&'a Db<'a>) -> DbFuture<'a, T>,
    {
        run_on(&self.heartbeat, what, Access::Statement, op).await
    }
}

/// A bounded pool of at most `size` connections of `config`.
fn build_pool(config: &tokio_postgres::Config, size: usize) -> Result<Pool, StoreError> {
    let manager =
        Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
    Pool::builder(manager)
        .max_size(size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(POOL_WAIT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| StoreError::PoolBuild(e.to_string()))
}

/// Runs `op` on a connection of `pool` as `access` says, bounded by [`OP_DEADLINE`] (past it the
/// connection is discarded: a server that stopped answering cannot be trusted to finish it).
async fn run_on<T, F>(pool: &Pool, what: &'static str, access: Access, op: F) -> Result<T, StoreError>
where
    F: for<'a> FnOnce(&'a Db<'a>) -> DbFuture<'a, T>,
{
    let mut client = pool.get().await?;
    let outcome = tokio::time::timeout(OP_DEADLINE, async {
        match access {
            Access::Statement => op(&Db::PostgresClient(&client)).await,
            Access::Snapshot | Access::Write => {
                let tx = match access {
                    Access::Write => client.transaction().await?,
                    _ => {
                        client
                            .build_transaction()
                            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                            .read_only(true)
                            .start()
                            .await?
                    }
                };
                let out = op(&Db::Postgres(&tx)).await?;
                tx.commit().await?;
                Ok(out)
            }
        }
    })
    .await;
    match outcome {
        Ok(result) => result,
        Err(_) => timed_out(client, what),
    }
}
