/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A protocol version MAJOR.MINOR, e.g. "1.0".
 */
export type ProtocolVersion = string;
/**
 * One step of a turn.
 */
export type ScriptStep =
  | {
      op: "say";
      /**
       * The message body, CommonMark.
       */
      markdown: string;
    }
  | {
      op: "tool_calls";
      /**
       * The calls, in call order.
       */
      calls: ScriptToolCall[];
      /**
       * Indices of the calls that settle by themselves (every outcome but `await_response`),
       * in the order they settle; default: call order.
       */
      settle_order?: number[] | null;
    }
  | {
      op: "wait";
      /**
       * How long, in milliseconds (at most 60000).
       */
      ms: number;
    }
  | {
      op: "end";
      /**
       * How the turn ends.
       */
      status: "completed" | "failed" | "cancelled";
      /**
       * The error text for `failed`.
       */
      error?: string | null;
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
 * Opens a new session or resumes an existing one, naming the protocol versions the client speaks.
 */
export interface SessionHello {
  type: "session.hello";
  /**
   * Client-chosen id of this frame; answers (`session.welcome`, `error`) carry it as `in_reply_to`.
   */
  id: string;
  /**
   * The protocol versions the client speaks, in any order; the server picks one (`SESSION-003`).
   *
   * @minItems 1
   */
  versions: [ProtocolVersion, ...ProtocolVersion[]];
  /**
   * Present to resume an existing session instead of opening a new one.
   */
  resume?: Resume | null;
  /**
   * A scripted agent to run in place of the backend's model; honoured only by a backend in
   * conformance mode, and only when opening a new session (`SCRIPT-001`).
   */
  script?: AgentScript | null;
  /**
   * Free-form name and version of the client, for logs.
   */
  client?: string | null;
}
/**
 * What a client needs to resume a session (`spec/resume.md`).
 */
export interface Resume {
  /**
   * The `session_id` from the `session.welcome` that opened the session.
   */
  session_id: string;
  /**
   * The secret `resume_token` from that welcome; without the right one the server refuses.
   */
  resume_token: string;
  /**
   * The highest `seq` the client has seen on this session (0 if none).
   */
  last_seq: number;
}
/**
 * A whole script: `turns[n]` answers the n-th user message the session accepts (rewound ones included).
 */
export interface AgentScript {
  /**
   * One entry per accepted user message, in order.
   */
  turns: ScriptTurn[];
}
/**
 * What the agent does in answer to one user message.
 */
export interface ScriptTurn {
  /**
   * Steps in order. A turn without an `end` step ends `completed`.
   */
  steps: ScriptStep[];
}
/**
 * One scripted tool call.
 */
export interface ScriptToolCall {
  /**
   * The `tool_name` to send.
   */
  tool_name: string;
  /**
   * The `interaction_type` to send.
   */
  interaction_type: "ui_tool" | "ui_surface" | "auto_tool" | "input_request";
  /**
   * The `display` to send.
   */
  display: "inline" | "artifact" | "composer" | "view";
  /**
   * The `component_type` to send.
   */
  component_type?: string | null;
  /**
   * The `workflow_name` to send.
   */
  workflow_name?: string | null;
  /**
   * The `payload` to send.
   */
  payload?: {
    [k: string]: unknown | undefined;
  };
  /**
   * How long the tool runs before its first progress report or settlement, in milliseconds (at most 60000).
   */
  run_ms?: number;
  /**
   * Progress reports to stream while it runs, in order.
   */
  progress?: ScriptProgress[];
  /**
   * Tool-group output to send before it settles.
   */
  output?: ScriptOutput | null;
  /**
   * How the call settles.
   */
  outcome:
    | {
        kind: "result";
        /**
         * The result value.
         */
        value: {
          [k: string]: unknown | undefined;
        };
        /**
         * The summary line.
         */
        summary?: string | null;
      }
    | {
        kind: "error";
        /**
         * The error text.
         */
        message: string;
      }
    | {
        kind: "await_response";
        /**
         * Expire the call if unanswered after this many milliseconds (at most 600000).
         */
        expire_after_ms?: number | null;
        /**
         * The summary line once completed.
         */
        summary?: string | null;
      }
    | {
        kind: "dismiss";
        /**
         * The dismissal reason.
         */
        reason?: string | null;
      };
}
/**
 * One scripted progress report.
 */
export interface ScriptProgress {
  /**
   * The status line.
   */
  message?: string | null;
  /**
   * How much is done.
   */
  fraction?: Fraction | null;
}
/**
 * Scripted tool-group output, sent as one `chat.tool_output` per non-empty part.
 */
export interface ScriptOutput {
  /**
   * The command line.
   */
  command?: string | null;
  /**
   * Approval decisions, one frame each.
   */
  approvals?: ApprovalDecision[];
  /**
   * Standard output.
   */
  stdout?: string | null;
  /**
   * Standard error.
   */
  stderr?: string | null;
  /**
   * Exit code.
   */
  exit_code?: number | null;
}
