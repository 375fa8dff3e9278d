//! `chat.tool_call_response` — the client answers a tool call that awaits a response.
//!
//! Spec: `spec/tool-calls.md#chattool_call_response`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Id;

/// Answers a `pending` tool call by its `tool_call_id`, from any connection of the session.
/// Responses are idempotent: a second one gets `tool_call_settled` and is never executed (`TOOL-012`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallResponse {
    /// Client-chosen id of this frame; the settlement and any error carry it as `in_reply_to`.
    pub id: Id,
    /// The call being answered.
    pub tool_call_id: Id,
    /// The answer.
    pub outcome: ResponseOutcome,
}

/// What the user did with the component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ResponseOutcome {
    /// The user submitted a value; the call completes (since 1.0).
    Submit {
        /// What the user entered or chose; any JSON value.
        #[serde(deserialize_with = "crate::serde_util::required_value")]
        value: Value,
    },
    /// The user closed or cancelled the component; the call is dismissed (since 1.0).
    Dismiss {
        /// Why, for display and logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}
