/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A message typed by the user. The client-chosen `id` makes it idempotent (`TURN-002`).
 */
export interface ChatUserMessage {
  type: "chat.user_message";
  /**
   * Client-chosen id; sending the same id again never starts a second turn.
   */
  id: string;
  /**
   * The message text as typed.
   */
  text: string;
}
