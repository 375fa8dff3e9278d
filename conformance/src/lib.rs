//! # chatwire-conformance
//!
//! The conformance runner of the Chatwire protocol: it drives any backend (a URL, a command it
//! spawns, or the bundled reference backend) through scripted scenarios over WebSocket, validates
//! every frame, checks the invariants of the spec on every frame, compares golden snapshots, and
//! reports per check with requirement ids (terminal, JSON, JUnit).
//!
//! Modules: [`scenario`] (the data format), [`catalog`] (embedded files), [`monitor`] (every
//! always-on check and the differential oracle, pure), [`attribution`] (the requirements each step
//! proves), [`driver`] (one scenario's I/O and steps), [`runner`] (a suite), [`wirelog`] (recorded
//! traffic for `check-log`), [`snapshot`], [`report`], [`baseline`], [`output`], [`backend`]
//! (spawning and killing backends), [`bundled_reference`] (the reference backend built in, a default-on
//! cargo feature), [`errata`] (judging by the negotiated version's frozen set, results per level),
//! [`soak`] (seeded random sessions at once), [`cli`].
#![warn(missing_docs)]

pub mod attribution;
pub mod backend;
pub mod baseline;
pub mod bundled_reference;
pub mod catalog;
pub mod certify;
pub mod checklog;
pub mod cli;
pub mod conn;
pub mod coverage;
pub mod driver;
pub mod errata;
pub mod level;
pub mod output;
pub mod pattern;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod schemas;
pub mod snapshot;
pub mod soak;
pub mod stall;
pub mod step;
pub mod sweep;
pub mod wirelog;

pub use chatwire_monitor as monitor;
