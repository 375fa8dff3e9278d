//! `chat.cancel` (since 1.2, capability `cancel`) — the user's Stop button: the client asks the
//! server to stop the run of one invocation.
//!
//! Spec: `spec/cancel.md#chatcancel`. The answer is a `chat.cancel_accepted` followed, in the same
//! commit, by the events that close the run: the open stream ends with the text streamed so far,
//! every open tool call of the turn is dismissed, and `chat.run_complete` says `cancelled`
//! (`CANCEL-002`..`CANCEL-005`); or an `error` in the order `spec/errors.md` states (`CANCEL-006`).
//! Naming the invocation means a late cancel never stops the next run (`CANCEL-001`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Stops the run of `invocation_id`, if it is the session's current run and not over yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.2"))]
pub struct Cancel {
    /// Client-chosen id of this frame; the `chat.cancel_accepted` and any error carry it as `in_reply_to`.
    pub id: Id,
    /// The turn whose run to stop: the session's current run, `running` or `awaiting_input`.
    pub invocation_id: Id,
}
