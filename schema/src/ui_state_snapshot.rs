//! `ui_state_snapshot` — the whole UiState, sent right after every `session.welcome`.
//!
//! Spec: `spec/ui-state.md#ui_state_snapshot`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::window::Window;
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
    /// The session's effective state; on a windowed connection, the view its window holds
    /// (`WINDOW-002`).
    pub state: UiState,
    /// Present exactly on a connection that asked for a window where `state_window` is in force
    /// (since 1.2, `WINDOW-002`): where the window starts and how many items the state holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    pub window: Option<Window>,
}
