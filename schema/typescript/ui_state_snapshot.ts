/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

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
 * The base the client renders from after connecting or resuming (`STATE-002`).
 */
export interface UiStateSnapshot {
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
