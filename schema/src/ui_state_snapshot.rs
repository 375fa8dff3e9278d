//! `ui_state_snapshot` — the whole UiState, sent right after every `session.welcome`.
//!
//! Spec: `spec/ui-state.md#ui_state_snapshot`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{UiState, UiStateVersion};

/// The base the client renders from after connecting or resuming (`STATE-002`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UiStateSnapshot {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The UiState format.
    pub v: UiStateVersion,
    /// The session's effective state.
    pub state: UiState,
}
