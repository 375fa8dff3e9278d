//! `chat.run_started` — a run slice of a turn begins.
//!
//! Spec: `spec/run-completion.md#chatrun_started`, reducer rule `STATE-011`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Starts a run slice: after a user message, or after the response that unblocks a waiting turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunStarted {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn this slice belongs to.
    pub invocation_id: Id,
    /// When the slice started (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
