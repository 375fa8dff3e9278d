//! How a server runs: [`ServeConfig`] (where it listens, its store, limits, versions, a planted
//! fault) and the limits the spec puts on it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ProtocolVersion, SUPPORTED_VERSIONS};

use crate::agent::{Agent, EchoAgent};
use crate::fault::Fault;
use crate::outbox::DEFAULT_SEND_QUEUE_BYTES;
use crate::store::{CrashPoint, DbLocation, Durability};

/// Environment variable naming a [`CrashPoint`] (`response-received`, `response-committed`);
/// read by [`run_cli`](crate::run_cli) only, for crash-durability tests.
pub const CRASH_AT_ENV: &str = "CHATWIRE_REFERENCE_CRASH_AT";

/// Environment variable holding a delay in milliseconds (at most [`MAX_NOTICE_DELAY`]) before
/// this replica replays another replica's commit to its connections; read by [`run_cli`](crate::run_cli) only.
/// It plays a deployment whose fan-out is slow but within the 1 second the reference documents
/// (`CLUSTER-006`), so a test can prove the runner does not take a quiet tab for an idle one.
pub const NOTICE_DELAY_ENV: &str = "CHATWIRE_REFERENCE_NOTICE_DELAY_MS";

/// The longest [`NOTICE_DELAY_ENV`] accepted: the fan-out delay the reference documents.
pub const MAX_NOTICE_DELAY: Duration = Duration::from_secs(1);

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
    /// Test-only: how late every deadline's task runs, as on a server too busy to run it on
    /// time; zero by default. `tests/protocol.rs` proves that a late task changes nothing a
    /// client sees: a resume or a request after the deadline finds the call expired.
    #[doc(hidden)]
    pub deadline_lag: Duration,
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
    /// Checks the configuration against the spec's limits; [`Server::bind`](crate::Server::bind) refuses what fails.
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
            deadline_lag: Duration::ZERO,
            ui: false,
        }
    }
}
