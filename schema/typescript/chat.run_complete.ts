/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

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
  invocation_id: string;
  /**
   * Why it ended. `awaiting_input` requires a pending call; the others require none open (`RUN-003`, `RUN-004`).
   */
  status: "awaiting_input" | "completed" | "failed" | "cancelled";
  /**
   * A machine-readable reason, e.g. `awaiting_user_input` or `script_exhausted`.
   */
  reason?: string | null;
  /**
   * What went wrong, for `failed`.
   */
  error?: string | null;
  /**
   * When the slice ended (RFC 3339).
   */
  ts: string;
}
