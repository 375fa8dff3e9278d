// Typed usage of the generated types, compiled with `tsc --strict`: a frontend's dispatch over
// server frames must be exhaustive, frames it builds must type-check, and malformed frames must
// not (each `@ts-expect-error` fails the build if the generated types ever accept it).
import type {
  ChatToolCallResponse,
  ChatUserMessage,
  ClientFrame,
  DisplayItem,
  ErrorFrame,
  ServerFrame,
  SessionHello,
  UiState,
} from "../../../schema/typescript/index";

/** Exhaustiveness: adding a server frame type without handling it here breaks the build. */
function unreachable(value: never): never {
  throw new TypeError(`unhandled frame ${JSON.stringify(value)}`);
}

/** What a chat UI does with each frame, reduced to a label; the switch narrows on `type`. */
export function describe(frame: ServerFrame): string {
  switch (frame.type) {
    case "session.welcome":
      return `welcome ${frame.session_id} v${frame.version} resumed=${frame.resumed}`;
    case "ui_state_snapshot":
    case "ui_state_updated":
      return `state with ${frame.state.items.length} items, run ${frame.state.run.status}`;
    case "chat.user_message_accepted":
      return `accepted ${frame.invocation_id}`;
    case "chat.run_started":
      return `run ${frame.invocation_id}`;
    case "chat.assistant_message":
      return `assistant ${frame.item_id}`;
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
    case "error":
      return `error ${frame.code}${frame.fatal ? " (fatal)" : ""}`;
    default:
      return unreachable(frame);
  }
}

/** A fatal error closes the connection; the client may reconnect and resume. */
export function closesConnection(error: ErrorFrame): boolean {
  return error.fatal || error.code === "session_taken_over";
}

/** Display items are a tagged union on `kind`. */
export function itemLabel(item: DisplayItem): string {
  return `${item.kind}:${item.id}`;
}

export function transcript(state: UiState): string[] {
  return state.items.map(itemLabel);
}

export const hello: SessionHello = { type: "session.hello", id: "h-1", versions: ["1.0"], client: "ts-check" };

export const message: ChatUserMessage = { type: "chat.user_message", id: "m-1", text: "Deploy the staging branch" };

export const submit: ChatToolCallResponse = {
  type: "chat.tool_call_response",
  id: "r-1",
  tool_call_id: "tc-1",
  outcome: { action: "submit", value: { approved: true } },
};

export const outgoing: ClientFrame[] = [hello, message, submit];

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
