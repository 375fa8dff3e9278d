/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;

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
  tool_call_id: string;
  /**
   * Who asked for the dismissal.
   */
  initiated_by: "server" | "client";
  /**
   * Why, for display and logs.
   */
  reason?: string | null;
  /**
   * The `id` of the client's `chat.tool_call_response` when the client asked for it.
   */
  in_reply_to?: Id | null;
  /**
   * When it was dismissed (RFC 3339).
   */
  ts: string;
}
