/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * Any frame a server sends to a client.
 */
export type ServerFrame =
  | {
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
  | {
      type: "ui_state_snapshot";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * The UiState format.
       */
      v: "ui_state_v1";
      state: UiState;
    }
  | {
      type: "ui_state_updated";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * The UiState format.
       */
      v: "ui_state_v1";
      state: UiState1;
    }
  | {
      type: "chat.user_message_accepted";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      in_reply_to: string;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      invocation_id: string;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      item_id: string;
      /**
       * The message text.
       */
      text: string;
      /**
       * When the server accepted it (RFC 3339).
       */
      ts: string;
    }
  | {
      type: "chat.run_started";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      invocation_id: string;
      /**
       * When the slice started (RFC 3339).
       */
      ts: string;
    }
  | {
      type: "chat.assistant_message";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      invocation_id: string;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      item_id: string;
      /**
       * The message body, CommonMark.
       */
      markdown: string;
      /**
       * When it was produced (RFC 3339).
       */
      ts: string;
    }
  | {
      type: "chat.tool_call";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      invocation_id: string;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      tool_call_id: string;
      /**
       * Compatibility alias of `tool_call_id` for older consumers; when present it equals `tool_call_id` (`TOOL-004`).
       */
      corr?: Id | null;
      /**
       * Name of the tool as the agent called it.
       */
      tool_name: string;
      /**
       * The UI component that renders this call; required for `ui_tool` and `ui_surface` (`TOOL-005`).
       */
      component_type?: string | null;
      /**
       * The workflow that owns the component.
       */
      workflow_name?: string | null;
      /**
       * What kind of interaction this is.
       */
      interaction_type: "ui_tool" | "ui_surface" | "auto_tool" | "input_request";
      /**
       * True when the call waits for a `chat.tool_call_response` from the client.
       */
      awaiting_response: boolean;
      /**
       * Where the client shows it.
       */
      display: "inline" | "artifact" | "composer" | "view";
      /**
       * Arguments for the component or tool, as the agent produced them.
       */
      payload: {
        [k: string]: unknown | undefined;
      };
      /**
       * Position of this call within its batch of calls made at once, starting at 0 (`MULTI-001`).
       */
      call_index: number;
      /**
       * When the call was made (RFC 3339).
       */
      ts: string;
    }
  | {
      type: "chat.tool_progress";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
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
  | {
      type: "chat.tool_output";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
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
  | {
      type: "chat.tool_call_complete";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
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
  | {
      type: "chat.tool_call_dismiss";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
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
  | {
      type: "chat.run_complete";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
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
  | {
      type: "chat.rewind_complete";
      /**
       * Position of this frame in the session's frame sequence.
       */
      seq: number;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
       */
      in_reply_to: string;
      /**
       * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
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
  | {
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
    };
/**
 * An optional feature the server offers. Known names: rewind, tool_output, tool_expiry, conformance_script, restart_durability; receivers must tolerate others.
 */
export type Capability = string;
/**
 * One thing the client displays.
 */
export type DisplayItem =
  | {
      kind: "user_message";
      /**
       * The item id.
       */
      id: string;
      /**
       * The turn the message opened.
       */
      invocation_id: string;
      /**
       * The client's id of the `chat.user_message`.
       */
      client_message_id: string;
      /**
       * The text.
       */
      text: string;
      /**
       * When it was accepted (RFC 3339).
       */
      ts: string;
    }
  | {
      kind: "assistant_markdown";
      /**
       * The item id.
       */
      id: string;
      /**
       * The turn that produced it.
       */
      invocation_id: string;
      /**
       * The body, CommonMark.
       */
      markdown: string;
      /**
       * When it was produced (RFC 3339).
       */
      ts: string;
    }
  | {
      kind: "tool_call";
      /**
       * The item id, equal to the `tool_call_id`.
       */
      id: string;
      /**
       * The turn that made the call.
       */
      invocation_id: string;
      /**
       * Name of the tool.
       */
      tool_name: string;
      /**
       * The UI component that renders the call.
       */
      component_type?: string | null;
      /**
       * The workflow that owns the component.
       */
      workflow_name?: string | null;
      /**
       * What kind of interaction this is.
       */
      interaction_type: "ui_tool" | "ui_surface" | "auto_tool" | "input_request";
      /**
       * Where the client shows it.
       */
      display: "inline" | "artifact" | "composer" | "view";
      /**
       * Whether the call waits (or waited) for a client response.
       */
      awaiting_response: boolean;
      /**
       * Where the call is in its lifecycle.
       */
      status: "pending" | "running" | "completed" | "failed" | "dismissed" | "expired";
      /**
       * Arguments for the component or tool.
       */
      payload: {
        [k: string]: unknown | undefined;
      };
      /**
       * The latest progress, while or after running.
       */
      progress?: Progress | null;
      /**
       * One line to show in place of a settled component.
       */
      summary?: string | null;
      /**
       * The result, once `completed`.
       */
      result?: {
        [k: string]: unknown | undefined;
      };
      /**
       * What went wrong, once `failed` or `expired`.
       */
      error?: string | null;
      /**
       * Who dismissed it and why, once `dismissed`.
       */
      dismissal?: Dismissal | null;
      /**
       * When the call was made (RFC 3339).
       */
      ts: string;
      /**
       * When the call settled (RFC 3339), once settled.
       */
      settled_ts?: string | null;
    }
  | {
      kind: "tool_output";
      /**
       * The item id: the `tool_call_id` followed by `.output`.
       */
      id: string;
      /**
       * The turn that made the call.
       */
      invocation_id: string;
      /**
       * The tool call this output belongs to.
       */
      tool_call_id: string;
      /**
       * Name of the tool.
       */
      tool_name: string;
      /**
       * The command line, if the tool reported one.
       */
      command?: string | null;
      /**
       * Approval decisions in the order they were made.
       */
      approvals: ApprovalDecision[];
      /**
       * Everything the tool wrote to stdout so far.
       */
      stdout: string;
      /**
       * Everything the tool wrote to stderr so far.
       */
      stderr: string;
      /**
       * The exit code, once the tool exited.
       */
      exit_code?: number | null;
    };
/**
 * A number from 0 to 1 inclusive.
 */
export type Fraction = number;
/**
 * A decision on a tool that needed approval.
 */
export type ApprovalDecision = "approve" | "deny_continue" | "deny_abort";
/**
 * An opaque identifier: 1-128 characters from [A-Za-z0-9._:-], the first alphanumeric.
 */
export type Id = string;
/**
 * A protocol version MAJOR.MINOR, e.g. "1.0".
 */
export type ProtocolVersion = string;

/**
 * Limits the client must respect.
 */
export interface Limits {
  /**
   * Largest text frame the server accepts, in bytes; a larger one gets `frame_too_large`.
   */
  max_frame_bytes: number;
}
/**
 * The session's effective state.
 */
export interface UiState {
  /**
   * Display items in the order the client shows them.
   */
  items: DisplayItem[];
  run: RunState;
}
/**
 * The latest progress of a running tool.
 */
export interface Progress {
  /**
   * A short status line.
   */
  message?: string | null;
  /**
   * How much is done, 0 to 1.
   */
  fraction?: Fraction | null;
}
/**
 * Who dismissed a tool call, and why.
 */
export interface Dismissal {
  /**
   * Which side asked for it.
   */
  initiated_by: "server" | "client";
  /**
   * Why.
   */
  reason?: string | null;
}
/**
 * The current run.
 */
export interface RunState {
  /**
   * Where the run is.
   */
  status: "idle" | "running" | "awaiting_input" | "completed" | "failed" | "cancelled";
  /**
   * The turn the status is about; absent when `idle`.
   */
  invocation_id?: Id | null;
}
/**
 * The session's effective state.
 */
export interface UiState1 {
  /**
   * Display items in the order the client shows them.
   */
  items: DisplayItem[];
  run: RunState;
}
