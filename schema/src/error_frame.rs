//! `error` — the server's typed answer to a frame it could not accept.
//!
//! Spec: `spec/errors.md`. An error frame never changes the session's state (`ERROR-001`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Id, ProtocolVersion};

/// A typed error. `fatal` says whether the server closes the connection after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorFrame {
    /// Position in the session's frame sequence; absent when no session is bound to the connection.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub seq: Option<u64>,
    /// What went wrong.
    pub code: ErrorCode,
    /// A human-readable explanation, one sentence, lowercase.
    pub message: String,
    /// The `id` of the client frame this answers, when that frame was readable enough to have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<Id>,
    /// True when the server closes the connection right after this frame.
    pub fatal: bool,
    /// With `unsupported_version`: every version the server speaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_versions: Option<Vec<ProtocolVersion>>,
}

/// Every error a v1 server can report (`spec/errors.md#codes`). The list is closed in v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The text frame is not valid JSON, or not a JSON object (since 1.0).
    MalformedFrame,
    /// A binary WebSocket frame arrived; v1 is text only (since 1.0).
    BinaryFrame,
    /// The frame's `type` is missing or names no client frame (since 1.0).
    UnknownType,
    /// The frame breaks its schema (missing field, wrong type, unknown field…) (since 1.0).
    InvalidFrame,
    /// The frame is larger than `limits.max_frame_bytes` (since 1.0).
    FrameTooLarge,
    /// A frame other than `session.hello` arrived before the session was open (since 1.0).
    HelloRequired,
    /// A second `session.hello` arrived on an open connection (since 1.0).
    AlreadyOpen,
    /// None of the offered versions is supported; `supported_versions` lists the server's (since 1.0).
    UnsupportedVersion,
    /// Resume refused: unknown session or wrong token, deliberately indistinguishable (since 1.0).
    ResumeRejected,
    /// The client's `last_seq` is ahead of anything the server sent on the session (since 1.0).
    ResumeCursorAhead,
    /// A script was sent to a backend not in conformance mode, or on resume (since 1.0).
    ScriptNotAllowed,
    /// The script is well-formed JSON but cannot run (e.g. a settle order naming a missing call) (since 1.0).
    InvalidScript,
    /// A user message reused the id of one already accepted; nothing new was started (since 1.0).
    DuplicateMessage,
    /// A user message, rewind or retry arrived while a run slice is in progress (since 1.0).
    RunInProgress,
    /// The response names a tool call the session's effective state does not hold (since 1.0).
    UnknownToolCall,
    /// The response names a tool call that has already settled (since 1.0).
    ToolCallSettled,
    /// The response names a tool call that does not await a response (since 1.0).
    ToolCallNotAwaiting,
    /// The rewind names an invocation the effective state does not hold (since 1.0).
    UnknownInvocation,
    /// Another connection resumed this session; this one is closed (since 1.0).
    SessionTakenOver,
    /// The server failed; the session's state is unchanged (since 1.0).
    InternalError,
    /// The frame asks for a capability the server does not list in its welcome, e.g. `chat.retry`
    /// without `retry` (since 1.1).
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    CapabilityNotOffered,
    /// The retry names an item the session's effective state does not hold (since 1.1).
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    UnknownItem,
    /// The retry names an item outside the latest turn (since 1.1).
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    ItemNotInLatestTurn,
    /// The retry would keep a tool call that is still open (since 1.1).
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    RetryKeepsOpenCall,
    /// The cancel names an invocation that is not the session's current run, or whose run is
    /// over (`CANCEL-006`) (since 1.2).
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    RunNotActive,
    /// The response's value breaks the call's `response_schema`; the message names the failing
    /// JSON Pointer, and the call stays pending (`TOOL-023`) (since 1.2).
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    ResponseInvalid,
    /// More connections attached to the session than it keeps; this one, attached earliest, is
    /// closed (`ATTACH-003`) (since 1.2).
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    SessionDetached,
    /// A `chat.history_request` names a cursor other than the connection's current one (a cut
    /// removed it, or a page already moved past it); nothing changes (`WINDOW-010`) (since 1.2).
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    StaleCursor,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::MalformedFrame,
        ErrorCode::BinaryFrame,
        ErrorCode::UnknownType,
        ErrorCode::InvalidFrame,
        ErrorCode::FrameTooLarge,
        ErrorCode::HelloRequired,
        ErrorCode::AlreadyOpen,
        ErrorCode::UnsupportedVersion,
        ErrorCode::ResumeRejected,
        ErrorCode::ResumeCursorAhead,
        ErrorCode::ScriptNotAllowed,
        ErrorCode::InvalidScript,
        ErrorCode::DuplicateMessage,
        ErrorCode::RunInProgress,
        ErrorCode::UnknownToolCall,
        ErrorCode::ToolCallSettled,
        ErrorCode::ToolCallNotAwaiting,
        ErrorCode::UnknownInvocation,
        ErrorCode::SessionTakenOver,
        ErrorCode::InternalError,
        ErrorCode::CapabilityNotOffered,
        ErrorCode::UnknownItem,
        ErrorCode::ItemNotInLatestTurn,
        ErrorCode::RetryKeepsOpenCall,
        ErrorCode::RunNotActive,
        ErrorCode::ResponseInvalid,
        ErrorCode::SessionDetached,
        ErrorCode::StaleCursor,
    ];

    /// The wire name, e.g. `"unknown_tool_call"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MalformedFrame => "malformed_frame",
            ErrorCode::BinaryFrame => "binary_frame",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::InvalidFrame => "invalid_frame",
            ErrorCode::FrameTooLarge => "frame_too_large",
            ErrorCode::HelloRequired => "hello_required",
            ErrorCode::AlreadyOpen => "already_open",
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::ResumeRejected => "resume_rejected",
            ErrorCode::ResumeCursorAhead => "resume_cursor_ahead",
            ErrorCode::ScriptNotAllowed => "script_not_allowed",
            ErrorCode::InvalidScript => "invalid_script",
            ErrorCode::DuplicateMessage => "duplicate_message",
            ErrorCode::RunInProgress => "run_in_progress",
            ErrorCode::UnknownToolCall => "unknown_tool_call",
            ErrorCode::ToolCallSettled => "tool_call_settled",
            ErrorCode::ToolCallNotAwaiting => "tool_call_not_awaiting",
            ErrorCode::UnknownInvocation => "unknown_invocation",
            ErrorCode::SessionTakenOver => "session_taken_over",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::CapabilityNotOffered => "capability_not_offered",
            ErrorCode::UnknownItem => "unknown_item",
            ErrorCode::ItemNotInLatestTurn => "item_not_in_latest_turn",
            ErrorCode::RetryKeepsOpenCall => "retry_keeps_open_call",
            ErrorCode::RunNotActive => "run_not_active",
            ErrorCode::ResponseInvalid => "response_invalid",
            ErrorCode::SessionDetached => "session_detached",
            ErrorCode::StaleCursor => "stale_cursor",
        }
    }

    /// The minor version that defines this code: a connection that negotiated an older one is
    /// never sent it (`COMPAT-005`). It states the code's `x-chatwire-since` annotation, which a
    /// test holds it to.
    pub const fn since(self) -> ProtocolVersion {
        let minor = match self {
            ErrorCode::CapabilityNotOffered
            | ErrorCode::UnknownItem
            | ErrorCode::ItemNotInLatestTurn
            | ErrorCode::RetryKeepsOpenCall => 1,
            ErrorCode::RunNotActive
            | ErrorCode::ResponseInvalid
            | ErrorCode::SessionDetached
            | ErrorCode::StaleCursor => 2,
            _ => 0,
        };
        ProtocolVersion { major: 1, minor }
    }

    /// Whether the server closes the connection after sending this code (`spec/errors.md#codes`):
    /// exactly the codes with a [`close_code`](ErrorCode::close_code).
    pub const fn is_fatal(self) -> bool {
        self.close_code().is_some()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
