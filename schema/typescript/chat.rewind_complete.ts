/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;

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
  in_reply_to: string;
  /**
   * The invocation the state was cut before.
   */
  before_invocation_id: string;
  /**
   * The invocations removed from the effective state, oldest first (the log keeps them).
   */
  removed_invocation_ids: Id[];
  /**
   * When the rewind took effect (RFC 3339).
   */
  ts: string;
}
