// Sub-agent transcripts in TypeScript (since 1.3, feature `subagents`, spec/subagents.md): how a
// nested delta finds the transcript it grows. A frame's `parent_call_id` names the call hosting the
// transcript (STATE-065); that call must host a running sub-agent (STATE-025, STATE-071). Ids are
// unique across every transcript (STATE-020), so a call is found by id alone. Every other nested
// change reaches the client as a patch; the reference is `chatwire_schema::reduce`
// (schema/src/reducer/transcript.rs), and test/subagent-traces.test.mjs proves this copy equal to
// it on fixtures/subagent-traces/traces.jsonl.
import { REDUCE_REFUSALS } from "./generated/facts.js";
import type { DisplayItem, ItemOf, UiState } from "./generated/protocol.js";

type ToolCall = ItemOf<"tool_call">;

/** Why a nested frame found no transcript: no call has the id (`UnknownToolCall`, STATE-025), or the call hosts no running sub-agent (`SubagentNotRunning`, STATE-071). */
export type HostRefusal = (typeof REDUCE_REFUSALS)["UnknownToolCall" | "SubagentNotRunning"];

/** The transcript a frame names: the host indices on the way down (none for the top level), or why there is none. */
export type TranscriptLookup = { ok: true; hosts: readonly number[] } | { ok: false; refusal: HostRefusal; message: string };

/** The transcript `call` hosts, if it hosts one. */
function transcriptOf(item: DisplayItem): readonly DisplayItem[] | null {
  return item.kind === "tool_call" && item.subagent !== undefined ? item.subagent.items : null;
}

/** Where the item `id` sits: its index in the top level, then in each host's transcript on the way down. */
export function itemPath(items: readonly DisplayItem[], id: string): number[] | null {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!;
    if (item.id === id) return [index];
    const nested = transcriptOf(item);
    const below = nested === null ? null : itemPath(nested, id);
    if (below !== null) return [index, ...below];
  }
  return null;
}

/** Whether some transcript, the top level included, holds an item with this id (STATE-020). */
export function holdsItemAnywhere(items: readonly DisplayItem[], id: string): boolean {
  return itemPath(items, id) !== null;
}

/** The transcript at the end of `hosts`, which {@link transcriptFor} found. */
export function transcriptAt(items: readonly DisplayItem[], hosts: readonly number[]): readonly DisplayItem[] {
  let at = items;
  for (const index of hosts) at = transcriptOf(at[index]!) ?? [];
  return at;
}

/**
 * The transcript a frame with this `parent_call_id` adds to: the top level without one, else that
 * of the call it names, which must host a running sub-agent (the Rust reducer's `running_host`).
 */
export function transcriptFor(state: UiState, parentCallId: string | undefined): TranscriptLookup {
  if (parentCallId === undefined) return { ok: true, hosts: [] };
  const path = itemPath(state.items, parentCallId);
  const call = path === null ? undefined : (transcriptAt(state.items, path.slice(0, -1))[path.at(-1)!] as DisplayItem);
  if (path === null || call?.kind !== "tool_call") {
    return { ok: false, refusal: REDUCE_REFUSALS.UnknownToolCall, message: `no tool call ${parentCallId}` };
  }
  if (call.subagent?.status !== "running") {
    return { ok: false, refusal: REDUCE_REFUSALS.SubagentNotRunning, message: `tool call ${parentCallId} hosts no running sub-agent` };
  }
  return { ok: true, hosts: path };
}

/**
 * A copy of `items` whose transcript at `hosts` is `next`: every host on the way is copied, every
 * other item shared (the input is never changed).
 */
export function withTranscript(items: readonly DisplayItem[], hosts: readonly number[], next: DisplayItem[]): DisplayItem[] {
  const [index, ...rest] = hosts;
  if (index === undefined) return next;
  const host = items[index] as ToolCall;
  const subagent = host.subagent!;
  const copy = items.slice();
  copy[index] = { ...host, subagent: { ...subagent, items: withTranscript(subagent.items, rest, next) } };
  return copy;
}
