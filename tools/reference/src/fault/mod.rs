//! Fault injection: deliberately planted bugs, a testing aid for the conformance suite.
//!
//! A conformance suite proves its power by failing on a backend that is wrong in one known way.
//! `chatwire-reference serve --fault NAME` runs the reference backend with exactly one such bug.
//!
//! Every fault is one entry of the list (`list.rs`: name, wire name, what it breaks) and arms in
//! the seams it bends, one small trait each, whose defaults are the correct server: the wire
//! (upgrade, parsing, refusals), hello and resume (handshakes), decisions (agent, cancel,
//! responses, recovery), the commit (what is applied, logged, checkpointed), the fan-out (what
//! goes on the wire, to whom), windows, timers and the cluster. The server core calls a seam at
//! its own step and never names a fault; with no fault configured every seam is the identity.

mod bundle;
mod cluster;
mod commit;
mod decide;
mod fanout;
mod hello;
mod list;
mod resume;
mod timers;
mod window;
mod wire;

pub(crate) use bundle::Faults;
pub use list::{Fault, UnknownFault};
pub(crate) use wire::RefusalAction;
