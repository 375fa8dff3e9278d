//! `chat.retry_accepted` (since 1.1) — the result of a retry: the latest turn was cut durably right
//! after an item, and a new run slice of that turn follows.
//!
//! Spec: `spec/retry.md#chatretry_accepted`, reducer rule `STATE-044`
//! (`spec/ui-state.md#reducer-rules`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Confirms a retry: every item after `after_item_id` is gone and the run is `idle` until the
/// `chat.run_started` that follows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.1"))]
pub struct RetryAccepted {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The `id` of the `chat.retry` this answers.
    pub in_reply_to: Id,
    /// The turn retried: the latest one, the turn of `after_item_id` (`STATE-049`).
    pub invocation_id: Id,
    /// The last item kept.
    pub after_item_id: Id,
    /// The items removed from the effective state, in display order (the log keeps them) (`STATE-051`).
    pub removed_item_ids: Vec<Id>,
    /// When the retry took effect (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
