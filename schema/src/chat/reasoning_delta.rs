//! `chat.reasoning_delta` (since 1.3, feature `reasoning`) — the next chunk of the agent's
//! reasoning while it is still being written.
//!
//! Spec: `spec/reasoning.md#the-frames`, reducer rule `STATE-054` (`spec/ui-state.md`). The first
//! delta of an item opens a reasoning stream (a `reasoning` item with `streaming: true`, the last
//! item), every further delta appends to its text, and a `chat.reasoning` with the same `item_id`
//! ends it (`STATE-055`). Like `chat.assistant_message_delta` it is its own state change
//! (`STREAM-002`), sent only where `reasoning` and `assistant_stream` are both in force
//! (`REASON-001`, `REASON-002`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Appends `text` to the open `reasoning` item `item_id`, opening it if it is new.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.3"))]
pub struct ReasoningDelta {
    /// Position of this frame in the session's frame sequence (`STREAM-002`: a later patch may
    /// name it as its `base_seq`).
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The turn whose run reasons; its run slice is in progress (`STATE-022`).
    pub invocation_id: Id,
    /// The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
    /// `STATE-065`); absent for an item of the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub parent_call_id: Option<Id>,
    /// Id of the streaming `reasoning` item, the same in every delta and in the `chat.reasoning`
    /// that ends the stream.
    pub item_id: Id,
    /// The text to append, never empty: the concatenation of an item's deltas, in order, is the
    /// text its ending `chat.reasoning` carries unless that one is `redacted` (`STATE-061`).
    #[serde(deserialize_with = "crate::serde_util::non_empty_string")]
    #[schemars(length(min = 1))]
    pub text: String,
    /// When the chunk was produced (RFC 3339); the item's `ts` while it streams is its first delta's.
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
