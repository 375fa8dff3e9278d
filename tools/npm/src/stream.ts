// STATE-042 in TypeScript: the one reducer rule a client runs itself. A 1.1 server sends no state
// frame for a `chat.assistant_message_delta` (STREAM-002); the client applies the delta to the state
// it holds (STREAM-007). The rule's reference is `chatwire_schema::reduce`; this copy is proven
// equal to it on fixtures/stream-deltas/cases.jsonl, which the Rust crate writes
// (test/stream-deltas.test.mjs).
import { REDUCE_REFUSALS } from "./generated/facts.js";
import type { ChatAssistantMessageDelta, DisplayItem, ItemOf, UiState } from "./generated/protocol.js";

/**
 * Why a delta was refused, by the requirement that refuses it (spec/ui-state.md#refusals): the run
 * is not in progress for the delta's invocation (`NotInRun`, STATE-022), the delta names an item
 * that is not the open stream (`NotStreaming`, STATE-045), or it opens a stream while another one
 * is open (`StreamOpen`, STATE-046).
 */
export type DeltaRefusal = (typeof REDUCE_REFUSALS)["NotInRun" | "NotStreaming" | "StreamOpen"];

/** The outcome of applying a delta: the new state, or the refusal that left the state as it was. */
export type DeltaResult = { ok: true; state: UiState } | { ok: false; refusal: DeltaRefusal; message: string };

type Markdown = ItemOf<"assistant_markdown">;

function isOpenStream(item: DisplayItem): item is Markdown {
  return item.kind === "assistant_markdown" && item.streaming === true;
}

/**
 * Applies a delta (STATE-042): appends its text to the open stream it names, or opens a stream
 * with it as a new last item. The input state is never changed; the new state shares every item
 * but the one that grew. The checks come in the reducer's order, so a delta that breaks several
 * rules is refused by the same one as in Rust.
 */
export function applyDelta(state: UiState, delta: ChatAssistantMessageDelta): DeltaResult {
  if (state.run.status !== "running" || state.run.invocation_id !== delta.invocation_id) {
    return { ok: false, refusal: REDUCE_REFUSALS.NotInRun, message: `invocation ${delta.invocation_id} has no run in progress` };
  }
  const items = state.items;
  // The open stream, when there is one, is the last item (spec/streaming.md#the-frames).
  const last = items.at(-1);
  if (last !== undefined && isOpenStream(last)) {
    if (last.id !== delta.item_id) {
      return { ok: false, refusal: REDUCE_REFUSALS.StreamOpen, message: `item ${last.id} is still streaming` };
    }
    if (last.invocation_id !== delta.invocation_id) {
      return { ok: false, refusal: REDUCE_REFUSALS.NotStreaming, message: `item ${delta.item_id} is not an open stream of invocation ${delta.invocation_id}` };
    }
    const next = items.slice();
    next[next.length - 1] = { ...last, markdown: last.markdown + delta.delta };
    return { ok: true, state: { ...state, items: next } };
  }
  if (items.some((item) => item.id === delta.item_id)) {
    return { ok: false, refusal: REDUCE_REFUSALS.NotStreaming, message: `item ${delta.item_id} is not an open stream` };
  }
  const opened: Markdown = {
    kind: "assistant_markdown",
    id: delta.item_id,
    invocation_id: delta.invocation_id,
    markdown: delta.delta,
    streaming: true,
    ts: delta.ts,
  };
  return { ok: true, state: { ...state, items: [...items, opened] } };
}
