/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A decision on a tool that needed approval.
 */
export type ApprovalDecision = "approve" | "deny_continue" | "deny_abort";

/**
 * Adds to the `tool_output` item of a tool call, which sits right after the call's item.
 */
export interface ChatToolOutput {
  type: "chat.tool_output";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The tool call this output belongs to; it must not be settled yet.
   */
  tool_call_id: string;
  /**
   * The command line the tool runs, set once.
   */
  command?: string | null;
  /**
   * An approval decision to append to the group's approvals.
   */
  approval?: ApprovalDecision | null;
  /**
   * Text to append to the group's stdout.
   */
  stdout?: string | null;
  /**
   * Text to append to the group's stderr.
   */
  stderr?: string | null;
  /**
   * The process exit code, set once the tool has exited.
   */
  exit_code?: number | null;
  /**
   * When the output was produced (RFC 3339).
   */
  ts: string;
}
