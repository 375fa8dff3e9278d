/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * Announces the user message item and the invocation (turn) it opens.
 */
export interface ChatUserMessageAccepted {
  type: "chat.user_message_accepted";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The `id` of the `chat.user_message` that was accepted.
   */
  in_reply_to: string;
  /**
   * The turn this message opens; every item the turn produces carries it.
   */
  invocation_id: string;
  /**
   * Id of the new `user_message` display item.
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
