//! `chat.history_page` (since 1.2) — the answer to a `chat.history_request`: the items just
//! older than the connection's cursor, and the next cursor.
//!
//! Spec: `spec/window.md#chathistory_page`. It changes no state and goes only to the connection
//! that asked (`WINDOW-008`); from it on, that connection holds the page's items too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ui_state::DisplayItem;
use crate::Id;

/// Up to `limit` items before the cursor, in display order, and the cursor before them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.2"))]
pub struct HistoryPage {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `id` of the `chat.history_request` this answers.
    pub in_reply_to: Id,
    /// The request's `tool_call_id`: the page holds items of that host's transcript (since 1.3,
    /// feature `subagents`, `WINDOW-016`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub tool_call_id: Option<Id>,
    /// The items immediately before the request's cursor, oldest first, as the state holds them
    /// now (always-held ones included, `WINDOW-008`).
    pub items: Vec<DisplayItem>,
    /// The cursor for the next older page: the id of the first item of this page. Absent once the
    /// page reaches the session's first item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Id>,
    /// How many items the whole state holds.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub total: u64,
}
