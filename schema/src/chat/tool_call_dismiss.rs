//! `chat.tool_call_dismiss` — a tool call is closed without a result.
//!
//! Spec: `spec/tool-calls.md#chattool_call_dismiss`, reducer rule `STATE-017`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Settles a `pending` or `running` tool call as `dismissed`, by the server or at the client's request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallDismiss {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The call that is dismissed.
    pub tool_call_id: Id,
    /// Who asked for the dismissal.
    pub initiated_by: Initiator,
    /// Why, for display and logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The `id` of the client's `chat.tool_call_response` when the client asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<Id>,
    /// When it was dismissed (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// Which side asked for a dismissal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Initiator {
    /// The backend closed it (e.g. an artifact it no longer needs, or a superseded question).
    Server,
    /// The user closed it through `chat.tool_call_response` with action `dismiss`.
    Client,
}
