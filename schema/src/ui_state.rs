//! `UiState` — the server-owned view a client renders, and nothing else.
//!
//! Spec: `spec/ui-state.md`. The reducer in [`crate::reducer`] is the reference semantics.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::chat::tool_call::{DisplayMode, InteractionType};
use crate::chat::tool_call_dismiss::Initiator;
use crate::chat::tool_output::ApprovalDecision;
use crate::response_schema::ResponseSchema;
use crate::Id;

/// The whole view of a session: display items in display order, and the state of the current run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UiState {
    /// Display items in the order the client shows them.
    pub items: Vec<DisplayItem>,
    /// The current run.
    pub run: RunState,
    /// What the session's runs used (since 1.3, feature `usage`): absent until the first run
    /// slice that reported usage (`STATE-056`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub usage: Option<crate::usage::UsageState>,
}

impl UiState {
    /// The open text stream (`STATE-042`): the last item, when it is an `assistant_markdown` item
    /// still `streaming`. An open reasoning stream (since 1.3) is [`UiState::open_reasoning`];
    /// [`UiState::open_stream_id`] names either. The reducer keeps an open stream last (`STATE-046`), so this is the only
    /// place one can be; a `streaming` item anywhere else (only a hand-made state has one) is not
    /// open and never grows.
    pub fn open_stream(&self) -> Option<&AssistantMarkdownItem> {
        match self.items.last() {
            Some(DisplayItem::AssistantMarkdown(m)) if m.streaming => Some(m),
            _ => None,
        }
    }

    /// The open reasoning stream (`STATE-054`): the last item, when it is a `reasoning` item still
    /// `streaming`.
    pub fn open_reasoning(&self) -> Option<&ReasoningItem> {
        match self.items.last() {
            Some(DisplayItem::Reasoning(r)) if r.streaming => Some(r),
            _ => None,
        }
    }

    /// The id of the open stream of either kind, text or reasoning: at most one is open, always
    /// the last item (`STATE-046`, `STATE-060`).
    pub fn open_stream_id(&self) -> Option<&Id> {
        self.open_stream().map(|m| &m.id).or_else(|| self.open_reasoning().map(|r| &r.id))
    }

    /// The view of a connection where `assistant_stream` is not in force (`spec/streaming.md`):
    /// this state without its open streams, the top level's and every transcript's
    /// (`STREAM-011`). It equals the fold of the same events with every delta left out
    /// ([`crate::UiEvent::is_stream_delta`]), because the frame that ends a stream then appends
    /// the whole item (`STATE-012`).
    pub fn without_open_stream(&self) -> UiState {
        let mut items = self.items_without_open_stream().to_vec();
        strip_nested_streams(&mut items);
        UiState { items, run: self.run.clone(), usage: self.usage.clone() }
    }

    /// The top-level items of [`UiState::without_open_stream`], borrowed: every item but the open
    /// stream, text or reasoning (a reasoning stream is no more seen without `assistant_stream`,
    /// `REASON-002`). Transcripts are as they are: where a sub-agent streams, only
    /// [`UiState::without_open_stream`] leaves its stream out.
    pub fn items_without_open_stream(&self) -> &[DisplayItem] {
        match self.open_stream_id() {
            Some(_) => &self.items[..self.items.len() - 1],
            None => &self.items,
        }
    }
}

/// The open stream of a transcript (the top level's, or since 1.3 a sub-agent's): its last item,
/// when that one is `streaming`.
pub fn open_stream_of(items: &[DisplayItem]) -> Option<&Id> {
    match items.last() {
        Some(DisplayItem::AssistantMarkdown(m)) if m.streaming => Some(&m.id),
        Some(DisplayItem::Reasoning(r)) if r.streaming => Some(&r.id),
        _ => None,
    }
}

/// Removes the open stream of every transcript the items host (`STREAM-011`).
fn strip_nested_streams(items: &mut [DisplayItem]) {
    for item in items {
        if let DisplayItem::ToolCall(ToolCallItem { subagent: Some(sub), .. }) = item {
            if open_stream_of(&sub.items).is_some() {
                sub.items.pop();
            }
            strip_nested_streams(&mut sub.items);
        }
    }
}

/// The state of the session's current (or last) run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    /// Where the run is.
    pub status: RunStatus,
    /// The turn the status is about; absent when `idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<Id>,
}

/// Where the session's run is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// No run yet, or the state was rewound (since 1.0).
    #[default]
    Idle,
    /// A run slice is in progress (since 1.0).
    Running,
    /// The turn waits for the user to answer a pending tool call (since 1.0).
    AwaitingInput,
    /// The last turn finished (since 1.0).
    Completed,
    /// The last turn failed (since 1.0).
    Failed,
    /// The last turn was cancelled (since 1.0).
    Cancelled,
}

impl RunStatus {
    /// Whether a run slice is in progress (rewind and new user messages are refused then).
    pub fn is_active(self) -> bool {
        matches!(self, RunStatus::Running)
    }
}

/// One thing the client displays.
// Items live side by side in one Vec and most of them are tool calls, so boxing the large
// variant would add an allocation per call without saving memory.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DisplayItem {
    /// A message the user sent.
    UserMessage(UserMessageItem),
    /// A message from the agent.
    AssistantMarkdown(AssistantMarkdownItem),
    /// A tool call and its lifecycle.
    ToolCall(ToolCallItem),
    /// The output group of a tool call (approvals, stdout, stderr, exit code).
    ToolOutput(ToolOutputItem),
    /// The agent's reasoning (since 1.3, feature `reasoning`, `spec/reasoning.md`).
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    Reasoning(ReasoningItem),
}

impl DisplayItem {
    /// The item's id, unique within the state.
    pub fn id(&self) -> &Id {
        match self {
            DisplayItem::UserMessage(i) => &i.id,
            DisplayItem::AssistantMarkdown(i) => &i.id,
            DisplayItem::ToolCall(i) => &i.id,
            DisplayItem::ToolOutput(i) => &i.id,
            DisplayItem::Reasoning(i) => &i.id,
        }
    }

    /// The turn that produced the item.
    pub fn invocation_id(&self) -> &Id {
        match self {
            DisplayItem::UserMessage(i) => &i.invocation_id,
            DisplayItem::AssistantMarkdown(i) => &i.invocation_id,
            DisplayItem::ToolCall(i) => &i.invocation_id,
            DisplayItem::ToolOutput(i) => &i.invocation_id,
            DisplayItem::Reasoning(i) => &i.invocation_id,
        }
    }
}

/// A message the user sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserMessageItem {
    /// The item id.
    pub id: Id,
    /// The turn the message opened.
    pub invocation_id: Id,
    /// The client's id of the `chat.user_message`.
    pub client_message_id: Id,
    /// The text.
    pub text: String,
    /// When it was accepted (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// A message from the agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssistantMarkdownItem {
    /// The item id.
    pub id: Id,
    /// The turn that produced it.
    pub invocation_id: Id,
    /// The body, CommonMark; while the item streams, the text of its deltas so far.
    pub markdown: String,
    /// Present and `true` only while the message is still streamed (since 1.1, `STATE-042`): the
    /// open stream, always the last item. Absent once the `chat.assistant_message` that ends it
    /// arrived (`STATE-043`), and on every item of a connection without `assistant_stream`.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    pub streaming: bool,
    /// When it was produced (RFC 3339): the ending frame's `ts`, or while it streams its first delta's.
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// The agent's reasoning (since 1.3, `spec/reasoning.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReasoningItem {
    /// The item id.
    pub id: Id,
    /// The turn that produced it.
    pub invocation_id: Id,
    /// The reasoning; while the item streams, the text of its deltas so far; `""` when redacted.
    pub text: String,
    /// Present and `true` only while the reasoning is still streamed: the open stream, always the
    /// last item (`STATE-054`).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub streaming: bool,
    /// Present and `true` when the run withheld the text (`REASON-003`).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub redacted: bool,
    /// The opaque payload for the agent's model, byte for byte as the agent produced it
    /// (`REASON-004`); a client never interprets it.
    #[serde(default, deserialize_with = "crate::chat::reasoning::encrypted", skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = crate::chat::reasoning::MAX_REASONING_PAYLOAD_BYTES),
        regex(pattern = crate::chat::reasoning::ENCRYPTED_PATTERN)
    )]
    pub encrypted: Option<String>,
    /// When it was produced (RFC 3339): the ending frame's `ts`, or while it streams its first delta's.
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
}

/// A tool call with its current status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallItem {
    /// The item id, equal to the `tool_call_id`.
    pub id: Id,
    /// The turn that made the call.
    pub invocation_id: Id,
    /// Name of the tool.
    pub tool_name: String,
    /// The UI component that renders the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_type: Option<String>,
    /// The workflow that owns the component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_name: Option<String>,
    /// What kind of interaction this is.
    pub interaction_type: InteractionType,
    /// Where the client shows it.
    pub display: DisplayMode,
    /// Whether the call waits (or waited) for a client response.
    pub awaiting_response: bool,
    /// Where the call is in its lifecycle.
    pub status: ToolCallStatus,
    /// Arguments for the component or tool.
    pub payload: Map<String, Value>,
    /// The shape of the value the call awaits, from its `chat.tool_call` (since 1.2, `TOOL-022`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    pub response_schema: Option<ResponseSchema>,
    /// The latest progress, while or after running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// One line to show in place of a settled component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The result, once `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// What went wrong, once `failed` or `expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Who dismissed it and why, once `dismissed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dismissal: Option<Dismissal>,
    /// When the call was made (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    #[serde(deserialize_with = "crate::serde_util::date_time")]
    pub ts: String,
    /// When the call settled (RFC 3339), once settled.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::optional_date_time"
    )]
    #[schemars(extend("format" = "date-time"))]
    pub settled_ts: Option<String>,
    /// The sub-agent run the call hosts, with its transcript (since 1.3, feature `subagents`,
    /// `STATE-064`); boxed, as most calls host none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub subagent: Option<Box<SubagentState>>,
}

/// The lifecycle status of a tool call (`spec/tool-calls.md#states`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Waits for the client's response (since 1.0).
    Pending,
    /// The tool is executing (since 1.0).
    Running,
    /// Settled with a result (since 1.0).
    Completed,
    /// Settled with an error (since 1.0).
    Failed,
    /// Closed without a result (since 1.0).
    Dismissed,
    /// Nobody answered in time (since 1.0).
    Expired,
}

impl ToolCallStatus {
    /// Whether the status is final: a settled call never changes again.
    pub fn is_terminal(self) -> bool {
        !matches!(self, ToolCallStatus::Pending | ToolCallStatus::Running)
    }
}

/// The latest progress of a running tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    /// A short status line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How much is done, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<crate::chat::tool_progress::Fraction>,
}

/// Who dismissed a tool call, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dismissal {
    /// Which side asked for it.
    pub initiated_by: Initiator,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The output group of a tool call; it sits right after the call's item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolOutputItem {
    /// The item id: the `tool_call_id` followed by `.output`.
    pub id: Id,
    /// The turn that made the call.
    pub invocation_id: Id,
    /// The tool call this output belongs to.
    pub tool_call_id: Id,
    /// Name of the tool.
    pub tool_name: String,
    /// The command line, if the tool reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Approval decisions in the order they were made.
    pub approvals: Vec<ApprovalDecision>,
    /// Everything the tool wrote to stdout so far.
    pub stdout: String,
    /// Everything the tool wrote to stderr so far.
    pub stderr: String,
    /// The exit code, once the tool exited.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_code: Option<i32>,
}

/// The sub-agent run a tool call hosts (since 1.3, `STATE-064`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentState {
    /// The sub-agent's thread, the same on every call that continues it.
    pub thread_id: Id,
    /// What the calling agent calls the sub-agent, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the calling agent sent the sub-agent.
    pub input: String,
    /// The earlier call whose thread this run continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<Id>,
    /// Present and `true` when `input` answered the thread's pending `return` call.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub answers_return: bool,
    /// Where the run is.
    pub status: SubagentStatus,
    /// The transcript: the sub-agent's items in display order, at most one open stream, its last.
    pub items: Vec<DisplayItem>,
    /// The sub-agent's final answer, once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// Present and `true` when the run ended by calling its `return` tool.
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub returned: bool,
    /// On a windowed connection, the transcript's cursor: the id of its oldest item of the window
    /// (`WINDOW-015`); absent when the view holds the whole transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Id>,
    /// On a windowed connection whose view leaves items of the transcript out, how many items the
    /// transcript holds as the connection is shown it (`WINDOW-015`).
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub total: Option<u64>,
}

/// Where a sub-agent run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubagentStatus {
    /// The run goes on: its transcript may grow (since 1.3).
    Running,
    /// The run finished (since 1.3).
    Completed,
    /// The run failed (since 1.3).
    Failed,
    /// The run was cancelled (since 1.3, `SUBAGENT-010`).
    Cancelled,
}

impl From<crate::chat::subagent_complete::SubagentEnd> for SubagentStatus {
    fn from(end: crate::chat::subagent_complete::SubagentEnd) -> Self {
        match end {
            crate::chat::subagent_complete::SubagentEnd::Completed => SubagentStatus::Completed,
            crate::chat::subagent_complete::SubagentEnd::Failed => SubagentStatus::Failed,
            crate::chat::subagent_complete::SubagentEnd::Cancelled => SubagentStatus::Cancelled,
        }
    }
}
