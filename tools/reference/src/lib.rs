//! # chatwire-reference
//!
//! The reference backend of the Chatwire protocol v1: a WebSocket server (tokio +
//! tokio-tungstenite) with durable sessions in SQLite and the scripted agent of the conformance
//! driver profile.
//!
//! * [`Server::bind`] / [`serve`] run it in-process; [`run_cli`] is the command line (also
//!   reached through the conformance runner's hidden subcommand).
//! * State: every session's `UiState` is the fold of the events it committed, through
//!   `chatwire_schema::reducer` (the private `session` module's docs say how).
//! * [`agent`]: the seam between the run driver and what plans a turn.
//! * [`fault`]: planted bugs for proving the conformance suite (testing aid only).

#![warn(missing_docs)]

use std::ffi::OsString;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ProtocolVersion, SUPPORTED_VERSIONS};
use clap::Parser;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

pub mod agent;
mod conn;
pub mod fault;
mod hooks;
mod send_queue;
mod session;
pub mod store;
mod transport;
mod ui;
pub mod util;

pub use agent::{Agent, EchoAgent, ScriptedAgent};
pub use fault::{Fault, UnknownFault};
pub use send_queue::DEFAULT_SEND_QUEUE_BYTES;
pub use store::{DbLocation, Durability, Store, StoreError};
pub use ui::{DemoAgent, DemoError};

/// Environment variable naming a [`CrashPoint`] (`response-received`, `response-committed`);
/// read by [`run_cli`] only, for crash-durability tests.
pub const CRASH_AT_ENV: &str = "CHATWIRE_REFERENCE_CRASH_AT";

/// Environment variable holding a delay in milliseconds (at most [`MAX_NOTICE_DELAY`]) before
/// this replica replays another replica's commit to its connections; read by [`run_cli`] only.
/// It plays a deployment whose fan-out is slow but within the 1 second the reference documents
/// (`CLUSTER-006`), so a test can prove the runner does not take a quiet tab for an idle one.
pub const NOTICE_DELAY_ENV: &str = "CHATWIRE_REFERENCE_NOTICE_DELAY_MS";

/// The longest [`NOTICE_DELAY_ENV`] accepted: the fan-out delay the reference documents.
pub const MAX_NOTICE_DELAY: Duration = Duration::from_secs(1);

/// How many windowed opens this process served from a window checkpoint without loading the
/// whole state (issue #22); tests read it to know that path ran.
#[doc(hidden)]
pub fn partial_opens() -> u64 {
    session::partial_opens()
}

/// A place where a test build makes the process abort, to prove crash durability
/// deterministically. Never set in normal operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoint {
    /// A valid `chat.tool_call_response` arrived and is not yet committed.
    ResponseReceived,
    /// The response is committed; its execution (the settlement) has not happened.
    ResponseCommitted,
}

impl CrashPoint {
    /// Parses the value of [`CRASH_AT_ENV`].
    pub fn parse(s: &str) -> Option<CrashPoint> {
        match s {
            "response-received" => Some(CrashPoint::ResponseReceived),
            "response-committed" => Some(CrashPoint::ResponseCommitted),
            _ => None,
        }
    }
}

/// Deadlines of the transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// The WebSocket handshake must complete within this.
    pub handshake: Duration,
    /// A connection silent this long is pinged; silent for twice this long it is dropped.
    pub idle: Duration,
    /// One frame write must complete within this.
    pub write: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { handshake: Duration::from_secs(10), idle: Duration::from_secs(30), write: Duration::from_secs(10) }
    }
}

/// How to run the server.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen; must be a loopback address (port 0 picks a free port).
    pub addr: SocketAddr,
    /// Where the sessions live: SQLite (one process) or PostgreSQL (shared by replicas).
    pub db: DbLocation,
    /// This replica's name on a shared store (the owner of the run leases it takes); a random
    /// id when `None`.
    pub replica: Option<String>,
    /// How hard commits try to survive a crash; [`Durability::Full`] (survives a power loss) by default.
    pub durability: Durability,
    /// Conformance mode: honour `session.hello.script`.
    pub conformance: bool,
    /// The agent answering sessions opened without a script ([`EchoAgent`] by default): where a
    /// library user plugs in a model (see `examples/custom_agent.rs`).
    pub agent: Arc<dyn Agent>,
    /// Largest text frame accepted; larger ones get `frame_too_large`.
    pub max_frame_bytes: u64,
    /// The protocol versions this server speaks (`chatwire_schema::SUPPORTED_VERSIONS` by
    /// default); a subset pins it, e.g. to 1.0 to play a server that predates 1.1.
    pub versions: Vec<ProtocolVersion>,
    /// The bound on one connection's unsent bytes (`TRANSPORT-016`), at most
    /// `chatwire_schema::SEND_QUEUE_MAX_BYTES`; [`DEFAULT_SEND_QUEUE_BYTES`] by default.
    pub send_queue_bytes: u64,
    /// Capabilities not to offer although implemented (only those in [`WITHHOLDABLE`]): a server
    /// without `retry` answers `chat.retry` with `capability_not_offered`; one without
    /// `assistant_stream` sends every `say` whole.
    pub without: Vec<Capability>,
    /// A planted bug (testing aid), or `None` for the correct server.
    pub fault: Option<Fault>,
    /// Transport deadlines.
    pub timeouts: Timeouts,
    /// Test-only: check a resume's token the old way (look the session up first, hash only if it
    /// exists), whose refusals take measurably different time for unknown sessions and wrong
    /// tokens. `tests/refusal_timing.rs` runs it as a control that its comparison can fail.
    #[doc(hidden)]
    pub legacy_resume_lookup: bool,
    /// Test-only crash point (see [`CRASH_AT_ENV`]).
    #[doc(hidden)]
    pub crash_at: Option<CrashPoint>,
    /// Test-only: how long a commit of another replica waits before it is replayed here (see
    /// [`NOTICE_DELAY_ENV`]); zero by default.
    #[doc(hidden)]
    pub notice_delay: Duration,
    /// Also serve the reference chat page over plain HTTP GET on the same port (`/`; the
    /// WebSocket stays at `/ws`).
    pub ui: bool,
}

/// The largest `max_frame_bytes` this server accepts: 1 GiB, so that the transport's hard cap
/// (16 times the limit) still fits in memory arithmetic on every platform.
pub const MAX_MAX_FRAME_BYTES: u64 = 1 << 30;

/// The capabilities `serve --without` can withhold: the 1.1 and 1.2 additions a client must cope without.
pub const WITHHOLDABLE: &[Capability] = &[Capability::Retry, Capability::AssistantStream, Capability::Cancel];

/// A [`ServeConfig`] the spec's limits forbid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `max_frame_bytes` is below what `TRANSPORT-005` allows a server to announce.
    #[error(
        "max frame bytes {0} is below {min}, the least a server may announce (TRANSPORT-005)",
        min = chatwire_schema::MIN_MAX_FRAME_BYTES
    )]
    FrameLimitTooSmall(u64),
    /// `max_frame_bytes` is above [`MAX_MAX_FRAME_BYTES`].
    #[error("max frame bytes {0} is above {MAX_MAX_FRAME_BYTES}, the most this server supports")]
    FrameLimitTooLarge(u64),
    /// `send_queue_bytes` is above what `TRANSPORT-016` allows, or zero.
    #[error(
        "send queue bound {0} is not between 1 and {max} bytes (TRANSPORT-016)",
        max = chatwire_schema::SEND_QUEUE_MAX_BYTES
    )]
    SendQueueBound(u64),
    /// `versions` is empty or names a version this build does not speak.
    #[error("the versions to speak must be a non-empty subset of {supported:?}, got {0:?}", supported = chatwire_schema::SUPPORTED_VERSIONS.iter().map(ToString::to_string).collect::<Vec<_>>())]
    Versions(Vec<String>),
    /// `without` names a capability this server cannot do without.
    #[error("the capability {0} cannot be withheld (only {names:?})", names = WITHHOLDABLE.iter().map(Capability::as_str).collect::<Vec<_>>())]
    CannotWithhold(String),
    /// A deadline is zero, so the transport could never wait for anything.
    #[error("the {0} timeout must be longer than zero")]
    ZeroTimeout(&'static str),
    /// The replica name is empty, longer than 64 bytes, or not letters, digits, `-`, `_`, `.`.
    #[error("invalid replica name {0:?}: use 1 to 64 letters, digits, -, _ or .")]
    ReplicaName(String),
}

impl ServeConfig {
    /// Checks the configuration against the spec's limits; [`Server::bind`] refuses what fails.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_frame_bytes < chatwire_schema::MIN_MAX_FRAME_BYTES {
            return Err(ConfigError::FrameLimitTooSmall(self.max_frame_bytes));
        }
        if self.max_frame_bytes > MAX_MAX_FRAME_BYTES {
            return Err(ConfigError::FrameLimitTooLarge(self.max_frame_bytes));
        }
        if self.versions.is_empty() || self.versions.iter().any(|v| !SUPPORTED_VERSIONS.contains(v)) {
            return Err(ConfigError::Versions(self.versions.iter().map(ToString::to_string).collect()));
        }
        if self.send_queue_bytes == 0 || self.send_queue_bytes > chatwire_schema::SEND_QUEUE_MAX_BYTES {
            return Err(ConfigError::SendQueueBound(self.send_queue_bytes));
        }
        if let Some(c) = self.without.iter().find(|c| !WITHHOLDABLE.contains(c)) {
            return Err(ConfigError::CannotWithhold(c.as_str().to_owned()));
        }
        if let Some(name) = &self.replica {
            let valid = !name.is_empty()
                && name.len() <= 64
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if !valid {
                return Err(ConfigError::ReplicaName(name.clone()));
            }
        }
        let t = &self.timeouts;
        for (name, d) in [("handshake", t.handshake), ("idle", t.idle), ("write", t.write)] {
            if d.is_zero() {
                return Err(ConfigError::ZeroTimeout(name));
            }
        }
        Ok(())
    }

    /// A correct server on `addr` with the database at `db`, conformance mode on, default limits.
    pub fn new(addr: SocketAddr, db: DbLocation) -> Self {
        ServeConfig {
            addr,
            db,
            replica: None,
            durability: Durability::Full,
            conformance: true,
            agent: Arc::new(EchoAgent),
            max_frame_bytes: chatwire_schema::DEFAULT_MAX_FRAME_BYTES,
            send_queue_bytes: DEFAULT_SEND_QUEUE_BYTES,
            versions: SUPPORTED_VERSIONS.to_vec(),
            without: Vec::new(),
            fault: None,
            timeouts: Timeouts::default(),
            crash_at: None,
            notice_delay: Duration::ZERO,
            legacy_resume_lookup: false,
            ui: false,
        }
    }
}

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
    shared: Arc<session::Shared>,
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
        let mut store = store::Store::open(&config.db, config.durability).await?;
        if let Some(name) = &config.replica {
            store.set_replica(name.clone());
        }
        store.set_crash_point(config.crash_at);
        let mut shared = session::Shared::new(
            store,
            fault::hooks(config.fault),
            config.agent.clone(),
            config.conformance,
            durable,
            config.max_frame_bytes,
            &config.versions,
        );
        shared.legacy_resume_lookup = config.legacy_resume_lookup;
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
        let recovered = shared.recover_all().await?;
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
        if self.shared.hooks.closes_on_shutdown() {
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

#[derive(Parser, Debug)]
#[command(name = "chatwire-reference", version, about = "Chatwire reference backend (protocol v1)")]
struct Cli {
    /// List the fault names accepted by `serve --fault` and exit (a testing aid).
    #[arg(long)]
    list_faults: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Serve Chatwire over WebSocket; prints the ws:// URL as the first line of stdout.
    Serve(ServeArgs),
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// Loopback address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
    /// Where the sessions live: a SQLite database file (one process), `:memory:`, or a
    /// PostgreSQL database `postgres://USER@HOST:PORT/DB` (also `postgresql://`) that several
    /// replicas share. `--store` and `--db` are the same flag. Default:
    /// $XDG_DATA_HOME/chatwire/reference.db.
    #[arg(long, visible_alias = "store", value_name = "PATH|:memory:|postgres://…")]
    db: Option<String>,
    /// This replica's name on a shared store (default: a random id).
    #[arg(long, value_name = "NAME")]
    replica: Option<String>,
    /// Conformance mode: honour `session.hello.script`.
    #[arg(long)]
    conformance: bool,
    /// How hard a commit tries to survive a crash: `full` survives a power loss (the default),
    /// `normal` only the process being killed. On PostgreSQL: `synchronous_commit` on or off.
    #[arg(long, default_value = "full", value_parser = parse_durability)]
    durability: Durability,
    /// Largest text frame accepted, in bytes.
    #[arg(long, default_value_t = chatwire_schema::DEFAULT_MAX_FRAME_BYTES, value_parser = parse_frame_limit)]
    max_frame_bytes: u64,
    /// The protocol versions to speak, comma-separated (default: every version this build
    /// speaks); `--versions 1.0` plays a server that predates 1.1.
    #[arg(long, value_delimiter = ',', value_parser = parse_version)]
    versions: Vec<ProtocolVersion>,
    /// Bound on one connection's unsent bytes; a client that lets more pile up is closed with
    /// 4008 and resumes (at most 16 MiB).
    #[arg(long, default_value_t = DEFAULT_SEND_QUEUE_BYTES, value_parser = parse_send_queue_bytes)]
    send_queue_bytes: u64,
    /// Capabilities not to offer, comma-separated: `retry` (`chat.retry` gets
    /// capability_not_offered), `assistant_stream` (every `say` goes out whole).
    #[arg(long, value_delimiter = ',', value_parser = parse_withheld)]
    without: Vec<Capability>,
    /// Run with one planted bug (testing aid for the conformance suite; see --list-faults).
    #[arg(long, value_name = "NAME")]
    fault: Option<Fault>,
    /// Also serve the reference chat page at http://ADDR/ (the WebSocket stays at /ws).
    #[arg(long)]
    ui: bool,
    /// Answer every session with the bundled demo script (every feature the chat page renders)
    /// instead of the echo agent.
    #[arg(long, conflicts_with = "conformance")]
    demo: bool,
}

/// `--durability`: `full` or `normal`.
fn parse_durability(text: &str) -> Result<Durability, String> {
    Durability::parse(text).ok_or_else(|| format!("{text:?} is not a durability: use full or normal"))
}

/// `--max-frame-bytes`: a number within the spec's limits (checked by [`ServeConfig::validate`]).
fn parse_frame_limit(text: &str) -> Result<u64, String> {
    let n: u64 = text.parse().map_err(|e| format!("not a number of bytes: {e}"))?;
    let probe = ServeConfig { max_frame_bytes: n, ..ServeConfig::new(([127, 0, 0, 1], 0).into(), DbLocation::Memory) };
    probe.validate().map(|()| n).map_err(|e| e.to_string())
}

/// `--versions`: `MAJOR.MINOR`.
fn parse_version(text: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(text.trim()).map_err(|e| e.to_string())
}

/// `--without`: a capability in [`WITHHOLDABLE`].
fn parse_withheld(text: &str) -> Result<Capability, String> {
    WITHHOLDABLE.iter().find(|c| c.as_str() == text.trim()).cloned().ok_or_else(|| {
        let names: Vec<&str> = WITHHOLDABLE.iter().map(Capability::as_str).collect();
        format!("{text:?} cannot be withheld: use one of {names:?}")
    })
}

/// `--send-queue-bytes`: a number within the spec's bound (checked by [`ServeConfig::validate`]).
fn parse_send_queue_bytes(text: &str) -> Result<u64, String> {
    let n: u64 = text.parse().map_err(|e| format!("not a number of bytes: {e}"))?;
    let probe = ServeConfig { send_queue_bytes: n, ..ServeConfig::new(([127, 0, 0, 1], 0).into(), DbLocation::Memory) };
    probe.validate().map(|()| n).map_err(|e| e.to_string())
}

/// Runs the command line with these arguments (the first is the program name) and returns the
/// process exit code. `serve` runs until SIGTERM or Ctrl-C.
pub fn run_cli(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    if cli.list_faults {
        for f in Fault::ALL {
            println!("{:<28} {}", f.name(), f.description());
        }
        return ExitCode::SUCCESS;
    }
    let Some(Command::Serve(args)) = cli.command else {
        eprintln!("chatwire-reference: nothing to do; try `chatwire-reference serve --help`");
        return ExitCode::from(2);
    };
    let db = match args.db.as_deref() {
        Some(text) => DbLocation::parse(text),
        None => match store::default_db_path() {
            Some(path) => DbLocation::File(path),
            None => {
                eprintln!("chatwire-reference: {}", ServeError::NoDataDir);
                return ExitCode::FAILURE;
            }
        },
    };
    let crash_at = std::env::var(CRASH_AT_ENV).ok().and_then(|v| {
        let point = CrashPoint::parse(&v);
        if point.is_none() {
            eprintln!("chatwire-reference: ignoring unknown {CRASH_AT_ENV}={v:?}");
        }
        point
    });
    let notice_delay = match std::env::var(NOTICE_DELAY_ENV) {
        Err(_) => Duration::ZERO,
        Ok(v) => match v.parse::<u64>().map(Duration::from_millis) {
            Ok(d) if d <= MAX_NOTICE_DELAY => d,
            _ => {
                eprintln!(
                    "chatwire-reference: {NOTICE_DELAY_ENV}={v:?} is not a number of milliseconds up to {}",
                    MAX_NOTICE_DELAY.as_millis()
                );
                return ExitCode::FAILURE;
            }
        },
    };
    let agent: Arc<dyn Agent> = if args.demo {
        match DemoAgent::bundled() {
            Ok(demo) => Arc::new(demo),
            Err(e) => {
                eprintln!("chatwire-reference: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        Arc::new(EchoAgent)
    };
    let config = ServeConfig {
        conformance: args.conformance,
        agent,
        ui: args.ui,
        max_frame_bytes: args.max_frame_bytes,
        send_queue_bytes: args.send_queue_bytes,
        versions: if args.versions.is_empty() { SUPPORTED_VERSIONS.to_vec() } else { args.versions },
        durability: args.durability,
        without: args.without,
        fault: args.fault,
        crash_at,
        notice_delay,
        replica: args.replica,
        ..ServeConfig::new(args.addr, db)
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("chatwire-reference: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let shutdown = shutdown_signal();
        let server = Server::bind(config.clone()).await?;
        let mut stdout = std::io::stdout().lock();
        // The first line of stdout is the URL: a spawning runner reads it to find the server.
        let _ = writeln!(stdout, "{}", server.url()).and_then(|()| stdout.flush());
        drop(stdout);
        if let Some(f) = config.fault {
            eprintln!("chatwire-reference: FAULT INJECTED: {f} ({})", f.description());
        }
        match server.shared.store.is_shared() {
            true => eprintln!(
                "chatwire-reference: listening on {} (db: {}, replica {})",
                server.url(),
                config.db,
                server.shared.store.replica()
            ),
            false => eprintln!("chatwire-reference: listening on {} (db: {})", server.url(), config.db),
        }
        if let Some(page) = server.page_url() {
            eprintln!("chatwire-reference: chat page at {page}");
        }
        server.run(shutdown).await
    });
    match result {
        Ok(()) => {
            eprintln!("chatwire-reference: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("chatwire-reference: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Registers for SIGTERM right away (so that a signal sent as soon as the URL is printed is not
/// missed) and returns a future that completes on SIGTERM or Ctrl-C (SIGINT).
fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| eprintln!("chatwire-reference: cannot listen for SIGTERM: {e}"))
        .ok();
    async move {
        #[cfg(unix)]
        if let Some(mut term) = term {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
