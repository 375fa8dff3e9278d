//! Every refusal of the reducer (`spec/ui-state.md#refusals`): [`ReduceError`], each variant
//! naming the rule it reports, and the table of them exported to the other languages' reducers.

use crate::chat::run_complete::RunCompleteStatus;
use crate::ui_state::ToolCallStatus;
use crate::Id;

/// Why an event cannot be applied to a state. Each names the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReduceError {
    /// An item with this id is already in the state (`STATE-020`).
    #[error("an item with id {0} already exists")]
    DuplicateItemId(Id),
    /// A user message reused an invocation id that is already in the state (`STATE-021`).
    #[error("invocation {0} already exists")]
    InvocationReused(Id),
    /// The event needs a run slice of this invocation in progress (`STATE-022`).
    #[error("no run of invocation {0} is in progress")]
    NotInRun(Id),
    /// A run slice or user message arrived while a run slice is in progress (`STATE-023`).
    #[error("a run of invocation {0} is already in progress")]
    RunInProgress(Id),
    /// The invocation is not in the state (`STATE-024`).
    #[error("unknown invocation {0}")]
    UnknownInvocation(Id),
    /// The tool call is not in the state (`STATE-025`).
    #[error("unknown tool call {0}")]
    UnknownToolCall(Id),
    /// The tool call has settled and can never change again (`STATE-026`).
    #[error("tool call {id} already settled as {status:?}")]
    AlreadySettled {
        /// The call.
        id: Id,
        /// Its terminal status.
        status: ToolCallStatus,
    },
    /// Progress for a call that is not running (`STATE-027`).
    #[error("tool call {0} is not running")]
    NotRunning(Id),
    /// Expiry of a call that does not wait for a response (`STATE-028`).
    #[error("tool call {0} does not await a response, so it cannot expire")]
    NotAwaiting(Id),
    /// `corr` differs from `tool_call_id` (`STATE-029`).
    #[error("corr {corr} differs from tool_call_id {id}")]
    CorrMismatch {
        /// The tool call id.
        id: Id,
        /// The alias sent.
        corr: Id,
    },
    /// A run ended `awaiting_input` without a pending call to answer (`STATE-030`).
    #[error("run of invocation {0} ended awaiting input but no tool call of it is pending")]
    NothingAwaited(Id),
    /// A run slice ended while calls were still open (`STATE-031`).
    #[error("run of invocation {invocation_id} ended {status:?} while tool calls are open: {open:?}")]
    OpenToolCalls {
        /// The invocation.
        invocation_id: Id,
        /// How it claimed to end.
        status: RunCompleteStatus,
        /// The calls still pending or running (pending ones are allowed for `awaiting_input`).
        open: Vec<Id>,
    },
    /// A new turn began while earlier tool calls are still open (`STATE-032`).
    #[error("a new turn began while tool calls are open: {0:?}")]
    OpenToolCallsAtNewTurn(Vec<Id>),
    /// `removed_invocation_ids` of a rewind differs from what the cut removes (`STATE-033`).
    #[error("rewind removes {expected:?} but the frame says {claimed:?}")]
    RewindMismatch {
        /// What the cut removes.
        expected: Vec<Id>,
        /// What the frame claimed.
        claimed: Vec<Id>,
    },
    /// The tool call id is too long to derive its output item's id (`STATE-015`).
    #[error("tool call id {0} is too long to name its output item")]
    OutputIdTooLong(Id),
    /// A run slice started for a turn other than the latest one (`STATE-034`).
    #[error("invocation {0} is not the latest turn, so no run of it can start")]
    StaleInvocation(Id),
    /// A `ui_tool` or `ui_surface` call without the component that renders it (`STATE-035`).
    #[error("tool call {0} is a ui_tool or ui_surface but has no component_type")]
    MissingComponentType(Id),
    /// A delta names an item that exists but is not the open stream of its invocation (`STATE-045`).
    #[error("item {0} exists and is not an open stream of this invocation")]
    NotStreaming(Id),
    /// A stream is open, and the event is a tool call, the end of the run slice, or a message or
    /// delta of another item (`STATE-046`); the error names the open stream.
    #[error("assistant message {0} is still streaming")]
    StreamOpen(Id),
    /// The message that ends a stream carries a text other than the one its deltas built (`STATE-047`).
    #[error("the text ending stream {0} differs from the text its deltas built")]
    StreamTextMismatch(Id),
    /// A retry names an item the state does not hold (`STATE-048`).
    #[error("unknown item {0}")]
    UnknownItem(Id),
    /// A retry names an item outside the latest turn, or a turn other than the item's (`STATE-049`).
    #[error("item {0} is not in the latest turn named by the retry")]
    NotInLatestTurn(Id),
    /// A retry would keep tool calls that are still open (`STATE-050`).
    #[error("a retry would keep open tool calls: {0:?}")]
    OpenCallKept(Vec<Id>),
    /// `removed_item_ids` of a retry differs from the items the cut removes (`STATE-051`).
    #[error("retry removes {expected:?} but the frame says {claimed:?}")]
    RetryMismatch {
        /// The ids of the items after the cut, in display order.
        expected: Vec<Id>,
        /// What the frame claimed.
        claimed: Vec<Id>,
    },
    /// A reasoning delta names an item that exists but is not the open reasoning stream of its
    /// invocation (`STATE-058`).
    #[error("item {0} exists and is not an open reasoning stream of this invocation")]
    NotReasoningStream(Id),
    /// A cost in another currency than the session's (`STATE-059`); the error names it.
    #[error("usage cost in {0}, another currency than the session's")]
    UsageCurrencyMismatch(String),
    /// A stream is open and the event is a reasoning frame of another item, or a reasoning stream
    /// is open and the event a tool call, the end of the run slice, or an assistant message or
    /// delta (`STATE-060`); the error names the open stream.
    #[error("stream {0} is still open")]
    ReasoningStreamOpen(Id),
    /// The reasoning that ends a stream carries a text other than its deltas built (`STATE-061`).
    #[error("the text ending reasoning stream {0} differs from the text its deltas built")]
    ReasoningTextMismatch(Id),
    /// A redacted reasoning carries text (`STATE-062`).
    #[error("reasoning {0} is redacted but carries text")]
    RedactedWithText(Id),
    /// A usage sum of the run slice of this invocation would exceed 2^53 − 1 (`STATE-063`).
    #[error("usage of invocation {0} makes a sum exceed 2^53 - 1")]
    UsageOverflow(Id),
    /// A sub-agent started on a call that is not running by itself, already hosts one, or has
    /// output (`STATE-068`).
    #[error("tool call {0} cannot host a sub-agent")]
    NotSubagentHost(Id),
    /// A sub-agent would run deeper than `MAX_SUBAGENT_DEPTH` (`STATE-069`).
    #[error("a sub-agent on tool call {0} would run too deep")]
    SubagentTooDeep(Id),
    /// A sub-agent's `continues` or `answers_return` breaks its thread's history (`STATE-070`); the
    /// error names the thread.
    #[error("thread {0} is not continued from its latest call")]
    ThreadMismatch(Id),
    /// An item for, or the end of, a sub-agent run that the call does not host or that ended
    /// (`STATE-071`).
    #[error("tool call {0} hosts no running sub-agent")]
    SubagentNotRunning(Id),
    /// A sub-agent run ended while its transcript had an open stream or an open call (`STATE-072`).
    #[error("the sub-agent of tool call {0} still has an open stream or open calls")]
    SubagentBusy(Id),
    /// A call settled while its sub-agent runs (`STATE-073`).
    #[error("the sub-agent of tool call {0} is still running")]
    SubagentRunning(Id),
    /// Output for a call that hosts a sub-agent (`STATE-074`).
    #[error("tool call {0} hosts a sub-agent, so it has no output of its own")]
    OutputOfHost(Id),
    /// A sub-agent run claimed to end by its `return` tool with a status other than `completed`
    /// (`STATE-075`).
    #[error("the sub-agent of tool call {0} returned but did not complete")]
    ReturnedNotCompleted(Id),
}

/// Declares [`ReduceError::kind`], [`ReduceError::requirement`] and [`ReduceError::RULES`] from one
/// list of `Variant => "rule"`; the matches are exhaustive, so a variant missing here does not
/// compile.
macro_rules! refusal_rules {
    ($($variant:ident => $requirement:literal,)*) => {
        impl ReduceError {
            /// Every refusal, in declaration order: the variant's name (its [`kind`](Self::kind))
            /// and the rule it reports (its [`requirement`](Self::requirement)). Exported to
            /// `fixtures/protocol-facts.json` (`reduce_refusals`) for the other languages' reducers.
            pub const RULES: &'static [(&'static str, &'static str)] = &[$((stringify!($variant), $requirement)),*];

            /// The refusal rule this error reports (`STATE-015`, `STATE-020` … `STATE-035`,
            /// `STATE-045` … `STATE-051`).
            pub fn requirement(&self) -> &'static str {
                match self {
                    $(ReduceError::$variant { .. } => $requirement,)*
                }
            }

            /// The variant's name, the language-neutral name of the refusal (`"DuplicateItemId"`); a
            /// second implementation of the reducer reports the same names (fixtures/reducer-traces).
            pub fn kind(&self) -> &'static str {
                match self {
                    $(ReduceError::$variant { .. } => stringify!($variant),)*
                }
            }
        }
    };
}

refusal_rules! {
    DuplicateItemId => "STATE-020",
    InvocationReused => "STATE-021",
    NotInRun => "STATE-022",
    RunInProgress => "STATE-023",
    UnknownInvocation => "STATE-024",
    UnknownToolCall => "STATE-025",
    AlreadySettled => "STATE-026",
    NotRunning => "STATE-027",
    NotAwaiting => "STATE-028",
    CorrMismatch => "STATE-029",
    NothingAwaited => "STATE-030",
    OpenToolCalls => "STATE-031",
    OpenToolCallsAtNewTurn => "STATE-032",
    RewindMismatch => "STATE-033",
    OutputIdTooLong => "STATE-015",
    StaleInvocation => "STATE-034",
    MissingComponentType => "STATE-035",
    NotStreaming => "STATE-045",
    StreamOpen => "STATE-046",
    StreamTextMismatch => "STATE-047",
    UnknownItem => "STATE-048",
    NotInLatestTurn => "STATE-049",
    OpenCallKept => "STATE-050",
    RetryMismatch => "STATE-051",
    NotReasoningStream => "STATE-058",
    UsageCurrencyMismatch => "STATE-059",
    ReasoningStreamOpen => "STATE-060",
    ReasoningTextMismatch => "STATE-061",
    RedactedWithText => "STATE-062",
    UsageOverflow => "STATE-063",
    NotSubagentHost => "STATE-068",
    SubagentTooDeep => "STATE-069",
    ThreadMismatch => "STATE-070",
    SubagentNotRunning => "STATE-071",
    SubagentBusy => "STATE-072",
    SubagentRunning => "STATE-073",
    OutputOfHost => "STATE-074",
    ReturnedNotCompleted => "STATE-075",
}
