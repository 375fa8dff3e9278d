//! `chat.tool_call` — the only lane through which workflow UI and tool activity is rendered.
//!
//! Spec: `spec/tool-calls.md#chattool_call`, reducer rule `STATE-013`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::response_schema::ResponseSchema;
use crate::Id;

/// Creates a tool call item. It starts `pending` when it awaits a response, `running` otherwise,
/// and ends only through `chat.tool_call_complete` or `chat.tool_call_dismiss`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn that made this call.
    pub invocation_id: Id,
    /// The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
    /// `STATE-065`); absent for an item of the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub parent_call_id: Option<Id>,
    /// The interaction id, end to end: the item id, the id a response names, the id a completion names.
    pub tool_call_id: Id,
    /// Compatibility alias of `tool_call_id` for older consumers; when present it equals `tool_call_id` (`TOOL-004`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corr: Option<Id>,
    /// Name of the tool as the agent called it.
    pub tool_name: String,
    /// The UI component that renders this call; required for `ui_tool` and `ui_surface` (`TOOL-005`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_type: Option<String>,
    /// The workflow that owns the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_name: Option<String>,
    /// What kind of interaction this is.
    pub interaction_type: InteractionType,
    /// True when the call waits for a `chat.tool_call_response` from the client.
    pub awaiting_response: bool,
    /// Where the client shows it.
    pub display: DisplayMode,
    /// Arguments for the component or tool, as the agent produced them.
    pub payload: Map<String, Value>,
    /// The shape of the `value` a `chat.tool_call_response` must carry (since 1.2, `TOOL-022`):
    /// a JSON Schema in the subset of `TOOL-022`, only on calls that await a response. The server
    /// checks every response against it (`TOOL-023`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    pub response_schema: Option<ResponseSchema>,
    /// Position of this call within its batch of calls made at once, starting at 0 (`MULTI-001`).
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub call_index: u32,
    /// When the call was made (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// The kind of interaction a tool call represents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InteractionType {
    /// A workflow UI component that the user answers (since 1.0).
    UiTool,
    /// A fire-and-forget UI surface (since 1.0).
    UiSurface,
    /// A tool the agent runs by itself; the client only shows its progress (since 1.0).
    AutoTool,
    /// A request for free-form user input, answered through the composer (since 1.0).
    InputRequest,
}

/// Where a tool call is displayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DisplayMode {
    /// Inside the transcript, at the call's position (since 1.0).
    Inline,
    /// In the artifact panel beside the transcript (since 1.0).
    Artifact,
    /// In place of the message composer (since 1.0).
    Composer,
    /// As a full view replacing the transcript (since 1.0).
    View,
}
