// Builders of the chat page's DOM for one display item each: messages, tool output, a call's card
// with its form while pending and its chip once settled. Text is only ever set through textContent:
// nothing the server sends is parsed as HTML.
import type { ItemOf, ToolCallStatus } from "../dist/index.js";
import { type Answer, clock, el, humanize } from "./dom.js";
import { schemaForm } from "./form.js";

export type ToolCallItem = ItemOf<"tool_call">;
type OutputItem = ItemOf<"tool_output">;

export const SETTLED: ReadonlySet<ToolCallStatus> = new Set(["completed", "failed", "dismissed", "expired"]);

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** A small, safe subset of CommonMark: paragraphs, `>` quotes, `-` lists, **bold** and `code`. */
export function markdown(source: string): HTMLElement {
  const root = el("div", { class: "markdown" });
  let list: HTMLUListElement | null = null;
  for (const block of source.split(/\n{2,}/)) {
    for (const line of block.split("\n")) {
      if (line.startsWith("- ")) {
        list ??= root.appendChild(el("ul"));
        list.append(el("li", {}, ...inline(line.slice(2))));
        continue;
      }
      list = null;
      if (line.startsWith(">")) root.append(el("blockquote", {}, ...inline(line.replace(/^> ?/, ""))));
      else if (line.trim() !== "") root.append(el("p", {}, ...inline(line)));
    }
    list = null;
  }
  return root;
}

function inline(line: string): Node[] {
  const out: Node[] = [];
  for (const part of line.split(/(\*\*[^*]+\*\*|`[^`]+`)/)) {
    if (part.startsWith("**") && part.endsWith("**") && part.length > 4) out.push(el("strong", {}, part.slice(2, -2)));
    else if (part.startsWith("`") && part.endsWith("`") && part.length > 2) out.push(el("code", {}, part.slice(1, -1)));
    else if (part !== "") out.push(document.createTextNode(part));
  }
  return out;
}

export function title(call: ToolCallItem): string {
  return text(call.payload["title"]) ?? text(call.payload["question"]) ?? text(call.payload["prompt"]) ?? humanize(call.tool_name);
}

/** A call the user stopped (Stop dismissed it with reason `cancelled`), not one that failed. */
export function stopped(call: ToolCallItem): boolean {
  return call.status === "dismissed" && call.dismissal?.reason === "cancelled";
}

/** The status a card and a chip show: a stopped call says so rather than "dismissed". */
function statusWord(call: ToolCallItem): string {
  return stopped(call) ? "stopped" : call.status;
}

/**
 * The line a settled call shows in place of its component. Its mark is drawn by the style sheet
 * (`.chip::before`), not a character: an emoji mark is a missing-glyph box without an emoji font.
 */
export function chip(call: ToolCallItem): HTMLElement {
  const detail =
    call.status === "completed"
      ? (call.summary ?? "completed")
      : call.status === "failed"
        ? (call.error ?? "failed")
        : call.status === "expired"
          ? (call.error ?? "expired")
          : stopped(call)
            ? "stopped"
            : `dismissed by the ${call.dismissal?.initiated_by ?? "server"}${call.dismissal?.reason ? `: ${call.dismissal.reason}` : ""}`;
  const classes = stopped(call) ? `chip ${call.status} stopped` : `chip ${call.status}`;
  return el("span", { class: classes, "data-chip-for": call.id, "data-status": call.status }, `${humanize(call.tool_name)}: ${detail}`);
}

interface Field {
  name: string;
  label: string;
  type: "text" | "number" | "checkbox";
  default?: unknown;
}

function fields(payload: { [key: string]: unknown }): Field[] | null {
  const raw = payload["fields"];
  if (!Array.isArray(raw)) return null;
  const out: Field[] = [];
  for (const f of raw) {
    if (typeof f !== "object" || f === null) continue;
    const { name, label, type } = f as { name?: unknown; label?: unknown; type?: unknown };
    if (typeof name !== "string") continue;
    const kind = type === "number" || type === "checkbox" ? type : "text";
    out.push({ name, label: typeof label === "string" ? label : name, type: kind, default: (f as { default?: unknown }).default });
  }
  return out.length > 0 ? out : null;
}

/**
 * The generic form that answers a pending call: `payload.fields` become inputs (submitted as an
 * object), `payload.options` become one button each (submitted as the option), a component whose
 * name says Confirm gets Yes/No (`true`/`false`), anything else a text box (submitted as text).
 * Every form can also dismiss the call. The controls sit in one fieldset, which the page disables
 * while it cannot send an answer (`answerable`: the connection is not open).
 */
export function form(call: ToolCallItem, answer: Answer, onError: (message: string) => void, answerable: boolean): HTMLFormElement {
  const outer = el("form", { class: "answer", "data-form-for": call.id });
  const node = outer.appendChild(el("fieldset", { class: "answering" }));
  node.disabled = !answerable;
  node.append(el("h3", {}, title(call)));
  const body = text(call.payload["body"]);
  if (body !== undefined) node.append(el("p", { class: "body" }, body));
  const send = (value: unknown | undefined): void => {
    for (const control of node.querySelectorAll("button, input, textarea")) control.setAttribute("disabled", "");
    const done = value === undefined ? answer.dismiss(call.id) : answer.submit(call.id, value);
    done.catch((error: Error) => {
      for (const control of node.querySelectorAll("button, input, textarea")) control.removeAttribute("disabled");
      onError(`${title(call)}: ${error.message}`);
    });
  };
  // 1.2: a call that says what its value must look like gets the form its schema describes.
  if (schemaForm(outer, node, call, answer, onError)) return outer;
  const buttons = el("div", { class: "buttons" });
  const declared = fields(call.payload);
  const options = Array.isArray(call.payload["options"]) ? call.payload["options"].filter((o): o is string => typeof o === "string") : [];
  if (declared !== null) {
    for (const f of declared) {
      const input = el("input", { name: f.name, type: f.type });
      if (f.type === "checkbox") input.checked = f.default === true;
      else if (f.default !== undefined) input.value = String(f.default);
      // Labelled as the schema forms are (ui/form.ts): the caption above, a checkbox before it.
      const caption = el("span", { class: "caption" }, f.label);
      node.append(
        f.type === "checkbox"
          ? el("label", { class: "field checkbox", "data-field": f.name }, el("span", { class: "check" }, input, caption))
          : el("label", { class: "field", "data-field": f.name }, caption, input),
      );
    }
    buttons.append(el("button", { type: "submit" }, "Submit"));
    outer.addEventListener("submit", (event) => {
      event.preventDefault();
      const value: Record<string, unknown> = {};
      for (const f of declared) {
        const input = node.querySelector<HTMLInputElement>(`input[name="${CSS.escape(f.name)}"]`);
        if (input === null) continue;
        value[f.name] = f.type === "checkbox" ? input.checked : f.type === "number" ? Number(input.value) : input.value;
      }
      send(value);
    });
  } else if (options.length > 0 || /confirm/i.test(call.component_type ?? "")) {
    const choices: [string, unknown][] = options.length > 0 ? options.map((o) => [o, o]) : [["Yes", true], ["No", false]];
    for (const [label, value] of choices) {
      const button = el("button", { type: "button" }, label);
      button.addEventListener("click", () => send(value));
      buttons.append(button);
    }
    outer.addEventListener("submit", (event) => event.preventDefault());
  } else {
    const input = el("textarea", { name: "value", rows: "2", placeholder: "Your answer" });
    node.append(input);
    buttons.append(el("button", { type: "submit" }, "Submit"));
    outer.addEventListener("submit", (event) => {
      event.preventDefault();
      send(input.value);
    });
  }
  const dismiss = el("button", { type: "button", class: "dismiss" }, "Dismiss");
  dismiss.addEventListener("click", () => send(undefined));
  buttons.append(dismiss);
  node.append(buttons);
  return outer;
}

function progress(call: ToolCallItem): HTMLElement | null {
  if (call.progress === undefined || call.status !== "running") return null;
  const bar = el("progress", { max: "1" });
  if (typeof call.progress.fraction === "number") bar.value = call.progress.fraction;
  return el("div", { class: "progress" }, bar, call.progress.message ?? "");
}

/** A call's card: header, then its form while pending, its content, or its chip once settled. */
export function card(call: ToolCallItem, answer: Answer, onError: (m: string) => void, answerable: boolean): HTMLElement {
  const node = el("div", { class: `tool-call ${call.display}`, "data-tool-call-id": call.id, "data-status": call.status });
  // People read a workflow and a tool's name, never the raw identifiers (`deploy_form · DeployForm`).
  const tool = humanize(call.tool_name);
  const name = call.workflow_name !== undefined && humanize(call.workflow_name) !== tool ? `${humanize(call.workflow_name)} · ${tool}` : tool;
  const word = statusWord(call);
  node.append(el("div", { class: "header" }, el("span", { class: "name" }, name), el("span", { class: `status ${word}` }, word)));
  const bar = progress(call);
  if (bar !== null) node.append(bar);
  if (call.status === "pending" && call.awaiting_response) {
    node.append(form(call, answer, onError, answerable));
  } else if (call.interaction_type === "ui_surface" && !SETTLED.has(call.status)) {
    node.append(el("h3", {}, title(call)));
    const body = text(call.payload["body"]);
    if (body !== undefined) node.append(el("p", { class: "body" }, body));
  } else if (SETTLED.has(call.status)) {
    if (call.interaction_type === "ui_surface" && call.status === "completed") {
      const body = text(call.payload["body"]);
      node.append(el("h3", {}, title(call)));
      if (body !== undefined) node.append(el("p", { class: "body" }, body));
    }
    node.append(chip(call));
  }
  return node;
}

export function output(item: OutputItem): HTMLElement {
  const node = el("div", { class: "tool-output", "data-output-for": item.tool_call_id });
  if (item.command !== undefined) node.append(el("div", { class: "command" }, `$ ${item.command}`));
  if (item.approvals.length > 0) {
    node.append(el("div", { class: "approvals" }, ...item.approvals.map((a) => el("span", { class: `approval ${a}` }, a.replace("_", " ")))));
  }
  if (item.stdout !== "") node.append(el("pre", { class: "stdout" }, item.stdout));
  if (item.stderr !== "") node.append(el("pre", { class: "stderr" }, item.stderr));
  if (item.exit_code !== undefined) node.append(el("span", { class: `exit ${item.exit_code === 0 ? "ok" : "bad"}` }, `exit ${item.exit_code}`));
  return node;
}

/**
 * An assistant message. While it streams (1.1, `streaming: true`) it is marked so that the page can
 * show it is still growing; each delta gives a new item, rendered again with the text so far.
 */
export function assistant(item: ItemOf<"assistant_markdown">): HTMLElement {
  const attrs: Record<string, string> = { class: item.streaming === true ? "msg assistant streaming" : "msg assistant", "data-item-id": item.id, ...byline("Assistant", item.ts) };
  if (item.streaming === true) attrs["data-streaming"] = "true";
  return el("div", attrs, markdown(item.markdown));
}

/** A user's message, with its author mark and time. */
export function userMessage(item: ItemOf<"user_message">): HTMLElement {
  return el("div", { class: "msg user", ...byline("You", item.ts) }, item.text);
}

/**
 * Who wrote a message and when, so a long thread stays readable without counting bubbles. The
 * style sheet draws them above the text (`.msg::before`), so the message's text is its text alone.
 */
function byline(author: string, ts: string): Record<string, string> {
  const time = clock(ts);
  return { "data-author": author, "data-time": time, title: time === "" ? author : `${author}, ${time}` };
}

