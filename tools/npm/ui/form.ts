// The generic form of a call that carries a `response_schema` (1.2, TOOL-026): rendered from the
// schema rather than from `payload`, and checked with the package's checker before it is sent, so
// the value the server gets fits (`TOOL-023`); a refusal the server still sends (`response_invalid`,
// or `invalid_frame` on an older connection) is shown in the form, which stays answerable.
//
// An object schema with `properties` gives one control per property, in the schema's order: its
// `title` (else its name) as the label, a `*` when `required`, an `enum` as a select, `boolean` as
// a checkbox, `integer`/`number` as a number input, `string` as a text input, anything else (arrays,
// nested objects) as a JSON text box. Any other schema gives one control for the whole value.
import { ChatwireError, parseResponseSchema, type ItemOf, type ResponseChecker, type ResponseSchema } from "../dist/index.js";
import { type Answer, el } from "./dom.js";

type ToolCallItem = ItemOf<"tool_call">;

/** One control: reads its part of the value (`absent` when the user left it empty). */
interface Control {
  /** The property name, or null for a whole-value control. */
  name: string | null;
  element: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  read(): { ok: true; value: unknown } | { ok: true; absent: true } | { ok: false; message: string };
  /** Where its problem is said, beside it (set by `labelled`). */
  error?: HTMLElement;
}

/**
 * The values a call's payload starts its fields with (`payload.fields[].default`, by `name`): a
 * form rendered from the schema starts from the same values the tool asked for (the demo's deploy
 * form: Branch `main`, Replicas 2), so a first Submit is not refused for fields the user never saw
 * empty.
 */
function payloadDefaults(payload: { [key: string]: unknown }): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const fields = payload["fields"];
  if (!Array.isArray(fields)) return out;
  for (const field of fields) {
    if (typeof field !== "object" || field === null) continue;
    const { name, default: initial } = field as { name?: unknown; default?: unknown };
    if (typeof name === "string" && initial !== undefined) out.set(name, initial);
  }
  return out;
}

/** Starts a control with `initial`, where it is a value the control can hold. */
function prefill(c: Control, schema: ResponseSchema, initial: unknown): void {
  if (initial === undefined) return;
  const e = c.element;
  if (e instanceof HTMLSelectElement) {
    const i = (schema.enum ?? []).findIndex((choice) => JSON.stringify(choice) === JSON.stringify(initial));
    if (i >= 0) e.value = String(i);
  } else if (e instanceof HTMLInputElement && e.type === "checkbox") {
    e.checked = initial === true;
  } else if (e instanceof HTMLInputElement && e.type === "number") {
    if (typeof initial === "number" && Number.isFinite(initial)) e.value = String(initial);
  } else if (e instanceof HTMLInputElement) {
    if (typeof initial === "string") e.value = initial;
  } else {
    e.value = JSON.stringify(initial);
  }
}

/** What is wrong with a field, said as a person would, from the checker's keyword. */
function inWords(keyword: string, schema: ResponseSchema | undefined): string {
  const types = schema === undefined ? [] : typesOf(schema);
  switch (keyword) {
    case "required":
      return "Required";
    case "minimum":
      return schema?.minimum === undefined ? "Too small" : `Must be at least ${schema.minimum}`;
    case "maximum":
      return schema?.maximum === undefined ? "Too large" : `Must be at most ${schema.maximum}`;
    case "minLength":
      return schema?.minLength === undefined || schema.minLength <= 1 ? "Required" : `Must be at least ${schema.minLength} characters`;
    case "maxLength":
      return schema?.maxLength === undefined ? "Too long" : `Must be at most ${schema.maxLength} characters`;
    case "enum":
      return "Choose one of the options";
    case "type":
      return types.includes("integer") ? "Must be a whole number" : types.includes("number") ? "Must be a number" : "Not a value this field takes";
    default:
      return "Not a value this field takes";
  }
}

const ABSENT = { ok: true, absent: true } as const;

function typesOf(schema: ResponseSchema): string[] {
  return schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
}


/** The control for one schema: its element and how it reads back a JSON value. */
function control(name: string | null, schema: ResponseSchema, required: boolean): Control {
  const id = name ?? "value";
  const types = typesOf(schema);
  if (schema.enum !== undefined) {
    const choices = schema.enum;
    const select = el("select", { name: id });
    if (!required) select.append(el("option", { value: "" }, "—"));
    choices.forEach((choice, i) => select.append(el("option", { value: String(i) }, typeof choice === "string" ? choice : JSON.stringify(choice))));
    return { name, element: select, read: () => (select.value === "" ? ABSENT : { ok: true, value: choices[Number(select.value)] }) };
  }
  if (types.length === 1 && types[0] === "boolean") {
    const box = el("input", { name: id, type: "checkbox" });
    return { name, element: box, read: () => ({ ok: true, value: box.checked }) };
  }
  if (types.length > 0 && types.every((t) => t === "integer" || t === "number")) {
    const input = el("input", { name: id, type: "number", step: types.includes("number") ? "any" : "1" });
    if (schema.minimum !== undefined) input.min = String(schema.minimum);
    if (schema.maximum !== undefined) input.max = String(schema.maximum);
    return {
      name,
      element: input,
      read: () => {
        if (input.value.trim() === "") return input.validity.badInput ? { ok: false, message: "Must be a number" } : ABSENT;
        const value = Number(input.value);
        return Number.isFinite(value) ? { ok: true, value } : { ok: false, message: "Must be a number" };
      },
    };
  }
  if (types.length === 1 && types[0] === "string") {
    const input = el("input", { name: id, type: "text" });
    // Empty is a value ("") when the property is required, so minLength can speak to it.
    return { name, element: input, read: () => (input.value === "" && !required ? ABSENT : { ok: true, value: input.value }) };
  }
  const area = el("textarea", { name: id, rows: "2", placeholder: "JSON" });
  return {
    name,
    element: area,
    read: () => {
      if (area.value.trim() === "") return ABSENT;
      try {
        return { ok: true, value: JSON.parse(area.value) as unknown };
      } catch {
        return { ok: false, message: "Must be valid JSON" };
      }
    },
  };
}

/**
 * The label of a control: its caption (with the required mark) above the control, a checkbox
 * before its caption, the description below, and the place where its problem is said.
 */
function labelled(c: Control, schema: ResponseSchema, required: boolean): HTMLLabelElement {
  const caption = el("span", { class: "caption" }, schema.title ?? c.name ?? "Value");
  if (required) caption.append(el("span", { class: "required", title: "required" }, " *"));
  const checkbox = c.element instanceof HTMLInputElement && c.element.type === "checkbox";
  const parts: (Node | string)[] = checkbox ? [el("span", { class: "check" }, c.element, caption)] : [caption, c.element];
  if (schema.description !== undefined) parts.push(el("small", { class: "hint" }, schema.description));
  const error = el("small", { class: "field-error", role: "alert" });
  error.hidden = true;
  c.error = error;
  parts.push(error);
  return el("label", { "data-field": c.name ?? "", class: checkbox ? "field checkbox" : "field" }, ...parts);
}

/** The first token of a JSON Pointer, unescaped: the property a failure is about. */
function firstToken(pointer: string): string | null {
  const token = pointer.split("/")[1];
  return token === undefined ? null : token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/**
 * Fills `node` (the body of the call's `form`, already titled) from the call's `response_schema`: controls,
 * Submit and Dismiss. Returns false, leaving `node` untouched, when the call has no schema the
 * checker takes (the page then renders its form from `payload`).
 */
export function schemaForm(form: HTMLFormElement, node: HTMLElement, call: ToolCallItem, answer: Answer, onError: (message: string) => void): boolean {
  if (call.response_schema === undefined) return false;
  const parsed = parseResponseSchema(call.response_schema);
  if (!parsed.ok) return false;
  const checker: ResponseChecker = parsed.checker;
  const schema = call.response_schema;
  const objectForm = schema.properties !== undefined && (typesOf(schema).length === 0 || typesOf(schema).includes("object"));
  const required = new Set(schema.required ?? []);
  const defaults = payloadDefaults(call.payload);
  const controls: Control[] = [];
  form.noValidate = true;
  form.dataset["schema"] = "true";
  if (objectForm && schema.properties !== undefined) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      const c = control(name, sub, required.has(name));
      prefill(c, sub, defaults.get(name));
      controls.push(c);
      node.append(labelled(c, sub, required.has(name)));
    }
  } else {
    const c = control(null, schema, true);
    controls.push(c);
    node.append(labelled(c, schema, true));
  }
  const problem = el("p", { class: "form-error", role: "alert" });
  problem.hidden = true;
  node.append(problem);

  /** Says what is wrong beside the field it is about, or above the buttons for the whole value. */
  const show = (message: string, field: string | null): void => {
    const at = field === null ? undefined : controls.find((c) => c.name === field);
    for (const c of controls) {
      c.element.toggleAttribute("aria-invalid", c === at);
      if (c.error !== undefined) c.error.hidden = c !== at;
    }
    if (at?.error !== undefined) {
      at.error.textContent = message;
      problem.hidden = true;
      at.element.focus();
      return;
    }
    problem.textContent = message;
    problem.hidden = false;
  };
  const controlsOf = (): NodeListOf<HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement> =>
    node.querySelectorAll("button, input, select, textarea");
  const send = (value: unknown | undefined): void => {
    for (const c of controlsOf()) c.disabled = true;
    const done = value === undefined ? answer.dismiss(call.id) : answer.submit(call.id, value);
    done.catch((error: Error) => {
      for (const c of controlsOf()) c.disabled = false;
      if (error instanceof ChatwireError && (error.code === "response_invalid" || error.code === "invalid_frame")) {
        // The server's message names the failing JSON Pointer (TOOL-023); the call stays pending.
        show(`The server did not take this answer: ${error.message}`, null);
        return;
      }
      onError(`${call.payload["title"] === undefined ? call.tool_name : String(call.payload["title"])}: ${error.message}`);
    });
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let value: unknown = objectForm ? {} : undefined;
    for (const c of controls) {
      const read = c.read();
      if (!read.ok) return show(read.message, c.name);
      if ("absent" in read) continue;
      if (c.name === null) value = read.value;
      else (value as Record<string, unknown>)[c.name] = read.value;
    }
    if (value === undefined) return show("An answer is required", objectForm ? null : (controls[0]?.name ?? null));
    const failure = checker.check(value);
    if (failure !== null) {
      // `required` names the object; the missing property is in the message's pointer or the schema.
      const field = objectForm
        ? failure.keyword === "required"
          ? (controls.find((c) => c.name !== null && required.has(c.name) && c.read().ok && "absent" in c.read())?.name ?? firstToken(failure.pointer))
          : firstToken(failure.pointer)
        : null;
      const sub = field === null ? schema : schema.properties?.[field];
      if (field === null && !objectForm) return show(inWords(failure.keyword, sub), controls[0]?.name ?? null);
      return show(inWords(failure.keyword, sub), field);
    }
    show("", null);
    problem.hidden = true;
    send(value);
  });
  const buttons = el("div", { class: "buttons" });
  buttons.append(el("button", { type: "submit" }, "Submit"));
  const dismiss = el("button", { type: "button", class: "dismiss" }, "Dismiss");
  dismiss.addEventListener("click", () => send(undefined));
  buttons.append(dismiss);
  node.append(buttons);
  return true;
}
