/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A requirement id such as `SEQ-001`.
 */
export type RequirementId = string;
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
 * One step of a scenario.
 *
 * Strings of the form `{{name}}` are placeholders. In an expectation an unbound name captures the
 * value found there and a bound one must equal it; `{{any}}` matches any present value and
 * `{{absent}}` requires the field to be missing. An object whose only key is `$contains` (or
 * `$excludes`) with an array of patterns matches an array that holds an element matching each
 * pattern (or none matching any), in any order. In a frame to send they are replaced by the bound
 * value; built-in names: `session_id`, `resume_token`, `last_seq` (highest seq seen on the session),
 * `last_sent_id`.
 */
export type Step =
  | {
      do: "connect";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Versions to offer instead of the runner's (`["1.0"]`).
       */
      versions?: string[] | null;
      /**
       * Whether to send the scenario's script in the hello (default true).
       */
      with_script?: boolean;
      /**
       * Whether to do the hello handshake at all (default true).
       */
      hello?: boolean;
      /**
       * Whether to offer the `chatwire.v1` subprotocol in the handshake (default true). With
       * false the server must accept the handshake, select no subprotocol and speak v1 all the
       * same (TRANSPORT-004).
       */
      subprotocol?: boolean;
    }
  | {
      do: "resume";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Cursor to send instead of the highest seq seen.
       */
      last_seq?: number | null;
    }
  | {
      do: "disconnect";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
    }
  | {
      do: "restart";
      /**
       * Shut down in an orderly way instead: SIGTERM, then every open connection must be closed
       * with close code 1001 (TRANSPORT-009); a backend still running 10 s (scaled) later is
       * killed. Then it is started again on the same storage.
       */
      graceful?: boolean;
    }
  | {
      do: "user_message";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Frame id (default: generated `uN`); reuse one to test idempotency.
       */
      id?: string | null;
      /**
       * The text.
       */
      text: string;
    }
  | {
      do: "respond";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Frame id (default: generated `rN`).
       */
      id?: string | null;
      /**
       * The call answered, usually a placeholder such as `{{tool_call:1}}`.
       */
      tool_call: string;
      /**
       * The `outcome` object, e.g. `{"action": "submit", "value": 1}`.
       */
      outcome: {
        [k: string]: unknown | undefined;
      };
    }
  | {
      do: "rewind";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Frame id (default: generated `wN`).
       */
      id?: string | null;
      /**
       * The first invocation to remove, usually a placeholder such as `{{invocation:2}}`.
       */
      before: string;
    }
  | {
      do: "send";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The frame.
       */
      frame: {
        [k: string]: unknown | undefined;
      };
    }
  | {
      do: "send_text";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The text.
       */
      text: string;
    }
  | {
      do: "ping";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The payload, as UTF-8 text; a control frame carries at most 125 bytes.
       */
      payload: string;
      /**
       * Step deadline in ms before `--timeout-scale` (default 5000).
       */
      timeout_ms?: number | null;
    }
  | {
      do: "send_binary";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Number of bytes.
       */
      bytes: number;
    }
  | {
      do: "expect";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The pattern.
       */
      frame: {
        [k: string]: unknown | undefined;
      };
      /**
       * Step deadline in ms before `--timeout-scale` (default 5000).
       */
      timeout_ms?: number | null;
    }
  | {
      do: "expect_unordered";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The patterns.
       *
       * @minItems 1
       */
      frames: [unknown, ...unknown[]];
      /**
       * Step deadline in ms before `--timeout-scale` (default 5000).
       */
      timeout_ms?: number | null;
    }
  | {
      do: "expect_error";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The error code.
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
       * Pattern for `in_reply_to`; `{{absent}}` when the sent frame had no readable id.
       */
      in_reply_to?: string | null;
      /**
       * Step deadline in ms before `--timeout-scale` (default 5000).
       */
      timeout_ms?: number | null;
    }
  | {
      do: "expect_close";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * The close code expected.
       */
      code?: number | null;
      /**
       * Step deadline in ms before `--timeout-scale` (default 5000).
       */
      timeout_ms?: number | null;
    }
  | {
      do: "expect_silence";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * How long to listen.
       */
      ms: number;
    }
  | {
      do: "wait_idle";
      /**
       * Connection name (default `main`).
       */
      conn?: string | null;
      /**
       * Silence that counts as idle, in ms (default 200, not scaled).
       */
      quiet_ms?: number | null;
      /**
       * Step deadline in ms before `--timeout-scale` (default 5000).
       */
      timeout_ms?: number | null;
    }
  | {
      do: "sleep";
      /**
       * How long.
       */
      ms: number;
    }
  | {
      do: "snapshot";
      /**
       * Connection whose state is projected (default `main`).
       */
      conn?: string | null;
      /**
       * Snapshot name, unique in the scenario.
       */
      name: string;
    };

/**
 * One conformance scenario: a script for the agent and the steps the runner drives.
 */
export interface Scenario {
  /**
   * Path of the meta-schema, for editors; ignored by the runner.
   */
  $schema?: string | null;
  /**
   * Stable id, equal to the file name without `.json`; baselines and reports name it.
   */
  id: string;
  /**
   * One line saying what behaviour is checked.
   */
  title: string;
  /**
   * Longer explanation: why the behaviour matters, which field failure it guards against.
   */
  description?: string | null;
  /**
   * How binding the behaviour is: failures of a `should` or `may` scenario are warnings.
   */
  level: "must" | "should" | "may";
  /**
   * The spec requirement ids this scenario covers (e.g. `TOOL-012`).
   *
   * @minItems 1
   */
  requirements: [RequirementId, ...RequirementId[]];
  /**
   * Capabilities the server must offer in its welcome; without them the scenario is not applicable.
   * A scenario with a `script` needs `conformance_script` implicitly.
   */
  capabilities?: string[];
  /**
   * The scripted agent sent in `session.hello.script` by `connect`.
   */
  script?: AgentScript | null;
  /**
   * Whether the scenario runs against the backend in conformance mode (default true). A scenario
   * with `false` checks what a backend does outside conformance mode (SCRIPT-001, SCRIPT-003): it
   * gets its own instance of the bundled backend started without `--conformance`, or the one named
   * by `--plain-url` / `--plain-exec`, and is not applicable without one. It has no `script`.
   */
  conformance_mode?: boolean;
  /**
   * What the runner does, in order. The scenario stops at the first step that fails.
   *
   * @minItems 1
   */
  steps: [Step, ...Step[]];
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
