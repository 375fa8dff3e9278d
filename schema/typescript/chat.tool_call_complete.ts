/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;

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
  tool_call_id: string;
  /**
   * How it settled.
   */
  status: "completed" | "failed" | "expired";
  /**
   * The tool's result (for `completed`), e.g. the value the user submitted.
   */
  result?: {
    [k: string]: unknown | undefined;
  };
  /**
   * What went wrong (for `failed` and `expired`).
   */
  error?: string | null;
  /**
   * One line the client shows in place of a settled component, e.g. "API key saved".
   */
  summary?: string | null;
  /**
   * The `id` of the `chat.tool_call_response` that caused this, if any.
   */
  in_reply_to?: Id | null;
  /**
   * When it settled (RFC 3339).
   */
  ts: string;
}
