//! `chat.tool_output` — output of a tool group: approvals, stdout, stderr, exit code.
//!
//! Spec: `spec/tool-calls.md#chattool_output`, reducer rule `STATE-015`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// Adds to the `tool_output` item of a tool call, which sits right after the call's item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolOutput {
    /// Position of this frame in the session's frame sequence.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub seq: u64,
    /// The tool call this output belongs to; it must not be settled yet.
    pub tool_call_id: Id,
    /// The command line the tool runs, set once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// An approval decision to append to the group's approvals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalDecision>,
    /// Text to append to the group's stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Text to append to the group's stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The process exit code, set once the tool has exited.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_code: Option<i32>,
    /// When the output was produced (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// A decision on a tool that needed approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run the tool (since 1.0).
    Approve,
    /// Do not run it; the turn goes on (since 1.0).
    DenyContinue,
    /// Do not run it; the turn stops (since 1.0).
    DenyAbort,
}
