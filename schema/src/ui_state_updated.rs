//! `ui_state_updated` — the whole UiState after one or more events.
//!
//! Spec: `spec/ui-state.md#ui_state_updated`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{UiState, UiStateVersion};

/// The state after the events sent before it; equals the reducer's result over them (`STATE-004`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UiStateUpdated {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The UiState format.
    pub v: UiStateVersion,
    /// The session's effective state.
    pub state: UiState,
}
