//! `session.hello` — the first frame a client sends on every connection.
//!
//! Spec: `spec/session.md#sessionhello`, `spec/resume.md`, `spec/conformance-profile.md`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::script::AgentScript;
use crate::session::welcome::Capability;
use crate::{Id, ProtocolVersion};

/// Opens a new session or resumes an existing one, naming the protocol versions the client speaks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionHello {
    /// Client-chosen id of this frame; answers (`session.welcome`, `error`) carry it as `in_reply_to`.
    pub id: Id,
    /// The protocol versions the client speaks, in any order; the server picks one (`SESSION-003`).
    #[serde(deserialize_with = "crate::serde_util::non_empty")]
    #[schemars(length(min = 1))]
    pub versions: Vec<ProtocolVersion>,
    /// Present to resume an existing session instead of opening a new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
    /// A scripted agent to run in place of the backend's model; honoured only by a backend in
    /// conformance mode, and only when opening a new session (`SCRIPT-001`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<AgentScript>,
    /// Free-form name and version of the client, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The features the client asks for (since 1.1); absent, every feature the server implements
    /// and the negotiated version defines is in force. Sent only by a client that offers no version
    /// below 1.1, because a 1.0 server refuses a hello with a member 1.0 does not define
    /// (`SESSION-012`, `SESSION-014`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    pub features: Option<Vec<Capability>>,
    /// Asks for a window of the newest `window` items (since 1.2, `state_window`): a snapshot
    /// this connection gets holds those and the always-held older items, and it pages back with
    /// `chat.history_request` (`WINDOW-001`, `WINDOW-002`). Ignored where `state_window` is not
    /// in force.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::window::window_size")]
    #[schemars(extend("x-chatwire-since" = "1.2"), range(min = 1, max = crate::window::MAX_WINDOW_ITEMS))]
    pub window: Option<u32>,
}

/// What a client needs to resume a session (`spec/resume.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    /// The `session_id` from the `session.welcome` that opened the session.
    pub session_id: Id,
    /// The secret `resume_token` from that welcome; without the right one the server refuses.
    pub resume_token: Id,
    /// The highest `seq` the client has seen on this session (0 if none).
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub last_seq: u64,
    /// The cursor of the window the client holds (since 1.2, `state_window`): the `before` of its
    /// latest windowed snapshot or page. Absent when it holds the whole state. A catch-up patches
    /// that view (`WINDOW-012`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    pub before: Option<Id>,
}
