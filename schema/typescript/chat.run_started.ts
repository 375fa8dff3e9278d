/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

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
  invocation_id: string;
  /**
   * When the slice started (RFC 3339).
   */
  ts: string;
}
