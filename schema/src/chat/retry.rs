//! `chat.retry` (since 1.1, capability `retry`) — the client asks to cut the latest turn right
//! after one of its items and to run the agent again from there.
//!
//! Spec: `spec/retry.md#chatretry`. The answer is a `chat.retry_accepted` followed by a new run
//! slice of the same turn (`RETRY-001`), or an `error` in the order `spec/errors.md` states
//! (`RETRY-004`). Items up to `after_item_id` stay as they are and their tool calls are not run
//! again (`RETRY-002`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Retries the latest turn from the item `after_item_id` on: that item and everything before it
/// stay, everything after it leaves the effective state (the log keeps it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.1"))]
pub struct Retry {
    /// Client-chosen id of this frame; the `chat.retry_accepted` and any error carry it as `in_reply_to`.
    pub id: Id,
    /// The last item to keep: an item of the latest turn (its user message or a later item).
    pub after_item_id: Id,
}
