// Protocol 1.3 on the chat page: the agent's reasoning (feature `reasoning`, spec/reasoning.md) and
// what each run used (feature `usage`, spec/usage.md). A reasoning item is a disclosure, collapsed by
// default (REASON-006): a native <details>, which a keyboard opens with Enter or Space and a screen
// reader announces as collapsed or expanded. It stays one node for its whole life, updated in place
// while it streams, so a reader who opened it keeps it open (and keeps focus) as it grows. Its
// `encrypted` payload is never shown, nor read (REASON-005). Usage is a quiet line after a run's last
// item, and the session's total sits in the footer, under the composer.
import type { ItemOf, Usage } from "../dist/index.js";
import { el } from "./dom.js";

type ReasoningItem = ItemOf<"reasoning">;

/** What the summary line says: it names the item, its state and, when redacted, says so in words. */
function summaryText(item: ReasoningItem): string {
  if (item.redacted === true) return "Reasoning (redacted)";
  return item.streaming === true ? "Thinking…" : "Reasoning";
}

/**
 * A reasoning item's disclosure, collapsed unless `open`; `onToggle` hears the reader open or close
 * it. {@link updateReasoning} brings it up to date as the item changes.
 */
export function reasoning(item: ReasoningItem, open: boolean, onToggle: (open: boolean) => void): HTMLDetailsElement {
  const node = el("details", { class: "reasoning" });
  node.append(el("summary", {}, ""), el("div", { class: "reasoning-text" }));
  node.open = open;
  node.addEventListener("toggle", () => onToggle(node.open));
  updateReasoning(node, item);
  return node;
}

/** Shows `item` in its disclosure, in place: the open state and the focus stay where they were. */
export function updateReasoning(node: HTMLElement, item: ReasoningItem): void {
  const summary = node.querySelector("summary");
  const body = node.querySelector<HTMLElement>(".reasoning-text");
  if (summary === null || body === null) return;
  const streaming = item.streaming === true;
  node.dataset["itemId"] = item.id;
  node.classList.toggle("streaming", streaming);
  node.classList.toggle("redacted", item.redacted === true);
  if (streaming) {
    node.dataset["streaming"] = "true";
    node.setAttribute("aria-busy", "true");
  } else {
    delete node.dataset["streaming"];
    node.removeAttribute("aria-busy");
  }
  if (summary.textContent !== summaryText(item)) summary.textContent = summaryText(item);
  const text = item.redacted === true ? "The agent's reasoning was redacted: its text is not shown." : item.text;
  if (body.textContent !== text) body.textContent = text;
}

/** `1234567` as `1,234,567`: counts people read, the same in every browser locale. */
function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A usage in words, e.g. `1,200 tokens in · 340 out · 128 reasoning · 0.0123 USD`. */
export function usageText(usage: Usage): string {
  const parts = [`${count(usage.input_tokens)} tokens in`, `${count(usage.output_tokens)} out`];
  if (usage.reasoning_tokens !== undefined) parts.push(`${count(usage.reasoning_tokens)} reasoning`);
  if (usage.cached_input_tokens !== undefined) parts.push(`${count(usage.cached_input_tokens)} cached`);
  if (usage.cost !== undefined) parts.push(`${usage.cost.amount} ${usage.cost.currency}`);
  return parts.join(" · ");
}

/** The quiet line after a run's last item: what that invocation's run slices used. */
export function runUsage(invocationId: string, usage: Usage): HTMLElement {
  return el("div", { class: "run-usage", "data-usage-for": invocationId, title: "What this run used" }, usageText(usage));
}
