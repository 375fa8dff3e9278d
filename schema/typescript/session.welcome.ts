/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * An optional feature the server offers. Known names: rewind, tool_output, tool_expiry, conformance_script, restart_durability; receivers must tolerate others.
 */
export type Capability = string;

/**
 * Confirms the session: the chosen version, the ids to resume it later, and what the server offers.
 */
export interface SessionWelcome {
  type: "session.welcome";
  /**
   * Position of this frame in the session's frame sequence; grows strictly (`SEQ-001`).
   */
  seq: number;
  /**
   * The `id` of the `session.hello` this answers.
   */
  in_reply_to: string;
  /**
   * The protocol version chosen for this connection, one of those the client offered.
   */
  version: string;
  /**
   * The session's id; stable across reconnects and server restarts.
   */
  session_id: string;
  /**
   * Secret needed to resume this session; the server may rotate it on every welcome.
   */
  resume_token: string;
  /**
   * True when this welcome resumed an existing session, false when it opened a new one.
   */
  resumed: boolean;
  /**
   * Optional features this server implements; scenarios needing others are not applicable.
   */
  capabilities: Capability[];
  limits: Limits;
  /**
   * Free-form name and version of the server, for logs.
   */
  server?: string | null;
}
/**
 * Limits the client must respect.
 */
export interface Limits {
  /**
   * Largest text frame the server accepts, in bytes; a larger one gets `frame_too_large`.
   */
  max_frame_bytes: number;
}
