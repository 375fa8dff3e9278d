//! # chatwire-reference
//!
//! The reference backend of the Chatwire protocol v1: a WebSocket server (tokio +
//! tokio-tungstenite) with durable sessions in SQLite (or PostgreSQL, shared by replicas) and the
//! scripted agent of the conformance driver profile.
//!
//! * [`Server::bind`] / [`serve`] run it in-process; [`run_cli`] is the command line (also
//!   reached through the conformance runner's hidden subcommand).
//! * State: every session's `UiState` is the fold of the events it committed, through
//!   `chatwire_schema::reducer` (the private `session` module's docs say how).
//! * [`agent`]: the seam between the run driver and what plans a turn.
//! * [`fault`]: planted bugs for proving the conformance suite (testing aid only).
//!
//! The layers, each importing only those below it: the command line and the [`Server`] wire
//! together the transport (WebSocket I/O of one connection), the connection's protocol side
//! (validation and dispatch), the session core (it decides, and its commit pipeline carries the
//! decision out), the outbox (each connection's bounded send queue), the store, and the leaves
//! (`protocol`, `agent`, `util`, the fault seams).

#![warn(missing_docs)]

pub mod agent;
mod cli;
mod config;
mod conn;
pub mod fault;
mod keepalive;
mod outbox;
pub mod plan;
mod protocol;
mod server;
mod session;
pub mod store;
mod transport;
mod ui;
pub mod util;

pub use agent::{Agent, EchoAgent, ScriptedAgent};
pub use cli::run_cli;
pub use config::{
    ConfigError, ServeConfig, Timeouts, CRASH_AT_ENV, MAX_MAX_FRAME_BYTES, MAX_NOTICE_DELAY, NOTICE_DELAY_ENV,
    WITHHOLDABLE,
};
pub use fault::{Fault, UnknownFault};
pub use outbox::DEFAULT_SEND_QUEUE_BYTES;
pub use server::{serve, ServeError, Server};
pub use store::{CrashPoint, DbLocation, Durability, Store, StoreError};
pub use ui::{DemoAgent, DemoError};

/// How many windowed opens this process served from a window checkpoint without loading the
/// whole state (issue #22); tests read it to know that path ran.
#[doc(hidden)]
pub fn partial_opens() -> u64 {
    session::PARTIAL_OPENS.load(std::sync::atomic::Ordering::Relaxed)
}
