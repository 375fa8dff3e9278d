//! The two unions: every frame a client may send, every frame a server may send.
//!
//! Spec: `spec/overview.md#frames`. Every frame is a JSON object whose `type` names it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::chat::assistant_message::AssistantMessage;
use crate::chat::assistant_message_delta::AssistantMessageDelta;
use crate::chat::retry::Retry;
use crate::chat::retry_accepted::RetryAccepted;
use crate::chat::rewind::Rewind;
use crate::chat::rewind_complete::RewindComplete;
use crate::chat::run_complete::RunComplete;
use crate::chat::run_started::RunStarted;
use crate::chat::tool_call::ToolCall;
use crate::chat::tool_call_complete::ToolCallComplete;
use crate::chat::tool_call_dismiss::ToolCallDismiss;
use crate::chat::tool_call_response::ToolCallResponse;
use crate::chat::tool_output::ToolOutput;
use crate::chat::tool_progress::ToolProgress;
use crate::chat::user_message::UserMessage;
use crate::chat::user_message_accepted::UserMessageAccepted;
use crate::error_frame::ErrorFrame;
use crate::session::hello::SessionHello;
use crate::session::welcome::SessionWelcome;
use crate::ui_state_patch::UiStatePatch;
use crate::ui_state_snapshot::UiStateSnapshot;
use crate::ui_state_updated::UiStateUpdated;
use crate::Id;

/// Declares a frame union: the enum, its serde tags, and the table of wire names, from one list.
macro_rules! frame_union {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $wire:literal => $variant:ident($ty:ty), )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "type")]
        #[non_exhaustive]
        pub enum $name {
            $(
                #[allow(missing_docs)] // the message struct's doc is the variant's schema description
                #[serde(rename = $wire)]
                $(#[$vmeta])*
                $variant($ty),
            )*
        }

        impl $name {
            /// Every wire `type` of this union, in declaration order.
            pub const TYPES: &'static [&'static str] = &[$($wire),*];

            /// The wire `type` of this frame.
            pub fn type_name(&self) -> &'static str {
                match self { $( $name::$variant(_) => $wire, )* }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(f: $ty) -> Self { $name::$variant(f) }
            }
        )*
    };
}

frame_union! {
    /// Any frame a client sends to a server.
    pub enum ClientFrame {
        "session.hello" => Hello(SessionHello),
        "chat.user_message" => UserMessage(UserMessage),
        "chat.tool_call_response" => ToolCallResponse(ToolCallResponse),
        "chat.rewind" => Rewind(Rewind),
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        "chat.retry" => Retry(Retry),
    }
}

frame_union! {
    /// Any frame a server sends to a client.
    pub enum ServerFrame {
        "session.welcome" => Welcome(SessionWelcome),
        "ui_state_snapshot" => UiStateSnapshot(UiStateSnapshot),
        "ui_state_updated" => UiStateUpdated(UiStateUpdated),
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        "ui_state_patch" => UiStatePatch(UiStatePatch),
        "chat.user_message_accepted" => UserMessageAccepted(UserMessageAccepted),
        "chat.run_started" => RunStarted(RunStarted),
        "chat.assistant_message" => AssistantMessage(AssistantMessage),
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        "chat.assistant_message_delta" => AssistantMessageDelta(AssistantMessageDelta),
        "chat.tool_call" => ToolCall(ToolCall),
        "chat.tool_progress" => ToolProgress(ToolProgress),
        "chat.tool_output" => ToolOutput(ToolOutput),
        "chat.tool_call_complete" => ToolCallComplete(ToolCallComplete),
        "chat.tool_call_dismiss" => ToolCallDismiss(ToolCallDismiss),
        "chat.run_complete" => RunComplete(RunComplete),
        "chat.rewind_complete" => RewindComplete(RewindComplete),
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        "chat.retry_accepted" => RetryAccepted(RetryAccepted),
        "error" => Error(ErrorFrame),
    }
}

impl ClientFrame {
    /// The client-chosen frame id that answers will carry as `in_reply_to`.
    pub fn id(&self) -> &Id {
        match self {
            ClientFrame::Hello(f) => &f.id,
            ClientFrame::UserMessage(f) => &f.id,
            ClientFrame::ToolCallResponse(f) => &f.id,
            ClientFrame::Rewind(f) => &f.id,
            ClientFrame::Retry(f) => &f.id,
        }
    }
}

/// A server frame that changes the UiState: the reducer's input (`spec/ui-state.md#events`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UiEvent<'a> {
    /// `chat.user_message_accepted`
    UserMessageAccepted(&'a UserMessageAccepted),
    /// `chat.run_started`
    RunStarted(&'a RunStarted),
    /// `chat.assistant_message`
    AssistantMessage(&'a AssistantMessage),
    /// `chat.assistant_message_delta`
    AssistantMessageDelta(&'a AssistantMessageDelta),
    /// `chat.tool_call`
    ToolCall(&'a ToolCall),
    /// `chat.tool_progress`
    ToolProgress(&'a ToolProgress),
    /// `chat.tool_output`
    ToolOutput(&'a ToolOutput),
    /// `chat.tool_call_complete`
    ToolCallComplete(&'a ToolCallComplete),
    /// `chat.tool_call_dismiss`
    ToolCallDismiss(&'a ToolCallDismiss),
    /// `chat.run_complete`
    RunComplete(&'a RunComplete),
    /// `chat.rewind_complete`
    RewindComplete(&'a RewindComplete),
    /// `chat.retry_accepted`
    RetryAccepted(&'a RetryAccepted),
}

impl UiEvent<'_> {
    /// Whether this is a `chat.assistant_message_delta`: the one event a connection where
    /// `assistant_stream` is not in force never sees. Its view is the fold of the session's events
    /// without these, which is the session's state without its open stream
    /// ([`crate::UiState::without_open_stream`], `spec/streaming.md`).
    pub fn is_stream_delta(&self) -> bool {
        matches!(self, UiEvent::AssistantMessageDelta(_))
    }
}

impl ServerFrame {
    /// The frame's `seq`; `None` only for an `error` sent before a session was bound.
    pub fn seq(&self) -> Option<u64> {
        Some(match self {
            ServerFrame::Welcome(f) => f.seq,
            ServerFrame::UiStateSnapshot(f) => f.seq,
            ServerFrame::UiStateUpdated(f) => f.seq,
            ServerFrame::UiStatePatch(f) => f.seq,
            ServerFrame::UserMessageAccepted(f) => f.seq,
            ServerFrame::RunStarted(f) => f.seq,
            ServerFrame::AssistantMessage(f) => f.seq,
            ServerFrame::AssistantMessageDelta(f) => f.seq,
            ServerFrame::ToolCall(f) => f.seq,
            ServerFrame::ToolProgress(f) => f.seq,
            ServerFrame::ToolOutput(f) => f.seq,
            ServerFrame::ToolCallComplete(f) => f.seq,
            ServerFrame::ToolCallDismiss(f) => f.seq,
            ServerFrame::RunComplete(f) => f.seq,
            ServerFrame::RewindComplete(f) => f.seq,
            ServerFrame::RetryAccepted(f) => f.seq,
            ServerFrame::Error(f) => return f.seq,
        })
    }

    /// Whether this frame carries a state (a `ui_state_snapshot`, `ui_state_updated` or
    /// `ui_state_patch`, or a `chat.assistant_message_delta`, which is its own state change and
    /// gets no state frame, `STREAM-002`): the frames a patch's `base_seq` (`STATE-037`) and a
    /// catch-up's `last_seq` (`RESUME-017`) may name.
    pub fn carries_state(&self) -> bool {
        matches!(
            self,
            ServerFrame::UiStateSnapshot(_)
                | ServerFrame::UiStateUpdated(_)
                | ServerFrame::UiStatePatch(_)
                | ServerFrame::AssistantMessageDelta(_)
        )
    }

    /// The event this frame carries for the reducer, if it changes the UiState.
    pub fn ui_event(&self) -> Option<UiEvent<'_>> {
        Some(match self {
            ServerFrame::UserMessageAccepted(f) => UiEvent::UserMessageAccepted(f),
            ServerFrame::RunStarted(f) => UiEvent::RunStarted(f),
            ServerFrame::AssistantMessage(f) => UiEvent::AssistantMessage(f),
            ServerFrame::AssistantMessageDelta(f) => UiEvent::AssistantMessageDelta(f),
            ServerFrame::ToolCall(f) => UiEvent::ToolCall(f),
            ServerFrame::ToolProgress(f) => UiEvent::ToolProgress(f),
            ServerFrame::ToolOutput(f) => UiEvent::ToolOutput(f),
            ServerFrame::ToolCallComplete(f) => UiEvent::ToolCallComplete(f),
            ServerFrame::ToolCallDismiss(f) => UiEvent::ToolCallDismiss(f),
            ServerFrame::RunComplete(f) => UiEvent::RunComplete(f),
            ServerFrame::RewindComplete(f) => UiEvent::RewindComplete(f),
            ServerFrame::RetryAccepted(f) => UiEvent::RetryAccepted(f),
            ServerFrame::Welcome(_)
            | ServerFrame::UiStateSnapshot(_)
            | ServerFrame::UiStateUpdated(_)
            | ServerFrame::UiStatePatch(_)
            | ServerFrame::Error(_) => return None,
        })
    }
}
