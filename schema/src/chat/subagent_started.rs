//! `chat.subagent_started` (since 1.3, feature `subagents`) — a running tool call starts hosting a
//! sub-agent run.
//!
//! Spec: `spec/subagents.md#the-frames`, reducer rule `STATE-064`, refusals `STATE-068` …
//! `STATE-070`. The call named must be `running`, run by itself, host no sub-agent yet and have no
//! output; its item gets `subagent` with `status: running` and an empty transcript, which the
//! frames carrying `parent_call_id` fill (`STATE-065`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Starts the sub-agent run a tool call hosts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.3"))]
pub struct SubagentStarted {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The call that hosts the run, in any transcript.
    pub tool_call_id: Id,
    /// The sub-agent's thread: the same on every call that continues it (`SUBAGENT-004`).
    pub thread_id: Id,
    /// What the calling agent calls the sub-agent, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the calling agent sent the sub-agent.
    pub input: String,
    /// The latest earlier call hosting `thread_id`, when this run continues that thread; absent
    /// for a new thread (`STATE-070`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<Id>,
    /// Present and `true` when `input` is the result of the `return` call the thread's latest run
    /// left open (`SUBAGENT-005`).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub answers_return: bool,
    /// When the run started (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}
