// STATE-042 and STATE-054 in TypeScript: the reducer rules a client runs itself. A server sends no
// state frame for a `chat.assistant_message_delta` (1.1, STREAM-002) or a `chat.reasoning_delta`
// (1.3, feature `reasoning`, spec/reasoning.md); the client applies the delta to the state it holds
// (STREAM-007). The rules' reference is `chatwire_schema::reduce`; this copy is proven equal to it
// on fixtures/stream-deltas/cases.jsonl, which the Rust crate writes (test/stream-deltas.test.mjs).
// Since 1.3 (feature `subagents`) a delta with a `parent_call_id` grows the transcript of the call it
// names by the same rules (STATE-065, nested.ts), proven on fixtures/subagent-traces/traces.jsonl.
import { REDUCE_REFUSALS } from "./generated/facts.js";
import type { ChatAssistantMessageDelta, ChatReasoningDelta, DisplayItem, ItemOf, UiState } from "./generated/protocol.js";
import { type HostRefusal, holdsItemAnywhere, transcriptAt, transcriptFor, withTranscript } from "./nested.js";

/**
 * Why a delta was refused, by the requirement that refuses it (spec/ui-state.md#refusals): since
 * 1.3, its `parent_call_id` names no call or no running sub-agent ({@link HostRefusal}); the run
 * is not in progress for the delta's invocation (`NotInRun`, STATE-022), the delta names an item
 * that is not the open stream (`NotStreaming`, STATE-045), or it opens a stream while another one
 * is open (`StreamOpen`, STATE-046); since 1.3, a reasoning delta names an item that is not an open
 * reasoning stream (`NotReasoningStream`, STATE-058), or a delta comes while another stream than
 * its own is open, or a text delta while a reasoning stream is (`ReasoningStreamOpen`, STATE-060).
 */
export type DeltaRefusal =
  | (typeof REDUCE_REFUSALS)["NotInRun" | "NotStreaming" | "StreamOpen" | "NotReasoningStream" | "ReasoningStreamOpen"]
  | HostRefusal;

/** The outcome of applying a delta: the new state, or the refusal that left the state as it was. */
export type DeltaResult = { ok: true; state: UiState } | { ok: false; refusal: DeltaRefusal; message: string };

type Markdown = ItemOf<"assistant_markdown">;
type Reasoning = ItemOf<"reasoning">;

function isOpenStream(item: DisplayItem): item is Markdown {
  return item.kind === "assistant_markdown" && item.streaming === true;
}

function isOpenReasoning(item: DisplayItem): item is Reasoning {
  return item.kind === "reasoning" && item.streaming === true;
}

function notInRun(state: UiState, invocationId: string): DeltaResult | null {
  if (state.run.status === "running" && state.run.invocation_id === invocationId) return null;
  return { ok: false, refusal: REDUCE_REFUSALS.NotInRun, message: `invocation ${invocationId} has no run in progress` };
}

/** A copy of `items` whose last item is `last`; every other item is shared. */
function withLast(items: readonly DisplayItem[], last: DisplayItem): DisplayItem[] {
  const next = items.slice();
  next[next.length - 1] = last;
  return next;
}

/** What a rule makes of one transcript: its new items, or the refusal. */
type TranscriptResult = { ok: true; items: DisplayItem[] } | { ok: false; refusal: DeltaRefusal; message: string };

/**
 * Applies `rule` to the transcript the delta names (the Rust reducer's `apply_to_transcript`): the
 * host is looked up first, then the run, then the rule sees only that transcript's items; the
 * state changes only along the path down to it.
 */
function inTranscript(
  state: UiState,
  delta: ChatAssistantMessageDelta | ChatReasoningDelta,
  rule: (items: readonly DisplayItem[]) => TranscriptResult,
): DeltaResult {
  const found = transcriptFor(state, delta.parent_call_id);
  if (!found.ok) return found;
  const refused = notInRun(state, delta.invocation_id);
  if (refused !== null) return refused;
  const result = rule(transcriptAt(state.items, found.hosts));
  if (!result.ok) return result;
  return { ok: true, state: { ...state, items: withTranscript(state.items, found.hosts, result.items) } };
}

/**
 * Applies a delta (STATE-042): appends its text to the open stream it names, or opens a stream
 * with it as a new last item. The input state is never changed; the new state shares every item
 * but the one that grew. The checks come in the reducer's order, so a delta that breaks several
 * rules is refused by the same one as in Rust.
 */
export function applyDelta(state: UiState, delta: ChatAssistantMessageDelta): DeltaResult {
  return inTranscript(state, delta, (items) => textDelta(state, items, delta));
}

/** STATE-042 on one transcript; ids are checked across the whole `state` (STATE-020). */
function textDelta(state: UiState, items: readonly DisplayItem[], delta: ChatAssistantMessageDelta): TranscriptResult {
  // The open stream, when there is one, is the last item (spec/streaming.md#the-frames).
  const last = items.at(-1);
  if (last !== undefined && isOpenReasoning(last)) {
    return { ok: false, refusal: REDUCE_REFUSALS.ReasoningStreamOpen, message: `reasoning ${last.id} is still streaming` };
  }
  if (last !== undefined && isOpenStream(last)) {
    if (last.id !== delta.item_id) {
      return { ok: false, refusal: REDUCE_REFUSALS.StreamOpen, message: `item ${last.id} is still streaming` };
    }
    if (last.invocation_id !== delta.invocation_id) {
      return { ok: false, refusal: REDUCE_REFUSALS.NotStreaming, message: `item ${delta.item_id} is not an open stream of invocation ${delta.invocation_id}` };
    }
    return { ok: true, items: withLast(items, { ...last, markdown: last.markdown + delta.delta }) };
  }
  if (holdsItemAnywhere(state.items, delta.item_id)) {
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
  return { ok: true, items: [...items, opened] };
}

/**
 * Applies a reasoning delta (STATE-054, since 1.3): appends its text to the open reasoning stream
 * it names, or opens one with it as a new last item (`streaming: true`). As {@link applyDelta}:
 * the input is never changed, the new state shares every item but the one that grew, and the
 * checks come in the Rust reducer's order.
 */
export function applyReasoningDelta(state: UiState, delta: ChatReasoningDelta): DeltaResult {
  return inTranscript(state, delta, (items) => reasoningDelta(state, items, delta));
}

/** STATE-054 on one transcript; ids are checked across the whole `state` (STATE-020). */
function reasoningDelta(state: UiState, items: readonly DisplayItem[], delta: ChatReasoningDelta): TranscriptResult {
  const last = items.at(-1);
  if (last !== undefined && (isOpenStream(last) || isOpenReasoning(last))) {
    if (last.id !== delta.item_id) {
      return { ok: false, refusal: REDUCE_REFUSALS.ReasoningStreamOpen, message: `item ${last.id} is still streaming` };
    }
    if (!isOpenReasoning(last) || last.invocation_id !== delta.invocation_id) {
      // The open stream is a text stream, or another invocation's.
      return { ok: false, refusal: REDUCE_REFUSALS.NotReasoningStream, message: `item ${delta.item_id} is not an open reasoning stream of invocation ${delta.invocation_id}` };
    }
    return { ok: true, items: withLast(items, { ...last, text: last.text + delta.text }) };
  }
  if (holdsItemAnywhere(state.items, delta.item_id)) {
    return { ok: false, refusal: REDUCE_REFUSALS.NotReasoningStream, message: `item ${delta.item_id} is not an open reasoning stream` };
  }
  const opened: Reasoning = {
    kind: "reasoning",
    id: delta.item_id,
    invocation_id: delta.invocation_id,
    text: delta.text,
    streaming: true,
    ts: delta.ts,
  };
  return { ok: true, items: [...items, opened] };
}
