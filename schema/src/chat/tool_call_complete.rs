//! `chat.tool_call_complete` — a tool call settles with a result, an error, or by expiring.
//!
//! Spec: `spec/tool-calls.md#chattool_call_complete`, reducer rule `STATE-016`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Id;

/// Settles a `pending` or `running` tool call. A settled call never changes again (`TOOL-010`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallComplete {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The call that settles.
    pub tool_call_id: Id,
    /// How it settled.
    pub status: CompletionStatus,
    /// The tool's result (for `completed`), e.g. the value the user submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// What went wrong (for `failed` and `expired`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// One line the client shows in place of a settled component, e.g. "API key saved".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The `id` of the `chat.tool_call_response` that caused this, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<Id>,
    /// When it settled (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// How a tool call settled through completion (dismissal has its own frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompletionStatus {
    /// The tool produced a result (since 1.0).
    Completed,
    /// The tool failed (since 1.0).
    Failed,
    /// Nobody answered before the call's deadline (since 1.0).
    Expired,
}
