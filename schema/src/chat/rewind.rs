//! `chat.rewind` — the client asks to undo a turn and everything after it.
//!
//! Spec: `spec/rewind.md#chatrewind`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Rewinds the session's effective state to just before the given invocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rewind {
    /// Client-chosen id of this frame; the result and any error carry it as `in_reply_to`.
    pub id: Id,
    /// The first invocation to remove; it and every later one disappear from the effective state.
    pub before_invocation_id: Id,
}
