// Rendering of a UiState into the reference chat page's DOM. Everything shown comes from the
// UiState the client holds (never from individual frames), so what the page shows after a reload
// is exactly what it showed before: a settled call is a chip, never a form again (TOOL-008). The
// one exception is a failed run's error, which only `chat.run_complete` carries (see runFailed).
// Protocol 1.3: reasoning items are disclosures, collapsed by default, and each run's usage is a
// quiet line after its last item, the session's total in the footer (ui/reasoning.ts). A call that
// hosts a sub-agent shows the sub-agent's run inside its card, in three tiers (ui/subagent.ts).
import type { DisplayItem, ItemOf, UiState } from "../dist/index.js";
import { type Answer, el } from "./dom.js";
import { type ToolCallItem, SETTLED, assistant, card, chip, output, title, userMessage } from "./items.js";
import { reasoning, runUsage, updateReasoning, usageText } from "./reasoning.js";
import { type NestedCards, subagentPanel } from "./subagent.js";

/** The page's fixed elements. */
export interface Regions {
  /** The transcript and its "new messages" button; hidden while a view is shown. */
  conversation: HTMLElement;
  transcript: HTMLElement;
  /** The full view (display "view"): its heading and the call's card below it. */
  view: HTMLElement;
  viewHeading: HTMLElement;
  viewBody: HTMLElement;
  artifacts: HTMLElement;
  composer: HTMLElement;
  inputRequest: HTMLElement;
  run: HTMLElement;
  /** The line shown where a windowed view's window starts while older items exist (ui/older.ts). */
  older: HTMLElement;
  /** What the whole session used (1.3, `state.usage.total`); hidden while the state has no usage. */
  usageTotal: HTMLElement;
}


/**
 * Keeps one DOM node per item while the item is unchanged, so a form being filled survives renders.
 * Besides the state, it holds what the user chose on this page: views they stepped back from, and
 * whether answers can be sent (the connection is open).
 */
export class Renderer {
  readonly #nodes = new Map<string, { key: string; node: HTMLElement; item: DisplayItem }>();
  readonly #regions: Regions;
  readonly #answer: Answer;
  readonly #onError: (message: string) => void;
  readonly #showArtifact: (callId: string) => void;
  /** Pending views the user went back from: the transcript shows them a way to open them again. */
  readonly #leftViews = new Set<string>();
  /** The error of each failed run, by invocation id (from `chat.run_complete`). */
  readonly #runErrors = new Map<string, string>();
  #runError: { text: string; node: HTMLElement } | null = null;
  #stopped: { invocation: string; node: HTMLElement } | null = null;
  #shownView: string | null = null;
  #answerable = false;
  #last: UiState | null = null;
  /** The cursor item of a windowed view with older items to load: the older line goes before it. */
  #cursor: string | null = null;
  /** The reasoning items the reader opened: they stay open as they stream and after a render. */
  readonly #openReasoning = new Set<string>();
  /** The hosts whose sub-agent backstage the reader opened: it stays open as the run goes on. */
  readonly #openBackstage = new Set<string>();
  /** Each invocation's usage line, kept while its text is the same. */
  readonly #usageLines = new Map<string, { text: string; node: HTMLElement }>();

  /** `showArtifact` brings an artifact into sight (on a narrow screen, opens the panel first). */
  constructor(regions: Regions, answer: Answer, onError: (message: string) => void, showArtifact: (callId: string) => void) {
    this.#regions = regions;
    this.#answer = answer;
    this.#onError = onError;
    this.#showArtifact = showArtifact;
  }

  /** Answers can be sent (or not): enables (or disables) every form's controls. */
  setAnswerable(answerable: boolean): void {
    this.#answerable = answerable;
    for (const { node } of this.#nodes.values()) {
      for (const fieldset of node.querySelectorAll<HTMLFieldSetElement>("fieldset.answering")) fieldset.disabled = !answerable;
    }
  }

  /** A run ended failed with this error: shown while the state's run is that failed run. */
  runFailed(invocationId: string, error: string): void {
    this.#runErrors.set(invocationId, error);
    this.#again();
  }

  /** The user steps back from the view shown to the transcript. */
  leaveView(): void {
    if (this.#shownView !== null) this.#leftViews.add(this.#shownView);
    this.#again();
  }

  #openView(id: string): void {
    this.#leftViews.delete(id);
    this.#again();
  }

  #again(): void {
    if (this.#last !== null) this.render(this.#last, this.#cursor);
  }

  #node(slot: string, item: DisplayItem, build: () => HTMLElement, seen: Set<string>): HTMLElement {
    const id = `${slot}:${item.id}`;
    seen.add(id);
    const held = this.#nodes.get(id);
    // A patch leaves untouched items the very same objects: no need to compare their contents.
    if (held !== undefined && held.item === item) return held.node;
    const key = JSON.stringify(item);
    if (held !== undefined && held.key === key) {
      held.item = item;
      return held.node;
    }
    const node = build();
    // Every transcript line names its item, so the page (and its tests) can tell items apart.
    if (slot === "t") node.dataset["itemId"] = item.id;
    this.#nodes.set(id, { key, node, item });
    return node;
  }

  /**
   * A reasoning item's disclosure: one node for the item's whole life, updated in place as it
   * streams, so the reader's open disclosure and focus survive every delta.
   */
  #reasoningNode(item: ItemOf<"reasoning">, seen: Set<string>): HTMLElement {
    const id = `t:${item.id}`;
    seen.add(id);
    const held = this.#nodes.get(id);
    if (held !== undefined && held.item.kind === "reasoning") {
      if (held.item !== item) updateReasoning(held.node, item);
      held.item = item;
      return held.node;
    }
    const node = reasoning(item, this.#openReasoning.has(item.id), (open) => {
      if (open) this.#openReasoning.add(item.id);
      else this.#openReasoning.delete(item.id);
    });
    this.#nodes.set(id, { key: "", node, item });
    return node;
  }

  /**
   * Places each invocation's usage line (1.3, `state.usage.invocations`) after the last line of
   * that invocation in the transcript (its items, or the mark of its stop), and shows the total.
   */
  #placeUsage(state: UiState, transcript: HTMLElement[]): void {
    const total = state.usage?.total;
    this.#regions.usageTotal.hidden = total === undefined;
    const said = total === undefined ? "" : `This conversation: ${usageText(total)}`;
    if (this.#regions.usageTotal.textContent !== said) this.#regions.usageTotal.textContent = said;
    const invocations = state.usage?.invocations ?? {};
    const invocationOf = new Map(state.items.map((item) => [item.id, item.invocation_id]));
    // The last transcript line of each invocation, in one pass: a long thread has many of both.
    const lastLine = new Map<string, number>();
    transcript.forEach((node, i) => {
      const itemId = node.dataset["itemId"];
      const invocation = (itemId === undefined ? undefined : invocationOf.get(itemId)) ?? node.dataset["invocation"];
      if (invocation !== undefined) lastLine.set(invocation, i);
    });
    const lines: { at: number; node: HTMLElement }[] = [];
    for (const [invocation, usage] of Object.entries(invocations)) {
      const at = lastLine.get(invocation);
      if (at === undefined) continue;
      const text = JSON.stringify(usage);
      let held = this.#usageLines.get(invocation);
      if (held?.text !== text) {
        held = { text, node: runUsage(invocation, usage) };
        this.#usageLines.set(invocation, held);
      }
      lines.push({ at: at + 1, node: held.node });
    }
    for (const invocation of [...this.#usageLines.keys()]) if (!(invocation in invocations)) this.#usageLines.delete(invocation);
    lines.sort((a, b) => b.at - a.at);
    for (const { at, node } of lines) transcript.splice(at, 0, node);
  }

  /** A call's card, with the sub-agent run it hosts inside it (1.3), its nested calls' cards too. */
  #card(call: ToolCallItem): HTMLElement {
    const node = card(call, this.#answer, this.#onError, this.#answerable);
    const nested: NestedCards = {
      card: (inner) => this.#card(inner),
      backstageOpen: (host) => this.#openBackstage.has(host),
      setBackstageOpen: (host, open) => (open ? this.#openBackstage.add(host) : this.#openBackstage.delete(host)),
    };
    const panel = subagentPanel(call, nested);
    if (panel !== null) node.querySelector(":scope > .header")?.after(panel);
    return node;
  }

  /** The transcript's line for a pending view: where it stands, and a button that opens it. */
  #viewRef(call: ToolCallItem): HTMLElement {
    const open = el("button", { type: "button", class: "link-button open-view" }, "Open");
    open.addEventListener("click", () => this.#openView(call.id));
    return el("div", { class: "artifact-ref view-ref", "data-ref-for": call.id }, `▸ ${title(call)} (a full view, ${call.status}) `, open);
  }

  /** The transcript's line for an artifact (its chip once settled) and a button that shows it. */
  #artifactRef(call: ToolCallItem): HTMLElement {
    const show = el("button", { type: "button", class: "link-button show-artifact" }, "Show");
    show.addEventListener("click", () => this.#showArtifact(call.id));
    const what = SETTLED.has(call.status) ? chip(call) : `▸ ${title(call)} (an artifact, ${call.status})`;
    return el("div", { class: "artifact-ref", "data-ref-for": call.id }, what, " ", show);
  }

  /**
   * A stopped answer is not a failure: while the state's run is one the user stopped, a "Stopped"
   * mark follows the last of its items in the transcript (the text streamed so far stays).
   */
  #stoppedMark(state: UiState, transcript: HTMLElement[]): { at: number; node: HTMLElement } | null {
    const invocation = state.run.invocation_id;
    if (state.run.status !== "cancelled" || invocation === undefined) return null;
    const ids = new Set(state.items.filter((item) => item.invocation_id === invocation).map((item) => item.id));
    let at = -1;
    transcript.forEach((node, i) => {
      if (node.dataset["itemId"] !== undefined && ids.has(node.dataset["itemId"])) at = i;
    });
    if (at < 0) return null;
    if (this.#stopped?.invocation !== invocation) {
      const node = el("div", { class: "stopped-mark", role: "status", "data-invocation": invocation }, "Stopped");
      this.#stopped = { invocation, node };
    }
    return { at: at + 1, node: this.#stopped.node };
  }

  /** The line that says why the run failed, kept while the same error is shown. */
  #runErrorLine(state: UiState): HTMLElement | null {
    if (state.run.status !== "failed") return null;
    const error = state.run.invocation_id === undefined ? undefined : this.#runErrors.get(state.run.invocation_id);
    const text = error === undefined ? "The run failed." : `The run failed: ${error}`;
    if (this.#runError?.text !== text) this.#runError = { text, node: el("div", { id: "run-error", class: "run-error", role: "alert" }, text) };
    return this.#runError.node;
  }

  /**
   * Shows `state`. `cursor` names the first item of a windowed view's window while older items
   * exist (1.2, `client.window.before`): the older line goes just before it, after the always-held items.
   */
  render(state: UiState, cursor: string | null = null): void {
    this.#last = state;
    this.#cursor = cursor;
    const seen = new Set<string>();
    const transcript: HTMLElement[] = [];
    const artifacts: HTMLElement[] = [];
    const views: { call: ToolCallItem; node: HTMLElement }[] = [];
    let request: HTMLElement | null = null;
    for (const item of state.items) {
      if (item.id === cursor) transcript.push(this.#regions.older);
      switch (item.kind) {
        case "user_message":
          transcript.push(this.#node("t", item, () => userMessage(item), seen));
          break;
        case "assistant_markdown":
          transcript.push(this.#node("t", item, () => assistant(item), seen));
          break;
        case "tool_output":
          transcript.push(this.#node("t", item, () => output(item), seen));
          break;
        case "reasoning":
          transcript.push(this.#reasoningNode(item, seen));
          break;
        case "tool_call": {
          const settled = SETTLED.has(item.status);
          const live = () => this.#card(item);
          if (item.display === "artifact") {
            // The panel shows the artifact; the transcript keeps a reference at the call's place.
            artifacts.push(this.#node("a", item, live, seen));
            transcript.push(this.#node("t", item, () => this.#artifactRef(item), seen));
          } else if (item.display === "composer" && !settled) {
            request = this.#node("c", item, live, seen);
            transcript.push(this.#node("t", item, () => el("div", { class: "artifact-ref", "data-ref-for": item.id }, `▸ ${title(item)} (answer below)`), seen));
          } else if (item.display === "view" && !settled) {
            views.push({ call: item, node: this.#node("v", item, live, seen) });
            transcript.push(this.#node("t", item, () => this.#viewRef(item), seen));
          } else {
            transcript.push(this.#node("t", item, live, seen));
          }
          break;
        }
      }
    }
    const failure = this.#runErrorLine(state);
    if (failure !== null) transcript.push(failure);
    const mark = this.#stoppedMark(state, transcript);
    if (mark !== null) transcript.splice(mark.at, 0, mark.node);
    this.#placeUsage(state, transcript);
    for (const id of [...this.#nodes.keys()]) if (!seen.has(id)) this.#nodes.delete(id);
    for (const id of this.#openReasoning) if (!seen.has(`t:${id}`)) this.#openReasoning.delete(id);
    // The first pending view the user has not stepped back from takes the transcript's place.
    for (const id of this.#leftViews) if (!views.some(({ call }) => call.id === id)) this.#leftViews.delete(id);
    const view = views.find(({ call }) => !this.#leftViews.has(call.id)) ?? null;
    this.#shownView = view?.call.id ?? null;
    const r = this.#regions;
    place(r.transcript, transcript);
    place(r.artifacts, artifacts);
    place(r.viewBody, view === null ? [] : [view.node]);
    place(r.inputRequest, request === null ? [] : [request]);
    if (view !== null) r.viewHeading.textContent = title(view.call);
    r.view.hidden = view === null;
    r.conversation.hidden = view !== null;
    // An input request replaces the composer while it is pending.
    r.inputRequest.hidden = request === null;
    r.composer.hidden = request !== null;
    // A run the user stopped reads "stopped", and looks unlike a failure (style.css).
    r.run.textContent = state.run.status === "cancelled" ? "stopped" : state.run.status.replace("_", " ");
    r.run.dataset["runStatus"] = state.run.status;
    document.body.dataset["runStatus"] = state.run.status;
  }
}

/** Replaces a container's children only when they differ, so focus and typing survive. */
function place(container: HTMLElement, nodes: HTMLElement[]): void {
  const current = [...container.children];
  if (current.length === nodes.length && current.every((node, i) => node === nodes[i])) return;
  container.replaceChildren(...nodes);
}
