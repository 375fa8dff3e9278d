//! `chat.run_complete` — a run slice ends, saying explicitly whether the turn waits for the user.
//!
//! Spec: `spec/run-completion.md#chatrun_complete`, reducer rule `STATE-018`; its `usage` (since
//! 1.3): `spec/usage.md`, `STATE-056`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Ends the current run slice of a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunComplete {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn whose slice ends.
    pub invocation_id: Id,
    /// Why it ended. `awaiting_input` requires a pending call; the others require none open (`RUN-003`, `RUN-004`).
    pub status: RunCompleteStatus,
    /// A machine-readable reason, e.g. `awaiting_user_input` or `script_exhausted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What went wrong, for `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the slice used (since 1.3, feature `usage`, `USAGE-001`): added to `state.usage`
    /// (`STATE-056`); absent where `usage` is not in force (`USAGE-004`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub usage: Option<crate::usage::Usage>,
    /// When the slice ended (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// How a run slice ended.
///
/// Older backends sent a number: `0` meant [`AwaitingInput`](Self::AwaitingInput) and `1`
/// meant [`Completed`](Self::Completed) (`RUN-006`); [`Self::from_legacy_code`] maps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunCompleteStatus {
    /// The turn waits for the user to answer a pending tool call (legacy `0`) (since 1.0).
    AwaitingInput,
    /// The turn finished (legacy `1`) (since 1.0).
    Completed,
    /// The turn failed (since 1.0).
    Failed,
    /// The turn was cancelled (since 1.0).
    Cancelled,
}

impl RunCompleteStatus {
    /// Maps the numeric status of pre-Chatwire backends: 0 → awaiting input, 1 → completed.
    pub fn from_legacy_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::AwaitingInput),
            1 => Some(Self::Completed),
            _ => None,
        }
    }

    /// Whether the turn is over (everything but `awaiting_input`).
    pub fn is_terminal(self) -> bool {
        !matches!(self, Self::AwaitingInput)
    }
}
