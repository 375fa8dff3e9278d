//! `chat.user_message_accepted` — the server accepted a user message and opened a turn for it.
//!
//! Spec: `spec/session.md#chatuser_message_accepted`, reducer rule `STATE-010`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Announces the user message item and the invocation (turn) it opens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserMessageAccepted {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `id` of the `chat.user_message` that was accepted.
    pub in_reply_to: Id,
    /// The turn this message opens; every item the turn produces carries it.
    pub invocation_id: Id,
    /// Id of the new `user_message` display item.
    pub item_id: Id,
    /// The message text.
    pub text: String,
    /// When the server accepted it (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
