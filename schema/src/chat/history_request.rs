//! `chat.history_request` (since 1.2) — asks for the items just older than what a windowed
//! connection holds.
//!
//! Spec: `spec/window.md#chathistory_request`. Allowed only where `state_window` is in force
//! (`WINDOW-007`); answered by a `chat.history_page` or an `error`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::window::MAX_HISTORY_PAGE_ITEMS;
use crate::Id;

/// Asks for up to `limit` items immediately before the cursor `before`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.2"))]
pub struct HistoryRequest {
    /// Client-chosen id of this frame; the answer carries it as `in_reply_to`.
    pub id: Id,
    /// The connection's current cursor: the `before` of its latest windowed snapshot or page
    /// (`WINDOW-010`).
    pub before: Id,
    /// The host whose sub-agent transcript to page (since 1.3, feature `subagents`,
    /// `WINDOW-016`); absent to page the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub tool_call_id: Option<Id>,
    /// How many items at most, 1 to [`MAX_HISTORY_PAGE_ITEMS`] (`WINDOW-007`).
    #[serde(deserialize_with = "crate::window::page_limit")]
    #[schemars(range(min = 1, max = MAX_HISTORY_PAGE_ITEMS))]
    pub limit: u32,
}
