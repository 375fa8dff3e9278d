/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;

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
  invocation_id: string;
  /**
   * The interaction id, end to end: the item id, the id a response names, the id a completion names.
   */
  tool_call_id: string;
  /**
   * Compatibility alias of `tool_call_id` for older consumers; when present it equals `tool_call_id` (`TOOL-004`).
   */
  corr?: Id | null;
  /**
   * Name of the tool as the agent called it.
   */
  tool_name: string;
  /**
   * The UI component that renders this call; required for `ui_tool` and `ui_surface` (`TOOL-005`).
   */
  component_type?: string | null;
  /**
   * The workflow that owns the component.
   */
  workflow_name?: string | null;
  /**
   * What kind of interaction this is.
   */
  interaction_type: "ui_tool" | "ui_surface" | "auto_tool" | "input_request";
  /**
   * True when the call waits for a `chat.tool_call_response` from the client.
   */
  awaiting_response: boolean;
  /**
   * Where the client shows it.
   */
  display: "inline" | "artifact" | "composer" | "view";
  /**
   * Arguments for the component or tool, as the agent produced them.
   */
  payload: {
    [k: string]: unknown | undefined;
  };
  /**
   * Position of this call within its batch of calls made at once, starting at 0 (`MULTI-001`).
   */
  call_index: number;
  /**
   * When the call was made (RFC 3339).
   */
  ts: string;
}
