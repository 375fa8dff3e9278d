/* eslint-disable */
// Generated from schema/json by tools/ts-check (json-schema-to-typescript). Do not edit:
// change the Rust types, run `cargo run -p chatwire-schema-tool -- export`, then `npm run generate`.

/**
 * A complete assistant message in Markdown.
 */
export interface ChatAssistantMessage {
  type: "chat.assistant_message";
  /**
   * Position of this frame in the session's frame sequence.
   */
  seq: number;
  /**
   * The turn that produced this message.
   */
  invocation_id: string;
  /**
   * Id of the new `assistant_markdown` display item.
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
