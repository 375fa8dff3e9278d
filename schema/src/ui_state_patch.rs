//! `ui_state_patch` (since 1.1, feature `ui_state_patch`) — the change from one state to the next,
//! as an RFC 6902 JSON Patch, in place of the whole state of a `ui_state_updated`.
//!
//! Spec: `spec/ui-state.md#ui_state_patch`, `spec/resume.md#catch-up`. The patch a server sends
//! for an event is built by [`crate::UiState::apply_with_patch`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::patch_op::PatchOp;
use crate::UiStateVersion;

/// Turns the state of the frame `base_seq` into the session's effective state (`STATE-038`):
/// sent in place of `ui_state_updated` where `ui_state_patch` is in force, and in place of the
/// snapshot after a catch-up resume (`RESUME-017`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.1"))]
pub struct UiStatePatch {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `seq` of the state the patch applies to: the connection's previous snapshot, update or
    /// patch, or for a catch-up the resume's `last_seq` (`STATE-037`, `RESUME-017`).
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub base_seq: u64,
    /// The UiState format of both states.
    pub v: UiStateVersion,
    /// The operations, applied in order; a client applies all or none (RFC 6902).
    pub patch: Vec<PatchOp>,
}
