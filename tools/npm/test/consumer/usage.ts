// A frontend's use of the types, compiled with --strict by a fresh project that installed the
// packed tarball: dispatch over server frames is exhaustive, frames it builds type-check, and
// malformed ones do not (each `@ts-expect-error` fails the build if the types ever accept it).
import {
  applyReasoningDelta,
  checkResponse,
  ERROR_CODE_VALUES,
  parseResponseSchema,
  SERVER_FRAME_TYPES,
  type ChatCancel,
  type ChatHistoryRequest,
  type ChatwireClient,
  ChatwireError,
  mergePage,
  type WindowInfo,
  type DisplacedCode,
  type ChatToolCallResponse,
  type ChatUserMessage,
  type ClientFrame,
  type DisplayItem,
  type ErrorCode,
  type ErrorFrame,
  type FrameOf,
  type ItemOf,
  type ResponseSchema,
  type ResponseViolation,
  type RunStatus,
  type ServerFrame,
  type ServerFrameType,
  type SessionHello,
  type ToolCallStatus,
  type UiState,
  type Cost,
  type DeltaResult,
  type Usage,
  type UsageState,
} from "@chatwire/protocol";

function unreachable(value: never): never {
  throw new TypeError(`unhandled ${JSON.stringify(value)}`);
}

export function describe(frame: ServerFrame): string {
  switch (frame.type) {
    case "session.welcome":
      return `welcome ${frame.session_id} v${frame.version} resumed=${frame.resumed}`;
    case "ui_state_snapshot":
    case "ui_state_updated":
      return `state with ${frame.state.items.length} items, run ${frame.state.run.status}`;
    case "ui_state_patch":
      return `patch of ${frame.patch.length} ops on seq ${frame.base_seq}`;
    case "chat.user_message_accepted":
      return `accepted ${frame.invocation_id}`;
    case "chat.run_started":
      return `run ${frame.invocation_id}`;
    case "chat.assistant_message":
      return `assistant ${frame.item_id}`;
    case "chat.assistant_message_delta":
      return `assistant ${frame.item_id} +${frame.delta.length}`;
    case "chat.tool_call":
      return `tool ${frame.tool_name} in ${frame.display}${frame.awaiting_response ? " (awaiting)" : ""}`;
    case "chat.tool_progress":
    case "chat.tool_output":
    case "chat.tool_call_complete":
    case "chat.tool_call_dismiss":
      return `${frame.type} ${frame.tool_call_id}`;
    case "chat.run_complete":
      return `run ${frame.invocation_id} ${frame.status}`;
    case "chat.rewind_complete":
      return `rewound ${frame.removed_invocation_ids.length} turns`;
    case "chat.retry_accepted":
      return `retried ${frame.invocation_id} after ${frame.after_item_id}`;
    case "chat.cancel_accepted":
      return `cancelling ${frame.invocation_id}`;
    case "chat.history_page":
      return `page of ${frame.items.length} before ${frame.before ?? "the start"}`;
    case "chat.reasoning_delta":
      return `reasoning ${frame.item_id} +${frame.text.length}`;
    case "chat.reasoning":
      return `reasoning ${frame.item_id}${frame.redacted ? " (redacted)" : ""}`;
    case "chat.subagent_started":
      return `sub-agent ${frame.thread_id} in ${frame.tool_call_id}`;
    case "chat.subagent_complete":
      return `sub-agent of ${frame.tool_call_id} ${frame.status}`;
    case "error":
      return `error ${frame.code}${frame.fatal ? " (fatal)" : ""}`;
    default:
      return unreachable(frame);
  }
}

/** Every error code has a label; a new code breaks this build until it is handled. */
export function errorLabel(code: ErrorCode): string {
  const labels: { [C in ErrorCode]: string } = {
    malformed_frame: "bad JSON", binary_frame: "binary frame", unknown_type: "unknown type", invalid_frame: "invalid frame",
    frame_too_large: "too large", hello_required: "hello first", already_open: "already open",
    unsupported_version: "version", resume_rejected: "resume rejected", resume_cursor_ahead: "cursor ahead",
    script_not_allowed: "no scripts", invalid_script: "bad script", duplicate_message: "duplicate",
    run_in_progress: "busy", unknown_tool_call: "unknown call", tool_call_settled: "settled",
    tool_call_not_awaiting: "not awaiting", unknown_invocation: "unknown turn", session_taken_over: "taken over",
    internal_error: "server error", capability_not_offered: "not offered", unknown_item: "unknown item",
    item_not_in_latest_turn: "not latest turn", retry_keeps_open_call: "keeps open call",
    run_not_active: "run over", response_invalid: "answer does not fit", session_detached: "open elsewhere",
    stale_cursor: "page again",
  };
  return labels[code];
}
export const allLabels: string[] = ERROR_CODE_VALUES.map(errorLabel);
export const serverTypes: readonly ServerFrameType[] = SERVER_FRAME_TYPES;

export function closesConnection(error: ErrorFrame): boolean {
  return error.fatal || error.code === "session_taken_over" || error.code === "session_detached";
}

export function pendingForms(state: UiState): ItemOf<"tool_call">[] {
  return state.items.filter((i): i is ItemOf<"tool_call"> => i.kind === "tool_call" && i.status === "pending");
}

export function itemLabel(item: DisplayItem): string {
  return `${item.kind}:${item.id}`;
}

// Optional members the server never sends as null are typed without null.
export function summaryOf(call: FrameOf<"chat.tool_call_complete">): string {
  const summary: string | undefined = call.summary;
  // `result` is free JSON: unknown, so a boolean answer needs no cast.
  const result: unknown = call.result;
  return summary ?? JSON.stringify(result);
}

export const statuses: [ToolCallStatus, RunStatus] = ["pending", "idle"];

export const hello: SessionHello = { type: "session.hello", id: "h-1", versions: ["1.0"], client: "consumer" };
export const message: ChatUserMessage = { type: "chat.user_message", id: "m-1", text: "Deploy the staging branch" };
export const yes: ChatToolCallResponse = {
  type: "chat.tool_call_response",
  id: "r-1",
  tool_call_id: "tc-1",
  outcome: { action: "submit", value: true },
};
export const outgoing: ClientFrame[] = [hello, message, yes];

// @ts-expect-error a user message needs `text`
export const missingText: ChatUserMessage = { type: "chat.user_message", id: "m-2" };

// @ts-expect-error the wire `type` is a literal
export const wrongType: ChatUserMessage = { type: "chat.user_messages", id: "m-3", text: "x" };

export const badOutcome: ChatToolCallResponse = {
  type: "chat.tool_call_response",
  id: "r-2",
  tool_call_id: "tc-1",
  // @ts-expect-error `action` is submit or dismiss
  outcome: { action: "maybe" },
};

// @ts-expect-error the server never sends null here, so the type has none
export const nullSummary: FrameOf<"chat.tool_call_complete">["summary"] = null;

// 1.2: Stop, and typed answers.
export const stop: ChatCancel = { type: "chat.cancel", id: "stop-1", invocation_id: "inv-1" };
export async function stopRun(client: ChatwireClient, state: UiState): Promise<string | null> {
  const invocation = state.run.invocation_id;
  if (invocation === undefined || (state.run.status !== "running" && state.run.status !== "awaiting_input")) return null;
  const accepted = await client.cancel(invocation);
  return accepted.in_reply_to;
}

// A response schema is a recursive type: nested properties, items and additionalProperties.
export const profile: ResponseSchema = {
  type: "object",
  properties: { name: { type: "string", minLength: 1, title: "Name" }, tags: { type: "array", items: { enum: ["a", "b"] } } },
  required: ["name"],
  additionalProperties: false,
};
// @ts-expect-error `type` names a JSON Schema type
export const badType: ResponseSchema = { type: "text" };
// @ts-expect-error `required` lists property names
export const badRequired: ResponseSchema = { required: "name" };

export function problemOf(call: ItemOf<"tool_call">, value: unknown): string | null {
  const violation: ResponseViolation | null = checkResponse(call, value);
  return violation === null ? null : `${violation.pointer} (${violation.keyword}): ${violation.message}`;
}
export const refused: string = (() => {
  const parsed = parseResponseSchema({ pattern: "x" });
  return parsed.ok ? "taken" : `${parsed.error.kind} at ${JSON.stringify(parsed.error.at)}`;
})();

// 1.2 multi_attach: a displaced tab says why and takes the session back when the user asks.
export function elsewhere(client: ChatwireClient): string | null {
  const displaced: DisplacedCode | null = client.displaced;
  switch (displaced) {
    case "session_taken_over":
      return "open in another tab";
    case "session_detached":
      return `open in more than ${client.session?.limits.max_attached_connections ?? "too many"} tabs`;
    case null:
      return client.attached ? null : "this tab alone";
  }
}
export async function useHere(client: ChatwireClient): Promise<boolean> {
  const welcome = await client.takeOver();
  return welcome.resumed;
}
// @ts-expect-error displaced is one of the two codes of a session that went elsewhere
export const notDisplaced: DisplacedCode = "run_in_progress";

// 1.2 state_window: a windowed view pages back; a cut's stale cursor is paged again.
export async function showOlder(client: ChatwireClient): Promise<number> {
  const info: WindowInfo | null = client.window;
  if (info === null || info.before === null) return 0;
  try {
    const page = await client.loadOlder(50);
    return page === null ? 0 : page.items.length;
  } catch (error) {
    if (error instanceof ChatwireError && error.code === "stale_cursor") return showOlder(client);
    throw error;
  }
}
export const older: ChatHistoryRequest = { type: "chat.history_request", id: "p-1", before: "item-9", limit: 100 };
export const windowedHello: SessionHello = { type: "session.hello", id: "h-2", versions: ["1.2"], window: 200 };
export const merged: UiState | null = mergePage({ items: [], run: { status: "idle" } }, "item-9", []);
// @ts-expect-error a history request names the cursor it pages from
export const noCursor: ChatHistoryRequest = { type: "chat.history_request", id: "p-2", limit: 100 };

// 1.3 reasoning and usage: a reasoning item is shown collapsed and its payload never read; each run
// slice's usage arrives as a typed event, the sums in the state are keyed by invocation.
export function reasoningLabel(item: ItemOf<"reasoning">): string {
  if (item.redacted === true) return "reasoning (redacted)";
  return item.streaming === true ? `thinking… ${item.text.length} characters` : "reasoning";
}
export function spentOn(state: UiState, invocationId: string): string | null {
  const usage: Usage | undefined = state.usage?.invocations[invocationId];
  if (usage === undefined) return null;
  const cost: Cost | undefined = usage.cost;
  return `${usage.input_tokens} in, ${usage.output_tokens} out${cost === undefined ? "" : `, ${cost.amount} ${cost.currency}`}`;
}
export function onUsage(client: ChatwireClient): () => void {
  return client.on("usage", (usage: Usage, frame: FrameOf<"chat.run_complete">) => {
    console.log(`${frame.invocation_id} used ${usage.input_tokens + usage.output_tokens} tokens`);
  });
}
export const grown: DeltaResult = applyReasoningDelta(
  { items: [], run: { status: "running", invocation_id: "inv-1" } },
  { type: "chat.reasoning_delta", seq: 7, invocation_id: "inv-1", item_id: "r-1", text: "First,", ts: "2026-11-23T10:00:00Z" },
);
export const totals: UsageState = { total: { input_tokens: 12, output_tokens: 3 }, invocations: { "inv-1": { input_tokens: 12, output_tokens: 3 } } };
// @ts-expect-error an amount is a decimal string, never a number (no float rounding of money)
export const floatCost: Cost = { amount: 0.01, currency: "USD" };
