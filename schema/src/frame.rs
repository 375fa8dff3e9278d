//! The two unions: every frame a client may send, every frame a server may send.
//!
//! Spec: `spec/overview.md#frames`. Every frame is a JSON object whose `type` names it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::chat::assistant_message::AssistantMessage;
use crate::chat::assistant_message_delta::AssistantMessageDelta;
use crate::chat::cancel::Cancel;
use crate::chat::cancel_accepted::CancelAccepted;
use crate::chat::history_page::HistoryPage;
use crate::chat::history_request::HistoryRequest;
use crate::chat::reasoning::Reasoning;
use crate::chat::reasoning_delta::ReasoningDelta;
use crate::chat::retry::Retry;
use crate::chat::retry_accepted::RetryAccepted;
use crate::chat::rewind::Rewind;
use crate::chat::rewind_complete::RewindComplete;
use crate::chat::run_complete::RunComplete;
use crate::chat::run_started::RunStarted;
use crate::chat::subagent_complete::SubagentComplete;
use crate::chat::subagent_started::SubagentStarted;
use crate::chat::tool_call::ToolCall;
use crate::chat::tool_call_complete::ToolCallComplete;
use crate::chat::tool_call_dismiss::ToolCallDismiss;
use crate::chat::tool_call_response::ToolCallResponse;
use crate::chat::tool_output::ToolOutput;
use crate::chat::tool_progress::ToolProgress;
use crate::chat::user_message::UserMessage;
use crate::chat::user_message_accepted::UserMessageAccepted;
use crate::error_frame::ErrorFrame;
use crate::frame_facts::{ClientFrameFacts, ClientFrameKind, ServerFrameFacts, ServerFrameKind};
use crate::frame_ids::{IdKind, IntroducedIds, NamedId};
use crate::session::hello::SessionHello;
use crate::session::welcome::SessionWelcome;
use crate::ui_event::UiEvent;
use crate::ui_state_patch::UiStatePatch;
use crate::ui_state_snapshot::UiStateSnapshot;
use crate::ui_state_updated::UiStateUpdated;
use crate::Id;

/// Declares a frame union: the enum, its serde tags, the table of wire names, and the dispatch of
/// every frame fact ([`crate::frame_facts`]) to the frame types, from one list. A type in the list
/// that does not implement the union's facts trait is a compile error here.
macro_rules! frame_union {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $facts:ident => $kind:ident { $( $(#[$vmeta:meta])* $wire:literal => $variant:ident($ty:ty), )* }
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

            /// The facts every frame of each type shares, per wire `type`, in declaration order.
            pub fn kinds() -> Vec<(&'static str, $kind)> {
                vec![$( ($wire, <$ty as $facts>::kind()) ),*]
            }

            /// The facts every frame of this one's type shares.
            pub fn kind(&self) -> $kind {
                match self { $( $name::$variant(_) => <$ty as $facts>::kind(), )* }
            }

            /// The frame's facts, as its type declares them.
            pub fn facts(&self) -> &dyn $facts {
                match self { $( $name::$variant(f) => f, )* }
            }

            /// The frame's facts, mutable (a server stamps a frame's `seq` through them).
            pub fn facts_mut(&mut self) -> &mut dyn $facts {
                match self { $( $name::$variant(f) => f, )* }
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
    pub enum ClientFrame: ClientFrameFacts => ClientFrameKind {
        "session.hello" => Hello(SessionHello),
        "chat.user_message" => UserMessage(UserMessage),
        "chat.tool_call_response" => ToolCallResponse(ToolCallResponse),
        "chat.rewind" => Rewind(Rewind),
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        "chat.retry" => Retry(Retry),
        #[schemars(extend("x-chatwire-since" = "1.2"))]
        "chat.cancel" => Cancel(Cancel),
        #[schemars(extend("x-chatwire-since" = "1.2"))]
        "chat.history_request" => HistoryRequest(HistoryRequest),
    }
}

frame_union! {
    /// Any frame a server sends to a client.
    pub enum ServerFrame: ServerFrameFacts => ServerFrameKind {
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
        #[schemars(extend("x-chatwire-since" = "1.2"))]
        "chat.cancel_accepted" => CancelAccepted(CancelAccepted),
        #[schemars(extend("x-chatwire-since" = "1.2"))]
        "chat.history_page" => HistoryPage(HistoryPage),
        #[schemars(extend("x-chatwire-since" = "1.3"))]
        "chat.reasoning_delta" => ReasoningDelta(ReasoningDelta),
        #[schemars(extend("x-chatwire-since" = "1.3"))]
        "chat.reasoning" => Reasoning(Reasoning),
        #[schemars(extend("x-chatwire-since" = "1.3"))]
        "chat.subagent_started" => SubagentStarted(SubagentStarted),
        #[schemars(extend("x-chatwire-since" = "1.3"))]
        "chat.subagent_complete" => SubagentComplete(SubagentComplete),
        "error" => Error(ErrorFrame),
    }
}

impl ClientFrame {
    /// The client-chosen frame id that answers will carry as `in_reply_to`.
    pub fn id(&self) -> &Id {
        self.facts().id()
    }

    /// The server frame types that answer this frame when it is accepted; an `error` answers any
    /// frame it refuses (`ERROR-004`).
    pub fn answered_by(&self) -> &'static [&'static str] {
        self.facts().answered_by()
    }

    /// The call, item or invocation the frame acts on, where it names one.
    pub fn named_id(&self) -> Option<NamedId<'_>> {
        self.facts().named_id()
    }

    /// The tool call the frame acts on (a `chat.tool_call_response`'s).
    pub fn tool_call_id(&self) -> Option<&Id> {
        self.named_of(IdKind::ToolCall)
    }

    /// The invocation the frame acts on (a `chat.cancel`'s, a `chat.rewind`'s first removed turn).
    pub fn invocation_id(&self) -> Option<&Id> {
        self.named_of(IdKind::Invocation)
    }

    /// The item the frame acts on (a `chat.retry`'s last kept item, a `chat.history_request`'s cursor).
    pub fn item_id(&self) -> Option<&Id> {
        self.named_of(IdKind::Item)
    }

    fn named_of(&self, kind: IdKind) -> Option<&Id> {
        self.named_id().filter(|n| n.kind == kind).map(|n| n.id)
    }
}

impl ServerFrame {
    /// The frame's `seq`; `None` only for an `error` sent before a session was bound.
    pub fn seq(&self) -> Option<u64> {
        self.facts().seq()
    }

    /// Stamps the frame's `seq`.
    pub fn set_seq(&mut self, seq: u64) {
        self.facts_mut().set_seq(seq)
    }

    /// Whether this frame carries a state (a `ui_state_snapshot`, `ui_state_updated` or
    /// `ui_state_patch`, or a `chat.assistant_message_delta`, which is its own state change and
    /// gets no state frame, `STREAM-002`): the frames a patch's `base_seq` (`STATE-037`) and a
    /// catch-up's `last_seq` (`RESUME-017`) may name.
    pub fn carries_state(&self) -> bool {
        self.facts().carries_state()
    }

    /// The client frame this one answers, where it names one.
    pub fn in_reply_to(&self) -> Option<&Id> {
        self.facts().in_reply_to()
    }

    /// Whether this frame goes only to the connection whose request it answers: every frame with
    /// an `in_reply_to` (a welcome, a `*_accepted`, a client-settled call's completion or
    /// dismissal, a rewind's completion, an error). Every other frame of a session goes to every
    /// connection attached to it, and so does the state frame after an answer that changes the
    /// state (`ATTACH-004`).
    pub fn is_answer(&self) -> bool {
        self.facts().in_reply_to().is_some()
    }

    /// The tool call this frame names: the call it creates, reports on or settles.
    pub fn tool_call_id(&self) -> Option<&Id> {
        self.facts().tool_call_id()
    }

    /// The turn this frame names, where it names one.
    pub fn invocation_id(&self) -> Option<&Id> {
        self.facts().invocation_id()
    }

    /// The event this frame carries for the reducer, if it changes the UiState.
    pub fn ui_event(&self) -> Option<UiEvent<'_>> {
        self.facts().ui_event()
    }

    /// The ids this frame introduces into its session (`ID-002`), each with the rule that says
    /// whether this frame is its introduction given the state before it
    /// ([`crate::frame_ids::IntroducedId::is_new`]).
    pub fn introduced_ids(&self) -> IntroducedIds<'_> {
        self.facts().introduced_ids()
    }
}
