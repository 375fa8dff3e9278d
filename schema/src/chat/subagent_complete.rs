//! `chat.subagent_complete` (since 1.3, feature `subagents`) — the sub-agent run a tool call hosts
//! ends.
//!
//! Spec: `spec/subagents.md#the-frames`, reducer rule `STATE-066`, refusals `STATE-071`,
//! `STATE-072`, `STATE-075`. Refused while the transcript has an open stream or an open call; the
//! host settles afterwards like any call (`STATE-073`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Ends the sub-agent run a tool call hosts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.3"))]
pub struct SubagentComplete {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The call that hosts the run.
    pub tool_call_id: Id,
    /// How the run ended.
    pub status: SubagentEnd,
    /// The sub-agent's final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// Present and `true` when the run ended by calling its `return` tool; only with `completed`
    /// (`STATE-075`).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub returned: bool,
    /// When the run ended (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// How a sub-agent run ends: the `status` of `chat.subagent_complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubagentEnd {
    /// The run finished (since 1.3).
    Completed,
    /// The run failed (since 1.3).
    Failed,
    /// The run was cancelled (since 1.3).
    Cancelled,
}
