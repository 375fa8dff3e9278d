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
use crate::chat::subagent_complete::SubagentComplete;
use crate::chat::subagent_started::SubagentStarted;
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
    "chat.subagent_started" => SubagentStarted(SubagentStarted),
    "chat.subagent_complete" => SubagentComplete(SubagentComplete),
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

impl<'a> UiEvent<'a> {
    /// The host whose sub-agent transcript an item-creating event adds to (since 1.3,
    /// `STATE-065`); `None` for the top level and for every event that creates no item. Exhaustive:
    /// a new event says whether it can go into a transcript.
    pub fn parent_call_id(&self) -> Option<&'a crate::Id> {
        match *self {
            UiEvent::AssistantMessage(e) => e.parent_call_id.as_ref(),
            UiEvent::AssistantMessageDelta(e) => e.parent_call_id.as_ref(),
            UiEvent::ToolCall(e) => e.parent_call_id.as_ref(),
            UiEvent::ReasoningDelta(e) => e.parent_call_id.as_ref(),
            UiEvent::Reasoning(e) => e.parent_call_id.as_ref(),
            UiEvent::UserMessageAccepted(_)
            | UiEvent::RunStarted(_)
            | UiEvent::ToolProgress(_)
            | UiEvent::ToolOutput(_)
            | UiEvent::ToolCallComplete(_)
            | UiEvent::ToolCallDismiss(_)
            | UiEvent::RunComplete(_)
            | UiEvent::RewindComplete(_)
            | UiEvent::RetryAccepted(_)
            | UiEvent::SubagentStarted(_)
            | UiEvent::SubagentComplete(_) => None,
        }
    }

    /// The turn the event names, where it names one.
    pub fn invocation_id(&self) -> Option<&'a crate::Id> {
        match *self {
            UiEvent::UserMessageAccepted(e) => Some(&e.invocation_id),
            UiEvent::RunStarted(e) => Some(&e.invocation_id),
            UiEvent::AssistantMessage(e) => Some(&e.invocation_id),
            UiEvent::AssistantMessageDelta(e) => Some(&e.invocation_id),
            UiEvent::ToolCall(e) => Some(&e.invocation_id),
            UiEvent::RunComplete(e) => Some(&e.invocation_id),
            UiEvent::RetryAccepted(e) => Some(&e.invocation_id),
            UiEvent::ReasoningDelta(e) => Some(&e.invocation_id),
            UiEvent::Reasoning(e) => Some(&e.invocation_id),
            UiEvent::ToolProgress(_)
            | UiEvent::ToolOutput(_)
            | UiEvent::ToolCallComplete(_)
            | UiEvent::ToolCallDismiss(_)
            | UiEvent::RewindComplete(_)
            | UiEvent::SubagentStarted(_)
            | UiEvent::SubagentComplete(_) => None,
        }
    }
}
