/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;
/**
 * A protocol version MAJOR.MINOR, e.g. "1.0".
 */
export type ProtocolVersion = string;

/**
 * A typed error. `fatal` says whether the server closes the connection after it.
 */
export interface Error {
  type: "error";
  /**
   * Position in the session's frame sequence; absent when no session is bound to the connection.
   */
  seq?: number | null;
  /**
   * What went wrong.
   */
  code:
    | "malformed_frame"
    | "binary_frame"
    | "unknown_type"
    | "invalid_frame"
    | "frame_too_large"
    | "hello_required"
    | "already_open"
    | "unsupported_version"
    | "resume_rejected"
    | "resume_cursor_ahead"
    | "script_not_allowed"
    | "invalid_script"
    | "duplicate_message"
    | "run_in_progress"
    | "unknown_tool_call"
    | "tool_call_settled"
    | "tool_call_not_awaiting"
    | "unknown_invocation"
    | "session_taken_over"
    | "internal_error";
  /**
   * A human-readable explanation, one sentence, lowercase.
   */
  message: string;
  /**
   * The `id` of the client frame this answers, when that frame was readable enough to have one.
   */
  in_reply_to?: Id | null;
  /**
   * True when the server closes the connection right after this frame.
   */
  fatal: boolean;
  /**
   * With `unsupported_version`: every version the server speaks.
   */
  supported_versions?: ProtocolVersion[] | null;
}
