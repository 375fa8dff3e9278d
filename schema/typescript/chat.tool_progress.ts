/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A number from 0 to 1 inclusive.
 */
export type Fraction = number;

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
  tool_call_id: string;
  /**
   * A short human-readable status line.
   */
  message?: string | null;
  /**
   * How much is done, from 0 to 1.
   */
  fraction?: Fraction | null;
  /**
   * When the progress was observed (RFC 3339).
   */
  ts: string;
}
