//! The scripted agent of the conformance driver profile.
//!
//! Spec: `spec/conformance-profile.md`. A backend in conformance mode runs this script through
//! its real pipeline (persistence, reducer, transport) in place of its model.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::chat::reasoning::{ENCRYPTED_PATTERN, MAX_REASONING_PAYLOAD_BYTES};
use crate::chat::tool_call::{DisplayMode, InteractionType};
use crate::chat::tool_output::ApprovalDecision;
use crate::chat::tool_progress::Fraction;
use crate::response_schema::ResponseSchema;
use crate::usage::Usage;
use crate::version::ProtocolVersion;

use crate::subagent::MAX_SUBAGENT_DEPTH;
use crate::Id;

/// A whole script: `turns[n]` answers the n-th user message the session accepts (rewound ones included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentScript {
    /// One entry per accepted user message, in order.
    pub turns: Vec<ScriptTurn>,
}

/// What the agent does in answer to one user message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// Steps in order. A turn without an `end` step ends `completed`.
    pub steps: Vec<ScriptStep>,
    /// What the agent plays when the turn is retried (since 1.1, `SCRIPT-020`): the k-th accepted
    /// `chat.retry` of the turn, counted from 0 over the session's log (`SCRIPT-023`), plays
    /// `retries[k]` in a new run slice; without a `retries[k]` that slice ends at once with
    /// `chat.run_complete` `status: "failed"` and `reason: "script_exhausted"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-chatwire-since" = "1.1"))]
    pub retries: Vec<ScriptRetry>,
}

impl ScriptTurn {
    /// A turn of these steps, with no retries.
    pub fn new(steps: Vec<ScriptStep>) -> Self {
        ScriptTurn { steps, retries: Vec::new() }
    }
}

/// What the agent plays on one retry of a turn (since 1.1, `spec/conformance-profile.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.1"))]
pub struct ScriptRetry {
    /// Steps in order, with the rules of a turn's steps. Without an `end` step the slice ends `completed`.
    pub steps: Vec<ScriptStep>,
}

/// One step of a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptStep {
    /// Send an assistant message (`chat.assistant_message`), streamed first where `chunks` is
    /// given and `assistant_stream` is in force (`SCRIPT-019`).
    Say {
        /// The message body, CommonMark.
        markdown: String,
        /// The chunks to stream, one `chat.assistant_message_delta` each, in order (since 1.1):
        /// each non-empty, at most [`MAX_SAY_CHUNKS`], their concatenation exactly `markdown`; an
        /// empty list (beside an empty `markdown`) plays as a `say` without chunks (`SCRIPT-024`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        chunks: Option<Vec<String>>,
        /// How long to wait before each chunk after the first, in milliseconds (at most 60000)
        /// (since 1.1); default 0.
        #[serde(
            default,
            deserialize_with = "crate::serde_util::optional_integer",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(extend("x-chatwire-since" = "1.1"))]
        chunk_delay_ms: Option<u64>,
    },
    /// Make several tool calls at once, in call order, then settle them (`SCRIPT-010`).
    ToolCalls {
        /// The calls, in call order.
        calls: Vec<ScriptToolCall>,
        /// Indices of the calls that settle by themselves (every outcome but `await_response`),
        /// in the order they settle; default: call order.
        #[serde(
            default,
            deserialize_with = "crate::serde_util::optional_integers",
            skip_serializing_if = "Option::is_none"
        )]
        settle_order: Option<Vec<u32>>,
    },
    /// Pause, with the run still in progress.
    Wait {
        /// How long, in milliseconds (at most 60000).
        #[serde(deserialize_with = "crate::serde_util::integer")]
        ms: u64,
    },
    /// End the turn.
    End {
        /// How the turn ends.
        status: ScriptEnd,
        /// The error text for `failed`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Reason (since 1.3, `SCRIPT-027`): one `chat.reasoning`, streamed first as one
    /// `chat.reasoning_delta` per chunk where `chunks` is given and `assistant_stream` is in force.
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    Reason {
        /// The whole reasoning; sent as `""` when `redacted`.
        text: String,
        /// The chunks to stream, with the rules of a `say`'s (`TooManyChunks`, `EmptyChunk`,
        /// `ChunksDiffer`); never beside `redacted` (`ChunksOfRedacted`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunks: Option<Vec<String>>,
        /// How long to wait before each chunk after the first, in milliseconds (at most 60000); default 0.
        #[serde(
            default,
            deserialize_with = "crate::serde_util::optional_integer",
            skip_serializing_if = "Option::is_none"
        )]
        chunk_delay_ms: Option<u64>,
        /// The opaque payload the item carries, sent byte for byte (`REASON-004`).
        #[serde(
            default,
            deserialize_with = "crate::chat::reasoning::encrypted",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(length(max = MAX_REASONING_PAYLOAD_BYTES), regex(pattern = ENCRYPTED_PATTERN))]
        encrypted: Option<String>,
        /// The run withholds the text: the frame carries `text: ""` and `redacted: true` (`REASON-003`).
        #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
        redacted: bool,
    },
    /// Report what a model call used (since 1.3, `SCRIPT-028`): no frame; added to the run
    /// slice's usage, which its `chat.run_complete` carries (`USAGE-003`).
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    Usage(Usage),
}

impl ScriptStep {
    /// A `say` of the whole `markdown` at once, not streamed.
    pub fn say(markdown: impl Into<String>) -> Self {
        ScriptStep::Say { markdown: markdown.into(), chunks: None, chunk_delay_ms: None }
    }

    /// The oldest minor whose script schema accepts this step: the `x-chatwire-since` of its op and
    /// members (`spec/versioning.md#since-annotations`). A server speaking an older minor refuses
    /// the hello carrying it as an invalid frame.
    pub fn since(&self) -> ProtocolVersion {
        let minor = match self {
            ScriptStep::Reason { .. } | ScriptStep::Usage(_) => 3,
            ScriptStep::ToolCalls { calls, .. } if calls.iter().any(|c| c.subagent.is_some()) => 3,
            ScriptStep::ToolCalls { calls, .. } if calls.iter().any(|c| c.response_schema.is_some()) => 2,
            ScriptStep::Say { chunks, chunk_delay_ms, .. } if chunks.is_some() || chunk_delay_ms.is_some() => 1,
            ScriptStep::Say { .. }
            | ScriptStep::ToolCalls { .. }
            | ScriptStep::Wait { .. }
            | ScriptStep::End { .. } => 0,
        };
        ProtocolVersion { major: 1, minor }
    }
}

impl AgentScript {
    /// The oldest minor whose script schema accepts the whole script: the newest
    /// [`ScriptStep::since`] of its steps and retries' steps, and 1.1 where a turn has `retries`.
    pub fn since(&self) -> ProtocolVersion {
        let retries = ProtocolVersion { major: 1, minor: 1 };
        let base = ProtocolVersion { major: 1, minor: 0 };
        self.turns
            .iter()
            .flat_map(|t| {
                let own = if t.retries.is_empty() { base } else { retries };
                let steps = t.steps.iter().chain(t.retries.iter().flat_map(|r| r.steps.iter()));
                std::iter::once(own).chain(steps.map(ScriptStep::since))
            })
            .max()
            .unwrap_or(base)
    }
}

/// How a scripted turn ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScriptEnd {
    /// `chat.run_complete` with status `completed`.
    Completed,
    /// `chat.run_complete` with status `failed`.
    Failed,
    /// `chat.run_complete` with status `cancelled`.
    Cancelled,
}

/// One scripted tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptToolCall {
    /// The `tool_name` to send.
    pub tool_name: String,
    /// The `interaction_type` to send.
    pub interaction_type: InteractionType,
    /// The `display` to send.
    pub display: DisplayMode,
    /// The `component_type` to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_type: Option<String>,
    /// The `workflow_name` to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_name: Option<String>,
    /// The `payload` to send.
    #[serde(default)]
    pub payload: Map<String, Value>,
    /// How long the tool runs before its first progress report or settlement, in milliseconds (at most 60000).
    #[serde(default, deserialize_with = "crate::serde_util::integer")]
    pub run_ms: u64,
    /// Progress reports to stream while it runs, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<ScriptProgress>,
    /// Tool-group output to send before it settles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ScriptOutput>,
    /// How the call settles.
    pub outcome: ScriptOutcome,
    /// The `response_schema` to send (since 1.2, `SCRIPT-022`): only on a call whose outcome is
    /// `await_response`; a server sends it only to connections that negotiated 1.2 (`COMPAT-005`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.2"))]
    pub response_schema: Option<ResponseSchema>,
    /// The sub-agent run the call hosts (since 1.3, `SCRIPT-029`): only on a call that runs by
    /// itself and has no `output` (`NotSubagentHost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-chatwire-since" = "1.3"))]
    pub subagent: Option<Box<ScriptSubagent>>,
}

/// One scripted progress report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptProgress {
    /// The status line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How much is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<Fraction>,
}

/// Scripted tool-group output, sent as one `chat.tool_output` per present part (`SCRIPT-011`): a
/// part given a value other than `null`, an empty string included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptOutput {
    /// The command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Approval decisions, one frame each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<ApprovalDecision>,
    /// Standard output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Exit code.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_code: Option<i32>,
}

/// How a scripted tool call settles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptOutcome {
    /// Complete with this result.
    Result {
        /// The result value.
        #[serde(deserialize_with = "crate::serde_util::required_value")]
        value: Value,
        /// The summary line.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// Fail with this error.
    Error {
        /// The error text.
        message: String,
    },
    /// Wait for the client (`awaiting_response: true`); a submit completes it with the submitted value.
    AwaitResponse {
        /// Expire the call if unanswered after this many milliseconds (at most 600000).
        #[serde(
            default,
            deserialize_with = "crate::serde_util::optional_integer",
            skip_serializing_if = "Option::is_none"
        )]
        expire_after_ms: Option<u64>,
        /// The summary line once completed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// The server dismisses the call when its turn in the settle order comes.
    Dismiss {
        /// The dismissal reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl ScriptOutcome {
    /// Whether the call waits for the client.
    pub fn awaits_response(&self) -> bool {
        matches!(self, ScriptOutcome::AwaitResponse { .. })
    }
}

/// Longest `wait` / `run_ms` a script may ask for, in milliseconds.
pub const MAX_SCRIPT_DELAY_MS: u64 = 60_000;
/// Longest `expire_after_ms` a script may ask for.
pub const MAX_EXPIRY_MS: u64 = 600_000;
/// Most `chunks` one `say` step may stream (since 1.1).
pub const MAX_SAY_CHUNKS: usize = 1000;

/// Why a well-formed script cannot run (`invalid_script`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// A `tool_calls` step has no calls.
    #[error("turn {turn} step {step}: tool_calls has no calls")]
    EmptyBatch {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
    },
    /// `settle_order` is not a permutation of the self-settling calls.
    #[error("turn {turn} step {step}: settle_order must list each call that does not await a response exactly once")]
    BadSettleOrder {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
    },
    /// A delay is longer than allowed.
    #[error("turn {turn} step {step}: delay of {ms} ms is over the limit")]
    DelayTooLong {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// The delay asked for.
        ms: u64,
    },
    /// A step follows `end`.
    #[error("turn {turn} step {step}: nothing may follow an end step")]
    StepAfterEnd {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
    },
    /// A `say` streams more than [`MAX_SAY_CHUNKS`] chunks.
    #[error("turn {turn} step {step}: {count} chunks, more than {max}", max = MAX_SAY_CHUNKS)]
    TooManyChunks {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// How many chunks it has.
        count: usize,
    },
    /// A chunk of a `say` is empty: a delta carries at least one character.
    #[error("turn {turn} step {step}: chunk {chunk} is empty")]
    EmptyChunk {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the chunk in `chunks`.
        chunk: usize,
    },
    /// The chunks of a `say`, concatenated, are not its `markdown`.
    #[error("turn {turn} step {step}: the chunks do not concatenate to the markdown")]
    ChunksDiffer {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
    },
    /// A step of a turn's retry breaks a rule; `error` locates it within the retry's steps.
    #[error("turn {turn} retry {retry}: {error}")]
    InRetry {
        /// Turn index.
        turn: usize,
        /// Index of the retry in `retries`.
        retry: usize,
        /// The broken rule, its `turn` the same and its `step` an index into the retry's steps.
        error: Box<ScriptError>,
    },
    /// A call that does not await a response carries a `response_schema` (`SCRIPT-022`): nothing
    /// would ever be checked against it.
    #[error("turn {turn} step {step} call {call}: response_schema is only for a call whose outcome is await_response")]
    SchemaWithoutResponse {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
    },
    /// A `reason` step with `redacted: true` has `chunks` (since 1.3): a redacted reasoning is
    /// never streamed.
    #[error("turn {turn} step {step}: a redacted reason step has no chunks")]
    ChunksOfRedacted {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
    },
    /// A `usage` step's `cost` names another currency than an earlier one of the script (since
    /// 1.3, `USAGE-002`): one session, one currency.
    #[error("turn {turn} step {step}: cost in {found}, but the script's costs are in {expected}")]
    MixedCurrencies {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// The currency of the script's first cost.
        expected: String,
        /// This step's.
        found: String,
    },
    /// A call that carries `subagent` awaits a response or has `output` (since 1.3, rule 12): a
    /// host runs by itself and its output is its transcript.
    #[error("turn {turn} step {step} call {call}: a sub-agent host settles by itself (result, error or dismiss) and has no output")]
    NotSubagentHost {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
    },
    /// A `subagent`'s steps hold an `end` step (since 1.3, rule 13): a sub-agent ends by its `end`.
    #[error("turn {turn} step {step}: a sub-agent's steps hold no end step")]
    EndInSubagent {
        /// Turn index.
        turn: usize,
        /// Index of the `end` step in the sub-agent's steps.
        step: usize,
    },
    /// A `subagent` runs more than `MAX_SUBAGENT_DEPTH` levels below the top level (since 1.3,
    /// rule 13, `STATE-069`).
    #[error("turn {turn} step {step} call {call}: a sub-agent at this depth may not host another")]
    SubagentTooDeep {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
    },
    /// A `subagent` with `continue: true` names a thread no call before it hosts (since 1.3, rule 14).
    #[error("turn {turn} step {step} call {call}: continues thread {thread}, which no earlier call hosts")]
    UnknownThread {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
        /// The thread.
        thread: String,
    },
    /// A `subagent` without `continue` names a thread a call before it hosts (since 1.3, rule 14).
    #[error("turn {turn} step {step} call {call}: starts thread {thread}, which an earlier call hosts")]
    ThreadReused {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
        /// The thread.
        thread: String,
    },
    /// A `subagent`'s `end` carries `returned: true` with `status: "failed"` (since 1.3, rule 14,
    /// `STATE-075`).
    #[error("turn {turn} step {step} call {call}: only a completed sub-agent run has returned")]
    ReturnedNotCompleted {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
    },
    /// A nested step of a call's `subagent` breaks a rule (since 1.3); `error` locates it within
    /// the sub-agent's steps.
    #[error("turn {turn} step {step} call {call} subagent: {error}")]
    InSubagent {
        /// Turn index.
        turn: usize,
        /// Step index of the host's `tool_calls`.
        step: usize,
        /// Index of the host in `calls`.
        call: usize,
        /// The broken rule, its `turn` the same and its `step` an index into the sub-agent's steps.
        error: Box<ScriptError>,
    },
    /// A `ui_tool` or `ui_surface` call has no non-empty `component_type` (`SCRIPT-018`): the
    /// server could not send it without breaking `TOOL-005`.
    #[error("turn {turn} step {step} call {call}: a ui_tool or ui_surface call needs a non-empty component_type")]
    MissingComponentType {
        /// Turn index.
        turn: usize,
        /// Step index.
        step: usize,
        /// Index of the call in `calls`.
        call: usize,
    },
}

impl AgentScript {
    /// Checks what the schema cannot express; a backend answers `invalid_script` on error.
    /// These are all the rules, listed in `spec/conformance-profile.md#script-validity`; the
    /// limits are inclusive.
    pub fn validate(&self) -> Result<(), ScriptError> {
        // The script's one currency (rule 11), fixed by its first cost, retries included, and its
        // threads (rule 14), both in reading order.
        let mut walk = Walk::default();
        for (turn, t) in self.turns.iter().enumerate() {
            validate_steps(turn, &t.steps, &mut walk)?;
            for (retry, r) in t.retries.iter().enumerate() {
                validate_steps(turn, &r.steps, &mut walk).map_err(|error| ScriptError::InRetry {
                    turn,
                    retry,
                    error: Box::new(error),
                })?;
            }
        }
        Ok(())
    }
}

/// The rules of one list of steps, a turn's, one of its retries' or a sub-agent's; `walk`: what the
/// script's earlier steps fixed (its currency, its threads) and the depth of these steps.
fn validate_steps(turn: usize, steps: &[ScriptStep], walk: &mut Walk) -> Result<(), ScriptError> {
    let mut ended = false;
    for (step, s) in steps.iter().enumerate() {
        if ended {
            return Err(ScriptError::StepAfterEnd { turn, step });
        }
        match s {
            ScriptStep::Say { markdown, chunks, chunk_delay_ms } => {
                validate_chunks(turn, step, markdown, chunks.as_deref(), *chunk_delay_ms)?
            }
            ScriptStep::Reason { text, chunks, chunk_delay_ms, redacted, .. } => {
                if *redacted && chunks.is_some() {
                    return Err(ScriptError::ChunksOfRedacted { turn, step });
                }
                validate_chunks(turn, step, text, chunks.as_deref(), *chunk_delay_ms)?
            }
            ScriptStep::Usage(usage) => {
                if let Some(cost) = &usage.cost {
                    match &walk.currency {
                        Some(expected) if *expected != cost.currency => {
                            return Err(ScriptError::MixedCurrencies {
                                turn,
                                step,
                                expected: expected.clone(),
                                found: cost.currency.clone(),
                            })
                        }
                        Some(_) => {}
                        None => walk.currency = Some(cost.currency.clone()),
                    }
                }
            }
            ScriptStep::Wait { ms } => {
                if *ms > MAX_SCRIPT_DELAY_MS {
                    return Err(ScriptError::DelayTooLong { turn, step, ms: *ms });
                }
            }
            ScriptStep::End { .. } => ended = true,
            ScriptStep::ToolCalls { calls, settle_order } => {
                if calls.is_empty() {
                    return Err(ScriptError::EmptyBatch { turn, step });
                }
                for (call, c) in calls.iter().enumerate() {
                    let needs_component =
                        matches!(c.interaction_type, InteractionType::UiTool | InteractionType::UiSurface);
                    if needs_component && c.component_type.as_deref().is_none_or(str::is_empty) {
                        return Err(ScriptError::MissingComponentType { turn, step, call });
                    }
                    if c.response_schema.is_some() && !c.outcome.awaits_response() {
                        return Err(ScriptError::SchemaWithoutResponse { turn, step, call });
                    }
                    if c.run_ms > MAX_SCRIPT_DELAY_MS {
                        return Err(ScriptError::DelayTooLong { turn, step, ms: c.run_ms });
                    }
                    if let ScriptOutcome::AwaitResponse { expire_after_ms: Some(ms), .. } = c.outcome {
                        if ms > MAX_EXPIRY_MS {
                            return Err(ScriptError::DelayTooLong { turn, step, ms });
                        }
                    }
                    if let Some(subagent) = &c.subagent {
                        validate_host(CallAt { turn, step, call }, c, subagent, walk)?;
                    }
                }
                if let Some(order) = settle_order {
                    let expected: HashSet<u32> = self_settling(calls).collect();
                    let given: HashSet<u32> = order.iter().copied().collect();
                    if given.len() != order.len() || given != expected {
                        return Err(ScriptError::BadSettleOrder { turn, step });
                    }
                }
            }
        }
    }
    Ok(())
}

/// Rules 7 and 8 (and 10 for a `reason` step): the chunks of a step whose whole text is `text`.
fn validate_chunks(
    turn: usize,
    step: usize,
    text: &str,
    chunks: Option<&[String]>,
    chunk_delay_ms: Option<u64>,
) -> Result<(), ScriptError> {
    if let Some(chunks) = chunks {
        if chunks.len() > MAX_SAY_CHUNKS {
            return Err(ScriptError::TooManyChunks { turn, step, count: chunks.len() });
        }
        if let Some(chunk) = chunks.iter().position(String::is_empty) {
            return Err(ScriptError::EmptyChunk { turn, step, chunk });
        }
        let total: usize = chunks.iter().map(String::len).sum();
        if total != text.len() || chunks.concat() != text {
            return Err(ScriptError::ChunksDiffer { turn, step });
        }
    }
    match chunk_delay_ms {
        Some(ms) if ms > MAX_SCRIPT_DELAY_MS => Err(ScriptError::DelayTooLong { turn, step, ms }),
        _ => Ok(()),
    }
}

/// Indices of the calls that settle without the client.
pub fn self_settling(calls: &[ScriptToolCall]) -> impl Iterator<Item = u32> + '_ {
    calls.iter().enumerate().filter(|(_, c)| !c.outcome.awaits_response()).map(|(i, _)| i as u32)
}

/// The order in which the self-settling calls of a batch settle.
pub fn settle_sequence(calls: &[ScriptToolCall], settle_order: Option<&[u32]>) -> Vec<u32> {
    match settle_order {
        Some(order) => order.to_vec(),
        None => self_settling(calls).collect(),
    }
}

// Sub-agents (since 1.3): the `subagent` member and rules 12-14.

/// The sub-agent run a scripted call hosts (since 1.3, `SCRIPT-029`): played after the call's
/// `chat.tool_call` and progress as `chat.subagent_started`, the nested steps, then
/// `chat.subagent_complete`; the call's `outcome` settles it afterwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSubagent {
    /// The sub-agent's `thread_id`.
    pub thread: Id,
    /// Continue `thread` from its latest call (`SUBAGENT-004`) instead of starting it.
    #[serde(default, rename = "continue", skip_serializing_if = "crate::serde_util::is_false")]
    pub continues: bool,
    /// The `name` of `chat.subagent_started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The `input` of `chat.subagent_started`.
    pub input: String,
    /// The sub-agent's steps, each played as at top level with the host as `parent_call_id`:
    /// `say`, `reason`, `tool_calls`, `wait`, `usage`; never `end` (`EndInSubagent`).
    #[serde(default)]
    pub steps: Vec<ScriptStep>,
    /// How the run ends: its `chat.subagent_complete`.
    pub end: ScriptSubagentEnd,
}

/// How a scripted sub-agent run ends: the members of its `chat.subagent_complete`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSubagentEnd {
    /// The run's status.
    pub status: ScriptSubagentStatus,
    /// The sub-agent's final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The run ended by calling its `return` tool; only with `completed` (`ReturnedNotCompleted`).
    #[serde(default, skip_serializing_if = "crate::serde_util::is_false")]
    pub returned: bool,
}

/// How a scripted sub-agent run ends (a cancel, not the script, ends one `cancelled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScriptSubagentStatus {
    /// `chat.subagent_complete` with status `completed`.
    Completed,
    /// `chat.subagent_complete` with status `failed`.
    Failed,
}

/// Where a call sits, for its errors: turn, step and call index.
#[derive(Clone, Copy)]
struct CallAt {
    pub turn: usize,
    pub step: usize,
    pub call: usize,
}

/// What validation carries from one step to the next across the whole script, in its reading
/// order (turns in order, a turn's steps before its retries, nested steps where they stand).
#[derive(Default)]
struct Walk {
    /// The script's one currency (rule 11), once a cost named it.
    pub currency: Option<String>,
    /// The threads hosted so far (rule 14).
    pub threads: HashSet<Id>,
    /// The depth of the steps being read: 0 for a turn's, d for a depth-d sub-agent's.
    pub depth: usize,
}

/// Rules 12–14 for a call that carries `subagent`, then its nested steps by rules 1–11 (an error
/// among them located by [`ScriptError::InSubagent`]).
fn validate_host(
    at: CallAt,
    call: &ScriptToolCall,
    subagent: &ScriptSubagent,
    walk: &mut Walk,
) -> Result<(), ScriptError> {
    let CallAt { turn, step, call: index } = at;
    if call.outcome.awaits_response() || call.output.is_some() {
        return Err(ScriptError::NotSubagentHost { turn, step, call: index });
    }
    if walk.depth + 1 > MAX_SUBAGENT_DEPTH {
        return Err(ScriptError::SubagentTooDeep { turn, step, call: index });
    }
    let known = walk.threads.contains(&subagent.thread);
    match (subagent.continues, known) {
        (true, false) => {
            return Err(ScriptError::UnknownThread { turn, step, call: index, thread: subagent.thread.to_string() })
        }
        (false, true) => {
            return Err(ScriptError::ThreadReused { turn, step, call: index, thread: subagent.thread.to_string() })
        }
        _ => {}
    }
    if subagent.end.returned && subagent.end.status != ScriptSubagentStatus::Completed {
        return Err(ScriptError::ReturnedNotCompleted { turn, step, call: index });
    }
    walk.threads.insert(subagent.thread.clone());
    if let Some(end) = subagent.steps.iter().position(|s| matches!(s, ScriptStep::End { .. })) {
        let error = Box::new(ScriptError::EndInSubagent { turn, step: end });
        return Err(ScriptError::InSubagent { turn, step, call: index, error });
    }
    walk.depth += 1;
    let nested = validate_steps(turn, &subagent.steps, walk);
    walk.depth -= 1;
    nested.map_err(|error| ScriptError::InSubagent { turn, step, call: index, error: Box::new(error) })
}
