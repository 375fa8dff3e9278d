//! `chat.cancel_accepted` (since 1.2) — the answer to an accepted `chat.cancel`: the cancel is
//! committed and the events that close the run follow in the same commit.
//!
//! Spec: `spec/cancel.md#chatcancel_accepted`. It changes no state (the closing events do), so no
//! state frame follows it, and it goes only to the connection that sent the cancel (`CANCEL-002`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Confirms a cancel: the run of `invocation_id` ends `cancelled` in the frames that follow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.2"))]
pub struct CancelAccepted {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `id` of the `chat.cancel` this answers.
    pub in_reply_to: Id,
    /// The turn whose run is stopped.
    pub invocation_id: Id,
    /// When the cancel was committed (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
