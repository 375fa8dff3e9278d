//! Facts about each frame that code outside this crate matches on, declared once beside the frame.
//!
//! Spec: `spec/overview.md#frames`. Every server frame type implements [`ServerFrameFacts`] and
//! every client frame type [`ClientFrameFacts`]; the unions in [`crate::frame`] dispatch to them
//! from the same list that declares the union, so a frame added to a union without its facts does
//! not compile (`the trait bound … is not satisfied`), and a fact a frame forgets does not either
//! (`not all trait items implemented`). No trait item has a default on purpose.

use crate::chat::assistant_message::AssistantMessage;
use crate::chat::assistant_message_delta::AssistantMessageDelta;
use crate::chat::cancel::Cancel;
use crate::chat::cancel_accepted::CancelAccepted;
use crate::chat::history_page::HistoryPage;
use crate::chat::history_request::HistoryRequest;
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
use crate::ui_event::UiEvent;
use crate::ui_state_patch::UiStatePatch;
use crate::ui_state_snapshot::UiStateSnapshot;
use crate::ui_state_updated::UiStateUpdated;
use crate::Id;

/// What every server frame declares about itself. A frame that leaves a fact out does not compile:
///
/// ```compile_fail,E0046
/// use chatwire_schema::frame_facts::ServerFrameFacts;
/// use chatwire_schema::{Id, UiEvent};
///
/// struct StopRequested { seq: u64 }
///
/// impl ServerFrameFacts for StopRequested {
///     fn carries_state(&self) -> bool { false }
///     fn seq(&self) -> Option<u64> { Some(self.seq) }
///     fn set_seq(&mut self, seq: u64) { self.seq = seq }
///     fn in_reply_to(&self) -> Option<&Id> { None }
///     fn tool_call_id(&self) -> Option<&Id> { None }
///     // `invocation_id` forgotten: E0046, not all trait items implemented.
///     fn ui_event(&self) -> Option<UiEvent<'_>> { None }
/// }
/// ```
pub trait ServerFrameFacts {
    /// Whether the frame carries a state (`STATE-037`, `RESUME-017`: what a `base_seq` or a
    /// catch-up's `last_seq` may name). A delta is its own state change (`STREAM-002`).
    fn carries_state(&self) -> bool;
    /// The frame's `seq`; `None` only for an `error` sent before a session was bound.
    fn seq(&self) -> Option<u64>;
    /// Stamps the frame's `seq` (the server's commit allocates it).
    fn set_seq(&mut self, seq: u64);
    /// The client frame this one answers (`in_reply_to`), where it names one.
    fn in_reply_to(&self) -> Option<&Id>;
    /// The tool call the frame names: the call it creates, reports on or settles.
    fn tool_call_id(&self) -> Option<&Id>;
    /// The turn the frame belongs to, where it names one.
    fn invocation_id(&self) -> Option<&Id>;
    /// The event this frame carries for the reducer, if it changes the UiState.
    fn ui_event(&self) -> Option<UiEvent<'_>>;
}

/// What every client frame declares about itself.
pub trait ClientFrameFacts {
    /// The client-chosen frame id that answers carry as `in_reply_to`.
    fn id(&self) -> &Id;
}

/// Implements [`ServerFrameFacts`] for one frame type. Every key is required, in this order, so a
/// frame that leaves one out is a compile error at its own line.
macro_rules! server_facts {
    ($ty:ty {
        carries_state: $state:expr,
        seq: |$s:ident| $seq:expr, set_seq: |$m:ident, $v:ident| $set:expr,
        in_reply_to: |$r:ident| $reply:expr,
        tool_call_id: |$t:ident| $call:expr,
        invocation_id: |$n:ident| $inv:expr,
        ui_event: |$e:ident| $event:expr $(,)?
    }) => {
        impl ServerFrameFacts for $ty {
            fn carries_state(&self) -> bool {
                $state
            }
            fn seq(&self) -> Option<u64> {
                let $s = self;
                $seq
            }
            fn set_seq(&mut self, $v: u64) {
                let $m = self;
                $set
            }
            fn in_reply_to(&self) -> Option<&Id> {
                let $r = self;
                $reply
            }
            fn tool_call_id(&self) -> Option<&Id> {
                let $t = self;
                $call
            }
            fn invocation_id(&self) -> Option<&Id> {
                let $n = self;
                $inv
            }
            fn ui_event(&self) -> Option<UiEvent<'_>> {
                let $e = self;
                $event
            }
        }
    };
}

server_facts!(SessionWelcome {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |_f| None,
});
server_facts!(UiStateSnapshot {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |_f| None,
});
server_facts!(UiStateUpdated {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |_f| None,
});
server_facts!(UiStatePatch {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |_f| None,
});
server_facts!(UserMessageAccepted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::UserMessageAccepted(f)),
});
server_facts!(RunStarted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::RunStarted(f)),
});
server_facts!(AssistantMessage {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::AssistantMessage(f)),
});
server_facts!(AssistantMessageDelta {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::AssistantMessageDelta(f)),
});
server_facts!(ToolCall {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::ToolCall(f)),
});
server_facts!(ToolProgress {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    ui_event: |f| Some(UiEvent::ToolProgress(f)),
});
server_facts!(ToolOutput {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    ui_event: |f| Some(UiEvent::ToolOutput(f)),
});
server_facts!(ToolCallComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| f.in_reply_to.as_ref(),
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    ui_event: |f| Some(UiEvent::ToolCallComplete(f)),
});
server_facts!(ToolCallDismiss {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| f.in_reply_to.as_ref(),
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    ui_event: |f| Some(UiEvent::ToolCallDismiss(f)),
});
server_facts!(RunComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::RunComplete(f)),
});
server_facts!(RewindComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |f| Some(UiEvent::RewindComplete(f)),
});
server_facts!(RetryAccepted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |f| Some(UiEvent::RetryAccepted(f)),
});
server_facts!(CancelAccepted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    ui_event: |_f| None,
});
server_facts!(HistoryPage {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |_f| None,
});
server_facts!(ErrorFrame {
    carries_state: false,
    seq: |f| f.seq,
    set_seq: |f, s| f.seq = Some(s),
    in_reply_to: |f| f.in_reply_to.as_ref(),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    ui_event: |_f| None,
});

/// Implements [`ClientFrameFacts`] for one frame type; every key is required.
macro_rules! client_facts {
    ($ty:ty { id: |$a:ident| $id:expr $(,)? }) => {
        impl ClientFrameFacts for $ty {
            fn id(&self) -> &Id {
                let $a = self;
                $id
            }
        }
    };
}

client_facts!(SessionHello { id: |f| &f.id });
client_facts!(UserMessage { id: |f| &f.id });
client_facts!(ToolCallResponse { id: |f| &f.id });
client_facts!(Rewind { id: |f| &f.id });
client_facts!(Retry { id: |f| &f.id });
client_facts!(Cancel { id: |f| &f.id });
client_facts!(HistoryRequest { id: |f| &f.id });
