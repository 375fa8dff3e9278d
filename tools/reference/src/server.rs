//! The server: bound to its address with its store recovered ([`Server::bind`]), accepting
//! connections until told to stop ([`Server::run`]). It wires the layers together: the session
//! core with the tasks it starts, the transport of each connection, and on a shared store the
//! replica's own tasks.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::config::{ConfigError, ServeConfig, Timeouts};
use crate::fault::Faults;
use crate::session::{self, Setup, Shared, Tasks};
use crate::store::{DbLocation, Store, StoreError};

use crate::transport;

/// The tasks the session core starts, named here, above it: what a passed deadline does, the run
/// driver, and the cluster's sync.
const TASKS: Tasks = Tasks { deadline: session::deadline_task, drive: session::drive_task, sync: session::sync_task };

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration breaks a limit of the spec.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// The address is not loopback.
    #[error("refusing to listen on {0}: only loopback addresses (127.0.0.1, ::1) are allowed")]
    NotLoopback(SocketAddr),
    /// Binding failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No data directory to put the default database in.
    #[error("no data directory: set XDG_DATA_HOME or HOME, or pass --db")]
    NoDataDir,
}

/// A bound server, recovered from its database and ready to accept connections.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    timeouts: Timeouts,
    local_addr: SocketAddr,
    ui: bool,
    /// A replica's tasks on a shared store (empty on an embedded one), aborted with the server.
    replica_tasks: JoinSet<()>,
}

impl Server {
    /// Opens the database, finishes what a previous run left (committed responses, interrupted
    /// turns, deadlines), and binds the listener.
    pub async fn bind(config: ServeConfig) -> Result<Server, ServeError> {
        config.validate()?;
        if !config.addr.ip().is_loopback() {
            return Err(ServeError::NotLoopback(config.addr));
        }
        let durable = !matches!(config.db, DbLocation::Memory);
        let mut store = Store::open(&config.db, config.durability).await?;
        if let Some(name) = &config.replica {
            store.set_replica(name.clone());
        }
        store.set_crash_point(config.crash_at);
        let mut shared = Shared::new(Setup {
            store,
            faults: Faults::of(config.fault),
            agent: config.agent.clone(),
            conformance: config.conformance,
            durable,
            max_frame_bytes: config.max_frame_bytes,
            versions: config.versions.clone(),
            tasks: TASKS,
        });
        shared.legacy_resume_lookup = config.legacy_resume_lookup;
        shared.deadline_lag = config.deadline_lag;
        shared.send_queue_bytes = config.send_queue_bytes;
        shared.withheld = config.without.clone();
        let shared = Arc::new(shared);
        // On a shared store: replay other replicas' commits, renew this replica's run leases,
        // recover the sessions of replicas that stopped (`spec/cluster.md`). Following and
        // renewing start before this replica's own recovery: a commit another replica makes
        // while a session is being recovered here must still reach it, and the leases recovery
        // claims must be renewed however long it takes.
        let mut replica_tasks = JoinSet::new();
        if let Some(notices) = shared.store.notices() {
            replica_tasks.spawn(session::follow(shared.clone(), notices, config.notice_delay));
            replica_tasks.spawn(session::hold_leases(shared.clone()));
        }
        let recovered = match shared.store.is_shared() {
            true => session::recover_own(&shared).await?,
            false => shared.recover_all().await?,
        };
        if recovered > 0 {
            eprintln!("chatwire-reference: recovered {recovered} session(s) with unfinished work");
        }
        if shared.store.is_shared() {
            replica_tasks.spawn(session::reap(shared.clone()));
        }
        let listener =
            TcpListener::bind(config.addr).await.map_err(|source| ServeError::Bind { addr: config.addr, source })?;
        let local_addr = listener.local_addr().map_err(|source| ServeError::Bind { addr: config.addr, source })?;
        Ok(Server { listener, shared, timeouts: config.timeouts, local_addr, ui: config.ui, replica_tasks })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The WebSocket URL clients connect to, `ws://ADDR/ws`.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.local_addr)
    }

    /// The store's name for this replica (on a shared store), and whether the store is shared.
    pub(crate) fn replica(&self) -> Option<&str> {
        self.shared.store.is_shared().then(|| self.shared.store.replica())
    }

    /// The chat page's URL, `http://ADDR/`, when it is served ([`ServeConfig::ui`]).
    pub fn page_url(&self) -> Option<String> {
        self.ui.then(|| format!("http://{}/", self.local_addr))
    }

    /// Accepts connections until `shutdown` completes, then closes each open connection with close
    /// code 1001 (TRANSPORT-009), waiting a bounded time for the closing handshakes.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
        let next_id = AtomicU64::new(1);
        let mut connections = JoinSet::new();
        let mut replica_tasks = self.replica_tasks;
        let (going_away, going_away_rx) = tokio::sync::watch::channel(false);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((tcp, _peer)) => {
                        let id = next_id.fetch_add(1, Ordering::Relaxed);
                        let going_away = going_away_rx.clone();
                        let shared = self.shared.clone();
                        connections.spawn(transport::serve_connection(shared, self.timeouts, tcp, id, going_away, self.ui));
                    }
                    Err(e) => {
                        // Typically EMFILE: back off instead of spinning.
                        eprintln!("chatwire-reference: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        if self.shared.faults.wire.closes_on_shutdown() {
            let _ = going_away.send(true);
            // Each connection sends its close and waits (bounded) for the reply.
            let grace = self.timeouts.write.min(transport::SHUTDOWN_CLOSE_WAIT) + Duration::from_secs(1);
            let _ = tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await;
        }
        connections.shutdown().await;
        replica_tasks.shutdown().await;
        self.shared.clear().await;
        Ok(())
    }
}

/// Binds and runs a server until `shutdown` completes.
pub async fn serve(config: ServeConfig, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
    Server::bind(config).await?.run(shutdown).await
}
