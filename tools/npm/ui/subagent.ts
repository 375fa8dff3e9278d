// Protocol 1.3 on the chat page: a sub-agent's run inside the tool call that hosts it (feature
// `subagents`, spec/subagents.md). Its transcript shows in three tiers, derived from the state each
// time it is drawn, never stored: backstage (its reasoning, and the tools it called with their
// output, collapsed under one disclosure), its intermediate text (what it said on the way, smaller
// than an answer), and its final content (the run's `response`, marked when it ended with its
// `return` tool). What is still live comes below the finalized blocks: its open calls (a nested
// form the user answers here, a deeper sub-agent at work) and the block still streaming.
import type { DisplayItem, ItemOf, SubagentState } from "../dist/index.js";
import { el, humanize } from "./dom.js";
import { type ToolCallItem, SETTLED, chip, markdown, output } from "./items.js";
import { reasoning } from "./reasoning.js";

/** How the panel draws what it does not draw itself: an open nested call's card, with its own panel. */
export interface NestedCards {
  card(call: ToolCallItem): HTMLElement;
  /** Whether the reader opened the backstage of this host's run (it stays open across renders). */
  backstageOpen(hostId: string): boolean;
  setBackstageOpen(hostId: string, open: boolean): void;
}

/** The three tiers and the live part of a transcript, in display order within each. */
interface Tiers {
  backstage: DisplayItem[];
  text: ItemOf<"assistant_markdown">[];
  live: DisplayItem[];
}

/** Sorts a transcript into its tiers: the open stream and open calls are live, the rest finalized. */
function tiers(items: readonly DisplayItem[]): Tiers {
  const out: Tiers = { backstage: [], text: [], live: [] };
  for (const item of items) {
    const streaming = (item.kind === "assistant_markdown" || item.kind === "reasoning") && item.streaming === true;
    if (streaming || (item.kind === "tool_call" && !SETTLED.has(item.status))) out.live.push(item);
    else if (item.kind === "assistant_markdown") out.text.push(item);
    else out.backstage.push(item);
  }
  return out;
}

/** One finalized backstage step: a thought, a settled call's chip, or what a tool printed. */
function backstageStep(item: DisplayItem, cards: NestedCards): HTMLElement {
  switch (item.kind) {
    case "reasoning":
      return el("div", { class: "step thought", "data-item-id": item.id }, item.redacted === true ? "(reasoning redacted)" : item.text);
    case "tool_output":
      return output(item);
    case "tool_call":
      // A settled call that hosted a sub-agent keeps its run, one level down.
      return item.subagent === undefined ? el("div", { class: "step", "data-item-id": item.id }, chip(item)) : cards.card(item);
    default:
      return el("div", { class: "step", "data-item-id": item.id }, item.kind);
  }
}

/** The block still growing, or an open nested call, below the finalized blocks. */
function liveBlock(item: DisplayItem, cards: NestedCards): HTMLElement {
  switch (item.kind) {
    case "assistant_markdown":
      return el("div", { class: "subagent-text streaming", "data-item-id": item.id, "data-streaming": "true" }, markdown(item.markdown));
    case "reasoning":
      return reasoning(item, false, () => {});
    case "tool_call":
      return cards.card(item);
    default:
      return el("div", { "data-item-id": item.id }, item.kind);
  }
}

/** What the run's header says: who runs, and where the run is. */
function header(run: SubagentState): HTMLElement {
  const who = run.name === undefined ? "Sub-agent" : `Sub-agent · ${humanize(run.name)}`;
  const continued = run.continues === undefined ? [] : [el("span", { class: "continued" }, run.answers_return === true ? "answering its return" : "continued")];
  return el("div", { class: "subagent-head" }, el("span", { class: "who" }, who), ...continued, el("span", { class: `status ${run.status}` }, run.status));
}

/** The panel of the sub-agent run `host` hosts, or null when it hosts none. */
export function subagentPanel(host: ToolCallItem, cards: NestedCards): HTMLElement | null {
  const run = host.subagent;
  if (run === undefined) return null;
  const { backstage, text, live } = tiers(run.items);
  const node = el("section", { class: "subagent", "data-subagent-of": host.id, "data-thread": run.thread_id, "data-status": run.status, "aria-label": "Sub-agent run" });
  node.append(header(run));
  if (backstage.length > 0) {
    const steps = backstage.length === 1 ? "1 step" : `${backstage.length} steps`;
    const details = el("details", { class: "backstage" }, el("summary", {}, `Backstage · ${steps}`), ...backstage.map((item) => backstageStep(item, cards)));
    details.open = cards.backstageOpen(host.id);
    details.addEventListener("toggle", () => cards.setBackstageOpen(host.id, details.open));
    node.append(details);
  }
  for (const item of text) node.append(el("div", { class: "subagent-text", "data-item-id": item.id }, markdown(item.markdown)));
  if (run.response !== undefined) {
    const mark = run.returned === true ? "Returned" : "Final answer";
    node.append(el("div", { class: run.returned === true ? "subagent-final returned" : "subagent-final", "data-final-for": host.id }, el("span", { class: "final-mark" }, mark), markdown(run.response)));
  }
  if (live.length > 0) node.append(el("div", { class: "subagent-live", "aria-live": "polite" }, ...live.map((item) => liveBlock(item, cards))));
  return node;
}
