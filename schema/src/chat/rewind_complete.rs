//! `chat.rewind_complete` — the result of a rewind: the effective state was cut durably.
//!
//! Spec: `spec/rewind.md#chatrewind_complete`, reducer rule `STATE-019`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Confirms a rewind: every item from the first one of `before_invocation_id` on is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RewindComplete {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `id` of the `chat.rewind` this answers.
    pub in_reply_to: Id,
    /// The invocation the state was cut before.
    pub before_invocation_id: Id,
    /// The invocations removed from the effective state, oldest first (the log keeps them).
    pub removed_invocation_ids: Vec<Id>,
    /// When the rewind took effect (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
