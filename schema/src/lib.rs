//! # chatwire-schema
//!
//! The Chatwire wire protocol v1 between an agent backend and a chat UI over WebSocket:
//! every frame as a Rust type (serde), the JSON Schemas generated from them (schemars,
//! draft 2020-12), and the [`reducer`] that is the reference semantics of [`UiState`].
//!
//! Spec: `spec/README.md`. One module per message, named after its wire `type`:
//!
//! | direction | wire type | module |
//! | --- | --- | --- |
//! | client → server | `session.hello` | [`session::hello`] |
//! | client → server | `chat.user_message` | [`chat::user_message`] |
//! | client → server | `chat.tool_call_response` | [`chat::tool_call_response`] |
//! | client → server | `chat.rewind` | [`chat::rewind`] |
//! | client → server | `chat.retry` (since 1.1) | [`chat::retry`] |
//! | client → server | `chat.cancel` (since 1.2) | [`chat::cancel`] |
//! | client → server | `chat.history_request` (since 1.2) | [`chat::history_request`] |
//! | server → client | `session.welcome` | [`session::welcome`] |
//! | server → client | `ui_state_snapshot` | [`ui_state_snapshot`] |
//! | server → client | `ui_state_updated` | [`ui_state_updated`] |
//! | server → client | `ui_state_patch` (since 1.1) | [`ui_state_patch`] |
//! | server → client | `chat.user_message_accepted` | [`chat::user_message_accepted`] |
//! | server → client | `chat.run_started` | [`chat::run_started`] |
//! | server → client | `chat.assistant_message` | [`chat::assistant_message`] |
//! | server → client | `chat.assistant_message_delta` (since 1.1) | [`chat::assistant_message_delta`] |
//! | server → client | `chat.tool_call` | [`chat::tool_call`] |
//! | server → client | `chat.tool_progress` | [`chat::tool_progress`] |
//! | server → client | `chat.tool_output` | [`chat::tool_output`] |
//! | server → client | `chat.tool_call_complete` | [`chat::tool_call_complete`] |
//! | server → client | `chat.tool_call_dismiss` | [`chat::tool_call_dismiss`] |
//! | server → client | `chat.run_complete` | [`chat::run_complete`] |
//! | server → client | `chat.rewind_complete` | [`chat::rewind_complete`] |
//! | server → client | `chat.retry_accepted` (since 1.1) | [`chat::retry_accepted`] |
//! | server → client | `chat.cancel_accepted` (since 1.2) | [`chat::cancel_accepted`] |
//! | server → client | `chat.history_page` (since 1.2) | [`chat::history_page`] |
//! | server → client | `chat.reasoning_delta` (since 1.3) | [`chat::reasoning_delta`] |
//! | server → client | `chat.reasoning` (since 1.3) | [`chat::reasoning`] |
//! | server → client | `chat.subagent_started` (since 1.3) | [`chat::subagent_started`] |
//! | server → client | `chat.subagent_complete` (since 1.3) | [`chat::subagent_complete`] |
//! | server → client | `error` | [`error_frame`] |
//!
//! Since 1.3, [`usage`] holds what a run used (`spec/usage.md`), and [`view`] what one connection
//! sees of the session: its minor's shapes ([`older_minor`]) and only the 1.3 features in force;
//! [`subagent`] the sub-agent transcripts a tool call hosts (`spec/subagents.md`).
#![warn(missing_docs)]

pub mod chat;
pub mod dispatch;
pub mod error_frame;
pub mod error_order;
pub mod frame;
pub mod frame_facts;
pub mod frame_ids;
pub mod id;
pub mod older_minor;
pub mod patch_op;
pub mod protocol_facts;
pub mod reducer;
pub mod req_id;
pub mod requirement_sets;
pub mod requirements;
pub mod response_schema;
pub mod schema_gen;
pub mod script;
mod serde_util;
pub mod session;
pub mod since;
pub mod state_patch;
pub mod subagent;
pub mod transport;
pub mod ui_event;
pub mod ui_state;
pub mod ui_state_patch;
pub mod ui_state_snapshot;
pub mod ui_state_updated;
pub mod usage;
pub mod validate;
pub mod version;
pub mod view;
pub mod window;

pub use error_frame::{ErrorCode, ErrorFrame};

/// Largest integer on the wire: 2^53 − 1, the range every JSON reader, JavaScript included,
/// represents exactly (I-JSON, RFC 7493). `seq` and every other integer field stay within it.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
pub use chat::reasoning::MAX_REASONING_PAYLOAD_BYTES;
pub use frame::{ClientFrame, ServerFrame};
pub use id::{Id, IdError};
pub use reducer::{reduce, reduce_all, IndexedUiState, ReduceError};
pub use req_id::{ReqId, ReqIdError};
pub use schema_gen::Direction;
pub use subagent::MAX_SUBAGENT_DEPTH;
pub use transport::{
    CloseCode, HARD_CAP_FACTOR, MIN_ATTACHED_CONNECTIONS, MIN_MAX_FRAME_BYTES, REFUSED_RESUMES_PER_CONNECTION,
    SEND_QUEUE_MAX_BYTES,
};
pub use ui_event::UiEvent;
pub use ui_state::{DisplayItem, RunStatus, ToolCallStatus, UiState};
pub use validate::{FrameError, FrameValidator, Violation};
pub use version::{
    ProtocolVersion, UiStateVersion, DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION, SUBPROTOCOL, SUPPORTED_VERSIONS,
};
