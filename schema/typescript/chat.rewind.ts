/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * Rewinds the session's effective state to just before the given invocation.
 */
export interface ChatRewind {
  type: "chat.rewind";
  /**
   * Client-chosen id of this frame; the result and any error carry it as `in_reply_to`.
   */
  id: string;
  /**
   * The first invocation to remove; it and every later one disappear from the effective state.
   */
  before_invocation_id: string;
}
