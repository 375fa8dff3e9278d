// Generated from schema/json by tools/npm/scripts/generate.mjs. Do not edit: change the Rust
// types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate` in tools/npm.
// The protocol's version, limits and other facts are in ./facts.ts.

/**
 * A whole script: `turns[n]` answers the n-th user message the session accepts (rewound ones included).
 */
export interface AgentScript {
  /**
   * One entry per accepted user message, in order.
   */
  turns: ScriptTurn[];
}

/**
 * A decision on a tool that needed approval.
 *
 * - `approve`: Run the tool (since 1.0).
 * - `deny_continue`: Do not run it; the turn goes on (since 1.0).
 * - `deny_abort`: Do not run it; the turn stops (since 1.0).
 */
export type ApprovalDecision = "approve" | "deny_continue" | "deny_abort";
/** Every value of {@link ApprovalDecision}, in schema order. */
export const APPROVAL_DECISION_VALUES = ["approve", "deny_continue", "deny_abort"] as const satisfies readonly ApprovalDecision[];

/**
 * An optional feature the server offers. Known names: rewind, tool_output, tool_expiry, conformance_script, restart_durability, and since 1.1 ui_state_patch, resume_catch_up, assistant_stream and retry, since 1.2 cancel, multi_attach and state_window, and since 1.3 reasoning, usage and subagents; receivers must tolerate others.
 */
export type Capability = string;

/**
 * How a tool call settled through completion (dismissal has its own frame).
 *
 * - `completed`: The tool produced a result (since 1.0).
 * - `failed`: The tool failed (since 1.0).
 * - `expired`: Nobody answered before the call's deadline (since 1.0).
 */
export type CompletionStatus = "completed" | "failed" | "expired";
/** Every value of {@link CompletionStatus}, in schema order. */
export const COMPLETION_STATUS_VALUES = ["completed", "failed", "expired"] as const satisfies readonly CompletionStatus[];

/**
 * A price: a decimal amount in one currency.
 */
export interface Cost {
  /**
   * A non-negative decimal string without sign or exponent, e.g. `"0.0123"`.
   */
  amount: string;
  /**
   * The ISO 4217 code of the currency, e.g. `"USD"`; one per session (`USAGE-002`).
   */
  currency: string;
}

/**
 * Who dismissed a tool call, and why.
 */
export interface Dismissal {
  /**
   * Which side asked for it.
   */
  initiated_by: Initiator;
  /**
   * Why.
   */
  reason?: string;
}

/**
 * A message the user sent.
 */
export interface DisplayItemUserMessage {
  kind: "user_message";
  /**
   * The item id.
   */
  id: Id;
  /**
   * The turn the message opened.
   */
  invocation_id: Id;
  /**
   * The client's id of the `chat.user_message`.
   */
  client_message_id: Id;
  /**
   * The text.
   */
  text: string;
  /**
   * When it was accepted (RFC 3339).
   */
  ts: string;
}
/**
 * A message from the agent.
 */
export interface DisplayItemAssistantMarkdown {
  kind: "assistant_markdown";
  /**
   * The item id.
   */
  id: Id;
  /**
   * The turn that produced it.
   */
  invocation_id: Id;
  /**
   * The body, CommonMark; while the item streams, the text of its deltas so far.
   */
  markdown: string;
  /**
   * Present and `true` only while the message is still streamed (since 1.1, `STATE-042`): the
   * open stream, always the last item. Absent once the `chat.assistant_message` that ends it
   * arrived (`STATE-043`), and on every item of a connection without `assistant_stream`.
   */
  streaming?: boolean;
  /**
   * When it was produced (RFC 3339): the ending frame's `ts`, or while it streams its first delta's.
   */
  ts: string;
}
/**
 * A tool call and its lifecycle.
 */
export interface DisplayItemToolCall {
  kind: "tool_call";
  /**
   * The item id, equal to the `tool_call_id`.
   */
  id: Id;
  /**
   * The turn that made the call.
   */
  invocation_id: Id;
  /**
   * Name of the tool.
   */
  tool_name: string;
  /**
   * The UI component that renders the call.
   */
  component_type?: string;
  /**
   * The workflow that owns the component.
   */
  workflow_name?: string;
  /**
   * What kind of interaction this is.
   */
  interaction_type: InteractionType;
  /**
   * Where the client shows it.
   */
  display: DisplayMode;
  /**
   * Whether the call waits (or waited) for a client response.
   */
  awaiting_response: boolean;
  /**
   * Where the call is in its lifecycle.
   */
  status: ToolCallStatus;
  /**
   * Arguments for the component or tool.
   */
  payload: {
    [key: string]: unknown;
  };
  /**
   * The shape of the value the call awaits, from its `chat.tool_call` (since 1.2, `TOOL-022`).
   */
  response_schema?: ResponseSchema;
  /**
   * The latest progress, while or after running.
   */
  progress?: Progress;
  /**
   * One line to show in place of a settled component.
   */
  summary?: string;
  /**
   * The result, once `completed`.
   */
  result?: unknown;
  /**
   * What went wrong, once `failed` or `expired`.
   */
  error?: string;
  /**
   * Who dismissed it and why, once `dismissed`.
   */
  dismissal?: Dismissal;
  /**
   * When the call was made (RFC 3339).
   */
  ts: string;
  /**
   * When the call settled (RFC 3339), once settled.
   */
  settled_ts?: string;
  /**
   * The sub-agent run the call hosts, with its transcript (since 1.3, feature `subagents`,
   * `STATE-064`); boxed, as most calls host none.
   */
  subagent?: SubagentState;
}
/**
 * The output group of a tool call (approvals, stdout, stderr, exit code).
 */
export interface DisplayItemToolOutput {
  kind: "tool_output";
  /**
   * The item id: the `tool_call_id` followed by `.output`.
   */
  id: Id;
  /**
   * The turn that made the call.
   */
  invocation_id: Id;
  /**
   * The tool call this output belongs to.
   */
  tool_call_id: Id;
  /**
   * Name of the tool.
   */
  tool_name: string;
  /**
   * The command line, if the tool reported one.
   */
  command?: string;
  /**
   * Approval decisions in the order they were made.
   */
  approvals: ApprovalDecision[];
  /**
   * Everything the tool wrote to stdout so far.
   */
  stdout: string;
  /**
   * Everything the tool wrote to stderr so far.
   */
  stderr: string;
  /**
   * The exit code, once the tool exited.
   */
  exit_code?: number;
}
/**
 * The agent's reasoning (since 1.3, feature `reasoning`, `spec/reasoning.md`).
 */
export interface DisplayItemReasoning {
  kind: "reasoning";
  /**
   * The item id.
   */
  id: Id;
  /**
   * The turn that produced it.
   */
  invocation_id: Id;
  /**
   * The reasoning; while the item streams, the text of its deltas so far; `""` when redacted.
   */
  text: string;
  /**
   * Present and `true` only while the reasoning is still streamed: the open stream, always the
   * last item (`STATE-054`).
   */
  streaming?: boolean;
  /**
   * Present and `true` when the run withheld the text (`REASON-003`).
   */
  redacted?: boolean;
  /**
   * The opaque payload for the agent's model, byte for byte as the agent produced it
   * (`REASON-004`); a client never interprets it.
   */
  encrypted?: string;
  /**
   * When it was produced (RFC 3339): the ending frame's `ts`, or while it streams its first delta's.
   */
  ts: string;
}
/**
 * One thing the client displays.
 */
export type DisplayItem = DisplayItemUserMessage | DisplayItemAssistantMarkdown | DisplayItemToolCall | DisplayItemToolOutput | DisplayItemReasoning;

/**
 * Where a tool call is displayed.
 *
 * - `inline`: Inside the transcript, at the call's position (since 1.0).
 * - `artifact`: In the artifact panel beside the transcript (since 1.0).
 * - `composer`: In place of the message composer (since 1.0).
 * - `view`: As a full view replacing the transcript (since 1.0).
 */
export type DisplayMode = "inline" | "artifact" | "composer" | "view";
/** Every value of {@link DisplayMode}, in schema order. */
export const DISPLAY_MODE_VALUES = ["inline", "artifact", "composer", "view"] as const satisfies readonly DisplayMode[];

/**
 * Every error a v1 server can report (`spec/errors.md#codes`). The list is closed in v1.
 *
 * - `malformed_frame`: The text frame is not valid JSON, or not a JSON object (since 1.0).
 * - `binary_frame`: A binary WebSocket frame arrived; v1 is text only (since 1.0).
 * - `unknown_type`: The frame's `type` is missing or names no client frame (since 1.0).
 * - `invalid_frame`: The frame breaks its schema (missing field, wrong type, unknown field…) (since 1.0).
 * - `frame_too_large`: The frame is larger than `limits.max_frame_bytes` (since 1.0).
 * - `hello_required`: A frame other than `session.hello` arrived before the session was open (since 1.0).
 * - `already_open`: A second `session.hello` arrived on an open connection (since 1.0).
 * - `unsupported_version`: None of the offered versions is supported; `supported_versions` lists the server's (since 1.0).
 * - `resume_rejected`: Resume refused: unknown session or wrong token, deliberately indistinguishable (since 1.0).
 * - `resume_cursor_ahead`: The client's `last_seq` is ahead of anything the server sent on the session (since 1.0).
 * - `script_not_allowed`: A script was sent to a backend not in conformance mode, or on resume (since 1.0).
 * - `invalid_script`: The script is well-formed JSON but cannot run (e.g. a settle order naming a missing call) (since 1.0).
 * - `duplicate_message`: A user message reused the id of one already accepted; nothing new was started (since 1.0).
 * - `run_in_progress`: A user message, rewind or retry arrived while a run slice is in progress (since 1.0).
 * - `unknown_tool_call`: The response names a tool call the session's effective state does not hold (since 1.0).
 * - `tool_call_settled`: The response names a tool call that has already settled (since 1.0).
 * - `tool_call_not_awaiting`: The response names a tool call that does not await a response (since 1.0).
 * - `unknown_invocation`: The rewind names an invocation the effective state does not hold (since 1.0).
 * - `session_taken_over`: Another connection resumed this session; this one is closed (since 1.0).
 * - `internal_error`: The server failed; the session's state is unchanged (since 1.0).
 * - `capability_not_offered`: The frame asks for a capability the server does not list in its welcome, e.g. `chat.retry`
 * without `retry` (since 1.1).
 * - `unknown_item`: The retry names an item the session's effective state does not hold (since 1.1).
 * - `item_not_in_latest_turn`: The retry names an item outside the latest turn (since 1.1).
 * - `retry_keeps_open_call`: The retry would keep a tool call that is still open (since 1.1).
 * - `run_not_active`: The cancel names an invocation that is not the session's current run, or whose run is
 * over (`CANCEL-006`) (since 1.2).
 * - `response_invalid`: The response's value breaks the call's `response_schema`; the message names the failing
 * JSON Pointer, and the call stays pending (`TOOL-023`) (since 1.2).
 * - `session_detached`: More connections attached to the session than it keeps; this one, attached earliest, is
 * closed (`ATTACH-003`) (since 1.2).
 * - `stale_cursor`: A `chat.history_request` names a cursor other than the connection's current one (a cut
 * removed it, or a page already moved past it); nothing changes (`WINDOW-010`) (since 1.2).
 */
export type ErrorCode = "malformed_frame" | "binary_frame" | "unknown_type" | "invalid_frame" | "frame_too_large" | "hello_required" | "already_open" | "unsupported_version" | "resume_rejected" | "resume_cursor_ahead" | "script_not_allowed" | "invalid_script" | "duplicate_message" | "run_in_progress" | "unknown_tool_call" | "tool_call_settled" | "tool_call_not_awaiting" | "unknown_invocation" | "session_taken_over" | "internal_error" | "capability_not_offered" | "unknown_item" | "item_not_in_latest_turn" | "retry_keeps_open_call" | "run_not_active" | "response_invalid" | "session_detached" | "stale_cursor";
/** Every value of {@link ErrorCode}, in schema order. */
export const ERROR_CODE_VALUES = ["malformed_frame", "binary_frame", "unknown_type", "invalid_frame", "frame_too_large", "hello_required", "already_open", "unsupported_version", "resume_rejected", "resume_cursor_ahead", "script_not_allowed", "invalid_script", "duplicate_message", "run_in_progress", "unknown_tool_call", "tool_call_settled", "tool_call_not_awaiting", "unknown_invocation", "session_taken_over", "internal_error", "capability_not_offered", "unknown_item", "item_not_in_latest_turn", "retry_keeps_open_call", "run_not_active", "response_invalid", "session_detached", "stale_cursor"] as const satisfies readonly ErrorCode[];

/**
 * A number from 0 to 1 inclusive.
 */
export type Fraction = number;

/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;

/**
 * Which side asked for a dismissal.
 *
 * - `server`: The backend closed it (e.g. an artifact it no longer needs, or a superseded question).
 * - `client`: The user closed it through `chat.tool_call_response` with action `dismiss`.
 */
export type Initiator = "server" | "client";
/** Every value of {@link Initiator}, in schema order. */
export const INITIATOR_VALUES = ["server", "client"] as const satisfies readonly Initiator[];

/**
 * The kind of interaction a tool call represents.
 *
 * - `ui_tool`: A workflow UI component that the user answers (since 1.0).
 * - `ui_surface`: A fire-and-forget UI surface (since 1.0).
 * - `auto_tool`: A tool the agent runs by itself; the client only shows its progress (since 1.0).
 * - `input_request`: A request for free-form user input, answered through the composer (since 1.0).
 */
export type InteractionType = "ui_tool" | "ui_surface" | "auto_tool" | "input_request";
/** Every value of {@link InteractionType}, in schema order. */
export const INTERACTION_TYPE_VALUES = ["ui_tool", "ui_surface", "auto_tool", "input_request"] as const satisfies readonly InteractionType[];

/**
 * Limits a server announces in its welcome.
 */
export interface Limits {
  /**
   * Largest text frame the server accepts, in bytes; a larger one gets `frame_too_large`.
   */
  max_frame_bytes: number;
  /**
   * With `multi_attach` in force: the most connections the session keeps attached at once, at
   * least [`crate::MIN_ATTACHED_CONNECTIONS`]; one more attaching detaches the earliest
   * (since 1.2, `ATTACH-003`).
   */
  max_attached_connections?: number;
}

/**
 * Adds `value` at `path`: inserts into an array (`-` appends), sets an object member.
 */
export interface PatchOpAdd {
  op: "add";
  /**
   * Where.
   */
  path: string;
  /**
   * What.
   */
  value: unknown;
}
/**
 * Removes the value at `path`.
 */
export interface PatchOpRemove {
  op: "remove";
  /**
   * Where.
   */
  path: string;
}
/**
 * Replaces the value at `path`, which must exist.
 */
export interface PatchOpReplace {
  op: "replace";
  /**
   * Where.
   */
  path: string;
  /**
   * The new value.
   */
  value: unknown;
}
/**
 * Moves the value at `from` to `path`.
 */
export interface PatchOpMove {
  op: "move";
  /**
   * Where from.
   */
  from: string;
  /**
   * Where to.
   */
  path: string;
}
/**
 * Copies the value at `from` to `path`.
 */
export interface PatchOpCopy {
  op: "copy";
  /**
   * Where from.
   */
  from: string;
  /**
   * Where to.
   */
  path: string;
}
/**
 * Fails the whole patch unless the value at `path` equals `value`.
 */
export interface PatchOpTest {
  op: "test";
  /**
   * Where.
   */
  path: string;
  /**
   * The value expected there.
   */
  value: unknown;
}
/**
 * One operation of a JSON Patch (RFC 6902). `path` and `from` are JSON Pointers (RFC 6901).
 */
export type PatchOp = PatchOpAdd | PatchOpRemove | PatchOpReplace | PatchOpMove | PatchOpCopy | PatchOpTest;

/**
 * The latest progress of a running tool.
 */
export interface Progress {
  /**
   * A short status line.
   */
  message?: string;
  /**
   * How much is done, 0 to 1.
   */
  fraction?: Fraction;
}

/**
 * A protocol version MAJOR.MINOR, e.g. "1.0".
 */
export type ProtocolVersion = string;

/**
 * The user submitted a value; the call completes (since 1.0).
 */
export interface ResponseOutcomeSubmit {
  action: "submit";
  /**
   * What the user entered or chose; any JSON value.
   */
  value: unknown;
}
/**
 * The user closed or cancelled the component; the call is dismissed (since 1.0).
 */
export interface ResponseOutcomeDismiss {
  action: "dismiss";
  /**
   * Why, for display and logs.
   */
  reason?: string;
}
/**
 * What the user did with the component.
 */
export type ResponseOutcome = ResponseOutcomeSubmit | ResponseOutcomeDismiss;

/**
 * A JSON Schema (draft 2020-12) using only the response_schema subset (TOOL-022).
 */
export interface ResponseSchema {
  type?: "null" | "boolean" | "object" | "array" | "number" | "integer" | "string" | Array<"null" | "boolean" | "object" | "array" | "number" | "integer" | "string">;
  properties?: {
    [key: string]: ResponseSchema;
  };
  required?: string[];
  enum?: unknown[];
  items?: ResponseSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  additionalProperties?: boolean | ResponseSchema;
  title?: string;
  description?: string;
}

/**
 * What a client needs to resume a session (`spec/resume.md`).
 */
export interface Resume {
  /**
   * The `session_id` from the `session.welcome` that opened the session.
   */
  session_id: Id;
  /**
   * The secret `resume_token` from that welcome; without the right one the server refuses.
   */
  resume_token: Id;
  /**
   * The highest `seq` the client has seen on this session (0 if none).
   */
  last_seq: number;
  /**
   * The cursor of the window the client holds (since 1.2, `state_window`): the `before` of its
   * latest windowed snapshot or page. Absent when it holds the whole state. A catch-up patches
   * that view (`WINDOW-012`).
   */
  before?: Id;
}

/**
 * How a run slice ended.
 *
 * Older backends sent a number: `0` meant [`AwaitingInput`](Self::AwaitingInput) and `1`
 * meant [`Completed`](Self::Completed) (`RUN-006`); [`Self::from_legacy_code`] maps them.
 *
 * - `awaiting_input`: The turn waits for the user to answer a pending tool call (legacy `0`) (since 1.0).
 * - `completed`: The turn finished (legacy `1`) (since 1.0).
 * - `failed`: The turn failed (since 1.0).
 * - `cancelled`: The turn was cancelled (since 1.0).
 */
export type RunCompleteStatus = "awaiting_input" | "completed" | "failed" | "cancelled";
/** Every value of {@link RunCompleteStatus}, in schema order. */
export const RUN_COMPLETE_STATUS_VALUES = ["awaiting_input", "completed", "failed", "cancelled"] as const satisfies readonly RunCompleteStatus[];

/**
 * The state of the session's current (or last) run.
 */
export interface RunState {
  /**
   * Where the run is.
   */
  status: RunStatus;
  /**
   * The turn the status is about; absent when `idle`.
   */
  invocation_id?: Id;
}

/**
 * Where the session's run is.
 *
 * - `idle`: No run yet, or the state was rewound (since 1.0).
 * - `running`: A run slice is in progress (since 1.0).
 * - `awaiting_input`: The turn waits for the user to answer a pending tool call (since 1.0).
 * - `completed`: The last turn finished (since 1.0).
 * - `failed`: The last turn failed (since 1.0).
 * - `cancelled`: The last turn was cancelled (since 1.0).
 */
export type RunStatus = "idle" | "running" | "awaiting_input" | "completed" | "failed" | "cancelled";
/** Every value of {@link RunStatus}, in schema order. */
export const RUN_STATUS_VALUES = ["idle", "running", "awaiting_input", "completed", "failed", "cancelled"] as const satisfies readonly RunStatus[];

/**
 * How a scripted turn ends.
 *
 * - `completed`: `chat.run_complete` with status `completed`.
 * - `failed`: `chat.run_complete` with status `failed`.
 * - `cancelled`: `chat.run_complete` with status `cancelled`.
 */
export type ScriptEnd = "completed" | "failed" | "cancelled";
/** Every value of {@link ScriptEnd}, in schema order. */
export const SCRIPT_END_VALUES = ["completed", "failed", "cancelled"] as const satisfies readonly ScriptEnd[];

/**
 * Complete with this result.
 */
export interface ScriptOutcomeResult {
  kind: "result";
  /**
   * The result value.
   */
  value: unknown;
  /**
   * The summary line.
   */
  summary?: string;
}
/**
 * Fail with this error.
 */
export interface ScriptOutcomeError {
  kind: "error";
  /**
   * The error text.
   */
  message: string;
}
/**
 * Wait for the client (`awaiting_response: true`); a submit completes it with the submitted value.
 */
export interface ScriptOutcomeAwaitResponse {
  kind: "await_response";
  /**
   * Expire the call if unanswered after this many milliseconds (at most 600000).
   */
  expire_after_ms?: number;
  /**
   * The summary line once completed.
   */
  summary?: string;
}
/**
 * The server dismisses the call when its turn in the settle order comes.
 */
export interface ScriptOutcomeDismiss {
  kind: "dismiss";
  /**
   * The dismissal reason.
   */
  reason?: string;
}
/**
 * How a scripted tool call settles.
 */
export type ScriptOutcome = ScriptOutcomeResult | ScriptOutcomeError | ScriptOutcomeAwaitResponse | ScriptOutcomeDismiss;

/**
 * Scripted tool-group output, sent as one `chat.tool_output` per present part (`SCRIPT-011`): a
 * part given a value other than `null`, an empty string included.
 */
export interface ScriptOutput {
  /**
   * The command line.
   */
  command?: string;
  /**
   * Approval decisions, one frame each.
   */
  approvals?: ApprovalDecision[];
  /**
   * Standard output.
   */
  stdout?: string;
  /**
   * Standard error.
   */
  stderr?: string;
  /**
   * Exit code.
   */
  exit_code?: number;
}

/**
 * One scripted progress report.
 */
export interface ScriptProgress {
  /**
   * The status line.
   */
  message?: string;
  /**
   * How much is done.
   */
  fraction?: Fraction;
}

/**
 * What the agent plays on one retry of a turn (since 1.1, `spec/conformance-profile.md`).
 */
export interface ScriptRetry {
  /**
   * Steps in order, with the rules of a turn's steps. Without an `end` step the slice ends `completed`.
   */
  steps: ScriptStep[];
}

/**
 * Send an assistant message (`chat.assistant_message`), streamed first where `chunks` is
 * given and `assistant_stream` is in force (`SCRIPT-019`).
 */
export interface ScriptStepSay {
  op: "say";
  /**
   * The message body, CommonMark.
   */
  markdown: string;
  /**
   * The chunks to stream, one `chat.assistant_message_delta` each, in order (since 1.1):
   * each non-empty, at most [`MAX_SAY_CHUNKS`], their concatenation exactly `markdown`; an
   * empty list (beside an empty `markdown`) plays as a `say` without chunks (`SCRIPT-024`).
   */
  chunks?: string[];
  /**
   * How long to wait before each chunk after the first, in milliseconds (at most 60000)
   * (since 1.1); default 0.
   */
  chunk_delay_ms?: number;
}
/**
 * Make several tool calls at once, in call order, then settle them (`SCRIPT-010`).
 */
export interface ScriptStepToolCalls {
  op: "tool_calls";
  /**
   * The calls, in call order.
   */
  calls: ScriptToolCall[];
  /**
   * Indices of the calls that settle by themselves (every outcome but `await_response`),
   * in the order they settle; default: call order.
   */
  settle_order?: number[];
}
/**
 * Pause, with the run still in progress.
 */
export interface ScriptStepWait {
  op: "wait";
  /**
   * How long, in milliseconds (at most 60000).
   */
  ms: number;
}
/**
 * End the turn.
 */
export interface ScriptStepEnd {
  op: "end";
  /**
   * How the turn ends.
   */
  status: ScriptEnd;
  /**
   * The error text for `failed`.
   */
  error?: string;
}
/**
 * Reason (since 1.3, `SCRIPT-027`): one `chat.reasoning`, streamed first as one
 * `chat.reasoning_delta` per chunk where `chunks` is given and `assistant_stream` is in force.
 */
export interface ScriptStepReason {
  op: "reason";
  /**
   * The whole reasoning; sent as `""` when `redacted`.
   */
  text: string;
  /**
   * The chunks to stream, with the rules of a `say`'s (`TooManyChunks`, `EmptyChunk`,
   * `ChunksDiffer`); never beside `redacted` (`ChunksOfRedacted`).
   */
  chunks?: string[];
  /**
   * How long to wait before each chunk after the first, in milliseconds (at most 60000); default 0.
   */
  chunk_delay_ms?: number;
  /**
   * The opaque payload the item carries, sent byte for byte (`REASON-004`).
   */
  encrypted?: string;
  /**
   * The run withholds the text: the frame carries `text: ""` and `redacted: true` (`REASON-003`).
   */
  redacted?: boolean;
}
/**
 * Report what a model call used (since 1.3, `SCRIPT-028`): no frame; added to the run
 * slice's usage, which its `chat.run_complete` carries (`USAGE-003`).
 */
export interface ScriptStepUsage {
  op: "usage";
  /**
   * Tokens the model read.
   */
  input_tokens: number;
  /**
   * Tokens the model wrote.
   */
  output_tokens: number;
  /**
   * Of the tokens written, those spent reasoning, when the model reports them.
   */
  reasoning_tokens?: number;
  /**
   * Of the tokens read, those served from a cache, when the model reports them.
   */
  cached_input_tokens?: number;
  /**
   * What it cost, when the server knows.
   */
  cost?: Cost;
}
/**
 * One step of a turn.
 */
export type ScriptStep = ScriptStepSay | ScriptStepToolCalls | ScriptStepWait | ScriptStepEnd | ScriptStepReason | ScriptStepUsage;

/**
 * The sub-agent run a scripted call hosts (since 1.3, `SCRIPT-029`): played after the call's
 * `chat.tool_call` and progress as `chat.subagent_started`, the nested steps, then
 * `chat.subagent_complete`; the call's `outcome` settles it afterwards.
 */
export interface ScriptSubagent {
  /**
   * The sub-agent's `thread_id`.
   */
  thread: Id;
  /**
   * Continue `thread` from its latest call (`SUBAGENT-004`) instead of starting it.
   */
  continue?: boolean;
  /**
   * The `name` of `chat.subagent_started`.
   */
  name?: string;
  /**
   * The `input` of `chat.subagent_started`.
   */
  input: string;
  /**
   * The sub-agent's steps, each played as at top level with the host as `parent_call_id`:
   * `say`, `reason`, `tool_calls`, `wait`, `usage`; never `end` (`EndInSubagent`).
   */
  steps?: ScriptStep[];
  /**
   * How the run ends: its `chat.subagent_complete`.
   */
  end: ScriptSubagentEnd;
}

/**
 * How a scripted sub-agent run ends: the members of its `chat.subagent_complete`.
 */
export interface ScriptSubagentEnd {
  /**
   * The run's status.
   */
  status: ScriptSubagentStatus;
  /**
   * The sub-agent's final answer.
   */
  response?: string;
  /**
   * The run ended by calling its `return` tool; only with `completed` (`ReturnedNotCompleted`).
   */
  returned?: boolean;
}

/**
 * How a scripted sub-agent run ends (a cancel, not the script, ends one `cancelled`).
 *
 * - `completed`: `chat.subagent_complete` with status `completed`.
 * - `failed`: `chat.subagent_complete` with status `failed`.
 */
export type ScriptSubagentStatus = "completed" | "failed";
/** Every value of {@link ScriptSubagentStatus}, in schema order. */
export const SCRIPT_SUBAGENT_STATUS_VALUES = ["completed", "failed"] as const satisfies readonly ScriptSubagentStatus[];

/**
 * One scripted tool call.
 */
export interface ScriptToolCall {
  /**
   * The `tool_name` to send.
   */
  tool_name: string;
  /**
   * The `interaction_type` to send.
   */
  interaction_type: InteractionType;
  /**
   * The `display` to send.
   */
  display: DisplayMode;
  /**
   * The `component_type` to send.
   */
  component_type?: string;
  /**
   * The `workflow_name` to send.
   */
  workflow_name?: string;
  /**
   * The `payload` to send.
   */
  payload?: {
    [key: string]: unknown;
  };
  /**
   * How long the tool runs before its first progress report or settlement, in milliseconds (at most 60000).
   */
  run_ms?: number;
  /**
   * Progress reports to stream while it runs, in order.
   */
  progress?: ScriptProgress[];
  /**
   * Tool-group output to send before it settles.
   */
  output?: ScriptOutput;
  /**
   * How the call settles.
   */
  outcome: ScriptOutcome;
  /**
   * The `response_schema` to send (since 1.2, `SCRIPT-022`): only on a call whose outcome is
   * `await_response`; a server sends it only to connections that negotiated 1.2 (`COMPAT-005`).
   */
  response_schema?: ResponseSchema;
  /**
   * The sub-agent run the call hosts (since 1.3, `SCRIPT-029`): only on a call that runs by
   * itself and has no `output` (`NotSubagentHost`).
   */
  subagent?: ScriptSubagent;
}

/**
 * What the agent does in answer to one user message.
 */
export interface ScriptTurn {
  /**
   * Steps in order. A turn without an `end` step ends `completed`.
   */
  steps: ScriptStep[];
  /**
   * What the agent plays when the turn is retried (since 1.1, `SCRIPT-020`): the k-th accepted
   * `chat.retry` of the turn, counted from 0 over the session's log (`SCRIPT-023`), plays
   * `retries[k]` in a new run slice; without a `retries[k]` that slice ends at once with
   * `chat.run_complete` `status: "failed"` and `reason: "script_exhausted"`.
   */
  retries?: ScriptRetry[];
}

/**
 * How a sub-agent run ends: the `status` of `chat.subagent_complete`.
 *
 * - `completed`: The run finished (since 1.3).
 * - `failed`: The run failed (since 1.3).
 * - `cancelled`: The run was cancelled (since 1.3).
 */
export type SubagentEnd = "completed" | "failed" | "cancelled";
/** Every value of {@link SubagentEnd}, in schema order. */
export const SUBAGENT_END_VALUES = ["completed", "failed", "cancelled"] as const satisfies readonly SubagentEnd[];

/**
 * The sub-agent run a tool call hosts (since 1.3, `STATE-064`).
 */
export interface SubagentState {
  /**
   * The sub-agent's thread, the same on every call that continues it.
   */
  thread_id: Id;
  /**
   * What the calling agent calls the sub-agent, for display.
   */
  name?: string;
  /**
   * What the calling agent sent the sub-agent.
   */
  input: string;
  /**
   * The earlier call whose thread this run continues.
   */
  continues?: Id;
  /**
   * Present and `true` when `input` answered the thread's pending `return` call.
   */
  answers_return?: boolean;
  /**
   * Where the run is.
   */
  status: SubagentStatus;
  /**
   * The transcript: the sub-agent's items in display order, at most one open stream, its last.
   */
  items: DisplayItem[];
  /**
   * The sub-agent's final answer, once it ended.
   */
  response?: string;
  /**
   * Present and `true` when the run ended by calling its `return` tool.
   */
  returned?: boolean;
  /**
   * On a windowed connection, the transcript's cursor: the id of its oldest item of the window
   * (`WINDOW-015`); absent when the view holds the whole transcript.
   */
  before?: Id;
  /**
   * On a windowed connection whose view leaves items of the transcript out, how many items the
   * transcript holds as the connection is shown it (`WINDOW-015`).
   */
  total?: number;
}

/**
 * Where a sub-agent run is.
 *
 * - `running`: The run goes on: its transcript may grow (since 1.3).
 * - `completed`: The run finished (since 1.3).
 * - `failed`: The run failed (since 1.3).
 * - `cancelled`: The run was cancelled (since 1.3, `SUBAGENT-010`).
 */
export type SubagentStatus = "running" | "completed" | "failed" | "cancelled";
/** Every value of {@link SubagentStatus}, in schema order. */
export const SUBAGENT_STATUS_VALUES = ["running", "completed", "failed", "cancelled"] as const satisfies readonly SubagentStatus[];

/**
 * The lifecycle status of a tool call (`spec/tool-calls.md#states`).
 *
 * - `pending`: Waits for the client's response (since 1.0).
 * - `running`: The tool is executing (since 1.0).
 * - `completed`: Settled with a result (since 1.0).
 * - `failed`: Settled with an error (since 1.0).
 * - `dismissed`: Closed without a result (since 1.0).
 * - `expired`: Nobody answered in time (since 1.0).
 */
export type ToolCallStatus = "pending" | "running" | "completed" | "failed" | "dismissed" | "expired";
/** Every value of {@link ToolCallStatus}, in schema order. */
export const TOOL_CALL_STATUS_VALUES = ["pending", "running", "completed", "failed", "dismissed", "expired"] as const satisfies readonly ToolCallStatus[];

/**
 * The whole view of a session: display items in display order, and the state of the current run.
 */
export interface UiState {
  /**
   * Display items in the order the client shows them.
   */
  items: DisplayItem[];
  /**
   * The current run.
   */
  run: RunState;
  /**
   * What the session's runs used (since 1.3, feature `usage`): absent until the first run
   * slice that reported usage (`STATE-056`).
   */
  usage?: UsageState;
}

/**
 * The UiState format carried by `ui_state_snapshot` and `ui_state_updated` (`v`).
 *
 * - `ui_state_v1`: UiState v1 (since protocol 1.0): the whole state in every frame.
 */
export type UiStateVersion = "ui_state_v1";
/** Every value of {@link UiStateVersion}, in schema order. */
export const UI_STATE_VERSION_VALUES = ["ui_state_v1"] as const satisfies readonly UiStateVersion[];

/**
 * What a run slice used (or a sum of such).
 */
export interface Usage {
  /**
   * Tokens the model read.
   */
  input_tokens: number;
  /**
   * Tokens the model wrote.
   */
  output_tokens: number;
  /**
   * Of the tokens written, those spent reasoning, when the model reports them.
   */
  reasoning_tokens?: number;
  /**
   * Of the tokens read, those served from a cache, when the model reports them.
   */
  cached_input_tokens?: number;
  /**
   * What it cost, when the server knows.
   */
  cost?: Cost;
}

/**
 * What the state holds of usage (since 1.3, `state.usage`).
 */
export interface UsageState {
  /**
   * Every run slice of the session ever completed with usage, summed; never lowered.
   */
  total: Usage;
  /**
   * Per invocation the state holds, its run slices' usage summed.
   */
  invocations: {
    [key: string]: Usage;
  };
}

/**
 * What a windowed `ui_state_snapshot` says about the part of the state it leaves out.
 */
export interface Window {
  /**
   * The cursor of the page before the window: the id of the window's first (oldest) item.
   * Absent when the window holds the session's first item, so there is nothing to page.
   */
  before?: Id;
  /**
   * How many items the whole state holds.
   */
  total: number;
}

/**
 * Confirms the session: the chosen version, the ids to resume it later, and what the server offers.
 */
export interface SessionWelcome {
  type: "session.welcome";
  /**
   * Position of this frame in the session's frame sequence; grows strictly (`SEQ-001`).
   */
  seq: number;
  /**
   * The `id` of the `session.hello` this answers.
   */
  in_reply_to: Id;
  /**
   * The protocol version chosen for this connection, one of those the client offered.
   */
  version: ProtocolVersion;
  /**
   * The session's id; stable across reconnects and server restarts.
   */
  session_id: Id;
  /**
   * Secret needed to resume this session; the server may rotate it on every welcome.
   */
  resume_token: Id;
  /**
   * True when this welcome resumed an existing session, false when it opened a new one.
   */
  resumed: boolean;
  /**
   * Optional features this server implements; scenarios needing others are not applicable.
   */
  capabilities: Capability[];
  /**
   * Limits the client must respect.
   */
  limits: Limits;
  /**
   * Free-form name and version of the server, for logs.
   */
  server?: string;
  /**
   * The features in force on this connection (since 1.1; present, possibly empty, on every
   * connection that negotiated 1.1 or later, `SESSION-013`).
   */
  features?: Capability[];
  /**
   * With `resume_catch_up` in force: the most events a catch-up patch covers; a resume that
   * missed more gets a snapshot (since 1.1, `RESUME-018`).
   */
  resume_retention?: number;
}

/**
 * The base the client renders from after connecting or resuming (`STATE-002`).
 */
export interface UiStateSnapshot {
  type: "ui_state_snapshot";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The UiState format.
   */
  v: UiStateVersion;
  /**
   * The session's effective state; on a windowed connection, the view its window holds
   * (`WINDOW-002`).
   */
  state: UiState;
  /**
   * Present exactly on a connection that asked for a window where `state_window` is in force
   * (since 1.2, `WINDOW-002`): where the window starts and how many items the state holds.
   */
  window?: Window;
}

/**
 * The state after the events sent before it; equals the reducer's result over them (`STATE-004`).
 */
export interface UiStateUpdated {
  type: "ui_state_updated";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The UiState format.
   */
  v: UiStateVersion;
  /**
   * The session's effective state.
   */
  state: UiState;
}

/**
 * Turns the state of the frame `base_seq` into the session's effective state (`STATE-038`):
 * sent in place of `ui_state_updated` where `ui_state_patch` is in force, and in place of the
 * snapshot after a catch-up resume (`RESUME-017`).
 */
export interface UiStatePatch {
  type: "ui_state_patch";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `seq` of the state the patch applies to: the connection's previous snapshot, update or
   * patch, or for a catch-up the resume's `last_seq` (`STATE-037`, `RESUME-017`).
   */
  base_seq: number;
  /**
   * The UiState format of both states.
   */
  v: UiStateVersion;
  /**
   * The operations, applied in order; a client applies all or none (RFC 6902).
   */
  patch: PatchOp[];
}

/**
 * Announces the user message item and the invocation (turn) it opens.
 */
export interface ChatUserMessageAccepted {
  type: "chat.user_message_accepted";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `id` of the `chat.user_message` that was accepted.
   */
  in_reply_to: Id;
  /**
   * The turn this message opens; every item the turn produces carries it.
   */
  invocation_id: Id;
  /**
   * Id of the new `user_message` display item.
   */
  item_id: Id;
  /**
   * The message text.
   */
  text: string;
  /**
   * When the server accepted it (RFC 3339).
   */
  ts: string;
}

/**
 * Starts a run slice: after a user message, or after the response that unblocks a waiting turn.
 */
export interface ChatRunStarted {
  type: "chat.run_started";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The turn this slice belongs to.
   */
  invocation_id: Id;
  /**
   * When the slice started (RFC 3339).
   */
  ts: string;
}

/**
 * A complete assistant message in Markdown.
 */
export interface ChatAssistantMessage {
  type: "chat.assistant_message";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The turn that produced this message.
   */
  invocation_id: Id;
  /**
   * The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
   * `STATE-065`); absent for an item of the top level.
   */
  parent_call_id?: Id;
  /**
   * Id of the new `assistant_markdown` display item.
   */
  item_id: Id;
  /**
   * The message body, CommonMark.
   */
  markdown: string;
  /**
   * When it was produced (RFC 3339).
   */
  ts: string;
}

/**
 * Appends `delta` to the open `assistant_markdown` item `item_id`, opening it if it is new.
 */
export interface ChatAssistantMessageDelta {
  type: "chat.assistant_message_delta";
  /**
   * Position of this frame in the session's frame sequence; a later `ui_state_patch` may name
   * it as its `base_seq` (`STREAM-002`).
   */
  seq: number;
  /**
   * The turn whose run writes the message; its run slice is in progress (`STATE-022`).
   */
  invocation_id: Id;
  /**
   * The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
   * `STATE-065`); absent for an item of the top level.
   */
  parent_call_id?: Id;
  /**
   * Id of the streaming `assistant_markdown` item, the same in every delta and in the
   * `chat.assistant_message` that ends the stream.
   */
  item_id: Id;
  /**
   * The text to append, never empty: the concatenation of an item's deltas, in order, is the
   * text its ending `chat.assistant_message` carries (`STATE-043`).
   */
  delta: string;
  /**
   * When the chunk was produced (RFC 3339); the item's `ts` while it streams is its first delta's.
   */
  ts: string;
}

/**
 * Creates a tool call item. It starts `pending` when it awaits a response, `running` otherwise,
 * and ends only through `chat.tool_call_complete` or `chat.tool_call_dismiss`.
 */
export interface ChatToolCall {
  type: "chat.tool_call";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The turn that made this call.
   */
  invocation_id: Id;
  /**
   * The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
   * `STATE-065`); absent for an item of the top level.
   */
  parent_call_id?: Id;
  /**
   * The interaction id, end to end: the item id, the id a response names, the id a completion names.
   */
  tool_call_id: Id;
  /**
   * Compatibility alias of `tool_call_id` for older consumers; when present it equals `tool_call_id` (`TOOL-004`).
   */
  corr?: Id;
  /**
   * Name of the tool as the agent called it.
   */
  tool_name: string;
  /**
   * The UI component that renders this call; required for `ui_tool` and `ui_surface` (`TOOL-005`).
   */
  component_type?: string;
  /**
   * The workflow that owns the component.
   */
  workflow_name?: string;
  /**
   * What kind of interaction this is.
   */
  interaction_type: InteractionType;
  /**
   * True when the call waits for a `chat.tool_call_response` from the client.
   */
  awaiting_response: boolean;
  /**
   * Where the client shows it.
   */
  display: DisplayMode;
  /**
   * Arguments for the component or tool, as the agent produced them.
   */
  payload: {
    [key: string]: unknown;
  };
  /**
   * The shape of the `value` a `chat.tool_call_response` must carry (since 1.2, `TOOL-022`):
   * a JSON Schema in the subset of `TOOL-022`, only on calls that await a response. The server
   * checks every response against it (`TOOL-023`).
   */
  response_schema?: ResponseSchema;
  /**
   * Position of this call within its batch of calls made at once, starting at 0 (`MULTI-001`).
   */
  call_index: number;
  /**
   * When the call was made (RFC 3339).
   */
  ts: string;
}

/**
 * Progress of a `running` tool call; replaces the item's previous progress.
 */
export interface ChatToolProgress {
  type: "chat.tool_progress";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The running tool call.
   */
  tool_call_id: Id;
  /**
   * A short human-readable status line.
   */
  message?: string;
  /**
   * How much is done, from 0 to 1.
   */
  fraction?: Fraction;
  /**
   * When the progress was observed (RFC 3339).
   */
  ts: string;
}

/**
 * Adds to the `tool_output` item of a tool call, which sits right after the call's item.
 */
export interface ChatToolOutput {
  type: "chat.tool_output";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The tool call this output belongs to; it must not be settled yet.
   */
  tool_call_id: Id;
  /**
   * The command line the tool runs, set once.
   */
  command?: string;
  /**
   * An approval decision to append to the group's approvals.
   */
  approval?: ApprovalDecision;
  /**
   * Text to append to the group's stdout.
   */
  stdout?: string;
  /**
   * Text to append to the group's stderr.
   */
  stderr?: string;
  /**
   * The process exit code, set once the tool has exited.
   */
  exit_code?: number;
  /**
   * When the output was produced (RFC 3339).
   */
  ts: string;
}

/**
 * Settles a `pending` or `running` tool call. A settled call never changes again (`TOOL-010`).
 */
export interface ChatToolCallComplete {
  type: "chat.tool_call_complete";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The call that settles.
   */
  tool_call_id: Id;
  /**
   * How it settled.
   */
  status: CompletionStatus;
  /**
   * The tool's result (for `completed`), e.g. the value the user submitted.
   */
  result?: unknown;
  /**
   * What went wrong (for `failed` and `expired`).
   */
  error?: string;
  /**
   * One line the client shows in place of a settled component, e.g. "API key saved".
   */
  summary?: string;
  /**
   * The `id` of the `chat.tool_call_response` that caused this, if any.
   */
  in_reply_to?: Id;
  /**
   * When it settled (RFC 3339).
   */
  ts: string;
}

/**
 * Settles a `pending` or `running` tool call as `dismissed`, by the server or at the client's request.
 */
export interface ChatToolCallDismiss {
  type: "chat.tool_call_dismiss";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The call that is dismissed.
   */
  tool_call_id: Id;
  /**
   * Who asked for the dismissal.
   */
  initiated_by: Initiator;
  /**
   * Why, for display and logs.
   */
  reason?: string;
  /**
   * The `id` of the client's `chat.tool_call_response` when the client asked for it.
   */
  in_reply_to?: Id;
  /**
   * When it was dismissed (RFC 3339).
   */
  ts: string;
}

/**
 * Ends the current run slice of a turn.
 */
export interface ChatRunComplete {
  type: "chat.run_complete";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The turn whose slice ends.
   */
  invocation_id: Id;
  /**
   * Why it ended. `awaiting_input` requires a pending call; the others require none open (`RUN-003`, `RUN-004`).
   */
  status: RunCompleteStatus;
  /**
   * A machine-readable reason, e.g. `awaiting_user_input` or `script_exhausted`.
   */
  reason?: string;
  /**
   * What went wrong, for `failed`.
   */
  error?: string;
  /**
   * What the slice used (since 1.3, feature `usage`, `USAGE-001`): added to `state.usage`
   * (`STATE-056`); absent where `usage` is not in force (`USAGE-004`).
   */
  usage?: Usage;
  /**
   * When the slice ended (RFC 3339).
   */
  ts: string;
}

/**
 * Confirms a rewind: every item from the first one of `before_invocation_id` on is gone.
 */
export interface ChatRewindComplete {
  type: "chat.rewind_complete";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `id` of the `chat.rewind` this answers.
   */
  in_reply_to: Id;
  /**
   * The invocation the state was cut before.
   */
  before_invocation_id: Id;
  /**
   * The invocations removed from the effective state, oldest first (the log keeps them).
   */
  removed_invocation_ids: Id[];
  /**
   * When the rewind took effect (RFC 3339).
   */
  ts: string;
}

/**
 * Confirms a retry: every item after `after_item_id` is gone and the run is `idle` until the
 * `chat.run_started` that follows.
 */
export interface ChatRetryAccepted {
  type: "chat.retry_accepted";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `id` of the `chat.retry` this answers.
   */
  in_reply_to: Id;
  /**
   * The turn retried: the latest one, the turn of `after_item_id` (`STATE-049`).
   */
  invocation_id: Id;
  /**
   * The last item kept.
   */
  after_item_id: Id;
  /**
   * The items removed from the effective state, in display order (the log keeps them) (`STATE-051`).
   */
  removed_item_ids: Id[];
  /**
   * When the retry took effect (RFC 3339).
   */
  ts: string;
}

/**
 * Confirms a cancel: the run of `invocation_id` ends `cancelled` in the frames that follow.
 */
export interface ChatCancelAccepted {
  type: "chat.cancel_accepted";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `id` of the `chat.cancel` this answers.
   */
  in_reply_to: Id;
  /**
   * The turn whose run is stopped.
   */
  invocation_id: Id;
  /**
   * When the cancel was committed (RFC 3339).
   */
  ts: string;
}

/**
 * Up to `limit` items before the cursor, in display order, and the cursor before them.
 */
export interface ChatHistoryPage {
  type: "chat.history_page";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `id` of the `chat.history_request` this answers.
   */
  in_reply_to: Id;
  /**
   * The request's `tool_call_id`: the page holds items of that host's transcript (since 1.3,
   * feature `subagents`, `WINDOW-016`).
   */
  tool_call_id?: Id;
  /**
   * The items immediately before the request's cursor, oldest first, as the state holds them
   * now (always-held ones included, `WINDOW-008`).
   */
  items: DisplayItem[];
  /**
   * The cursor for the next older page: the id of the first item of this page. Absent once the
   * page reaches the session's first item.
   */
  before?: Id;
  /**
   * How many items the whole state holds.
   */
  total: number;
}

/**
 * Appends `text` to the open `reasoning` item `item_id`, opening it if it is new.
 */
export interface ChatReasoningDelta {
  type: "chat.reasoning_delta";
  /**
   * Position of this frame in the session's frame sequence (`STREAM-002`: a later patch may
   * name it as its `base_seq`).
   */
  seq: number;
  /**
   * The turn whose run reasons; its run slice is in progress (`STATE-022`).
   */
  invocation_id: Id;
  /**
   * The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
   * `STATE-065`); absent for an item of the top level.
   */
  parent_call_id?: Id;
  /**
   * Id of the streaming `reasoning` item, the same in every delta and in the `chat.reasoning`
   * that ends the stream.
   */
  item_id: Id;
  /**
   * The text to append, never empty: the concatenation of an item's deltas, in order, is the
   * text its ending `chat.reasoning` carries unless that one is `redacted` (`STATE-061`).
   */
  text: string;
  /**
   * When the chunk was produced (RFC 3339); the item's `ts` while it streams is its first delta's.
   */
  ts: string;
}

/**
 * A reasoning item, whole, or the end of the open reasoning stream.
 */
export interface ChatReasoning {
  type: "chat.reasoning";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The turn whose run reasons; its run slice is in progress (`STATE-022`).
   */
  invocation_id: Id;
  /**
   * The call whose sub-agent transcript the item belongs to (since 1.3, feature `subagents`,
   * `STATE-065`); absent for an item of the top level.
   */
  parent_call_id?: Id;
  /**
   * Id of the `reasoning` item: the open stream it ends, or a new item.
   */
  item_id: Id;
  /**
   * The whole reasoning; `""` when `redacted` (`REASON-003`, `STATE-062`).
   */
  text: string;
  /**
   * Present and `true` when the run withholds the text: the item then holds none.
   */
  redacted?: boolean;
  /**
   * An opaque payload for the agent's model, never interpreted by a client (`REASON-005`).
   */
  encrypted?: string;
  /**
   * When the reasoning ended (RFC 3339).
   */
  ts: string;
}

/**
 * Starts the sub-agent run a tool call hosts.
 */
export interface ChatSubagentStarted {
  type: "chat.subagent_started";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The call that hosts the run, in any transcript.
   */
  tool_call_id: Id;
  /**
   * The sub-agent's thread: the same on every call that continues it (`SUBAGENT-004`).
   */
  thread_id: Id;
  /**
   * What the calling agent calls the sub-agent, for display.
   */
  name?: string;
  /**
   * What the calling agent sent the sub-agent.
   */
  input: string;
  /**
   * The latest earlier call hosting `thread_id`, when this run continues that thread; absent
   * for a new thread (`STATE-070`).
   */
  continues?: Id;
  /**
   * Present and `true` when `input` is the result of the `return` call the thread's latest run
   * left open (`SUBAGENT-005`).
   */
  answers_return?: boolean;
  /**
   * When the run started (RFC 3339).
   */
  ts: string;
}

/**
 * Ends the sub-agent run a tool call hosts.
 */
export interface ChatSubagentComplete {
  type: "chat.subagent_complete";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The call that hosts the run.
   */
  tool_call_id: Id;
  /**
   * How the run ended.
   */
  status: SubagentEnd;
  /**
   * The sub-agent's final answer.
   */
  response?: string;
  /**
   * Present and `true` when the run ended by calling its `return` tool; only with `completed`
   * (`STATE-075`).
   */
  returned?: boolean;
  /**
   * When the run ended (RFC 3339).
   */
  ts: string;
}

/**
 * A typed error. `fatal` says whether the server closes the connection after it.
 */
export interface ErrorFrame {
  type: "error";
  /**
   * Position in the session's frame sequence; absent when no session is bound to the connection.
   */
  seq?: number;
  /**
   * What went wrong.
   */
  code: ErrorCode;
  /**
   * A human-readable explanation, one sentence, lowercase.
   */
  message: string;
  /**
   * The `id` of the client frame this answers, when that frame was readable enough to have one.
   */
  in_reply_to?: Id;
  /**
   * True when the server closes the connection right after this frame.
   */
  fatal: boolean;
  /**
   * With `unsupported_version`: every version the server speaks.
   */
  supported_versions?: ProtocolVersion[];
}

/**
 * Opens a new session or resumes an existing one, naming the protocol versions the client speaks.
 */
export interface SessionHello {
  type: "session.hello";
  /**
   * Client-chosen id of this frame; answers (`session.welcome`, `error`) carry it as `in_reply_to`.
   */
  id: Id;
  /**
   * The protocol versions the client speaks, in any order; the server picks one (`SESSION-003`).
   */
  versions: ProtocolVersion[];
  /**
   * Present to resume an existing session instead of opening a new one.
   */
  resume?: Resume;
  /**
   * A scripted agent to run in place of the backend's model; honoured only by a backend in
   * conformance mode, and only when opening a new session (`SCRIPT-001`).
   */
  script?: AgentScript;
  /**
   * Free-form name and version of the client, for logs.
   */
  client?: string;
  /**
   * The features the client asks for (since 1.1); absent, every feature the server implements
   * and the negotiated version defines is in force. Sent only by a client that offers no version
   * below 1.1, because a 1.0 server refuses a hello with a member 1.0 does not define
   * (`SESSION-012`, `SESSION-014`).
   */
  features?: Capability[];
  /**
   * Asks for a window of the newest `window` items (since 1.2, `state_window`): a snapshot
   * this connection gets holds those and the always-held older items, and it pages back with
   * `chat.history_request` (`WINDOW-001`, `WINDOW-002`). Ignored where `state_window` is not
   * in force.
   */
  window?: number;
}

/**
 * A message typed by the user. The client-chosen `id` makes it idempotent (`TURN-002`).
 */
export interface ChatUserMessage {
  type: "chat.user_message";
  /**
   * Client-chosen id; sending the same id again never starts a second turn.
   */
  id: Id;
  /**
   * The message text as typed.
   */
  text: string;
}

/**
 * Answers a `pending` tool call by its `tool_call_id`, from any connection of the session.
 * Responses are idempotent: a second one gets `tool_call_settled` and is never executed (`TOOL-012`).
 */
export interface ChatToolCallResponse {
  type: "chat.tool_call_response";
  /**
   * Client-chosen id of this frame; the settlement and any error carry it as `in_reply_to`.
   */
  id: Id;
  /**
   * The call being answered.
   */
  tool_call_id: Id;
  /**
   * The answer.
   */
  outcome: ResponseOutcome;
}

/**
 * Rewinds the session's effective state to just before the given invocation.
 */
export interface ChatRewind {
  type: "chat.rewind";
  /**
   * Client-chosen id of this frame; the result and any error carry it as `in_reply_to`.
   */
  id: Id;
  /**
   * The first invocation to remove; it and every later one disappear from the effective state.
   */
  before_invocation_id: Id;
}

/**
 * Retries the latest turn from the item `after_item_id` on: that item and everything before it
 * stay, everything after it leaves the effective state (the log keeps it).
 */
export interface ChatRetry {
  type: "chat.retry";
  /**
   * Client-chosen id of this frame; the `chat.retry_accepted` and any error carry it as `in_reply_to`.
   */
  id: Id;
  /**
   * The last item to keep: an item of the latest turn (its user message or a later item).
   */
  after_item_id: Id;
}

/**
 * Stops the run of `invocation_id`, if it is the session's current run and not over yet.
 */
export interface ChatCancel {
  type: "chat.cancel";
  /**
   * Client-chosen id of this frame; the `chat.cancel_accepted` and any error carry it as `in_reply_to`.
   */
  id: Id;
  /**
   * The turn whose run to stop: the session's current run, `running` or `awaiting_input`.
   */
  invocation_id: Id;
}

/**
 * Asks for up to `limit` items immediately before the cursor `before`.
 */
export interface ChatHistoryRequest {
  type: "chat.history_request";
  /**
   * Client-chosen id of this frame; the answer carries it as `in_reply_to`.
   */
  id: Id;
  /**
   * The connection's current cursor: the `before` of its latest windowed snapshot or page
   * (`WINDOW-010`).
   */
  before: Id;
  /**
   * The host whose sub-agent transcript to page (since 1.3, feature `subagents`,
   * `WINDOW-016`); absent to page the top level.
   */
  tool_call_id?: Id;
  /**
   * How many items at most, 1 to [`MAX_HISTORY_PAGE_ITEMS`] (`WINDOW-007`).
   */
  limit: number;
}

/** Any frame a server sends to a client, tagged on `type`. */
export type ServerFrame =
  | SessionWelcome
  | UiStateSnapshot
  | UiStateUpdated
  | UiStatePatch
  | ChatUserMessageAccepted
  | ChatRunStarted
  | ChatAssistantMessage
  | ChatAssistantMessageDelta
  | ChatToolCall
  | ChatToolProgress
  | ChatToolOutput
  | ChatToolCallComplete
  | ChatToolCallDismiss
  | ChatRunComplete
  | ChatRewindComplete
  | ChatRetryAccepted
  | ChatCancelAccepted
  | ChatHistoryPage
  | ChatReasoningDelta
  | ChatReasoning
  | ChatSubagentStarted
  | ChatSubagentComplete
  | ErrorFrame;
/** Any frame a client sends to a server, tagged on `type`. */
export type ClientFrame =
  | SessionHello
  | ChatUserMessage
  | ChatToolCallResponse
  | ChatRewind
  | ChatRetry
  | ChatCancel
  | ChatHistoryRequest;
/** Any frame, either direction. */
export type Frame = ServerFrame | ClientFrame;
/** The wire name of a frame. */
export type FrameType = Frame["type"];
export type ServerFrameType = ServerFrame["type"];
export type ClientFrameType = ClientFrame["type"];
/** The frame with wire name `T`: `FrameOf<"chat.tool_call">` is {@link ChatToolCall}. */
export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;
/** The display item of kind `K`: `ItemOf<"tool_call">` is {@link DisplayItemToolCall}. */
export type ItemOf<K extends DisplayItem["kind"]> = Extract<DisplayItem, { kind: K }>;

/** Every server frame type, in schema order. */
export const SERVER_FRAME_TYPES = ["session.welcome","ui_state_snapshot","ui_state_updated","ui_state_patch","chat.user_message_accepted","chat.run_started","chat.assistant_message","chat.assistant_message_delta","chat.tool_call","chat.tool_progress","chat.tool_output","chat.tool_call_complete","chat.tool_call_dismiss","chat.run_complete","chat.rewind_complete","chat.retry_accepted","chat.cancel_accepted","chat.history_page","chat.reasoning_delta","chat.reasoning","chat.subagent_started","chat.subagent_complete","error"] as const satisfies readonly ServerFrameType[];
/** Every client frame type, in schema order. */
export const CLIENT_FRAME_TYPES = ["session.hello","chat.user_message","chat.tool_call_response","chat.rewind","chat.retry","chat.cancel","chat.history_request"] as const satisfies readonly ClientFrameType[];

/** @internal Which optional members admit null, per frame type (see validate.ts). */
export const NULL_PLANS: { readonly [type: string]: NullPlan | null } = {"session.welcome":{"o":{"limits":{"n":["max_attached_connections"]}},"n":["server","features","resume_retention"]},"ui_state_snapshot":{"o":{"state":{"o":{"items":{"a":{"t":"kind","v":{"tool_call":{"o":{"progress":{"n":["message","fraction"]},"dismissal":{"n":["reason"]},"subagent":{"o":{"items":{"a":{"r":"DisplayItem"}}},"n":["name","continues","response","before","total"]}},"n":["component_type","workflow_name","response_schema","progress","summary","error","dismissal","settled_ts","subagent"]},"tool_output":{"n":["command","exit_code"]},"reasoning":{"n":["encrypted"]}}}},"run":{"n":["invocation_id"]},"usage":{"o":{"total":{"n":["reasoning_tokens","cached_input_tokens","cost"]}}}},"n":["usage"]},"window":{"n":["before"]}},"n":["window"]},"ui_state_updated":{"o":{"state":{"o":{"items":{"a":{"t":"kind","v":{"tool_call":{"o":{"progress":{"n":["message","fraction"]},"dismissal":{"n":["reason"]},"subagent":{"o":{"items":{"a":{"r":"DisplayItem"}}},"n":["name","continues","response","before","total"]}},"n":["component_type","workflow_name","response_schema","progress","summary","error","dismissal","settled_ts","subagent"]},"tool_output":{"n":["command","exit_code"]},"reasoning":{"n":["encrypted"]}}}},"run":{"n":["invocation_id"]},"usage":{"o":{"total":{"n":["reasoning_tokens","cached_input_tokens","cost"]}}}},"n":["usage"]}}},"ui_state_patch":null,"chat.user_message_accepted":null,"chat.run_started":null,"chat.assistant_message":{"n":["parent_call_id"]},"chat.assistant_message_delta":{"n":["parent_call_id"]},"chat.tool_call":{"n":["parent_call_id","corr","component_type","workflow_name","response_schema"]},"chat.tool_progress":{"n":["message","fraction"]},"chat.tool_output":{"n":["command","approval","stdout","stderr","exit_code"]},"chat.tool_call_complete":{"n":["error","summary","in_reply_to"]},"chat.tool_call_dismiss":{"n":["reason","in_reply_to"]},"chat.run_complete":{"o":{"usage":{"n":["reasoning_tokens","cached_input_tokens","cost"]}},"n":["reason","error","usage"]},"chat.rewind_complete":null,"chat.retry_accepted":null,"chat.cancel_accepted":null,"chat.history_page":{"o":{"items":{"a":{"t":"kind","v":{"tool_call":{"o":{"progress":{"n":["message","fraction"]},"dismissal":{"n":["reason"]},"subagent":{"o":{"items":{"a":{"r":"DisplayItem"}}},"n":["name","continues","response","before","total"]}},"n":["component_type","workflow_name","response_schema","progress","summary","error","dismissal","settled_ts","subagent"]},"tool_output":{"n":["command","exit_code"]},"reasoning":{"n":["encrypted"]}}}}},"n":["tool_call_id","before"]},"chat.reasoning_delta":{"n":["parent_call_id"]},"chat.reasoning":{"n":["parent_call_id","encrypted"]},"chat.subagent_started":{"n":["name","continues"]},"chat.subagent_complete":{"n":["response"]},"error":{"n":["seq","in_reply_to","supported_versions"]},"session.hello":{"o":{"resume":{"n":["before"]},"script":{"o":{"turns":{"a":{"o":{"steps":{"a":{"t":"op","v":{"say":{"n":["chunks","chunk_delay_ms"]},"tool_calls":{"o":{"calls":{"a":{"o":{"progress":{"a":{"n":["message","fraction"]}},"output":{"n":["command","stdout","stderr","exit_code"]},"outcome":{"t":"kind","v":{"result":{"n":["summary"]},"await_response":{"n":["expire_after_ms","summary"]},"dismiss":{"n":["reason"]}}},"subagent":{"o":{"steps":{"a":{"r":"ScriptStep"}},"end":{"n":["response"]}},"n":["name"]}},"n":["component_type","workflow_name","output","response_schema","subagent"]}}},"n":["settle_order"]},"end":{"n":["error"]},"reason":{"n":["chunks","chunk_delay_ms","encrypted"]},"usage":{"n":["reasoning_tokens","cached_input_tokens","cost"]}}}},"retries":{"a":{"o":{"steps":{"a":{"t":"op","v":{"say":{"n":["chunks","chunk_delay_ms"]},"tool_calls":{"o":{"calls":{"a":{"o":{"progress":{"a":{"n":["message","fraction"]}},"output":{"n":["command","stdout","stderr","exit_code"]},"outcome":{"t":"kind","v":{"result":{"n":["summary"]},"await_response":{"n":["expire_after_ms","summary"]},"dismiss":{"n":["reason"]}}},"subagent":{"o":{"steps":{"a":{"r":"ScriptStep"}},"end":{"n":["response"]}},"n":["name"]}},"n":["component_type","workflow_name","output","response_schema","subagent"]}}},"n":["settle_order"]},"end":{"n":["error"]},"reason":{"n":["chunks","chunk_delay_ms","encrypted"]},"usage":{"n":["reasoning_tokens","cached_input_tokens","cost"]}}}}}}}}}}}}},"n":["resume","script","client","features","window"]},"chat.user_message":null,"chat.tool_call_response":{"o":{"outcome":{"t":"action","v":{"dismiss":{"n":["reason"]}}}}},"chat.rewind":null,"chat.retry":null,"chat.cancel":null,"chat.history_request":{"n":["tool_call_id"]}};
/** @internal The plans of recursive definitions, which their nested copies name (`{r}`). */
export const NAMED_PLANS: { readonly [name: string]: NullPlan | null } = {"DisplayItem":{"t":"kind","v":{"tool_call":{"o":{"progress":{"n":["message","fraction"]},"dismissal":{"n":["reason"]},"subagent":{"o":{"items":{"a":{"r":"DisplayItem"}}},"n":["name","continues","response","before","total"]}},"n":["component_type","workflow_name","response_schema","progress","summary","error","dismissal","settled_ts","subagent"]},"tool_output":{"n":["command","exit_code"]},"reasoning":{"n":["encrypted"]}}},"ScriptStep":{"t":"op","v":{"say":{"n":["chunks","chunk_delay_ms"]},"tool_calls":{"o":{"calls":{"a":{"o":{"progress":{"a":{"n":["message","fraction"]}},"output":{"n":["command","stdout","stderr","exit_code"]},"outcome":{"t":"kind","v":{"result":{"n":["summary"]},"await_response":{"n":["expire_after_ms","summary"]},"dismiss":{"n":["reason"]}}},"subagent":{"o":{"steps":{"a":{"r":"ScriptStep"}},"end":{"n":["response"]}},"n":["name"]}},"n":["component_type","workflow_name","output","response_schema","subagent"]}}},"n":["settle_order"]},"end":{"n":["error"]},"reason":{"n":["chunks","chunk_delay_ms","encrypted"]},"usage":{"n":["reasoning_tokens","cached_input_tokens","cost"]}}}};
/** @internal */
export type NullPlan =
  | { readonly o?: { readonly [member: string]: NullPlan }; readonly n?: readonly string[] }
  | { readonly a: NullPlan }
  | { readonly t: string; readonly v: { readonly [tag: string]: NullPlan } }
  | { readonly u: readonly NullPlan[] }
  | { readonly r: string };
