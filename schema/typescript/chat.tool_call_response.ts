/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * Answers a `pending` tool call by its `tool_call_id`, from any connection of the session.
 * Responses are idempotent: a second one gets `tool_call_settled` and is never executed (`TOOL-012`).
 */
export interface ChatToolCallResponse {
  type: "chat.tool_call_response";
  /**
   * Client-chosen id of this frame; the settlement and any error carry it as `in_reply_to`.
   */
  id: string;
  /**
   * The call being answered.
   */
  tool_call_id: string;
  /**
   * The answer.
   */
  outcome:
    | {
        action: "submit";
        /**
         * What the user entered or chose; any JSON value.
         */
        value: {
          [k: string]: unknown | undefined;
        };
      }
    | {
        action: "dismiss";
        /**
         * Why, for display and logs.
         */
        reason?: string | null;
      };
}
