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
use crate::frame_ids::{IdKind, IdMember, IdSlot, IntroducedId, IntroducedIds, Introduction, NamedId};
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
/// use chatwire_schema::frame_facts::{ServerFrameFacts, ServerFrameKind};
/// use chatwire_schema::frame_ids::IntroducedIds;
/// use chatwire_schema::{Id, UiEvent};
///
/// struct StopRequested { seq: u64 }
///
/// impl ServerFrameFacts for StopRequested {
///     fn kind() -> ServerFrameKind {
///         ServerFrameKind { carries_state: false, event: false, introduces: &[], feature: None }
///     }
///     fn carries_state(&self) -> bool { false }
///     fn seq(&self) -> Option<u64> { Some(self.seq) }
///     fn set_seq(&mut self, seq: u64) { self.seq = seq }
///     fn in_reply_to(&self) -> Option<&Id> { None }
///     fn tool_call_id(&self) -> Option<&Id> { None }
///     // `invocation_id` forgotten: E0046, not all trait items implemented.
///     fn parent_call_id(&self) -> Option<&Id> { None }
///     fn ui_event(&self) -> Option<UiEvent<'_>> { None }
///     fn introduced_ids(&self) -> IntroducedIds<'_> { IntroducedIds::default() }
/// }
/// ```
pub trait ServerFrameFacts {
    /// The facts every frame of this type shares, readable without a frame (what
    /// `fixtures/protocol-facts.json` exports per type).
    fn kind() -> ServerFrameKind
    where
        Self: Sized;
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
    /// The host whose sub-agent transcript the frame's item goes into (since 1.3, `STATE-065`):
    /// an item-creating frame's `parent_call_id`; `None` for the top level and for every other
    /// frame.
    fn parent_call_id(&self) -> Option<&Id>;
    /// The event this frame carries for the reducer, if it changes the UiState.
    fn ui_event(&self) -> Option<UiEvent<'_>>;
    /// The ids the frame introduces into its session (`ID-002`), each with the rule that says
    /// whether this frame is its introduction ([`IntroducedId::is_new`]).
    fn introduced_ids(&self) -> IntroducedIds<'_>;
}

/// What every frame of one server frame type shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerFrameKind {
    /// Whether the frame carries a state ([`ServerFrameFacts::carries_state`]).
    pub carries_state: bool,
    /// Whether the frame is an event for the reducer ([`ServerFrameFacts::ui_event`]).
    pub event: bool,
    /// The ids the frame introduces ([`ServerFrameFacts::introduced_ids`]).
    pub introduces: &'static [IdSlot],
    /// The feature (its wire name) a connection must have in force to receive frames of this type
    /// at all (since 1.3: `reasoning`, `subagents`); `None` for a frame every connection of its
    /// minor may get.
    pub feature: Option<&'static str>,
}

/// What every client frame declares about itself. A frame that leaves a fact out does not compile.
pub trait ClientFrameFacts {
    /// The facts every frame of this type shares, readable without a frame.
    fn kind() -> ClientFrameKind
    where
        Self: Sized;
    /// The client-chosen frame id that answers carry as `in_reply_to`.
    fn id(&self) -> &Id;
    /// The server frame types that answer this frame when it is accepted (an `error` answers any
    /// frame it refuses, `ERROR-004`).
    fn answered_by(&self) -> &'static [&'static str];
    /// The call, item or invocation the frame acts on, where it names one.
    fn named_id(&self) -> Option<NamedId<'_>>;
}

/// What every frame of one client frame type shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientFrameKind {
    /// The server frame types that answer it when accepted ([`ClientFrameFacts::answered_by`]).
    pub answered_by: &'static [&'static str],
    /// The member naming the call, item or invocation it acts on ([`ClientFrameFacts::named_id`]).
    pub names: Option<IdMember>,
}

/// Whether a frame type's `ui_event` (`None`, or `Some(Variant)`) is an event.
macro_rules! is_event {
    (None) => {
        false
    };
    (Some($variant:ident)) => {
        true
    };
}

/// The `ui_event` of a frame type: `None`, or `Some(Variant)` of [`UiEvent`].
macro_rules! ui_event_of {
    ($f:expr, None) => {
        None
    };
    ($f:expr, Some($variant:ident)) => {
        Some(UiEvent::$variant($f))
    };
}

/// Implements [`ServerFrameFacts`] for one frame type. Every key is required, in this order, so a
/// frame that leaves one out is a compile error at its own line. `introduces` lists
/// `Kind(member) Rule` for each id the frame introduces.
macro_rules! server_facts {
    ($ty:ty {
        carries_state: $state:expr,
        seq: |$s:ident| $seq:expr, set_seq: |$m:ident, $v:ident| $set:expr,
        in_reply_to: |$r:ident| $reply:expr,
        tool_call_id: |$t:ident| $call:expr,
        invocation_id: |$n:ident| $inv:expr,
        parent_call_id: |$p:ident| $parent:expr,
        ui_event: $event:ident $(($variant:ident))?,
        introduces: [$($kind:ident($member:ident) $rule:ident),* $(,)?],
        feature: $feature:expr $(,)?
    }) => {
        impl ServerFrameFacts for $ty {
            fn kind() -> ServerFrameKind {
                ServerFrameKind {
                    carries_state: $state,
                    event: is_event!($event $(($variant))?),
                    introduces: &[$(IdSlot {
                        kind: IdKind::$kind,
                        member: stringify!($member),
                        rule: Introduction::$rule,
                    }),*],
                    feature: $feature,
                }
            }
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
            fn parent_call_id(&self) -> Option<&Id> {
                let $p = self;
                $parent
            }
            fn ui_event(&self) -> Option<UiEvent<'_>> {
                ui_event_of!(self, $event $(($variant))?)
            }
            fn introduced_ids(&self) -> IntroducedIds<'_> {
                IntroducedIds::new([$(IntroducedId {
                    kind: IdKind::$kind,
                    id: &self.$member,
                    rule: Introduction::$rule,
                }),*])
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
    parent_call_id: |_f| None,
    ui_event: None,
    introduces: [],
    feature: None,
});
server_facts!(UiStateSnapshot {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: None,
    introduces: [],
    feature: None,
});
server_facts!(UiStateUpdated {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: None,
    introduces: [],
    feature: None,
});
server_facts!(UiStatePatch {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: None,
    introduces: [],
    feature: None,
});
server_facts!(UserMessageAccepted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |_f| None,
    ui_event: Some(UserMessageAccepted),
    // The turn and its user message item are new (`STATE-010`).
    introduces: [Invocation(invocation_id) Always, Item(item_id) Always],
    feature: None,
});
server_facts!(RunStarted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |_f| None,
    ui_event: Some(RunStarted),
    introduces: [],
    feature: None,
});
server_facts!(AssistantMessage {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |f| f.parent_call_id.as_ref(),
    ui_event: Some(AssistantMessage),
    // A whole message appends its item; the message that ends a stream names the stream's item.
    introduces: [Item(item_id) UnlessOpenStream],
    feature: None,
});
server_facts!(AssistantMessageDelta {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |f| f.parent_call_id.as_ref(),
    ui_event: Some(AssistantMessageDelta),
    // The first delta of a stream appends its item; the later ones name it (`STATE-042`).
    introduces: [Item(item_id) UnlessHeld],
    feature: None,
});
server_facts!(ReasoningDelta {
    carries_state: true,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |f| f.parent_call_id.as_ref(),
    ui_event: Some(ReasoningDelta),
    // The first delta of a reasoning stream appends its item; the later ones name it (`STATE-054`).
    introduces: [Item(item_id) UnlessHeld],
    feature: Some("reasoning"),
});
server_facts!(Reasoning {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |f| f.parent_call_id.as_ref(),
    ui_event: Some(Reasoning),
    // A whole reasoning appends its item; the one that ends a stream names the stream's item.
    introduces: [Item(item_id) UnlessOpenStream],
    feature: Some("reasoning"),
});
server_facts!(ToolCall {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |f| f.parent_call_id.as_ref(),
    ui_event: Some(ToolCall),
    // The call is new; its id is also its item's (`STATE-013`).
    introduces: [ToolCall(tool_call_id) Always],
    feature: None,
});
server_facts!(ToolProgress {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(ToolProgress),
    introduces: [],
    feature: None,
});
server_facts!(ToolOutput {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(ToolOutput),
    // Its item's id is derived from the call's (`STATE-015`, `ID-003`): nothing new is chosen.
    introduces: [],
    feature: None,
});
server_facts!(ToolCallComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| f.in_reply_to.as_ref(),
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(ToolCallComplete),
    introduces: [],
    feature: None,
});
server_facts!(ToolCallDismiss {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| f.in_reply_to.as_ref(),
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(ToolCallDismiss),
    introduces: [],
    feature: None,
});
server_facts!(RunComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |_f| None,
    ui_event: Some(RunComplete),
    introduces: [],
    feature: None,
});
server_facts!(RewindComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(RewindComplete),
    introduces: [],
    feature: None,
});
server_facts!(RetryAccepted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |_f| None,
    ui_event: Some(RetryAccepted),
    // A retry runs the same turn again (`STATE-049`): its invocation is not new.
    introduces: [],
    feature: None,
});
server_facts!(CancelAccepted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |f| Some(&f.invocation_id),
    parent_call_id: |_f| None,
    ui_event: None,
    introduces: [],
    feature: None,
});
server_facts!(HistoryPage {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |f| Some(&f.in_reply_to),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: None,
    // Its items were introduced before; a page only shows them again (`WINDOW-008`).
    introduces: [],
    feature: None,
});
server_facts!(SubagentStarted {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(SubagentStarted),
    // The host and the thread were named before (a continued thread, `STATE-070`) or are the
    // call's: a sub-agent's thread id is no id the session keeps unique (`ID-002`).
    introduces: [],
    feature: Some("subagents"),
});
server_facts!(SubagentComplete {
    carries_state: false,
    seq: |f| Some(f.seq),
    set_seq: |f, s| f.seq = s,
    in_reply_to: |_f| None,
    tool_call_id: |f| Some(&f.tool_call_id),
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: Some(SubagentComplete),
    introduces: [],
    feature: Some("subagents"),
});
server_facts!(ErrorFrame {
    carries_state: false,
    seq: |f| f.seq,
    set_seq: |f, s| f.seq = Some(s),
    in_reply_to: |f| f.in_reply_to.as_ref(),
    tool_call_id: |_f| None,
    invocation_id: |_f| None,
    parent_call_id: |_f| None,
    ui_event: None,
    introduces: [],
    feature: None,
});

/// Implements [`ClientFrameFacts`] for one frame type; every key is required. `names` is
/// `Kind(member)` for the call, item or invocation the frame acts on, or nothing.
macro_rules! client_facts {
    ($ty:ty {
        id: |$a:ident| $id:expr,
        answered_by: [$($answer:literal),+ $(,)?],
        names: [$($kind:ident($member:ident))?] $(,)?
    }) => {
        impl ClientFrameFacts for $ty {
            fn kind() -> ClientFrameKind {
                ClientFrameKind {
                    answered_by: &[$($answer),+],
                    names: None $(.or(Some(IdMember { kind: IdKind::$kind, member: stringify!($member) })))?,
                }
            }
            fn id(&self) -> &Id {
                let $a = self;
                $id
            }
            fn answered_by(&self) -> &'static [&'static str] {
                &[$($answer),+]
            }
            fn named_id(&self) -> Option<NamedId<'_>> {
                None $(.or(Some(NamedId { kind: IdKind::$kind, id: &self.$member })))?
            }
        }
    };
}

client_facts!(SessionHello { id: |f| &f.id, answered_by: ["session.welcome"], names: [] });
client_facts!(UserMessage { id: |f| &f.id, answered_by: ["chat.user_message_accepted"], names: [] });
client_facts!(ToolCallResponse {
    id: |f| &f.id,
    answered_by: ["chat.tool_call_complete", "chat.tool_call_dismiss"],
    names: [ToolCall(tool_call_id)],
});
client_facts!(Rewind {
    id: |f| &f.id,
    answered_by: ["chat.rewind_complete"],
    names: [Invocation(before_invocation_id)],
});
client_facts!(Retry { id: |f| &f.id, answered_by: ["chat.retry_accepted"], names: [Item(after_item_id)] });
client_facts!(Cancel { id: |f| &f.id, answered_by: ["chat.cancel_accepted"], names: [Invocation(invocation_id)] });
client_facts!(HistoryRequest { id: |f| &f.id, answered_by: ["chat.history_page"], names: [Item(before)] });
