//! The reducer's input: the server frames that change the UiState (`spec/ui-state.md#events`).
//!
//! A leaf under the frame union, the reducer and the patch builder: each of them names an event,
//! none of them owns it.

use crate::chat::assistant_message::AssistantMessage;
use crate::chat::assistant_message_delta::AssistantMessageDelta;
use crate::chat::reasoning::Reasoning;
use crate::chat::reasoning_delta::ReasoningDelta;
use crate::chat::retry_accepted::RetryAccepted;
use crate::chat::rewind_complete::RewindComplete;
use crate::chat::run_complete::RunComplete;
use crate::chat::run_started::RunStarted;
use crate::chat::tool_call::ToolCall;
use crate::chat::tool_call_complete::ToolCallComplete;
use crate::chat::tool_call_dismiss::ToolCallDismiss;
use crate::chat::tool_output::ToolOutput;
use crate::chat::tool_progress::ToolProgress;
use crate::chat::user_message_accepted::UserMessageAccepted;

/// Declares [`UiEvent`] and its list of wire names from one list.
macro_rules! ui_events {
    ($( $wire:literal => $variant:ident($ty:ty), )*) => {
        /// A server frame that changes the UiState: the reducer's input (`spec/ui-state.md#events`).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum UiEvent<'a> {
            $(
                #[doc = concat!("`", $wire, "`")]
                $variant(&'a $ty),
            )*
        }

        impl UiEvent<'_> {
            /// The wire `type` of every event frame, in declaration order: the event list another
            /// implementation folds (`fixtures/protocol-facts.json`, `events`).
            pub const TYPES: &'static [&'static str] = &[$($wire),*];

            /// The wire `type` of this event's frame.
            pub fn type_name(&self) -> &'static str {
                match self { $( UiEvent::$variant(_) => $wire, )* }
            }
        }
    };
}

ui_events! {
    "chat.user_message_accepted" => UserMessageAccepted(UserMessageAccepted),
    "chat.run_started" => RunStarted(RunStarted),
    "chat.assistant_message" => AssistantMessage(AssistantMessage),
    "chat.assistant_message_delta" => AssistantMessageDelta(AssistantMessageDelta),
    "chat.tool_call" => ToolCall(ToolCall),
    "chat.tool_progress" => ToolProgress(ToolProgress),
    "chat.tool_output" => ToolOutput(ToolOutput),
    "chat.tool_call_complete" => ToolCallComplete(ToolCallComplete),
    "chat.tool_call_dismiss" => ToolCallDismiss(ToolCallDismiss),
    "chat.run_complete" => RunComplete(RunComplete),
    "chat.rewind_complete" => RewindComplete(RewindComplete),
    "chat.retry_accepted" => RetryAccepted(RetryAccepted),
    "chat.reasoning_delta" => ReasoningDelta(ReasoningDelta),
    "chat.reasoning" => Reasoning(Reasoning),
}

impl UiEvent<'_> {
    /// Whether this is a `chat.assistant_message_delta`: the one event a connection where
    /// `assistant_stream` is not in force never sees. Its view is the fold of the session's events
    /// without these, which is the session's state without its open stream
    /// ([`crate::UiState::without_open_stream`], `spec/streaming.md`).
    pub fn is_stream_delta(&self) -> bool {
        matches!(self, UiEvent::AssistantMessageDelta(_) | UiEvent::ReasoningDelta(_))
    }
}
