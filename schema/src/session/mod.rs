//! Session frames: the handshake that opens or resumes a session.
//!
//! Spec: `spec/session.md`.

pub mod hello;
pub mod welcome;
