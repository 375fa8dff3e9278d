// The page's smallest pieces, shared by every builder: an element factory and what the page does
// when the user answers a call. A leaf: it imports nothing of the page, so items.ts and form.ts both
// build on it without importing each other.

/** What the page does when the user answers a call. */
export interface Answer {
  submit(toolCallId: string, value: unknown): Promise<unknown>;
  dismiss(toolCallId: string): Promise<unknown>;
}

/** An element with attributes and children; text only ever goes in as text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/**
 * A name for people from an identifier: `deploy_form` and `DeployForm` both read "Deploy form".
 * Cards show this, never the raw tool or component name.
 */
export function humanize(identifier: string): string {
  const words = identifier
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[\s_\-.]+/)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase());
  if (words.length === 0) return identifier;
  const sentence = words.join(" ");
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** A timestamp as the reader's local time of day (`14:05`), or "" when it is not a date. */
export function clock(ts: string): string {
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}
