//! `chat.assistant_message_delta` (since 1.1, feature `assistant_stream`) — the next chunk of an
//! assistant message that is still being written.
//!
//! Spec: `spec/streaming.md`, reducer rule `STATE-042` (`spec/ui-state.md#reducer-rules`). The
//! first delta of an item opens it as a streaming `assistant_markdown` item, every further delta
//! appends to its text, and a `chat.assistant_message` with the same `item_id` and the whole text
//! ends it (`STATE-043`). A delta is its own state change: no state frame follows it
//! (`STREAM-002`), and it is sent only where `assistant_stream` is in force (`STREAM-001`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Appends `delta` to the open `assistant_markdown` item `item_id`, opening it if it is new.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.1"))]
pub struct AssistantMessageDelta {
    /// Position of this frame in the session's frame sequence; a later `ui_state_patch` may name
    /// it as its `base_seq` (`STREAM-002`).
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn whose run writes the message; its run slice is in progress (`STATE-022`).
    pub invocation_id: Id,
    /// The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
    /// `STATE-065`); absent for an item of the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub parent_call_id: Option<Id>,
    /// Id of the streaming `assistant_markdown` item, the same in every delta and in the
    /// `chat.assistant_message` that ends the stream.
    pub item_id: Id,
    /// The text to append, never empty: the concatenation of an item's deltas, in order, is the
    /// text its ending `chat.assistant_message` carries (`STATE-043`).
    #[serde(deserialize_with = "crate::serde_util::non_empty_string")]
    #[schemars(length(min = 1))]
    pub delta: String,
    /// When the chunk was produced (RFC 3339); the item's `ts` while it streams is its first delta's.
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
