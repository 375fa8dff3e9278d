//! # chatwire-monitor
//!
//! The session monitor of the Chatwire protocol: a pure, I/O-free observer of Chatwire traffic.
//! Frames go in per connection and in both directions (with closes and cuts); typed [`Finding`]s
//! come out, each naming exactly the requirement it breaks. It holds every always-on check and the
//! differential oracle, and is driven alike by the conformance runner (live), by `check-log` over
//! a recorded wire log, and by a backend's own tests.
//!
//! How it is built:
//! - [`Monitor`] reads each frame once (JSON, schema, the negotiated version's schema, `ts`, the
//!   typed frame) and hands every typed frame to the checks and the model;
//! - the model (`model`) is what each connection and session holds as of the frames read: the
//!   oracle's fold of the events (indexed, so a frame costs what it changes), the states of recent
//!   state frames, windows. It judges what decides it: every state frame against the fold
//!   (`STATE-004`, the patch oracle, catch-ups, windows), every event against the reducer;
//! - every other check ([`checks`]) owns its state and implements one trait, told of each frame
//!   before and after the model takes it; the registry lists them, one line each;
//! - `diverge`: after a divergence from the oracle's fold, later findings that follow from it are
//!   not charged again, until a state frame gives the server's state.
#![warn(missing_docs)]

mod check;
pub mod checks;
mod diverge;
mod finding;
pub mod frame;
mod model;
mod monitor;
pub mod normalize;
pub mod redact;
pub mod script;
pub mod text;
pub mod version;

pub use checks::{ALWAYS_ON, SINCE_1_1};
pub use finding::{CheckDef, Finding};
pub use model::oracle::{rule_of_refusal, EVENTS_ACCEPTED, STATE_MATCHES_REDUCER};
pub use model::patch::{CATCH_UP_RESUME, PATCH_MATCHES_REDUCER};
pub use model::window::{HISTORY_PAGES, WINDOW_SNAPSHOT, WINDOW_VIEW};
pub use monitor::{Monitor, Received, FRAME_EXCERPT};
pub use script::SessionScript;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod patch_tests;

#[cfg(test)]
mod v11_tests;

#[cfg(test)]
mod attach_tests;

#[cfg(test)]
mod v13_tests;
