//! `chat.assistant_message` — the agent says something.
//!
//! Spec: `spec/ui-state.md#chatassistant_message`, reducer rule `STATE-012`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// A complete assistant message in Markdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssistantMessage {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn that produced this message.
    pub invocation_id: Id,
    /// The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
    /// `STATE-065`); absent for an item of the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub parent_call_id: Option<Id>,
    /// Id of the new `assistant_markdown` display item.
    pub item_id: Id,
    /// The message body, CommonMark.
    pub markdown: String,
    /// When it was produced (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
